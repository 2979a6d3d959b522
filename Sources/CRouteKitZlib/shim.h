#ifndef ROUTEKIT_CZLIB_SHIM_H
#define ROUTEKIT_CZLIB_SHIM_H
#include <zlib.h>
#endif
