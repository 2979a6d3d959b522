// cairo opened on first use; see shim.h.
#include "shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char error[256];

static __typeof__(&cairo_arc) p_cairo_arc;
static __typeof__(&cairo_clip) p_cairo_clip;
static __typeof__(&cairo_restore) p_cairo_restore;
static __typeof__(&cairo_save) p_cairo_save;
static __typeof__(&cairo_scale) p_cairo_scale;
static __typeof__(&cairo_set_source_surface) p_cairo_set_source_surface;
static __typeof__(&cairo_translate) p_cairo_translate;
static __typeof__(&cairo_close_path) p_cairo_close_path;
static __typeof__(&cairo_create) p_cairo_create;
static __typeof__(&cairo_destroy) p_cairo_destroy;
static __typeof__(&cairo_fill) p_cairo_fill;
static __typeof__(&cairo_fill_preserve) p_cairo_fill_preserve;
static __typeof__(&cairo_image_surface_create) p_cairo_image_surface_create;
static __typeof__(&cairo_image_surface_create_from_png_stream) p_cairo_image_surface_create_from_png_stream;
static __typeof__(&cairo_image_surface_get_data) p_cairo_image_surface_get_data;
static __typeof__(&cairo_image_surface_get_height) p_cairo_image_surface_get_height;
static __typeof__(&cairo_image_surface_get_stride) p_cairo_image_surface_get_stride;
static __typeof__(&cairo_image_surface_get_width) p_cairo_image_surface_get_width;
static __typeof__(&cairo_line_to) p_cairo_line_to;
static __typeof__(&cairo_move_to) p_cairo_move_to;
static __typeof__(&cairo_new_path) p_cairo_new_path;
static __typeof__(&cairo_new_sub_path) p_cairo_new_sub_path;
static __typeof__(&cairo_paint) p_cairo_paint;
static __typeof__(&cairo_rectangle) p_cairo_rectangle;
static __typeof__(&cairo_select_font_face) p_cairo_select_font_face;
static __typeof__(&cairo_set_dash) p_cairo_set_dash;
static __typeof__(&cairo_set_font_size) p_cairo_set_font_size;
static __typeof__(&cairo_set_line_cap) p_cairo_set_line_cap;
static __typeof__(&cairo_set_line_join) p_cairo_set_line_join;
static __typeof__(&cairo_set_line_width) p_cairo_set_line_width;
static __typeof__(&cairo_set_source_rgba) p_cairo_set_source_rgba;
static __typeof__(&cairo_show_text) p_cairo_show_text;
static __typeof__(&cairo_status) p_cairo_status;
static __typeof__(&cairo_status_to_string) p_cairo_status_to_string;
static __typeof__(&cairo_stroke) p_cairo_stroke;
static __typeof__(&cairo_surface_destroy) p_cairo_surface_destroy;
static __typeof__(&cairo_surface_flush) p_cairo_surface_flush;
static __typeof__(&cairo_surface_mark_dirty) p_cairo_surface_mark_dirty;
static __typeof__(&cairo_surface_status) p_cairo_surface_status;
static __typeof__(&cairo_surface_write_to_png_stream) p_cairo_surface_write_to_png_stream;
static __typeof__(&cairo_text_extents) p_cairo_text_extents;

