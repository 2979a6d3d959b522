internal import CCairo
import Foundation
public import RouteKit

/// A latitude/longitude box, grown location by location: the first pass of a heatmap.
public struct GeoBounds: Sendable, Hashable {
    public private(set) var minLatitude = Double.infinity
    public private(set) var maxLatitude = -Double.infinity
    public private(set) var minLongitude = Double.infinity
    public private(set) var maxLongitude = -Double.infinity

    /// An empty box.
    public init() {}

    /// Whether nothing was added.
    public var isEmpty: Bool { minLatitude > maxLatitude }

    /// Grows the box to hold `locations`.
    public mutating func add(_ locations: [Location]) {
        for l in locations {
            minLatitude = min(minLatitude, l.latitude)
            maxLatitude = max(maxLatitude, l.latitude)
            minLongitude = min(minLongitude, l.longitude)
            maxLongitude = max(maxLongitude, l.longitude)
        }
    }
}

/// A density image of many routes: each route adds one to every pixel its line crosses (once per route, however
/// often it passes), and the counts are shown on a logarithmic colour ramp. Memory is two counters a pixel,
/// whatever the number of routes: routes are streamed in, batch by batch.
///
/// The projection is Web Mercator fitted to the bounds, so shapes look as on a web map at any latitude.
public struct Heatmap: Sendable {
    package let width: Int
    package let height: Int
    private var counts: [UInt32]
    private var stamps: [UInt32]
    private var route: UInt32 = 0
    private var previous: (Int, Int)?
    /// The index in the current route of the next location.
    private var index = 0
    private let originX: Double
    private let originY: Double
    private let scale: Double
    /// Routes added.
    package private(set) var routeCount = 0
    /// The latitude at the picture's middle (for the scale bar).
    private let middleLatitude: Double
    /// The web map zoom the picture is drawn at, when it was fitted to one (for a basemap).
    package let zoom: Int?

    /// A heatmap of `size` covering `bounds` (with a margin of 4%).
    public init(size: PictureSize, bounds: GeoBounds) {
        self.init(size: size, bounds: bounds, zoomLevels: nil)
    }

    /// A heatmap of `size` covering `bounds`: with a margin of 4%, or, with `zoomLevels`, at the highest web map
    /// zoom among them at which the bounds fit with that margin (so that a basemap's tiles go under it unscaled;
    /// ``basemapView``).
    package init(size: PictureSize, bounds: GeoBounds, zoomLevels: ClosedRange<Int>?) {
        width = size.width
        height = size.height
        counts = [UInt32](repeating: 0, count: size.width * size.height)
        stamps = counts
        guard !bounds.isEmpty else {
            originX = 0
            originY = 0
            scale = 1
            middleLatitude = 0
            zoom = nil
            return
        }
        middleLatitude = (bounds.minLatitude + bounds.maxLatitude) / 2
        let x0 = Self.mercatorX(bounds.minLongitude)
        let x1 = Self.mercatorX(bounds.maxLongitude)
        let y0 = Self.mercatorY(bounds.maxLatitude)  // top
        let y1 = Self.mercatorY(bounds.minLatitude)
        let spanX = max(x1 - x0, 1e-9)
        let spanY = max(y1 - y0, 1e-9)
        let s: Double
        if let zoomLevels {
            let z = WebMercator.fittingZoom(
                spanX: spanX, spanY: spanY, width: Double(width) * 0.92, height: Double(height) * 0.92,
                zoomLevels: zoomLevels)
            zoom = z
            s = WebMercator.worldPixels(zoom: z)
        } else {
            zoom = nil
            s = min(Double(width) * 0.92 / spanX, Double(height) * 0.92 / spanY)
        }
        scale = s
        originX = x0 - (Double(width) / s - spanX) / 2
        originY = y0 - (Double(height) / s - spanY) / 2
    }

    /// Where a basemap goes under the picture: `nil` unless it was fitted to a zoom.
    package var basemapView: BasemapView? {
        guard let zoom else { return nil }
        return BasemapView(
            zoom: zoom, originX: originX * scale, originY: originY * scale, width: Double(width),
            height: Double(height))
    }

