import Foundation
import RouteKit
import RouteKitProcessing
import Testing

@testable import RouteKitRender

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Locations along a path given in metres east and north of (51.5, -0.1), one every `seconds`.
func track(_ metres: [(Double, Double)], seconds: Double = 1, altitude: Double? = nil) -> [Location] {
    let frame = LocalProjection(latitude: 51.5, longitude: -0.1)
    return metres.enumerated().map { i, p in
        let (lat, lon) = frame.unproject(x: p.0, y: p.1)
        return Location(
            latitude: lat, longitude: lon,
            timestamp: Timestamp(Instant(seconds: 1_750_000_000 + Int64(Double(i) * seconds))),
            altitude: altitude.map { $0 + Double(i % 7) })
    }
}

func renderTrack(_ locations: [Location]) -> RenderTrack {
    var t = RenderTrack()
    t.append(locations)
    return t
}

/// The `d` attributes of the SVG's paths stroked in `color`, read with an XML parser (which also checks the
/// document is well-formed).
final class SVGPaths: NSObject, XMLParserDelegate {
    var paths: [(d: String, stroke: String?, width: String?)] = []
    var texts = 0
    static func parse(_ bytes: [UInt8]) throws -> SVGPaths {
        let parser = XMLParser(data: Data(bytes))
        let delegate = SVGPaths()
        parser.delegate = delegate
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.fileReadCorruptFile) }
        return delegate
    }
    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes: [String: String] = [:]
    ) {
        if elementName == "path", let d = attributes["d"] { paths.append((d, attributes["stroke"], attributes["stroke-width"])) }
        if elementName == "text" { texts += 1 }
    }
    func vertices(stroke: String, width: String) -> [Int] {
        paths.filter { $0.stroke == stroke && $0.width == width }.map { $0.d.filter { $0 == "M" || $0 == "L" }.count }
    }
}

@Suite("Route pictures")
struct RoutePictureTests {
    /// Five corners of a 2 km walk: far enough apart that no vertex is dropped.
    static let corners = track([(0, 0), (800, 0), (800, 600), (200, 900), (-300, 300)], seconds: 120, altitude: 30)

    @Test("the SVG is well-formed XML and the route's path holds exactly the route's five vertices")
    func svgVertices() throws {
        let scene = RoutePicture.scene(
            RoutePictureInput(current: renderTrack(Self.corners), title: "Walk"), size: try PictureSize(parsing: "800x600"))
        let svg = SVGWriter.svg(scene)
        let parsed = try SVGPaths.parse(svg)
        #expect(parsed.vertices(stroke: "#0969da", width: "2.5") == [5])
        #expect(parsed.texts > 3, "title, caption, scale bar, north, axis labels")
        #expect(String(decoding: svg, as: UTF8.self).contains("width=\"800\" height=\"600\""))
    }

