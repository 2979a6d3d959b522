import Foundation
import RouteKitRender
import RouteKitSQLite
import RouteKitTesting
import Testing

@Suite(
    "routekit render --tiles",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct RenderTilesCLITests {
    /// The tiles' colour: a green no part of a route picture has.
    static let tileColor: UInt32 = 0x78_C878

    /// An MBTiles archive at zoom 12 only, of 6 × 6 green tiles around (`latitude`, `longitude`).
    static func archive(_ path: String, latitude: Double, longitude: Double) throws {
        let z = 12
        let n = Double(1 << z)
        let x = Int(((longitude + 180) / 360 * n).rounded(.down))
        let phi = latitude * .pi / 180
        let y = Int(((1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n).rounded(.down))
        let tile = TestPNG.tile(red: 0x78, green: 0xC8, blue: 0x78)
        var tiles: [(z: Int, x: Int, y: Int, data: [UInt8])] = []
        for dx in -3...2 {
            for dy in -3...2 { tiles.append((z: z, x: x + dx, y: y + dy, data: tile)) }
        }
        try MBTilesArchive.create(
            path: path,
            metadata: [
                "name": "test", "format": "png", "minzoom": "12", "maxzoom": "12",
                "attribution": "<a href=\"https://example.org/\">© Test Archive</a>",
            ], tiles: tiles)
    }

    /// How many of a grid of 15 points over the map area have the tiles' colour.
    static func tileColored(_ png: [UInt8]) throws -> Int {
        let image = try DecodedPNG(png)
        var n = 0
        for x in [100, 250, 400, 550, 700] {
            for y in [80, 120, 160] where image.pixel(x: x, y: y) & 0xFF_FFFF == tileColor { n += 1 }
        }
        return n
    }

    @Test("a GPX route over an MBTiles basemap: tiles under the route, the attribution in SVG, axes against time")
    func mbtilesBasemap() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sample-routes").path
        let gpx = samples + "/morning-run.gpx"
        let mbtiles = fixture.directory + "/lisbon.mbtiles"
        // The morning run starts at 38.7057, -9.1456.
        try Self.archive(mbtiles, latitude: 38.7057, longitude: -9.1456)

        let plain = fixture.directory + "/plain.png"
        let p = try CLI.run(["render", gpx, "-o", plain, "--size", "800x600"])
        #expect(p.status == 0, "\(p.stderr)")
        let plainColored = try Self.tileColored(Array(try Data(contentsOf: URL(fileURLWithPath: plain))))
        #expect(plainColored == 0, "no tile colour without --tiles")

        let over = fixture.directory + "/over.png"
        let r = try CLI.run(["render", gpx, "-o", over, "--size", "800x600", "--tiles", mbtiles])
        #expect(r.status == 0, "\(r.stderr)")
        let colored = try Self.tileColored(Array(try Data(contentsOf: URL(fileURLWithPath: over))))
        #expect(colored >= 10, "map points on the basemap's colour: \(colored) of 15")

        let svg = fixture.directory + "/over.svg"
        let s = try CLI.run(["render", gpx, "-o", svg, "--size", "800x600", "--tiles", mbtiles, "--x-axis", "time"])
        #expect(s.status == 0, "\(s.stderr)")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: svg)), as: UTF8.self)
        #expect(text.contains("<image "))
        #expect(text.contains("data:image/png;base64,"))
        #expect(text.contains(">© Test Archive</text>"), "the archive's attribution, without its markup")
        #expect(text.contains(">h:mm</text>"), "profiles against time")

        let given = try CLI.run([
            "render", gpx, "-o", svg, "--tiles", mbtiles, "--tiles-attribution", "© Someone Else",
        ])
        #expect(given.status == 0, "\(given.stderr)")
        let again = String(decoding: try Data(contentsOf: URL(fileURLWithPath: svg)), as: UTF8.self)
        #expect(again.contains(">© Someone Else</text>"))

        let missing = try CLI.run(["render", gpx, "-o", over, "--tiles", fixture.directory + "/none.mbtiles"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no MBTiles file"), "\(missing.stderr)")
        let stray = try CLI.run(["render", gpx, "-o", over, "--tiles-attribution", "x"])
        #expect(stray.status == 64, "\(stray.stderr)")
    }

    @Test("a heatmap over an MBTiles basemap: the tiles show where no route passed, with a legend")
    func heatmapBasemap() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sample-routes").path
        let imported = try CLI.run(["import", "--store", fixture.store, samples + "/morning-run.gpx"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let mbtiles = fixture.directory + "/lisbon.mbtiles"
        try Self.archive(mbtiles, latitude: 38.7057, longitude: -9.1456)
        let heat = fixture.directory + "/heat.png"
        let r = try CLI.run([
            "render", "--heatmap", "-o", heat, "--store", fixture.store, "--size", "800x600", "--tiles", mbtiles,
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let image = try DecodedPNG(Array(try Data(contentsOf: URL(fileURLWithPath: heat))))
        // The tiles, dimmed: green is the strongest channel where no route passed (top left).
        let corner = image.pixel(x: 30, y: 30)
        let (red, green, blue) = (corner >> 16 & 0xFF, corner >> 8 & 0xFF, corner & 0xFF)
        #expect(green > red && green > blue && green > 0x40, "0x\(String(corner, radix: 16))")
        // The legend, bottom left, over the tiles: its colour ramp (one route: the ramp's red) where the map is
        // green.
        let ramp = image.pixel(x: 20, y: 600 - 36)
        let (rampRed, rampGreen) = (ramp >> 16 & 0xFF, ramp >> 8 & 0xFF)
        #expect(rampRed > rampGreen + 60, "the legend's ramp: 0x\(String(ramp, radix: 16))")
    }
}
