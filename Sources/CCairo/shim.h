#ifndef ROUTEKIT_CCAIRO_SHIM_H
#define ROUTEKIT_CCAIRO_SHIM_H
// cairo's image surface, paths, toy text API and PNG stream writer: the rasteriser behind `routekit render`'s PNG
// output. Nothing else of cairo (no X11, no PDF) is used.
#include <cairo.h>
#endif