    @Test("the PNG has the requested size and the route's colour along each of its legs")
    func pngAlongRoute() throws {
        var input = RoutePictureInput(current: renderTrack(Self.corners))
        input.title = ""
        let size = try PictureSize(width: 640, height: 480)
        let scene = RoutePicture.scene(input, size: size)
        let png = try PNGRasteriser.png(scene)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let image = try DecodedPNG(png)
        #expect(image.width == 640 && image.height == 480)
        // The route's path in pixels, from the scene: the middle of every leg is blue (route colour 9,105,218).
        let path = try #require(
            scene.elements.compactMap { e -> [Point]? in
                if case .path(let p, _, let style) = e, style.stroke == RGBA(9, 105, 218), style.lineWidth == 2.5 { return p }
                return nil
            }.first)
        #expect(path.count == 5)
        for (a, b) in zip(path, path.dropFirst()) {
            let x = Int(((a.x + b.x) / 2).rounded(.down))
            let y = Int(((a.y + b.y) / 2).rounded(.down))
            let p = image.pixel(x: x, y: y)
            let (r, bl) = (Int(p >> 16 & 0xFF), Int(p & 0xFF))
            #expect(bl > r + 80, "pixel (\(x), \(y)) on the route is 0x\(String(p, radix: 16))")
        }
        // A corner of the map far from the route keeps the map's background.
        #expect(image.pixel(x: 20, y: 60) & 0xFF_FFFF == 0xF6_F8FA)
    }

    @Test("the same input gives the same bytes, SVG and PNG")
    func deterministic() throws {
        let size = try PictureSize(parsing: "700x700")
        func once() throws -> ([UInt8], [UInt8]) {
            var input = RoutePictureInput(current: renderTrack(Self.corners), title: "Ride")
            input.heartRate = Self.corners.enumerated().map {
                QuantitySample(timestamp: $1.timestamp!, value: 120 + Double($0 * 10))
            }
            input.zones = try Zones.heartRate(maximum: 185)
            let scene = RoutePicture.scene(input, size: size)
            return (SVGWriter.svg(scene), try PNGRasteriser.png(scene))
        }
        let (svg1, png1) = try once()
        let (svg2, png2) = try once()
        #expect(svg1 == svg2)
        #expect(png1 == png2)
    }

    @Test("a 1,000,000-point route draws a path no more detailed than its pixels")
    func millionPoints() throws {
        // A wiggly 50 km line: a point every 5 cm, with a 2 m sideways wiggle.
        var t = RenderTrack()
        t.reserve(1_000_000)
        var batch: [Location] = []
        let frame = LocalProjection(latitude: 45, longitude: 7)
        for i in 0..<1_000_000 {
            let x = Double(i) * 0.05
            let y = 3_000 * sin(x / 4_000) + 2 * sin(Double(i) / 3)
            let (lat, lon) = frame.unproject(x: x, y: y)
            batch.append(
                Location(
                    latitude: lat, longitude: lon, timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64(i / 10))),
                    altitude: 200 + y / 30))
            if batch.count == 16_384 {
                t.append(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        t.append(batch)
        #expect(t.count == 1_000_000)
        let scene = RoutePicture.scene(RoutePictureInput(current: t), size: try PictureSize(parsing: "1000x800"))
        let map = scene.elements.compactMap { e -> Int? in
            if case .path(let p, _, let style) = e, style.stroke == RGBA(9, 105, 218), style.lineWidth == 2.5 { return p.count }
            return nil
        }
        #expect(map.count == 1)
        // The map is under 1,000 px wide and the curve about 1.5 widths long: a few thousand vertices at most.
        #expect(map[0] > 50 && map[0] < 5_000, "\(map)")
        // Profiles: at most four vertices a pixel column.
        #expect(scene.pathVertexCount < 20_000, "\(scene.pathVertexCount)")
        #expect(SVGWriter.svg(scene).count < 1_000_000)
    }

    @Test("a processed route: the raw version drawn faint under it and the processing's numbers in the caption")
    func processed() throws {
        var input = RoutePictureInput(current: renderTrack(Self.corners))
        input.raw = renderTrack(track([(0, 0), (400, 20), (800, 0), (790, 300), (800, 600), (200, 900), (-300, 300)]))
        input.processing = ProcessingNumbers(metadata: [
            "pointsIn": .integer(5_400), "pointsOut": .integer(812), "smoothingRmsMetres": .double(1.84),
            "maxDeviationMetres": .double(4.9), "lengthInMetres": .double(12_410), "lengthOutMetres": .double(12_380),
        ])
        let svg = String(decoding: SVGWriter.svg(RoutePicture.scene(input, size: try PictureSize(parsing: "800x600"))), as: UTF8.self)
        let parsed = try SVGPaths.parse(Array(svg.utf8))
        #expect(parsed.vertices(stroke: "#8c959f", width: "1.5") == [7])
        #expect(parsed.vertices(stroke: "#0969da", width: "2.5") == [5])
        // The raw line comes first: drawn under the current one.
        let rawAt = try #require(svg.range(of: "stroke=\"#8c959f\""))
        let currentAt = try #require(svg.range(of: "stroke=\"#0969da\""))
        #expect(rawAt.lowerBound < currentAt.lowerBound)
        #expect(svg.contains("5,400 → 812 points · smoothing RMS 1.8 m · max deviation 4.9 m · 12.41 → 12.38 km"))
        #expect(ProcessingNumbers(metadata: ["gpxName": .string("x")]) == nil)
    }

    @Test("heart rate: a profile over the zone bands and a time-in-zone bar")
    func heartRateProfile() throws {
        let legs = (0..<600).map { (Double($0) * 4, 0.0) }
        var input = RoutePictureInput(current: renderTrack(track(legs)))
        input.heartRate = track(legs).enumerated().map {
            QuantitySample(timestamp: $1.timestamp!, value: $0 < 300 ? 110 : 170)
        }
        let zones = try Zones.heartRate(maximum: 190)
        input.zones = zones
        input.zoneTimes = zones.lowerBounds.indices.map {
            ZoneTime(zone: $0 + 1, lower: zones.lowerBounds[$0], upper: nil, seconds: $0 == 1 ? 300 : $0 == 4 ? 299 : 0)
        }
        let svg = String(decoding: SVGWriter.svg(RoutePicture.scene(input, size: try PictureSize(parsing: "900x900"))), as: UTF8.self)
        #expect(svg.contains(">Heart rate (bpm)<"))
        #expect(svg.contains(">Z2 0:05<") && svg.contains(">Z5 0:04<"))
        // One band per zone that overlaps the drawn range.
        #expect(svg.components(separatedBy: "fill-opacity=\"0.14\"").count - 1 >= 2)
    }

    @Test("picture sizes: WIDTHxHEIGHT within 64…8192")
    func sizes() throws {
        #expect(try PictureSize(parsing: "1200x800") == PictureSize(width: 1200, height: 800))
        for bad in ["1200", "x800", "10x10", "9000x100", "axb", "12x34x56"] {
            #expect(throws: RouteKitError.self) { try PictureSize(parsing: bad) }
        }
    }
}

