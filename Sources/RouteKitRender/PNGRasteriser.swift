internal import CCairo
public import RouteKit

/// Rasterises a ``Scene`` to PNG with cairo (an image surface, antialiased paths, DejaVu Sans through the toy text
/// API). The same scene and the same cairo give the same bytes.
public enum PNGRasteriser {
    /// The PNG file's bytes.
    public static func png(_ scene: Scene) throws(RouteKitError) -> [UInt8] {
        try requireCairo()
        let surface = try ImageSurface(width: scene.width, height: scene.height)
        guard let cr = rk_cairo_create(surface.handle) else {
            throw RouteKitError(.io, "cairo could not create a drawing context")
        }
        defer { rk_cairo_destroy(cr) }
        setColor(cr, scene.background)
        rk_cairo_paint(cr)
        for element in scene.elements { draw(element, cr) }
        let status = rk_cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RouteKitError(.io, "cairo could not draw: \(String(cString: rk_cairo_status_to_string(status)))")
        }
        return try surface.png()
    }

    static func setColor(_ cr: OpaquePointer, _ c: RGBA) {
        rk_cairo_set_source_rgba(cr, Double(c.red) / 255, Double(c.green) / 255, Double(c.blue) / 255, c.alpha)
    }

    static func paint(_ cr: OpaquePointer, _ style: Style) {
        if let fill = style.fill {
            setColor(cr, fill)
            if style.stroke != nil { rk_cairo_fill_preserve(cr) } else { rk_cairo_fill(cr) }
        }
        if let stroke = style.stroke {
            setColor(cr, stroke)
            rk_cairo_set_line_width(cr, style.lineWidth)
            rk_cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            rk_cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
            style.dash.withUnsafeBufferPointer { rk_cairo_set_dash(cr, $0.baseAddress, Int32($0.count), 0) }
            rk_cairo_stroke(cr)
        }
        rk_cairo_new_path(cr)
    }

    static func draw(_ element: SceneElement, _ cr: OpaquePointer) {
        switch element {
        case .path(let points, let closed, let style):
            guard let first = points.first else { return }
            rk_cairo_move_to(cr, first.x, first.y)
            for p in points.dropFirst() { rk_cairo_line_to(cr, p.x, p.y) }
            if closed { rk_cairo_close_path(cr) }
            paint(cr, style)
        case .circle(let c, let r, let style):
            rk_cairo_new_sub_path(cr)
            rk_cairo_arc(cr, c.x, c.y, r, 0, 2 * Double.pi)
            paint(cr, style)
        case .rect(let x, let y, let w, let h, let style):
            rk_cairo_rectangle(cr, x, y, w, h)
            paint(cr, style)
        case .text(let string, let at, let size, let anchor, let color, let bold):
            rk_cairo_select_font_face(
                cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
            rk_cairo_set_font_size(cr, size)
            var extents = cairo_text_extents_t()
            rk_cairo_text_extents(cr, string, &extents)
            let dx: Double
            switch anchor {
            case .start: dx = 0
            case .middle: dx = -extents.x_advance / 2
            case .end: dx = -extents.x_advance
            }
            setColor(cr, color)
            rk_cairo_move_to(cr, at.x + dx, at.y)
            rk_cairo_show_text(cr, string)
            rk_cairo_new_path(cr)
        case .image(let png, let frame, let clip):
            // A tile cairo cannot read is left out: the map's background shows through.
            guard let surface = pngSurface(png) else { return }
            defer { rk_cairo_surface_destroy(surface) }
            let w = Double(rk_cairo_image_surface_get_width(surface))
            let h = Double(rk_cairo_image_surface_get_height(surface))
            guard w > 0, h > 0, frame.width > 0, frame.height > 0 else { return }
            rk_cairo_save(cr)
            rk_cairo_new_path(cr)
            rk_cairo_rectangle(cr, clip.x, clip.y, clip.width, clip.height)
            rk_cairo_clip(cr)
            rk_cairo_translate(cr, frame.x, frame.y)
            rk_cairo_scale(cr, frame.width / w, frame.height / h)
            rk_cairo_set_source_surface(cr, surface, 0, 0)
            rk_cairo_paint(cr)
            rk_cairo_restore(cr)
        }
    }
}

/// A cairo ARGB32 image surface, destroyed with its owner (a class: exactly one owner, never copied).
final class ImageSurface {
    let handle: OpaquePointer
    let width: Int
    let height: Int

    init(width: Int, height: Int) throws(RouteKitError) {
        try requireCairo()
        guard let s = rk_cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
            rk_cairo_surface_status(s) == CAIRO_STATUS_SUCCESS
        else {
            throw RouteKitError(.io, "cairo could not create a \(width)x\(height) image (out of memory?)")
        }
        handle = s
        self.width = width
        self.height = height
    }

    deinit { rk_cairo_surface_destroy(handle) }

    /// Writes rows of 0xAARRGGBB pixels (premultiplied, as cairo keeps them) into the surface.
    func withPixels(_ body: (UnsafeMutablePointer<UInt32>, _ rowStride: Int) -> Void) {
        rk_cairo_surface_flush(handle)
        guard let data = rk_cairo_image_surface_get_data(handle) else { return }
        let stride = Int(rk_cairo_image_surface_get_stride(handle)) / 4
        data.withMemoryRebound(to: UInt32.self, capacity: stride * height) { body($0, stride) }
        rk_cairo_surface_mark_dirty(handle)
    }

    /// The surface as PNG bytes.
    func png() throws(RouteKitError) -> [UInt8] {
        final class Sink { var bytes: [UInt8] = [] }
        let sink = Sink()
        let status = rk_cairo_surface_write_to_png_stream(
            handle,
            { closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
                let sink = Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue()
                sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(sink).toOpaque())
        withExtendedLifetime(sink) {}
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RouteKitError(
                .io, "cairo could not encode PNG: \(String(cString: rk_cairo_status_to_string(status)))")
        }
        return sink.bytes
    }
}

/// A cairo image surface read from PNG bytes (the caller destroys it), or `nil` when they are not a PNG cairo
/// reads.
func pngSurface(_ bytes: [UInt8]) -> OpaquePointer? {
    final class Source {
        let bytes: [UInt8]
        var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }
    let source = Source(bytes)
    let surface = rk_cairo_image_surface_create_from_png_stream(
        { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
            let source = Unmanaged<Source>.fromOpaque(closure).takeUnretainedValue()
            let n = Int(length)
            guard source.offset + n <= source.bytes.count else { return CAIRO_STATUS_READ_ERROR }
            source.bytes.withUnsafeBufferPointer { b in
                guard let base = b.baseAddress else { return }
                data.update(from: base + source.offset, count: n)
            }
            source.offset += n
            return CAIRO_STATUS_SUCCESS
        }, Unmanaged.passUnretained(source).toOpaque())
    withExtendedLifetime(source) {}
    guard let surface else { return nil }
    guard rk_cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
        rk_cairo_surface_destroy(surface)
        return nil
    }
    return surface
}

/// Opens cairo on first use (it is not linked: see the `CCairo` target); throws, saying what to install, where it
/// cannot be opened.
func requireCairo() throws(RouteKitError) {
    guard rk_cairo_load() == 0 else { return }
    let reason = rk_cairo_load_error().map { String(cString: $0) } ?? "unknown"
    throw RouteKitError(
        .io, "PNG needs the cairo library (Debian: apt-get install libcairo2), which could not be opened: \(reason)")
}