    static func mercatorX(_ lon: Double) -> Double { (lon + 180) / 360 }
    static func mercatorY(_ lat: Double) -> Double {
        let phi = min(85.05, max(-85.05, lat)) * .pi / 180
        return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2
    }

    /// The pixel of a location (may lie outside the image).
    package func pixel(latitude: Double, longitude: Double) -> (x: Int, y: Int) {
        let x = (Self.mercatorX(longitude) - originX) * scale
        let y = (Self.mercatorY(latitude) - originY) * scale
        return (Int(x.rounded(.down)), Int(y.rounded(.down)))
    }

    /// Starts the next route: the pixels of its line count once.
    public mutating func beginRoute() {
        route &+= 1
        if route == 0 {
            // 2³² routes later the stamps wrap: clear them so none is mistaken for the current route.
            for i in stamps.indices { stamps[i] = 0 }
            route = 1
        }
        routeCount += 1
        previous = nil
        index = 0
    }

    /// The next locations of the current route, in order: the line from each to the next is drawn, except into a
    /// location whose index in the route is in `segmentStarts` (the route was paused before it).
    public mutating func add(_ locations: [Location], segmentStarts: Set<Int> = []) {
        for l in locations {
            if !segmentStarts.isEmpty && segmentStarts.contains(index) { previous = nil }
            index += 1
            let p = pixel(latitude: l.latitude, longitude: l.longitude)
            if let q = previous {
                line(from: q, to: p)
            } else {
                plot(p.x, p.y)
            }
            previous = p
        }
    }