@Suite("Heatmap")
struct HeatmapTests {
    static let frame = LocalProjection(latitude: 48.85, longitude: 2.35)
    static func line(from a: (Double, Double), to b: (Double, Double), points: Int = 200) -> [Location] {
        (0..<points).map { i in
            let f = Double(i) / Double(points - 1)
            let (lat, lon) = frame.unproject(x: a.0 + (b.0 - a.0) * f, y: a.1 + (b.1 - a.1) * f)
            return Location(latitude: lat, longitude: lon)
        }
    }

    @Test("two crossing routes: brightest where they cross, and a route counts once on a pixel it passes twice")
    func crossing() throws {
        let horizontal = Self.line(from: (-1_000, 0), to: (1_000, 0))
        // The second goes up and comes back down the same line: still one route on its pixels.
        let vertical = Self.line(from: (0, -1_000), to: (0, 1_000)) + Self.line(from: (0, 1_000), to: (0, -1_000))
        var bounds = GeoBounds()
        bounds.add(horizontal)
        bounds.add(vertical)
        var map = Heatmap(size: try PictureSize(width: 200, height: 200), bounds: bounds)
        map.beginRoute()
        map.add(horizontal)
        map.beginRoute()
        map.add(vertical)
        #expect(map.routeCount == 2)
        #expect(map.maximumCount == 2)
        let centre = map.pixel(latitude: Self.frame.latitude, longitude: Self.frame.longitude)
        #expect(map.count(x: centre.x, y: centre.y) == 2)
        let onLine = map.pixel(latitude: horizontal[20].latitude, longitude: horizontal[20].longitude)
        #expect(map.count(x: onLine.x, y: onLine.y) == 1)
        let image = try DecodedPNG(try map.png())
        #expect(image.width == 200 && image.height == 200)
        let brightest = image.brightness(x: centre.x, y: centre.y)
        #expect(brightest > image.brightness(x: onLine.x, y: onLine.y) + 20)
        #expect(image.brightness(x: onLine.x, y: onLine.y) > image.brightness(x: 5, y: 5) + 20)
        var maximum = 0.0
        for y in 0..<200 { for x in 0..<200 { maximum = max(maximum, image.brightness(x: x, y: y)) } }
        #expect(maximum == brightest)
    }

