import Foundation
import RouteKitTesting
import Testing

/// Issue 14, item 6 from the command line: what `routekit import` warns about instead of refusing, and
/// `--skip-invalid-points`.
@Suite(
    "routekit import refuses less", .serialized,
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct RefusesLessCLITests {
    static func gpx(bounds: String = "", _ points: [String]) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">
        <metadata><name>M</name>\(bounds)</metadata>
        <trk><name>T</name><trkseg>

        """ + points.joined(separator: "\n") + "\n</trkseg></trk>\n</gpx>\n"
    }

    static func point(_ i: Int, _ attributes: String? = nil) -> String {
        let a = attributes ?? "lat=\"47.\(i)\" lon=\"8.\(i)\""
        return "<trkpt \(a)><ele>4\(i)0</ele><time>2024-05-01T06:00:0\(i)Z</time></trkpt>"
    }

    static func warnings(_ object: [String: Any]) -> [String] { object["warnings"] as? [String] ?? [] }

    @Test("a Link2GPS <bounds min_lat=…> file imports, with a warning")
    func link2GPSBounds() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write(
            "link2gps.gpx",
            Self.gpx(
                bounds: "<bounds min_lat=\"47.1\" min_lon=\"8.1\" max_lat=\"47.3\" max_lon=\"8.3\"/>",
                (1...3).map { Self.point($0) }))
        let objects = try f.json(["import", file])
        try #require(objects.count == 1)
        #expect(objects[0]["status"] as? String == "imported")
        #expect(try StoreCLI.firstRoute(objects[0])["locations"] as? Int == 3)
        #expect(Self.warnings(objects[0]).contains { $0.hasPrefix("line 3: a <bounds> without numeric minlat") })
    }

    @Test("an eTrex-style <trkpt> without lat/lon is skipped and counted; the track is the one without it")
    func eTrexPointWithoutCoordinates() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let points = (1...5).map { Self.point($0) }
        var withGap = points
        withGap.insert(Self.point(9, ""), at: 2)
        let file = try f.write("etrex.gpx", Self.gpx(withGap))
        let objects = try f.json(["import", file])
        try #require(objects.count == 1)
        #expect(objects[0]["status"] as? String == "imported")
        let route = try StoreCLI.firstRoute(objects[0])
        #expect(route["locations"] as? Int == 5)
        #expect(
            Self.warnings(objects[0]).contains {
                $0.hasPrefix("line 7: 1 <trkpt> without lat/lon (missing or not a number) was skipped")
            }, "\(Self.warnings(objects[0]))")
        let stored = try #require(f.routes().first)
        #expect(stored["locations"] as? Int == 5)

        // The same track without the point has the same content: unchanged, same route.
        let without = try f.write("etrex-without.gpx", Self.gpx(points))
        let again = try f.json(["import", without])
        #expect(again.first?["status"] as? String == "unchanged")
        #expect(try StoreCLI.firstRoute(try #require(again.first))["route"] as? String == route["route"] as? String)
    }

    @Test("lat 91.4 fails by default naming line and column; with --skip-invalid-points it imports, one fewer")
    func outOfRange() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        var points = (1...4).map { Self.point($0) }
        points.insert(Self.point(9, "lat=\"91.4\" lon=\"8.9\""), at: 1)
        let file = try f.write("ninety-one.gpx", Self.gpx(points))

        let refused = try f.run(["import", "--json", file])
        #expect(refused.status == 1)
        #expect(!refused.stdout.contains("91.4") && !refused.stderr.contains("91.4"))
        let objects = try StoreCLI.objects(refused.stdout)
        try #require(objects.count == 1)
        #expect(objects[0]["status"] as? String == "failed")
        let error = try #require(objects[0]["error"] as? [String: Any])
        #expect(error["code"] as? String == "invalidValue")
        #expect(error["line"] as? Int == 6)
        #expect(error["column"] as? Int == 13)
        #expect((error["message"] as? String)?.contains("latitude") == true)
        #expect(try f.routes().isEmpty)

        let skipped = try f.json(["import", "--skip-invalid-points", file])
        try #require(skipped.count == 1)
        #expect(skipped[0]["status"] as? String == "imported")
        #expect(try StoreCLI.firstRoute(skipped[0])["locations"] as? Int == 4)
        let warnings = Self.warnings(skipped[0])
        #expect(
            warnings.contains { $0.hasPrefix("line 6: 1 <trkpt> with a latitude or longitude out of range was skipped") },
            "\(warnings)")
        #expect(!warnings.joined().contains("91.4"))
        #expect(try f.routes().first?["locations"] as? Int == 4)
    }

    @Test("inspect and convert take --skip-invalid-points too; --help explains it")
    func otherCommands() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write(
            "range.gpx", Self.gpx([Self.point(1), Self.point(2, "lat=\"47.2\" lon=\"181\""), Self.point(3)]))

        let refused = try CLI.run(["inspect", "--json", file])
        #expect(refused.status == 1)
        let inspected = try CLI.run(["inspect", "--json", "--skip-invalid-points", file])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        let report = try #require(try StoreCLI.objects(inspected.stdout).first)
        #expect(report["points"] as? Int == 2)
        #expect((report["warnings"] as? [String])?.contains { $0.contains("1 <trkpt> with a latitude") } == true)

        let output = f.directory + "/out.gpx"
        #expect(try CLI.run(["convert", file, "-o", output]).status == 1)
        let converted = try CLI.run(["convert", "--skip-invalid-points", file, "-o", output])
        #expect(converted.status == 0, "\(converted.stderr)")
        let written = try String(contentsOfFile: output, encoding: .utf8)
        #expect(written.components(separatedBy: "<trkpt ").count - 1 == 2)

        for command in ["import", "inspect", "convert", "recover"] {
            let help = try CLI.run([command, "--help"])
            #expect(help.stdout.contains("--skip-invalid-points"), "\(command)")
        }
        let help = try CLI.run(["import", "--help"]).stdout
        #expect(help.contains("without lat/lon"))
    }
}