static void load(void) {
#if defined(__APPLE__)
    static const char *const names[] = {"libcairo.2.dylib", "/opt/homebrew/lib/libcairo.2.dylib", "/usr/local/lib/libcairo.2.dylib"};
#else
    static const char *const names[] = {"libcairo.so.2", "libcairo.so"};
#endif
    void *handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && handle == NULL; i++) handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, sizeof error, "%s", reason != NULL ? reason : "libcairo could not be opened");
        return;
    }
    int ok = 1;
    ok &= (p_cairo_arc = (__typeof__(&cairo_arc))dlsym(handle, "cairo_arc")) != NULL;
    ok &= (p_cairo_close_path = (__typeof__(&cairo_close_path))dlsym(handle, "cairo_close_path")) != NULL;
    ok &= (p_cairo_create = (__typeof__(&cairo_create))dlsym(handle, "cairo_create")) != NULL;
    ok &= (p_cairo_destroy = (__typeof__(&cairo_destroy))dlsym(handle, "cairo_destroy")) != NULL;
    ok &= (p_cairo_fill = (__typeof__(&cairo_fill))dlsym(handle, "cairo_fill")) != NULL;
    ok &= (p_cairo_fill_preserve = (__typeof__(&cairo_fill_preserve))dlsym(handle, "cairo_fill_preserve")) != NULL;
    ok &= (p_cairo_image_surface_create = (__typeof__(&cairo_image_surface_create))dlsym(handle, "cairo_image_surface_create")) != NULL;
    ok &= (p_cairo_image_surface_create_from_png_stream = (__typeof__(&cairo_image_surface_create_from_png_stream))dlsym(handle, "cairo_image_surface_create_from_png_stream")) != NULL;
    ok &= (p_cairo_image_surface_get_data = (__typeof__(&cairo_image_surface_get_data))dlsym(handle, "cairo_image_surface_get_data")) != NULL;
    ok &= (p_cairo_image_surface_get_height = (__typeof__(&cairo_image_surface_get_height))dlsym(handle, "cairo_image_surface_get_height")) != NULL;
    ok &= (p_cairo_image_surface_get_stride = (__typeof__(&cairo_image_surface_get_stride))dlsym(handle, "cairo_image_surface_get_stride")) != NULL;
    ok &= (p_cairo_image_surface_get_width = (__typeof__(&cairo_image_surface_get_width))dlsym(handle, "cairo_image_surface_get_width")) != NULL;
    ok &= (p_cairo_line_to = (__typeof__(&cairo_line_to))dlsym(handle, "cairo_line_to")) != NULL;
    ok &= (p_cairo_move_to = (__typeof__(&cairo_move_to))dlsym(handle, "cairo_move_to")) != NULL;
    ok &= (p_cairo_new_path = (__typeof__(&cairo_new_path))dlsym(handle, "cairo_new_path")) != NULL;
    ok &= (p_cairo_new_sub_path = (__typeof__(&cairo_new_sub_path))dlsym(handle, "cairo_new_sub_path")) != NULL;
    ok &= (p_cairo_paint = (__typeof__(&cairo_paint))dlsym(handle, "cairo_paint")) != NULL;
    ok &= (p_cairo_rectangle = (__typeof__(&cairo_rectangle))dlsym(handle, "cairo_rectangle")) != NULL;
    ok &= (p_cairo_select_font_face = (__typeof__(&cairo_select_font_face))dlsym(handle, "cairo_select_font_face")) != NULL;
    ok &= (p_cairo_set_dash = (__typeof__(&cairo_set_dash))dlsym(handle, "cairo_set_dash")) != NULL;
    ok &= (p_cairo_set_font_size = (__typeof__(&cairo_set_font_size))dlsym(handle, "cairo_set_font_size")) != NULL;
    ok &= (p_cairo_set_line_cap = (__typeof__(&cairo_set_line_cap))dlsym(handle, "cairo_set_line_cap")) != NULL;
    ok &= (p_cairo_set_line_join = (__typeof__(&cairo_set_line_join))dlsym(handle, "cairo_set_line_join")) != NULL;
    ok &= (p_cairo_set_line_width = (__typeof__(&cairo_set_line_width))dlsym(handle, "cairo_set_line_width")) != NULL;
    ok &= (p_cairo_set_source_rgba = (__typeof__(&cairo_set_source_rgba))dlsym(handle, "cairo_set_source_rgba")) != NULL;
    ok &= (p_cairo_show_text = (__typeof__(&cairo_show_text))dlsym(handle, "cairo_show_text")) != NULL;
    ok &= (p_cairo_status = (__typeof__(&cairo_status))dlsym(handle, "cairo_status")) != NULL;
    ok &= (p_cairo_status_to_string = (__typeof__(&cairo_status_to_string))dlsym(handle, "cairo_status_to_string")) != NULL;
    ok &= (p_cairo_stroke = (__typeof__(&cairo_stroke))dlsym(handle, "cairo_stroke")) != NULL;
    ok &= (p_cairo_surface_destroy = (__typeof__(&cairo_surface_destroy))dlsym(handle, "cairo_surface_destroy")) != NULL;
    ok &= (p_cairo_surface_flush = (__typeof__(&cairo_surface_flush))dlsym(handle, "cairo_surface_flush")) != NULL;
    ok &= (p_cairo_surface_mark_dirty = (__typeof__(&cairo_surface_mark_dirty))dlsym(handle, "cairo_surface_mark_dirty")) != NULL;
    ok &= (p_cairo_surface_status = (__typeof__(&cairo_surface_status))dlsym(handle, "cairo_surface_status")) != NULL;
    ok &= (p_cairo_surface_write_to_png_stream = (__typeof__(&cairo_surface_write_to_png_stream))dlsym(handle, "cairo_surface_write_to_png_stream")) != NULL;
    ok &= (p_cairo_text_extents = (__typeof__(&cairo_text_extents))dlsym(handle, "cairo_text_extents")) != NULL;
    ok &= (p_cairo_clip = (__typeof__(&cairo_clip))dlsym(handle, "cairo_clip")) != NULL;
    ok &= (p_cairo_restore = (__typeof__(&cairo_restore))dlsym(handle, "cairo_restore")) != NULL;
    ok &= (p_cairo_save = (__typeof__(&cairo_save))dlsym(handle, "cairo_save")) != NULL;
    ok &= (p_cairo_scale = (__typeof__(&cairo_scale))dlsym(handle, "cairo_scale")) != NULL;
    ok &= (p_cairo_set_source_surface = (__typeof__(&cairo_set_source_surface))dlsym(handle, "cairo_set_source_surface")) != NULL;
    ok &= (p_cairo_translate = (__typeof__(&cairo_translate))dlsym(handle, "cairo_translate")) != NULL;
    if (!ok) snprintf(error, sizeof error, "%s", "a cairo function is missing (cairo older than 1.10?)");
    loaded = ok;
}