    @Test("a jump longer than the picture is a gap in the recording, not a line")
    func gap() throws {
        var bounds = GeoBounds()
        let a = Self.line(from: (0, 0), to: (10, 0), points: 2)
        let b = Self.line(from: (0, 0), to: (100_000, 0), points: 2)
        bounds.add(a)
        var map = Heatmap(size: try PictureSize(width: 100, height: 100), bounds: bounds)
        map.beginRoute()
        map.add([b[1], a[0]])  // from far outside straight to the middle
        var lit = 0
        for y in 0..<100 { for x in 0..<100 where map.count(x: x, y: y) > 0 { lit += 1 } }
        #expect(lit == 1)
    }
}

@Suite("Decimation to pixels")
struct DecimationTests {
    @Test("a zigzag where every vertex matters keeps them all, across GEOS chunks, with no vertex twice")
    func zigzagAcrossChunks() {
        let points = (0..<25_003).map { Point(Double($0), $0 % 2 == 0 ? 0 : 5) }
        let out = Decimation.mapPath(points)
        #expect(out.count == points.count)
        #expect(out == points)
    }

    @Test("radial pass: points within half a pixel of the last kept one go; the ends stay")
    func radial() {
        let points = (0...1_000).map { Point(Double($0) * 0.01, 0) }
        let out = Decimation.mapPath(points)
        #expect(out.first == points.first && out.last == points.last)
        #expect(out.count <= 3)
    }

    @Test("profiles: the first, lowest, highest and last point of each column, and NaN breaks the line")
    func profileColumns() {
        var points = (0..<1_000).map { Point(Double($0) / 100, 50) }  // ten columns
        points[250] = Point(2.5, 90)  // a low value (y grows downwards) in column 2
        points[260] = Point(2.6, 10)  // a high one
        points[700] = Point(7, .nan)
        let paths = Decimation.profilePaths(points)
        #expect(paths.count == 2)
        #expect(paths.joined().contains(Point(2.5, 90)) && paths.joined().contains(Point(2.6, 10)))
        #expect(paths.joined().count <= 4 * 11)
    }
}

@Suite("Heatmap segments")
struct HeatmapSegmentTests {
    @Test("no line across a segment break: the route was paused between the segments")
    func segmentBreak() throws {
        let west = HeatmapTests.line(from: (-1_000, 0), to: (-200, 0), points: 50)
        let east = HeatmapTests.line(from: (200, 0), to: (1_000, 0), points: 50)
        var bounds = GeoBounds()
        bounds.add(west + east)
        var map = Heatmap(size: try PictureSize(width: 200, height: 100), bounds: bounds)
        let centre = map.pixel(latitude: HeatmapTests.frame.latitude, longitude: HeatmapTests.frame.longitude)
        // Split over two batches, the break inside the second: the index runs across batches.
        map.beginRoute()
        map.add(Array(west.prefix(30)), segmentStarts: [50])
        map.add(Array(west.dropFirst(30)) + east, segmentStarts: [50])
        #expect(map.count(x: centre.x, y: centre.y) == 0)
        let onEast = map.pixel(latitude: east[25].latitude, longitude: east[25].longitude)
        #expect(map.count(x: onEast.x, y: onEast.y) == 1)
        // Without the break the gap is drawn.
        map.beginRoute()
        map.add(west + east)
        #expect(map.count(x: centre.x, y: centre.y) == 1)
    }
}
