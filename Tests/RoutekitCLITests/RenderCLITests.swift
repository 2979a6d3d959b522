import Foundation
import RouteKitTesting
import Testing

@Suite(
    "routekit render",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct RenderCLITests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sample-routes").path

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test(
        "cairo is opened only when a PNG is drawn: --version and an SVG start without it",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/env"), "no /usr/bin/env"))
    func cairoOnDemand() throws {
        let executable = try #require(CLI.executable)
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-cairo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The dynamic loader names every library it loads (glibc's LD_DEBUG=libs, on standard error).
        func loaded(_ arguments: [String]) throws -> String {
            let r = try runChildProcess(env, ["LD_DEBUG=libs", executable.path] + arguments)
            #expect(r.status == 0, "\(arguments)")
            return r.errorOutput
        }
        let version = try loaded(["--version"])
        #expect(version.contains("libswiftCore"), "LD_DEBUG=libs printed nothing: the check below would pass blindly")
        #expect(!version.contains("libcairo"))
        let svg = try loaded(["render", Self.samples + "/lunch-ride.gpx", "-o", directory.path + "/ride.svg"])
        #expect(!svg.contains("libcairo"))
        let png = try loaded(["render", Self.samples + "/lunch-ride.gpx", "-o", directory.path + "/ride.png"])
        #expect(png.contains("libcairo.so"))
        #expect(try bytes(directory.path + "/ride.png").starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test("a smoothed route from the store: SVG (valid XML, raw under current, the processing's caption) and PNG")
    func storeRoute() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let imported = try CLI.run(["import", "--store", fixture.store, Self.samples + "/lunch-ride.gpx"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let smoothed = try CLI.run(["smooth", "--all", "--store", fixture.store])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        let routes = try StoreCLI.objects(try CLI.run(["routes", "--json", "--store", fixture.store]).stdout)
        let route = try #require(routes.first?["uuid"] as? String)
        let workout = try #require(routes.first?["workout"] as? String)

        let svg = fixture.directory + "/ride.svg"
        let r = try CLI.run(["render", route, "-o", svg, "--store", fixture.store, "--size", "1000x800"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote \(svg) (svg, 1000x800"))
        let text = String(decoding: try bytes(svg), as: UTF8.self)
        if let xmllint = GPXSchema.xmllint {
            #expect(try runChildProcess(URL(fileURLWithPath: xmllint), ["--noout", svg]).status == 0)
        }
        #expect(text.contains("stroke=\"#8c959f\""), "the raw recording drawn faint")
        #expect(text.contains("5,400 → "), "the caption gives the points in and out")
        #expect(text.contains(">Heart rate (bpm)<") && text.contains(">Elevation (m)<"))
        // The workout's uuid draws its current route: the same picture.
        let byWorkout = fixture.directory + "/workout.svg"
        #expect(try CLI.run(["render", workout, "-o", byWorkout, "--store", fixture.store, "--size", "1000x800"]).status == 0)
        #expect(try bytes(byWorkout) == bytes(svg))
        // Only the current version.
        let current = fixture.directory + "/current.svg"
        #expect(try CLI.run(["render", route, "-o", current, "--versions", "current", "--store", fixture.store]).status == 0)
        #expect(!String(decoding: try bytes(current), as: UTF8.self).contains("stroke=\"#8c959f\""))

        let png = fixture.directory + "/ride.png"
        let p = try CLI.run(["render", route, "-o", png, "--store", fixture.store, "--size", "640x480"])
        #expect(p.status == 0, "\(p.stderr)")
        let header = try bytes(png)
        #expect(Array(header.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        // IHDR: width and height, big-endian, at bytes 16–23.
        let width = header[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = header[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 640 && height == 480)
        // The same input gives the same bytes.
        let again = fixture.directory + "/again.png"
        #expect(try CLI.run(["render", route, "-o", again, "--store", fixture.store, "--size", "640x480"]).status == 0)
        #expect(try bytes(again) == header)
    }

    @Test("a GPX file, a heatmap of the store, and errors that say what is wrong")
    func fileHeatmapAndErrors() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let svg = fixture.directory + "/run.svg"
        let r = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: try bytes(svg), as: UTF8.self).contains("2,700 points"))
        let stdout = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", "-"])
        #expect(stdout.status == 0 && stdout.stdout.hasPrefix("<?xml"))

        #expect(try CLI.run(["import", "--store", fixture.store, Self.samples]).status == 0)
        let heat = fixture.directory + "/heat.png"
        let h = try CLI.run(["render", "--heatmap", "-o", heat, "--store", fixture.store, "--size", "300x200"])
        #expect(h.status == 0, "\(h.stderr)")
        #expect(h.stderr.contains("heatmap: 3 routes, 9900 points"))
        #expect(try bytes(heat).count > 100)
        let cycling = try CLI.run([
            "render", "--heatmap", "-o", heat, "--store", fixture.store, "--activity", "cycling",
        ])
        #expect(cycling.stderr.contains("heatmap: 1 routes, 5400 points"), "\(cycling.stderr)")
        let none = try CLI.run([
            "render", "--heatmap", "-o", heat, "--store", fixture.store, "--from", "2030-01-01T00:00:00Z",
        ])
        #expect(none.status == 1 && none.stderr.contains("no current route matches"))

        // Usage errors: exit 64, with the reason.
        for (arguments, reason) in [
            (["render", "--heatmap", Self.samples + "/morning-run.gpx", "-o", heat], "give no route"),
            (["render", "--heatmap", "-o", fixture.directory + "/heat.svg"], "PNG only"),
            (["render", Self.samples + "/morning-run.gpx", "-o", "-", "--format", "png"], "PNG goes to a file"),
            (["render", Self.samples + "/morning-run.gpx", "-o", svg, "--versions", "newest"], "--versions"),
            (["render", "-o", svg], "give a route"),
        ] {
            let e = try CLI.run(arguments)
            #expect(e.status == 64, "\(arguments)")
            #expect(e.stderr.contains(reason), "\(e.stderr)")
        }
        // Input errors: exit 1, naming what is at fault; nothing written.
        let badSize = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg, "--size", "20x20"])
        #expect(badSize.status == 1 && badSize.stderr.contains("picture width 20 is outside 64…8192"))
        let missing = try CLI.run([
            "render", "0C1D9E1E-0000-4000-8000-000000000000", "-o", fixture.directory + "/x.svg", "--store", fixture.store,
        ])
        #expect(missing.status == 1 && missing.stderr.contains("no route or workout"))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/x.svg"))
        let track = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg, "--track", "2"])
        #expect(track.status == 1 && track.stderr.contains("has 1 track(s), not 2"), "\(track.stderr)")
        let notGPX = try fixture.write("notes.gpx", "hello")
        let broken = try CLI.run(["render", notGPX, "-o", svg])
        #expect(broken.status == 1 && broken.stderr.contains("notes.gpx:1:1"), "\(broken.stderr)")
    }

    /// `micro` millionths of a degree as decimal text (`47.100030`).
    static func degrees(_ micro: Int) -> String {
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// Seconds 0–59 as two digits.
    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A TCX run: 60 trackpoints a second apart, each with a position, an altitude and heart rate.
    static let tcxActivity: String = {
        var points: [String] = []
        for i in 0..<60 {
            let position =
                "<Position><LatitudeDegrees>\(degrees(47_100_000 + i * 30))</LatitudeDegrees><LongitudeDegrees>"
                + "\(degrees(8_100_000 + i * 20))</LongitudeDegrees></Position>"
            points.append(
                "<Trackpoint><Time>2024-05-01T06:00:\(two(i))Z</Time>\(position)<AltitudeMeters>\(400 + i % 7)"
                    + "</AltitudeMeters><HeartRateBpm><Value>\(110 + i % 30)</Value></HeartRateBpm></Trackpoint>")
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="\(TCXCLITests.ns)"><Activities><Activity Sport="Running">
            <Id>2024-05-01T06:00:00Z</Id><Lap StartTime="2024-05-01T06:00:00Z"><Track>
            \(points.joined(separator: "\n"))
            </Track></Lap></Activity></Activities></TrainingCenterDatabase>
            """
    }()

    /// A GeoJSON walk: one LineString of 30 positions with altitudes, its times in coordTimes.
    static let geoJSON: String = {
        var coordinates: [String] = []
        var times: [String] = []
        for i in 0..<30 {
            coordinates.append("[\(degrees(8_500_000 + i * 20)),\(degrees(47_300_000 + i * 30)),\(410 + i % 5)]")
            times.append("\"2024-05-01T07:00:\(two(i))Z\"")
        }
        return """
            {"type":"FeatureCollection","features":[{"type":"Feature",
            "properties":{"name":"Walk","type":"walking","coordTimes":[\(times.joined(separator: ","))]},
            "geometry":{"type":"LineString","coordinates":[\(coordinates.joined(separator: ","))]}}]}
            """
    }()

    @Test("FIT, TCX and GeoJSON files are drawn as import reads them (as their GPX is); a course as its route")
    func otherFormats() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        // The FIT file's name says nothing: the format is told by content, as on import.
        let fit = try f.write("run.bin", Data(SyntheticFIT.activity(records: 120)))
        let tcx = try f.write("run.tcx", Self.tcxActivity)
        let geojson = try f.write("walk.geojson", Self.geoJSON)
        let cases: [(String, Int, String)] = [
            (fit, 120, "Running · running"), (tcx, 60, "Running"), (geojson, 30, "Walking · Walk"),
        ]
        for (file, points, title) in cases {
            let svg = file + ".svg"
            let r = try CLI.run(["render", file, "-o", svg])
            #expect(r.status == 0, "\(file): \(r.stderr)")
            let text = String(decoding: try bytes(svg), as: UTF8.self)
            #expect(text.contains("\(points) points"), "\(file)")
            #expect(text.contains(title), "\(file)")
            // convert reads the file through the same reader: its GPX draws the same picture.
            let gpx = file + ".gpx"
            let converted = try CLI.run(["convert", file, "-o", gpx])
            #expect(converted.status == 0, "\(file): \(converted.stderr)")
            let viaGPX = file + ".via-gpx.svg"
            let again = try CLI.run(["render", gpx, "-o", viaGPX])
            #expect(again.status == 0, "\(file): \(again.stderr)")
            let same = try bytes(viaGPX) == bytes(svg)
            #expect(same, "\(file): not the picture of its GPX")
        }
        // Heart rate from the FIT records and the TCX trackpoints: a profile with zone bands.
        for file in [fit, tcx] {
            let text = String(decoding: try bytes(file + ".svg"), as: UTF8.self)
            #expect(text.contains(">Heart rate (bpm)<"), "\(file)")
        }
        // A gzip-compressed FIT, as import reads it.
        if let gzip = StoreCLI.which("gzip") {
            let copy = f.directory + "/copy.fit"
            try FileManager.default.copyItem(atPath: fit, toPath: copy)
            #expect(try runChildProcess(gzip, ["-f", copy]).status == 0)
            let r = try CLI.run(["render", copy + ".gz", "-o", f.directory + "/gz.svg"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try bytes(f.directory + "/gz.svg") == bytes(fit + ".svg"))
        }
        // A course (a TCX Course: a route, no track) draws its route.
        let course = try f.write("loop.tcx", TCXCLITests.course)
        let drawn = try CLI.run(["render", course, "-o", f.directory + "/loop.svg"])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let loop = String(decoding: try bytes(f.directory + "/loop.svg"), as: UTF8.self)
        #expect(loop.contains("2 points"), "\(loop.prefix(2_000))")
        #expect(loop.contains("Loop"))
        // --track past the file's tracks says how many it has; an Apple Health export.xml is imported, and one with
        // no workout has nothing to draw.
        let second = try CLI.run(["render", fit, "-o", f.directory + "/x.svg", "--track", "2"])
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("has 1 track(s), not 2"), "\(second.stderr)")
        let health = try f.write("export.xml", "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\"></HealthData>\n")
        let empty = try CLI.run(["render", health, "-o", f.directory + "/h.svg"])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("\(health): no route to draw in it"), "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.directory + "/h.svg"))
    }

    /// The lines of an SVG that draw the map's route (its colour, 2.5 wide): where two pictures of one route agree
    /// whatever their titles.
    static func routeLines(_ svg: [UInt8]) -> [Substring] {
        String(decoding: svg, as: UTF8.self).split(separator: "\n").filter {
            $0.contains("stroke=\"#0969da\" stroke-width=\"2.5\"")
        }
    }

    /// The picture of the route `routekit import --json` reported first for `path`, imported alone into the
    /// fixture's store and drawn from it as `render ROUTE` draws it.
    static func storedPicture(_ path: String, in f: StoreFixture, to svg: String) throws -> [UInt8] {
        let objects = try f.json(["import", path])
        let routes = objects.flatMap { $0["routes"] as? [[String: Any]] ?? [] }
        let route = try #require(routes.compactMap { $0["route"] as? String }.first, "\(objects)")
        let r = try f.run(["render", route, "-o", svg])
        #expect(r.status == 0, "\(r.stderr)")
        return try Array(Data(contentsOf: URL(fileURLWithPath: svg)))
    }

    @Test("a zip of two GPX files: listed without --entry (exit 64); --entry N or NAME draws that entry as it is drawn stored")
    func archiveEntries() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let run = Self.samples + "/morning-run.gpx"
        let walk = Self.samples + "/evening-walk-with-waypoints.gpx"
        let zip = try f.zip(
            "rides.zip",
            [
                ("morning-run.gpx", try Data(contentsOf: URL(fileURLWithPath: run))),
                ("walks/evening-walk.gpx", try Data(contentsOf: URL(fileURLWithPath: walk))),
            ])
        let svg = f.directory + "/entry.svg"
        let listed = try CLI.run(["render", zip, "-o", svg])
        #expect(listed.status == 64, "\(listed.stderr)")
        #expect(listed.stderr.contains("\(zip) holds 2 routes: choose one with --entry"), "\(listed.stderr)")
        #expect(listed.stderr.contains("  1  morning-run.gpx  2025-06-14 06:12  running\n"), "\(listed.stderr)")
        #expect(listed.stderr.contains("  2  walks/evening-walk.gpx  2025-06-14 19:40  walking"), "\(listed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: svg))

        // By number and by name (its path in the archive, or its file name): the picture of the file imported alone
        // and drawn from the store, byte for byte; its map's route is the one the file itself draws.
        let walkAlone = try Self.storedPicture(walk, in: f, to: f.directory + "/walk-stored.svg")
        #expect(try CLI.run(["render", walk, "-o", f.directory + "/walk-file.svg"]).status == 0)
        let walkFile = try bytes(f.directory + "/walk-file.svg")
        for entry in ["2", "walks/evening-walk.gpx", "evening-walk.gpx"] {
            let r = try CLI.run(["render", zip, "--entry", entry, "-o", svg])
            #expect(r.status == 0, "--entry \(entry): \(r.stderr)")
            let drawn = try bytes(svg)
            #expect(drawn == walkAlone, "--entry \(entry)")
            #expect(Self.routeLines(drawn) == Self.routeLines(walkFile), "--entry \(entry)")
        }
        let first = try CLI.run(["render", zip, "--entry", "1", "-o", f.directory + "/run.svg"])
        #expect(first.status == 0, "\(first.stderr)")
        let runLines = try Self.routeLines(bytes(f.directory + "/run.svg"))
        #expect(!runLines.isEmpty)
        #expect(runLines != Self.routeLines(walkAlone))
        #expect(try CLI.run(["render", run, "-o", f.directory + "/run-file.svg"]).status == 0)
        #expect(try runLines == Self.routeLines(bytes(f.directory + "/run-file.svg")))

        // Usage errors, exit 64: an --entry past the routes or of no entry's name (both listing them), --entry for a
        // single file, --track for an archive.
        for (arguments, reason) in [
            (["--entry", "3"], "--entry 3: \(zip) holds 2 route(s)"),
            (["--entry", "nowhere.gpx"], "--entry nowhere.gpx: no route of \(zip)"),
        ] {
            let e = try CLI.run(["render", zip, "-o", svg] + arguments)
            #expect(e.status == 64, "\(arguments): \(e.stderr)")
            #expect(e.stderr.contains(reason), "\(e.stderr)")
            #expect(e.stderr.contains("  2  walks/evening-walk.gpx"), "\(e.stderr)")
        }
        let single = try CLI.run(["render", run, "--entry", "1", "-o", svg])
        #expect(single.status == 64 && single.stderr.contains("--entry picks a route of an archive"), "\(single.stderr)")
        let track = try CLI.run(["render", zip, "--track", "1", "-o", svg])
        #expect(track.status == 64 && track.stderr.contains("--track picks a track of a single route file"))
        let zero = try CLI.run(["render", zip, "--entry", "0", "-o", svg])
        #expect(zero.status == 64 && zero.stderr.contains("--entry counts from 1"), "\(zero.stderr)")

        // A zip with no route file fails as import fails it (exit 1), naming the archive; nothing is written.
        let documents = try f.zip("documents.zip", [("readme.txt", Data("hello".utf8))])
        let none = try CLI.run(["render", documents, "-o", f.directory + "/none.svg"])
        #expect(none.status == 1, "\(none.stderr)")
        #expect(none.stderr.contains("\(documents): not a route file: a zip archive with no GPX"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.directory + "/none.svg"))
    }

    /// Strava's `activities.csv` header (as StravaIndexTests has it).
    static let stravaHeader =
        "Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,"
        + "Max Heart Rate,Relative Effort,Commute,Activity Private Note,Activity Gear,Filename,Athlete Weight,"
        + "Bike Weight,Elapsed Time,Moving Time,Distance,Max Speed"

    @Test("a Strava export of one recorded and one manual activity draws its one route without --entry")
    func stravaExport() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let run = Self.samples + "/morning-run.gpx"
        let csv =
            Self.stravaHeader + "\n"
            + "101,\"Jun 14, 2025, 6:12:00 AM\",Tagus run,Run,,2700,7.5,,,false,,,activities/101.gpx,70,,2700,2700,"
            + "7500,4\n"
            + "102,\"Jun 15, 2025, 7:00:00 AM\",Yoga,Yoga,,1800,0,,,false,,,,70,,1800,1800,0,0\n"
        let zip = try f.zip(
            "export_1234.zip",
            [
                ("activities.csv", Data(csv.utf8)),
                ("activities/101.gpx", try Data(contentsOf: URL(fileURLWithPath: run))),
            ])
        let svg = f.directory + "/strava.svg"
        let r = try CLI.run(["render", zip, "-o", svg])
        #expect(r.status == 0, "\(r.stderr)")
        let drawn = try bytes(svg)
        #expect(try Self.storedPicture(zip, in: f, to: f.directory + "/stored.svg") == drawn)
        #expect(try CLI.run(["render", run, "-o", f.directory + "/file.svg"]).status == 0)
        #expect(try Self.routeLines(drawn) == Self.routeLines(bytes(f.directory + "/file.svg")))
        // By its name in the export, too.
        let named = try CLI.run(["render", zip, "--entry", "activities/101.gpx", "-o", f.directory + "/named.svg"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try bytes(f.directory + "/named.svg") == drawn)
    }

    @Test(
        "an Apple Health export (its folder, its export.xml, a zip of it) lists its routes and draws the one --entry picks",
        .enabled(if: HealthExportGenerator.python != nil, "python3 is not on PATH: the export generator cannot run"))
    func healthExport() throws {
        let (dir, counts) = try HealthExportGenerator.generate(["--workouts", "3", "--points", "60", "--heart-rate", "50"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(counts["routes"] as? Int == 3)
        let export = dir + "/apple_health_export"
        let listed = try CLI.run(["render", export, "-o", dir + "/x.svg"])
        #expect(listed.status == 64, "\(listed.stderr)")
        #expect(listed.stderr.contains("holds 3 routes"), "\(listed.stderr)")
        #expect(listed.stderr.contains("  3  workout-routes/route_"), "\(listed.stderr)")

        let f = try StoreFixture()
        defer { f.remove() }
        let stored = try Self.storedPicture(export, in: f, to: f.directory + "/stored.svg")
        let routes = try FileManager.default.contentsOfDirectory(atPath: export + "/workout-routes").sorted()
        let paths = ["export.xml"] + routes.map { "workout-routes/" + $0 }
        let zip = try f.zip(
            "export.zip",
            try paths.map { ("apple_health_export/" + $0, try Data(contentsOf: URL(fileURLWithPath: export + "/" + $0))) })
        for input in [export, export + "/export.xml", zip] {
            let svg = f.directory + "/entry.svg"
            let r = try CLI.run(["render", input, "--entry", "1", "-o", svg])
            #expect(r.status == 0, "\(input): \(r.stderr)")
            #expect(try bytes(svg) == stored, "\(input)")
        }
    }
}

/// A small FIT activity built byte by byte (a header, definitions and messages, FIT's CRCs), as RouteKitFITTests'
/// FITWriter builds them: a run whose records are a second apart, each with a position (~3.5 m from the last), heart
/// rate and altitude, and its session.
enum SyntheticFIT {
    /// FIT's CRC-16 table (the FIT SDK's, four bits at a time).
    static let crcTable: [UInt16] = [
        0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
        0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400,
    ]

    /// FIT's CRC of `bytes`.
    static func crc(_ bytes: [UInt8]) -> UInt16 {
        var c: UInt16 = 0
        for b in bytes {
            for nibble in [b & 0x0F, b >> 4] {
                let t = crcTable[Int(c & 0x0F)]
                c = (c >> 4) & 0x0FFF
                c = c ^ t ^ crcTable[Int(nibble)]
            }
        }
        return c
    }

    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func u32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    }
    static func i32(_ v: Int32) -> [UInt8] { u32(UInt32(bitPattern: v)) }

    /// A definition (little-endian) of local message `local` as global message `global`, with its fields (number,
    /// size, base type).
    static func define(_ local: UInt8, _ global: UInt16, _ fields: [(UInt8, UInt8, UInt8)]) -> [UInt8] {
        var out: [UInt8] = [0x40 | local, 0, 0]
        out += u16(global)
        out.append(UInt8(fields.count))
        for f in fields { out += [f.0, f.1, f.2] }
        return out
    }

    /// A running activity of `records` records from FIT time 1,000,000,000 (2021-09-08T01:46:40Z).
    static func activity(records: Int) -> [UInt8] {
        let start: UInt32 = 1_000_000_000
        var data: [UInt8] = []
        // file_id: type (4: activity), time_created.
        data += define(0, 0, [(0, 1, 0x00), (4, 4, 0x86)])
        data += [0, 4]
        data += u32(start)
        // record: timestamp, position_lat and position_long (semicircles), heart_rate, enhanced_altitude (÷5 − 500).
        data += define(1, 20, [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85), (3, 1, 0x02), (78, 4, 0x86)])
        for i in 0..<records {
            let time = u32(start + UInt32(i))
            let latitude = i32(Int32(562_949_953 + i * 30))
            let longitude = i32(Int32(99_547_000 + i * 20))
            let altitude = u32(UInt32(2_500 + 5 * (i % 20)))
            data.append(1)
            data += time
            data += latitude
            data += longitude
            data.append(UInt8(120 + i % 40))
            data += altitude
        }
        // session: timestamp, start_time, total_elapsed_time (ms), sport (1: running).
        data += define(2, 18, [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (5, 1, 0x00)])
        data.append(2)
        data += u32(start + UInt32(records))
        data += u32(start)
        data += u32(UInt32(records * 1_000))
        data.append(1)
        var header: [UInt8] = [14, 0x20, 0x54, 0x08]
        header += u32(UInt32(data.count))
        header += Array(".FIT".utf8)
        header += u16(crc(header))
        var file = header + data
        file += u16(crc(file))
        return file
    }
}
