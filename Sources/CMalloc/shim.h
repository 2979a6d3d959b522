#ifndef ROUTEKIT_CMALLOC_SHIM_H
#define ROUTEKIT_CMALLOC_SHIM_H
// glibc's allocator tuning (mallopt); absent elsewhere.
#if defined(__linux__) && __has_include(<malloc.h>)
#include <malloc.h>
#define ROUTEKIT_HAS_MALLOPT 1
#endif
#endif