int rk_cairo_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *rk_cairo_load_error(void) {
    pthread_once(&once, load);
    return error[0] != 0 ? error : NULL;
}

void rk_cairo_arc(cairo_t *cr, double xc, double yc, double radius, double angle1, double angle2) { p_cairo_arc(cr, xc, yc, radius, angle1, angle2); }
void rk_cairo_close_path(cairo_t *cr) { p_cairo_close_path(cr); }
cairo_t * rk_cairo_create(cairo_surface_t *target) { return p_cairo_create(target); }
void rk_cairo_destroy(cairo_t *cr) { p_cairo_destroy(cr); }
void rk_cairo_fill(cairo_t *cr) { p_cairo_fill(cr); }
void rk_cairo_fill_preserve(cairo_t *cr) { p_cairo_fill_preserve(cr); }
cairo_surface_t * rk_cairo_image_surface_create(cairo_format_t format, int width, int height) { return p_cairo_image_surface_create(format, width, height); }
cairo_surface_t * rk_cairo_image_surface_create_from_png_stream(cairo_read_func_t read_func, void *closure) { return p_cairo_image_surface_create_from_png_stream(read_func, closure); }
unsigned char * rk_cairo_image_surface_get_data(cairo_surface_t *surface) { return p_cairo_image_surface_get_data(surface); }
int rk_cairo_image_surface_get_height(cairo_surface_t *surface) { return p_cairo_image_surface_get_height(surface); }
int rk_cairo_image_surface_get_stride(cairo_surface_t *surface) { return p_cairo_image_surface_get_stride(surface); }
int rk_cairo_image_surface_get_width(cairo_surface_t *surface) { return p_cairo_image_surface_get_width(surface); }
void rk_cairo_line_to(cairo_t *cr, double x, double y) { p_cairo_line_to(cr, x, y); }
void rk_cairo_move_to(cairo_t *cr, double x, double y) { p_cairo_move_to(cr, x, y); }
void rk_cairo_new_path(cairo_t *cr) { p_cairo_new_path(cr); }
void rk_cairo_new_sub_path(cairo_t *cr) { p_cairo_new_sub_path(cr); }
void rk_cairo_paint(cairo_t *cr) { p_cairo_paint(cr); }
void rk_cairo_rectangle(cairo_t *cr, double x, double y, double width, double height) { p_cairo_rectangle(cr, x, y, width, height); }
void rk_cairo_select_font_face(cairo_t *cr, const char *family, cairo_font_slant_t slant, cairo_font_weight_t weight) { p_cairo_select_font_face(cr, family, slant, weight); }
void rk_cairo_set_dash(cairo_t *cr, const double *dashes, int num_dashes, double offset) { p_cairo_set_dash(cr, dashes, num_dashes, offset); }
void rk_cairo_set_font_size(cairo_t *cr, double size) { p_cairo_set_font_size(cr, size); }
void rk_cairo_set_line_cap(cairo_t *cr, cairo_line_cap_t line_cap) { p_cairo_set_line_cap(cr, line_cap); }
void rk_cairo_set_line_join(cairo_t *cr, cairo_line_join_t line_join) { p_cairo_set_line_join(cr, line_join); }
void rk_cairo_set_line_width(cairo_t *cr, double width) { p_cairo_set_line_width(cr, width); }
void rk_cairo_set_source_rgba(cairo_t *cr, double red, double green, double blue, double alpha) { p_cairo_set_source_rgba(cr, red, green, blue, alpha); }
void rk_cairo_show_text(cairo_t *cr, const char *utf8) { p_cairo_show_text(cr, utf8); }
cairo_status_t rk_cairo_status(cairo_t *cr) { return p_cairo_status(cr); }
const char * rk_cairo_status_to_string(cairo_status_t status) { return p_cairo_status_to_string(status); }
void rk_cairo_stroke(cairo_t *cr) { p_cairo_stroke(cr); }
void rk_cairo_surface_destroy(cairo_surface_t *surface) { p_cairo_surface_destroy(surface); }
void rk_cairo_surface_flush(cairo_surface_t *surface) { p_cairo_surface_flush(surface); }
void rk_cairo_surface_mark_dirty(cairo_surface_t *surface) { p_cairo_surface_mark_dirty(surface); }
cairo_status_t rk_cairo_surface_status(cairo_surface_t *surface) { return p_cairo_surface_status(surface); }
cairo_status_t rk_cairo_surface_write_to_png_stream(cairo_surface_t *surface, cairo_write_func_t write_func, void *closure) { return p_cairo_surface_write_to_png_stream(surface, write_func, closure); }
void rk_cairo_text_extents(cairo_t *cr, const char *utf8, cairo_text_extents_t *extents) { p_cairo_text_extents(cr, utf8, extents); }
void rk_cairo_clip(cairo_t *cr) { p_cairo_clip(cr); }
void rk_cairo_restore(cairo_t *cr) { p_cairo_restore(cr); }
void rk_cairo_save(cairo_t *cr) { p_cairo_save(cr); }
void rk_cairo_scale(cairo_t *cr, double sx, double sy) { p_cairo_scale(cr, sx, sy); }
void rk_cairo_set_source_surface(cairo_t *cr, cairo_surface_t *surface, double x, double y) { p_cairo_set_source_surface(cr, surface, x, y); }
void rk_cairo_translate(cairo_t *cr, double tx, double ty) { p_cairo_translate(cr, tx, ty); }
