#ifndef ROUTEKIT_CGEOS_SHIM_H
#define ROUTEKIT_CGEOS_SHIM_H
// Only the re-entrant (_r) API: every call takes an explicit context handle.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
#endif
