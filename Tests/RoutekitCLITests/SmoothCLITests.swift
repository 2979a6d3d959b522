import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
import Testing

@Suite(
    "routekit smooth",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct SmoothCLITests {
    @Test("smooth file to file: a subsequence of the track's points with their values, valid GPX, JSON metrics")
    func fileToFile() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let input = try fixture.write("in.gpx", SyntheticGPX.text(name: "run", points: 3000))
        let output = fixture.directory + "/out.gpx"
        let result = try CLI.run(["smooth", input, "-o", output, "--json", "--tolerance", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try StoreCLI.objects(result.stdout).first)
        #expect(
            Set(report.keys) == [
                "route", "newRoute", "syncVersion", "pointsIn", "pointsOut", "maxDeviationMetres",
                "smoothingRmsMetres", "lengthInMetres", "lengthOutMetres",
            ])
        #expect(report["pointsIn"] as? Int == 3000)
        let pointsOut = try #require(report["pointsOut"] as? Int)
        #expect(pointsOut < 3000 && pointsOut >= 2)  // the synthetic track is nearly straight
        #expect((report["maxDeviationMetres"] as? Double ?? 99) <= 3.001)
        let before = try GPXDocument(path: input).tracks[0].segments.flatMap(\.points)
        let after = try GPXDocument(path: output).tracks[0].segments.flatMap(\.points)
        #expect(after.count == pointsOut)
        // A subsequence by time, each with its original heart rate and time.
        var i = 0
        for p in after {
            while i < before.count && before[i].location.timestamp != p.location.timestamp { i += 1 }
            #expect(i < before.count, "an output point's time is not an input point's")
            if i < before.count { #expect(p.values[.heartRate] == before[i].values[.heartRate]) }
        }
        #expect(after.first?.location.timestamp == before.first?.location.timestamp)
        #expect(after.last?.location.timestamp == before.last?.location.timestamp)
        // Without simplification every point stays, coordinates smoothed, every other field as it was.
        let smoothed = try CLI.run(["smooth", input, "-o", output, "--stages", "outliers,smoothing"])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        let all = try GPXDocument(path: output).tracks[0].segments.flatMap(\.points)
        #expect(all.count == 3000)
        #expect(zip(all, before).allSatisfy { $0.location.timestamp == $1.location.timestamp })
        #expect(zip(all, before).allSatisfy { $0.values == $1.values })
        #expect(zip(all, before).contains { $0.location.latitude != $1.location.latitude }, "coordinates smoothed")
        let missing = try CLI.run(["smooth", fixture.directory + "/none.gpx", "-o", output])
        #expect(missing.status == 1)
        let badStage = try CLI.run(["smooth", input, "-o", output, "--stages", "sharpening"])
        #expect(badStage.status == 64)
    }
}

@Suite(
    "routekit smooth over the store",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
    .enabled(if: StoreCLI.sqlite3 != nil, "sqlite3 is needed to watch the store"))
struct SmoothStoreCLITests {
    static func count(_ store: String, _ sql: String) -> Int {
        guard let sqlite3 = StoreCLI.sqlite3, let r = try? runChildProcessForCount(sqlite3, [store, sql]) else { return -1 }
        return r
    }

    static func runChildProcessForCount(_ exe: URL, _ args: [String]) throws -> Int {
        Int(try CLI.runRaw(exe, args).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test("a batch job killed midway resumes: every route gets exactly one new version, nothing twice")
    func killAndResume() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        try Self.killAndResume(fixture) { Self.count(fixture.store, $0) }
    }

    /// Imports 80 routes, kills `routekit smooth` after its third saved route, and checks that a second run
    /// finishes the job with every route smoothed exactly once. `count` answers a `SELECT COUNT(*)` on the store
    /// (the statements are valid SQLite and PostgreSQL).
    static func killAndResume(_ fixture: StoreFixture, count: (String) -> Int) throws {
        let folder = fixture.directory + "/gpx"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let routes = 80
        for i in 0..<routes {
            _ = try SyntheticGPX.text(name: "route \(i)", points: 4_000).write(
                toFile: folder + "/r\(i).gpx", atomically: true, encoding: .utf8)
        }
        let imported = try fixture.run(["import", folder, "--no-progress"])
        try #require(imported.status == 0, "\(imported.stderr)")
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["smooth", "--all", "--store", fixture.store, "--lease-seconds", "1", "--json"]
        let outPath = fixture.directory + "/smooth.out"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        defer { try? out.close() }
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let versionTwo = "SELECT COUNT(*) FROM route WHERE current AND sync_version = 2"
        // Each saved version prints a JSON line at once: kill after the third.
        func saved() -> Int {
            ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "").components(separatedBy: "\"newRoute\"").count - 1
        }
        let deadline = Date().addingTimeInterval(60)
        // A blocking poll: the test process runs other tests too, and an async sleep could wake too late.
        while process.isRunning && Date() < deadline && saved() < 3 { Thread.sleep(forTimeInterval: 0.003) }
        let killed = process.isRunning
        if killed { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        if !killed { Issue.record("the batch job finished before it could be killed: make the data bigger") }
        let before = count(versionTwo)
        #expect(before < routes, "killed midway (\(before) of \(routes) done)")
        // The dead worker's claims expire after a second; then a new run finishes the job.
        Thread.sleep(forTimeInterval: 1.2)
        let resumed = try fixture.run(["smooth", "--all", "--lease-seconds", "1"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(count(versionTwo) == routes, "every route has its new version")
        #expect(count("SELECT COUNT(*) FROM route WHERE current") == routes)
        #expect(count("SELECT COUNT(*) FROM route WHERE sync_version > 2") == 0, "none twice")
        #expect(count("SELECT COUNT(*) FROM builder") == 0, "no builder left pending")
        let again = try fixture.run(["smooth", "--all", "--json"])
        let objects = try StoreCLI.objects(again.stdout)
        #expect(objects.count == routes && objects.allSatisfy { ($0["skipped"] as? String) != nil }, "idempotent")
    }
}

@Suite(
    "routekit stats and series",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct StatsCLITests {
    @Test("stats --json has the DESIGN keys; series streams the heart rate in batches")
    func statsAndSeries() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        // 600 fixes, 3 m/s north, heart rate 120–179.
        var text = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"><trk><type>running</type><trkseg>

            """
        for i in 0..<600 {
            let lat = String(format: "%.7f", 47.0 + Double(i) * 3 / 111_180)
            let t = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_714_543_200 + Double(i)))
            text += "<trkpt lat=\"\(lat)\" lon=\"8.5\"><ele>400</ele><time>\(t)</time><extensions>"
            text += "<gpxtpx:TrackPointExtension><gpxtpx:hr>\(120 + i % 60)</gpxtpx:hr></gpxtpx:TrackPointExtension>"
            text += "</extensions></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        let file = try fixture.write("r.gpx", text)
        let imported = try fixture.json(["import", file])
        let first = try #require(imported.first)
        let route = try #require(try StoreCLI.firstRoute(first)["route"] as? String)
        let workout = try #require(try StoreCLI.firstRoute(first)["workout"] as? String)
        let stats = try #require(try fixture.json(["stats", route, "--max-hr", "190"]).first)
        for key in [
            "workout", "route", "distanceMetres", "elapsedSeconds", "movingSeconds", "elevationGainMetres",
            "elevationLossMetres", "averageSpeed", "maxSpeed", "heartRate", "zones",
        ] {
            #expect(stats.keys.contains(key), "missing \(key)")
        }
        #expect(stats["workout"] as? String == workout)
        #expect((stats["elapsedSeconds"] as? Double) == 599)
        let heart = try #require(stats["heartRate"] as? [String: Any])
        #expect((heart["max"] as? Double ?? 0) > 0)
        let zones = try #require(stats["zones"] as? [[String: Any]])
        #expect(zones.count == 5)
        let inZones = zones.compactMap { $0["seconds"] as? Double }.reduce(0, +)
        #expect(abs(inZones - (stats["movingSeconds"] as? Double ?? -1)) < 1e-6)
        // The workout's uuid gives the same numbers.
        let byWorkout = try #require(try fixture.json(["stats", workout, "--max-hr", "190"]).first)
        #expect(byWorkout["distanceMetres"] as? Double == stats["distanceMetres"] as? Double)
        let batches = try fixture.json(["series", workout, "--type", "heartRate", "--batch-size", "250"])
        #expect(batches.count == 3)
        #expect(batches.map { ($0["samples"] as? [Any])?.count ?? -1 } == [250, 250, 100])
        #expect(batches.map { $0["done"] as? Bool } == [false, false, true])
        let bad = try fixture.run(["stats", route, "--zones", "10,100,150"])
        #expect(bad.status == 1 && bad.stderr.contains("first zone starts at 0"))
        // Zones saved with the workout (origin app): its stats use them; cleared, the workout's own maximum again.
        let prefix = String(workout.prefix(8))
        let set = try fixture.run(["zones", "set", "heart-rate", "121,141,155,171", "--workout", prefix])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("heart rate: app"))
        let custom = try #require(try fixture.json(["stats", workout]).first)
        let used = custom["zoneConfiguration"] as? [String: Any]
        #expect(used?["origin"] as? String == "app")
        #expect(used?["boundaries"] as? [Double] == [121, 141, 155, 171])
        let shown = try #require(try fixture.json(["zones", "show", "--workout", workout, "--json"]).first)
        #expect((shown["heartRate"] as? [String: Any])?["origin"] as? String == "app")
        let person = try #require(try fixture.json(["zones", "show", "--json"]).first)
        #expect(person["heartRate"] is NSNull, "the person's zones are untouched")
        #expect(try fixture.run(["zones", "clear", "heart-rate", "--workout", workout]).status == 0)
        let plain = try #require(try fixture.json(["stats", workout]).first)
        #expect((plain["zoneConfiguration"] as? [String: Any])?["origin"] as? String == "system")
        let foreign = try fixture.run(["zones", "set", "heart-rate", "--max-hr", "180", "--workout", workout, "--source", "other"])
        #expect(foreign.status == 1 && foreign.stderr.contains("notOwner"), "\(foreign.stderr)")
        // Effort: an estimate, then a manual score that wins; only its source may unrelate it.
        _ = try fixture.run(["effort", workout, "--set", "4", "--estimated", "--source", "model"])
        let scores = try fixture.json(["effort", workout, "--set", "8"])
        #expect(scores.count == 2)
        let manual = try #require(scores.first { $0["manual"] as? Bool == true })
        #expect(manual["effective"] as? Bool == true && manual["score"] as? Double == 8)
        let uuid = try #require(manual["uuid"] as? String)
        #expect(try fixture.run(["effort", workout, "--delete", uuid, "--source", "model"]).status == 1)
        let after = try fixture.json(["effort", workout, "--delete", uuid])
        #expect(after.count == 1 && after.first?["effective"] as? Bool == true)
    }

    @Test("a source's privacy zones: smooth removes the points inside from the new version; workout stats unchanged")
    func sourcePrivacyZones() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        // 600 fixes 3 m apart going north from 47.0 N: the zone covers the first 300 m (~100 fixes).
        var text = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
            <trk><type>running</type><trkseg>

            """
        for i in 0..<600 {
            let lat = String(format: "%.7f", 47.0 + Double(i) * 3 / 111_180)
            let t = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_714_543_200 + Double(i)))
            text += "<trkpt lat=\"\(lat)\" lon=\"8.5\"><ele>\(400 + i % 7)</ele><time>\(t)</time></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        let file = try fixture.write("r.gpx", text)
        let imported = try #require(try fixture.json(["import", file, "--source", "alice"]).first)
        let workout = try #require(try StoreCLI.firstRoute(imported)["workout"] as? String)
        let before = try #require(try fixture.json(["stats", workout]).first)
        let set = try fixture.json(["privacy-zones", "--source", "alice", "--add", "47.0,8.5,300"])
        #expect(set.count == 1 && set.first?["radiusMetres"] as? Double == 300)
        #expect(try fixture.json(["privacy-zones", "--source", "bob"]).isEmpty, "zones are per source")
        let bad = try fixture.run(["privacy-zones", "--add", "47.0,8.5,0"])
        #expect(bad.status != 0 && bad.stderr.contains("radius"))
        // Without simplification, so that the straight line keeps its points.
        let smoothed = try fixture.run(["smooth", "--all", "--stages", "outliers,smoothing", "--json"])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        let outcome = try #require(try StoreCLI.objects(smoothed.stdout).first)
        let newRoute = try #require(outcome["newRoute"] as? String)
        // No exported point of the new version lies within 300 m of the centre (ellipsoidal, recomputed here
        // with a spherical formula and a 1 m margin).
        let csv = try fixture.run(["export", newRoute, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let rows = csv.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count > 100)
        var inside = 0
        for row in rows {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false)
            // kind,track,segment,index,time,latitude,longitude,…
            guard cells.count > 6, let lat = Double(cells[5]), let lon = Double(cells[6]) else { continue }
            let dLat = (lat - 47.0) * .pi / 180
            let dLon = (lon - 8.5) * .pi / 180 * cos(47.0 * .pi / 180)
            if (dLat * dLat + dLon * dLon).squareRoot() * 6_371_000 < 299 { inside += 1 }
        }
        #expect(inside == 0, "\(inside) exported point(s) inside the zone")
        // The workout's statistics come from the original recording: unchanged.
        let after = try #require(try fixture.json(["stats", workout]).first)
        for key in ["distanceMetres", "elapsedSeconds", "movingSeconds", "elevationGainMetres", "maxSpeed"] {
            #expect(after[key] as? Double == before[key] as? Double, "\(key) changed")
        }
        #expect(after["route"] as? String != newRoute, "a workout's stats read its raw version")
        // Changing the zones changes the parameters: the next run processes the route again.
        _ = try fixture.run(["privacy-zones", "--source", "alice", "--clear"])
        let again = try StoreCLI.objects(
            try fixture.run(["smooth", "--all", "--stages", "outliers,smoothing", "--json"]).stdout)
        #expect(again.first?["newRoute"] as? String != nil, "processed again after the zones changed")
    }

    /// gpxpy 1.6.2's numbers (`track.length_2d()`, `get_moving_data().moving_time`), on tracks where it is right:
    /// clean timed tracks without spikes, stops without a pause, or time jumps. Distances differ by gpxpy's
    /// spherical Earth (equatorial radius) against RouteKit's ellipsoid; moving time by the stop rules.
    static let gpxpyReference: [(file: String, distance: Double, moving: Double?)] = [
        ("valid/strava-hr-cad-atemp-1.gpx", 3695.3, nil),
        ("valid/garmin-connect-ns3-hr-cad-1.gpx", 12835.5, 5492),
        ("valid/runkeeper-time-backwards-hr-1.gpx", 22208.3, 3330),
        ("valid/suunto-movescount-crlf-1.gpx", 8550.8, 1656),
        ("valid/bikemap-bom-no-times-1.gpx", 219079.4, nil),
        ("valid/applehealth-route-1.gpx", 68.4, 43),
    ]

    @Test(
        "stats on every corpus track; distance within 0.5 % and moving time within 2 % of gpxpy where gpxpy is right",
        .enabled(if: CLI.corpus != nil, "corpus not found (../shared/gpx-corpus)"))
    func corpusAgainstGpxpy() throws {
        let corpus = try #require(CLI.corpus)
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        var checked = 0
        for folder in ["valid", "quirks"] {
            let imported = try fixture.json(["import", corpus + "/" + folder, "--no-progress"], status: 0)
            for file in imported {
                for route in (file["routes"] as? [[String: Any]]) ?? [] {
                    let workout = try #require(route["workout"] as? String)
                    let result = try fixture.run(["stats", workout, "--json"])
                    #expect(result.status == 0, "\(file["file"] ?? "?"): \(result.stderr)")
                    let stats = try #require(try StoreCLI.objects(result.stdout).first)
                    let distance = stats["distanceMetres"] as? Double ?? -1
                    #expect(distance >= 0 && distance.isFinite)
                    if let moving = stats["movingSeconds"] as? Double, let elapsed = stats["elapsedSeconds"] as? Double {
                        #expect(moving >= 0 && moving <= elapsed + 1e-6, "\(file["file"] ?? "?")")
                    }
                    checked += 1
                    guard let path = file["file"] as? String,
                        let reference = Self.gpxpyReference.first(where: { path.hasSuffix($0.file) })
                    else { continue }
                    #expect(abs(distance - reference.distance) / reference.distance < 0.005, "\(path): \(distance) m")
                    if let moving = reference.moving {
                        let ours = stats["movingSeconds"] as? Double ?? -1
                        #expect(abs(ours - moving) / moving < 0.02, "\(path): moving \(ours) s")
                    }
                }
            }
        }
        #expect(checked >= 60, "tracks with statistics: \(checked)")
    }
}
