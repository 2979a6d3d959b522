import Foundation
import RouteKit
import RouteKitProcessing
import RouteKitTesting
import Testing

@testable import RouteKitRender

@Suite("Basemaps, axes and legends")
struct BasemapTests {
    /// The texts of a scene.
    static func texts(_ scene: Scene) -> [String] {
        scene.elements.compactMap { e -> String? in
            if case .text(let s, _, _, _, _, _) = e { return s }
            return nil
        }
    }

    @Test("tiles cover a view; columns wrap at the antimeridian; rows stop at the poles")
    func coverage() throws {
        let view = BasemapView(zoom: 2, originX: -100, originY: -50, width: 300, height: 200)
        let tiles = view.tiles
        let columns = Set(tiles.map { $0.tile.x })
        let rows = Set(tiles.map { $0.tile.y })
        #expect(columns == [3, 0], "x -100…200 is columns -1 (3, wrapped) and 0")
        #expect(rows == [0], "y -50…150: row 0, nothing north of the pole")
        let first = try #require(tiles.first { $0.tile.x == 0 })
        #expect(first.x == 100 && first.y == 50)
        #expect(TileCoordinate(z: 23, x: 0, y: 0) == nil)
        #expect(TileCoordinate(z: 2, x: 4, y: 0) == nil)
        #expect(TileCoordinate(z: 2, x: 3, y: 3) != nil)
    }

    @Test("the fitting zoom is the highest at which the box fits")
    func fittingZoom() {
        // A box 1/1024 of the world wide fits 256 pixels at zoom 10 (1024 tiles), not at 11.
        let z = WebMercator.fittingZoom(
            spanX: 1.0 / 1024, spanY: 1.0 / 4096, width: 256, height: 256, zoomLevels: 0...22)
        #expect(z == 10)
        let capped = WebMercator.fittingZoom(
            spanX: 1.0 / 1024, spanY: 1.0 / 4096, width: 256, height: 256, zoomLevels: 0...8)
        #expect(capped == 8)
    }

    @Test("a route over a basemap: the tiles under the route in PNG and SVG, the attribution in the corner")
    func routeOverTiles() async throws {
        let corners = track([(0, 0), (800, 0), (800, 600), (200, 900), (-300, 300)], seconds: 120, altitude: 30)
        let input = RoutePictureInput(current: renderTrack(corners), title: "Walk")
        let size = try PictureSize(width: 640, height: 480)
        let view = try #require(RoutePicture.basemapView(input, size: size, zoomLevels: 0...18))
        #expect(view.zoom >= 13 && view.zoom <= 15, "a 1 km walk in 600 pixels: zoom \(view.zoom)")
        // One colour, no border: every pixel of a tile is the same.
        let tile = TestPNG.image(width: 256, height: 256) { _, _ in (0x78, 0xC8, 0x78) }
        let source = TileSource(attribution: "© Test Tiles", zoomLevels: 0...18) {
            (_: TileCoordinate) async throws(RouteKitError) -> TileImage? in
            TileImage(bytes: tile, contentType: "image/png")
        }
        let basemap = try await Basemap.load(view, from: source)
        #expect(!basemap.tiles.isEmpty)
        let scene = RoutePicture.scene(input, size: size, xAxis: .distance, basemap: basemap)
        #expect(Self.texts(scene).contains("© Test Tiles"))
        let image = try DecodedPNG(try PNGRasteriser.png(scene))
        // A corner of the map far from the route shows the tiles, not the map's plain background.
        #expect(image.pixel(x: 30, y: 60) & 0xFF_FFFF == 0x78_C878)
        // Outside the map's frame (its margin) no tile is drawn.
        #expect(image.pixel(x: 4, y: 200) & 0xFF_FFFF == 0xFF_FFFF)
        let svg = String(decoding: SVGWriter.svg(scene), as: UTF8.self)
        #expect(svg.contains("<clipPath id=\"clip1\">"))
        #expect(svg.contains("clip-path=\"url(#clip1)\""))
        _ = try SVGPaths.parse(SVGWriter.svg(scene))

        let jpeg = TileSource(attribution: "", zoomLevels: 0...18) {
            (_: TileCoordinate) async throws(RouteKitError) -> TileImage? in
            TileImage(bytes: [0xFF, 0xD8, 0xFF], contentType: "image/jpeg")
        }
        await #expect(throws: RouteKitError.self) { try await Basemap.load(view, from: jpeg) }
    }

    @Test("profiles: a y axis of round ticks, an x axis in km, or in h:mm against time")
    func axes() throws {
        let corners = track([(0, 0), (800, 0), (800, 600), (200, 900), (-300, 300)], seconds: 600, altitude: 30)
        let input = RoutePictureInput(current: renderTrack(corners), title: "Walk")
        let size = try PictureSize(width: 900, height: 900)
        let distance = Self.texts(RoutePicture.scene(input, size: size, xAxis: .distance, basemap: nil))
        #expect(distance.contains("km"))
        #expect(distance.contains("Elevation (m)"))
        // Elevations from 30 to 36: ticks at round metres between them.
        let ticks = distance.compactMap { Int($0) }.filter { (28...38).contains($0) }
        #expect(ticks.count >= 2, "y ticks: \(distance)")
        let time = Self.texts(RoutePicture.scene(input, size: size, xAxis: .time, basemap: nil))
        #expect(time.contains("h:mm"))
        #expect(time.contains("0:00") && time.contains("0:30"), "40 minutes: ticks every 10 or 5: \(time)")
        #expect(!time.contains("km"))
        // Without times a profile against time is drawn against distance.
        var untimed = RenderTrack()
        untimed.append(corners.map { Location(latitude: $0.latitude, longitude: $0.longitude, altitude: $0.altitude) })
        let fallback = Self.texts(
            RoutePicture.scene(RoutePictureInput(current: untimed), size: size, xAxis: .time, basemap: nil))
        #expect(fallback.contains("km"))
    }

    @Test("a heatmap fitted to a zoom has a basemap view; its legend and scale bar are drawn on large pictures")
    func heatmapLegend() throws {
        let frame = LocalProjection(latitude: 51.5, longitude: -0.1)
        let line = (0...50).map { i -> Location in
            let (lat, lon) = frame.unproject(x: Double(i) * 40 - 1_000, y: 0)
            return Location(latitude: lat, longitude: lon)
        }
        var bounds = GeoBounds()
        bounds.add(line)
        var map = Heatmap(size: try PictureSize(width: 400, height: 300), bounds: bounds, zoomLevels: 0...18)
        map.beginRoute()
        map.add(line)
        let view = try #require(map.basemapView)
        #expect(view.zoom == map.zoom)
        // The line (2 km) at that zoom fits in 92% of the width, and would not at the next one.
        let metres = 2_000 / WebMercator.metresPerPixel(latitude: 51.5, zoom: view.zoom)
        #expect(metres <= 400 * 0.92 && metres * 2 > 400 * 0.92, "\(metres) pixels at zoom \(view.zoom)")
        let legend = Self.texts(map.legend(maximum: 1, attribution: "© Test"))
        #expect(legend.contains("routes on a pixel"))
        #expect(legend.contains("© Test"))
        let scaleBar = legend.contains { $0.hasSuffix(" m") || $0.hasSuffix(" km") }
        #expect(scaleBar, "a scale bar: \(legend)")
        let image = try DecodedPNG(try map.png())
        #expect(image.width == 400)
        #expect(Heatmap(size: try PictureSize(width: 400, height: 300), bounds: bounds).basemapView == nil)
    }
}