    @inline(__always) private mutating func plot(_ x: Int, _ y: Int) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = y * width + x
        if stamps[i] != route {
            stamps[i] = route
            counts[i] &+= 1
        }
    }

    /// Bresenham's line, clipped to a little beyond the image so a far jump costs nothing.
    private mutating func line(from a: (Int, Int), to b: (Int, Int)) {
        var (x0, y0) = a
        let (x1, y1) = b
        let dx = abs(x1 - x0)
        let dy = -abs(y1 - y0)
        // Both ends off the image on one side: nothing to draw.
        if (x0 < 0 && x1 < 0) || (y0 < 0 && y1 < 0) || (x0 >= width && x1 >= width) || (y0 >= height && y1 >= height) {
            return
        }
        // A line longer than the image's perimeter is a gap in the recording, not a path: only its end is drawn.
        if dx - dy > 2 * (width + height) {
            plot(x1, y1)
            return
        }
        let sx = x0 < x1 ? 1 : -1
        let sy = y0 < y1 ? 1 : -1
        var err = dx + dy
        while true {
            plot(x0, y0)
            if x0 == x1 && y0 == y1 { break }
            let e2 = 2 * err
            if e2 >= dy {
                err += dy
                x0 += sx
            }
            if e2 <= dx {
                err += dx
                y0 += sy
            }
        }
    }

    /// How many routes crossed pixel (x, y).
    package func count(x: Int, y: Int) -> Int {
        guard x >= 0, y >= 0, x < width, y < height else { return 0 }
        return Int(counts[y * width + x])
    }

    /// The highest count.
    package var maximumCount: Int { Int(counts.max() ?? 0) }

    /// The colour of a count: dark background, then purple, red, orange, yellow to white on a log scale.
    static func color(count: UInt32, maximum: UInt32) -> (UInt8, UInt8, UInt8) {
        guard count > 0, maximum > 0 else { return (13, 17, 23) }
        let t = maximum == 1 ? 0.55 : 0.25 + 0.75 * log(Double(count) + 1) / log(Double(maximum) + 1)
        let stops: [(Double, (Double, Double, Double))] = [
            (0, (13, 17, 23)), (0.25, (110, 40, 170)), (0.5, (220, 40, 60)), (0.75, (255, 150, 30)),
            (0.9, (255, 230, 80)), (1, (255, 255, 255)),
        ]
        var k = 1
        while k < stops.count - 1 && stops[k].0 < t { k += 1 }
        let (t0, c0) = stops[k - 1]
        let (t1, c1) = stops[k]
        let f = min(1, max(0, (t - t0) / (t1 - t0)))
        func mix(_ a: Double, _ b: Double) -> UInt8 { UInt8((a + (b - a) * f).rounded()) }
        return (mix(c0.0, c1.0), mix(c0.1, c1.1), mix(c0.2, c1.2))
    }

    /// The image as PNG.
    public func png() throws(RouteKitError) -> [UInt8] {
        try png(basemap: nil)
    }

    /// The image as PNG, over `basemap` (dimmed, so that the routes stand out) when one is given; with a legend of
    /// the colours and a scale bar when the picture is at least 320 × 240.
    package func png(basemap: Basemap?) throws(RouteKitError) -> [UInt8] {
        let surface = try ImageSurface(width: width, height: height)
        let maximum = counts.max() ?? 0
        if let basemap {
            var base = Scene(width: width, height: height, background: RGBA(13, 17, 23))
            let clip = Rect(x: 0, y: 0, width: Double(width), height: Double(height))
            for tile in basemap.tiles {
                base.add(
                    .image(
                        png: tile.image.bytes,
                        frame: Rect(x: tile.x, y: tile.y, width: WebMercator.tileSize, height: WebMercator.tileSize),
                        clip: clip))
            }
            base.add(
                .rect(
                    x: 0, y: 0, width: Double(width), height: Double(height),
                    style: Style(fill: RGBA(13, 17, 23, alpha: 0.55))))
            try draw(base, on: surface)
        }
        let overBasemap = basemap != nil
        var lut: [UInt32] = []
        let lutSize = Int(min(maximum, 65_535)) + 1
        lut.reserveCapacity(lutSize)
        for c in 0..<lutSize {
            let (r, g, b) = Self.color(count: UInt32(c), maximum: maximum)
            lut.append(0xFF00_0000 | UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b))
        }
        counts.withUnsafeBufferPointer { counts in
            surface.withPixels { pixels, stride in
                for y in 0..<height {
                    for x in 0..<width {
                        let c = counts[y * width + x]
                        // Over a basemap, a pixel no route crossed shows the map.
                        if overBasemap && c == 0 { continue }
                        pixels[y * stride + x] =
                            Int(c) < lutSize
                            ? lut[Int(c)]
                            : {
                                let (r, g, b) = Self.color(count: c, maximum: maximum)
                                return 0xFF00_0000 | UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
                            }()
                    }
                }
            }
        }
        if width >= 320 && height >= 240 {
            try draw(legend(maximum: maximum, attribution: basemap?.attribution ?? ""), on: surface, background: false)
        }
        return try surface.png()
    }

    /// Draws `scene`'s elements on `surface` (its background too, unless `background` is false).
    private func draw(_ scene: Scene, on surface: ImageSurface, background: Bool = true) throws(RouteKitError) {
        guard let cr = rk_cairo_create(surface.handle) else {
            throw RouteKitError(.io, "cairo could not create a drawing context")
        }
        defer { rk_cairo_destroy(cr) }
        if background {
            PNGRasteriser.setColor(cr, scene.background)
            rk_cairo_paint(cr)
        }
        for element in scene.elements { PNGRasteriser.draw(element, cr) }
        rk_cairo_surface_flush(surface.handle)
    }

    /// The legend (the colour ramp from one route to the most on a pixel), the scale bar, and a basemap's
    /// attribution, as scene elements over the picture.
    package func legend(maximum: UInt32, attribution: String) -> Scene {
        var scene = Scene(width: width, height: height)
        let white = RGBA(255, 255, 255)
        let panel = RGBA(13, 17, 23, alpha: 0.72)
        let w = Double(width)
        let h = Double(height)
        // The legend, bottom left.
        let ramp = min(160.0, w * 0.3)
        let x0 = 12.0
        let y0 = h - 40
        scene.add(.rect(x: x0 - 6, y: y0 - 16, width: ramp + 12, height: 40, style: Style(fill: panel)))
        scene.add(
            .text("routes on a pixel", at: Point(x0, y0 - 4), size: 10, anchor: .start, color: white, bold: true))
        let steps = 40
        for k in 0..<steps {
            // Count for this band: 1 … maximum on the ramp's log scale.
            let f = Double(k) / Double(steps - 1)
            let count = maximum <= 1 ? 1 : UInt32((exp(f * log(Double(maximum)))).rounded())
            let (r, g, b) = Self.color(count: max(1, count), maximum: max(1, maximum))
            scene.add(
                .rect(
                    x: x0 + Double(k) * ramp / Double(steps), y: y0, width: ramp / Double(steps) + 0.5, height: 9,
                    style: Style(fill: RGBA(r, g, b))))
        }
        scene.add(.text("1", at: Point(x0, y0 + 20), size: 10, anchor: .start, color: white, bold: false))
        scene.add(
            .text(
                "\(max(1, maximum))", at: Point(x0 + ramp, y0 + 20), size: 10, anchor: .end, color: white, bold: false))
        // The scale bar, bottom right: a round length about a fifth of the width.
        let metresPerPixel = WebMercator.equator * cos(middleLatitude * .pi / 180) / scale
        if metresPerPixel.isFinite && metresPerPixel > 0 {
            let metres = RoutePicture.niceStep(w / 5 * metresPerPixel, minimum: 1)
            let bar = metres / metresPerPixel
            let right = w - 14
            let by = h - (attribution.isEmpty ? 14 : 30)
            scene.add(.rect(x: right - bar - 6, y: by - 20, width: bar + 12, height: 26, style: Style(fill: panel)))
            scene.add(
                .path(
                    [Point(right - bar, by - 5), Point(right - bar, by), Point(right, by), Point(right, by - 5)],
                    closed: false, style: Style(stroke: white, lineWidth: 1.5)))
            let label =
                metres >= 1_000
                ? "\(RoutePicture.formatNumber(metres / 1_000)) km" : "\(RoutePicture.formatNumber(metres)) m"
            scene.add(
                .text(label, at: Point(right - bar / 2, by - 7), size: 11, anchor: .middle, color: white, bold: false))
        }
        if !attribution.isEmpty {
            let size = 10.0
            let textWidth = min(w - 8, Double(attribution.count) * size * 0.56 + 8)
            scene.add(
                .rect(x: w - textWidth, y: h - size - 6, width: textWidth, height: size + 6, style: Style(fill: panel)))
            scene.add(
                .text(attribution, at: Point(w - 4, h - 4), size: size, anchor: .end, color: white, bold: false))
        }
        return scene
    }
}

