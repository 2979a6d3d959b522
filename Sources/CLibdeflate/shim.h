#ifndef ROUTEKIT_CLIBDEFLATE_SHIM_H
#define ROUTEKIT_CLIBDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
