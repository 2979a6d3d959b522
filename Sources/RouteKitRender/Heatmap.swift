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

    /// A heatmap of `size` covering `bounds` (with a margin of 4%).
    public init(size: PictureSize, bounds: GeoBounds) {
        width = size.width
        height = size.height
        counts = [UInt32](repeating: 0, count: size.width * size.height)
        stamps = counts
        guard !bounds.isEmpty else {
            originX = 0
            originY = 0
            scale = 1
            return
        }
        let x0 = Self.mercatorX(bounds.minLongitude)
        let x1 = Self.mercatorX(bounds.maxLongitude)
        let y0 = Self.mercatorY(bounds.maxLatitude)  // top
        let y1 = Self.mercatorY(bounds.minLatitude)
        let spanX = max(x1 - x0, 1e-9)
        let spanY = max(y1 - y0, 1e-9)
        let s = min(Double(width) * 0.92 / spanX, Double(height) * 0.92 / spanY)
        scale = s
        originX = x0 - (Double(width) / s - spanX) / 2
        originY = y0 - (Double(height) / s - spanY) / 2
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
        let surface = try ImageSurface(width: width, height: height)
        let maximum = counts.max() ?? 0
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
        return try surface.png()
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
        final class Source {
            let bytes: [UInt8]
            var offset = 0
            init(_ bytes: [UInt8]) { self.bytes = bytes }
        }
        try requireCairo()
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
        guard let surface else { throw RouteKitError(.invalidValue, "not a PNG") }
        defer { rk_cairo_surface_destroy(surface) }
        guard rk_cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS,
            let data = rk_cairo_image_surface_get_data(surface)
        else {
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