/// A PNG read back into pixels (through cairo): what tests and tools use to look at a rendered picture.
package struct DecodedPNG: Sendable {
    package let width: Int
    package let height: Int
    /// 0xAARRGGBB, row by row (premultiplied alpha, as cairo keeps it; opaque pictures are unaffected).
    package let pixels: [UInt32]

    /// Decodes PNG bytes; throws when they are not a PNG cairo can read.
    package init(_ bytes: [UInt8]) throws(RouteKitError) {
        try requireCairo()
        guard let surface = pngSurface(bytes) else { throw RouteKitError(.invalidValue, "not a PNG cairo can read") }
        defer { rk_cairo_surface_destroy(surface) }
        guard let data = rk_cairo_image_surface_get_data(surface) else {
            throw RouteKitError(.invalidValue, "not a PNG cairo can read")
        }
        let w = Int(rk_cairo_image_surface_get_width(surface))
        let h = Int(rk_cairo_image_surface_get_height(surface))
        let stride = Int(rk_cairo_image_surface_get_stride(surface)) / 4
        var pixels: [UInt32] = []
        pixels.reserveCapacity(w * h)
        data.withMemoryRebound(to: UInt32.self, capacity: stride * h) { p in
            for y in 0..<h {
                for x in 0..<w { pixels.append(p[y * stride + x]) }
            }
        }
        width = w
        height = h
        self.pixels = pixels
    }

    /// The pixel at (x, y), 0xAARRGGBB.
    package func pixel(x: Int, y: Int) -> UInt32 { pixels[y * width + x] }

    /// Perceived brightness of the pixel at (x, y), 0–255.
    package func brightness(x: Int, y: Int) -> Double {
        let p = pixel(x: x, y: y)
        return 0.299 * Double(p >> 16 & 0xFF) + 0.587 * Double(p >> 8 & 0xFF) + 0.114 * Double(p & 0xFF)
    }
}
