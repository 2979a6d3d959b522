#ifndef ROUTEKIT_CCAIRO_SHIM_H
#define ROUTEKIT_CCAIRO_SHIM_H
// cairo's image surface, paths, toy text API and PNG streams: the rasteriser behind PNG output. cairo is not linked:
// it is opened (dlopen) the first time a PNG is drawn or read, so that every other command starts without loading
// it and the 16 libraries it needs (X11, fontconfig, freetype, pixman, ...). Call rk_cairo_load() first; each
// rk_cairo_NAME then calls cairo's cairo_NAME. Nothing else of cairo (no X11 surface, no PDF) is used.
#include <cairo/cairo.h>

/// Opens cairo once (thread-safe); 1 when every function below is there, else 0 (see rk_cairo_load_error).
int rk_cairo_load(void);
/// Why rk_cairo_load failed (dlerror's text), or NULL.
const char *rk_cairo_load_error(void);

void rk_cairo_arc(cairo_t *cr, double xc, double yc, double radius, double angle1, double angle2);
void rk_cairo_clip(cairo_t *cr);
void rk_cairo_close_path(cairo_t *cr);
cairo_t * rk_cairo_create(cairo_surface_t *target);
void rk_cairo_destroy(cairo_t *cr);
void rk_cairo_fill(cairo_t *cr);
void rk_cairo_fill_preserve(cairo_t *cr);
cairo_surface_t * rk_cairo_image_surface_create(cairo_format_t format, int width, int height);
cairo_surface_t * rk_cairo_image_surface_create_from_png_stream(cairo_read_func_t read_func, void *closure);
unsigned char * rk_cairo_image_surface_get_data(cairo_surface_t *surface);
int rk_cairo_image_surface_get_height(cairo_surface_t *surface);
int rk_cairo_image_surface_get_stride(cairo_surface_t *surface);
int rk_cairo_image_surface_get_width(cairo_surface_t *surface);
void rk_cairo_line_to(cairo_t *cr, double x, double y);
void rk_cairo_move_to(cairo_t *cr, double x, double y);
void rk_cairo_new_path(cairo_t *cr);
void rk_cairo_new_sub_path(cairo_t *cr);
void rk_cairo_paint(cairo_t *cr);
void rk_cairo_rectangle(cairo_t *cr, double x, double y, double width, double height);
void rk_cairo_restore(cairo_t *cr);
void rk_cairo_save(cairo_t *cr);
void rk_cairo_scale(cairo_t *cr, double sx, double sy);
void rk_cairo_select_font_face(cairo_t *cr, const char *family, cairo_font_slant_t slant, cairo_font_weight_t weight);
void rk_cairo_set_dash(cairo_t *cr, const double *dashes, int num_dashes, double offset);
void rk_cairo_set_font_size(cairo_t *cr, double size);
void rk_cairo_set_line_cap(cairo_t *cr, cairo_line_cap_t line_cap);
void rk_cairo_set_line_join(cairo_t *cr, cairo_line_join_t line_join);
void rk_cairo_set_line_width(cairo_t *cr, double width);
void rk_cairo_set_source_rgba(cairo_t *cr, double red, double green, double blue, double alpha);
void rk_cairo_set_source_surface(cairo_t *cr, cairo_surface_t *surface, double x, double y);
void rk_cairo_show_text(cairo_t *cr, const char *utf8);
cairo_status_t rk_cairo_status(cairo_t *cr);
const char * rk_cairo_status_to_string(cairo_status_t status);
void rk_cairo_stroke(cairo_t *cr);
void rk_cairo_surface_destroy(cairo_surface_t *surface);
void rk_cairo_surface_flush(cairo_surface_t *surface);
void rk_cairo_surface_mark_dirty(cairo_surface_t *surface);
cairo_status_t rk_cairo_surface_status(cairo_surface_t *surface);
cairo_status_t rk_cairo_surface_write_to_png_stream(cairo_surface_t *surface, cairo_write_func_t write_func, void *closure);
void rk_cairo_text_extents(cairo_t *cr, const char *utf8, cairo_text_extents_t *extents);
void rk_cairo_translate(cairo_t *cr, double tx, double ty);

#endif
