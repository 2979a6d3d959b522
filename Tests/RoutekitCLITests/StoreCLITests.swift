import Foundation
import RouteKitTesting
import Testing
import ZIPFoundation

/// Synthetic GPX 1.1 tracks in the shape of `track_1m.gpx`: lat/lon with 7 decimals, an elevation, a time one
/// second apart from 2024-05-01T00:00:00Z, and a Garmin TrackPointExtension heart rate. Built as bytes (a
/// debug build formats 400,000 points in well under a second this way).
enum SyntheticGPX {
    static let namespaces =
        "xmlns=\"http://www.topografix.com/GPX/1/1\" "
        + "xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\""

    /// Latitude of point `i`, in units of 1e-7 degrees.
    static func latitudeE7(_ i: Int) -> Int { 473_000_000 + i * 45 + i % 97 }
    /// Longitude of point `i`, in units of 1e-7 degrees.
    static func longitudeE7(_ i: Int) -> Int { 85_000_000 + i * 31 + i % 89 }

    /// Point `i`'s time as written (and as the store gives it back): 2024-05-01T00:00:00Z plus `i` seconds.
    static func time(_ i: Int) -> String {
        var out: [UInt8] = []
        appendTime(i, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendTime(_ i: Int, to out: inout [UInt8]) {
        precondition(i < 30 * 86_400, "the synthetic clock stays in May 2024")
        let day = 1 + i / 86_400
        let s = i % 86_400
        out.append(contentsOf: "2024-05-".utf8)
        appendDigits(day, width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(s / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(s % 3600 / 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(s % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    static func appendDigits(_ value: Int, width: Int = 0, to out: inout [UInt8]) {
        var digits: [UInt8] = []
        var v = value
        repeat {
            digits.append(UInt8(48 + v % 10))
            v /= 10
        } while v > 0
        if digits.count < width { digits += Array(repeating: 48, count: width - digits.count) }
        out.append(contentsOf: digits.reversed())
    }

    static func appendFixed(_ value: Int, decimals: Int, to out: inout [UInt8]) {
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        appendDigits(value / scale, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(value % scale, width: decimals, to: &out)
    }

    /// A GPX 1.1 document with one track of `points` points.
    static func document(name: String, points: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + points * 200)
        out.append(contentsOf: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)
        out.append(contentsOf: "<gpx creator=\"StoreCLITests\" version=\"1.1\" \(namespaces)>\n".utf8)
        out.append(contentsOf: " <trk>\n  <name>\(name)</name>\n  <type>cycling</type>\n  <trkseg>\n".utf8)
        for i in 0..<points {
            out.append(contentsOf: "   <trkpt lat=\"".utf8)
            appendFixed(latitudeE7(i), decimals: 7, to: &out)
            out.append(contentsOf: "\" lon=\"".utf8)
            appendFixed(longitudeE7(i), decimals: 7, to: &out)
            out.append(contentsOf: "\"><ele>".utf8)
            appendFixed(4000 + i % 500, decimals: 1, to: &out)
            out.append(contentsOf: "</ele><time>".utf8)
            appendTime(i, to: &out)
            out.append(contentsOf: "</time><extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>".utf8)
            appendDigits(100 + i % 60, to: &out)
            out.append(contentsOf: "</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions></trkpt>\n".utf8)
        }
        out.append(contentsOf: "  </trkseg>\n </trk>\n</gpx>\n".utf8)
        return out
    }

    static func text(name: String, points: Int) -> String {
        String(decoding: document(name: name, points: points), as: UTF8.self)
    }

    /// The points of the kill tests: at ~70k points/s (debug build) an import takes ~5 s, and the kill comes
    /// after 10 batches (~0.2 s), so it lands well inside the import.
    static let bigCount = 400_000
    static let big: Data = Data(document(name: "kill test", points: bigCount))
}

/// Helpers for the store commands: a fresh folder and store per test, JSON lines, a killed import.
struct StoreFixture {
    let directory: String
    let store: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("routekit-storecli-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = directory + "/store.sqlite"
    }

    /// A fixture whose store is `store` (a PostgreSQL URL), with a folder for its files.
    init(store: String) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("routekit-storecli-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.store = store
    }

    /// Removes the folder (with the store and the files).
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Writes `contents` to `name` in the test's folder.
    func write(_ name: String, _ contents: String) throws -> String {
        let path = directory + "/" + name
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func write(_ name: String, _ contents: Data) throws -> String {
        let path = directory + "/" + name
        try contents.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Writes a zip archive `name` in the test's folder holding `entries` (each its path in the archive and its bytes,
    /// stored in this order).
    func zip(_ name: String, _ entries: [(String, Data)]) throws -> String {
        let path = directory + "/" + name
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        for (entry, data) in entries {
            try archive.addEntry(with: entry, type: .file, uncompressedSize: Int64(data.count)) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return path
    }

    /// Runs `routekit` with `--store` appended.
    func run(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(arguments + ["--store", store])
    }

    /// Runs `routekit … --json` and parses every output line as an object; expects exit status `status`.
    func json(_ arguments: [String], status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [[String: Any]]
    {
        let result = try run(arguments + ["--json"])
        #expect(result.status == status, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        return try StoreCLI.objects(result.stdout)
    }

    func routes() throws -> [[String: Any]] { try json(["routes"]) }
    func builders() throws -> [[String: Any]] { try json(["builders"]) }
    func workouts() throws -> [[String: Any]] { try json(["workouts"]) }

    /// How many locations the store's pending builders acknowledged: read with the sqlite3 tool (a read-only
    /// reader never waits for the importer's writes), else with `routekit builders --json`.
    func acknowledged() -> Int {
        if let sqlite3 = StoreCLI.sqlite3 {
            guard FileManager.default.fileExists(atPath: store),
                let r = try? runChildProcess(
                    sqlite3, ["-readonly", store, "SELECT coalesce(max(location_count), 0) FROM builder"]),
                r.status == 0
            else { return 0 }
            return Int(r.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        guard let r = try? run(["builders", "--json"]), r.status == 0, let objects = try? StoreCLI.objects(r.stdout)
        else { return 0 }
        return objects.compactMap { $0["locations"] as? Int }.max() ?? 0
    }

    /// Starts `routekit import FILE`, waits until its builder acknowledged `batches` batches of 1,024, and
    /// kills it with SIGKILL. Returns `nil` (after recording an issue) when the import ended on its own first.
    func importAndKill(_ file: String, batches: Int = 10, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> Int?
    {
        let executable = try #require(CLI.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["import", "--store", store, file, "--no-progress"]
        let outPath = directory + "/killed.out"
        let errPath = directory + "/killed.err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        let started = Date()
        try process.run()
        let deadline = started.addingTimeInterval(60)
        var seen = 0
        while process.isRunning && Date() < deadline {
            seen = acknowledged()
            if seen >= batches * 1024 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let elapsed = Date().timeIntervalSince(started)
        guard process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL else {
            let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            let message =
                "the import ended on its own (status \(process.terminationStatus)) after \(elapsed) s before it "
                + "could be killed: the file is too small for this machine. Output: \(output)"
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            return nil
        }
        print("StoreCLI: killed the import after \(String(format: "%.2f", elapsed)) s; \(seen) locations seen acknowledged")
        #expect(seen >= batches * 1024, "the kill came before \(batches) batches were acknowledged", sourceLocation: sourceLocation)
        return seen
    }
}

enum StoreCLI {
    /// A program on the PATH.
    static func which(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }

    static let sqlite3 = which("sqlite3")

    /// Checks a written GPX file against GPX 1.1's schema (RouteKitTesting's `GPXSchema`; in CI it must run).
    static func validate(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if let problem = try GPXSchema.problem(file: path) { Issue.record("\(problem)", sourceLocation: sourceLocation) }
    }

    /// A GPX file with every `<metadata>` element, a waypoint and a track.
    static let metadataGPX = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Metadata test" xmlns="http://www.topografix.com/GPX/1/1">
        \(GPXFixtures.everyMetadataElement)
          <wpt lat="47.305" lon="8.505"><name>Café</name></wpt>
          <trk>
            <name>Lake loop</name><type>cycling</type>
            <trkseg>
              <trkpt lat="47.3" lon="8.5"><ele>410</ele><time>2024-05-01T06:00:00Z</time></trkpt>
              <trkpt lat="47.31" lon="8.51"><ele>415</ele><time>2024-05-01T06:00:20Z</time></trkpt>
            </trkseg>
          </trk>
        </gpx>
        """

    /// The `<metadata>` element of GPX that RouteKit wrote, as written.
    static func metadataBlock(_ text: String) -> String? {
        guard let start = text.range(of: "<metadata>"), let end = text.range(of: "</metadata>") else { return nil }
        return String(text[start.lowerBound..<end.upperBound])
    }

    /// One JSON object per non-empty line.
    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
    }

    static let importKeys: Set<String> = ["file", "status", "routes", "waypoints", "warnings", "error"]
    static let importRouteKeys: Set<String> = ["workout", "route", "locations"]
    static let errorKeys: Set<String> = ["code", "message", "line", "column"]
    static let routeKeys: Set<String> = [
        "uuid", "workout", "source", "syncIdentifier", "syncVersion", "start", "end", "locations", "metadata",
    ]

    /// The first route of an `import --json` object.
    static func firstRoute(_ object: [String: Any]) throws -> [String: Any] {
        let routes = try #require(object["routes"] as? [[String: Any]])
        return try #require(routes.first)
    }

    static func isUUID(_ value: Any?) -> Bool {
        guard let s = value as? String else { return false }
        return UUID(uuidString: s) != nil && s == s.lowercased()
    }
}

@Suite(
    "routekit store commands", .serialized,
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct StoreCLITests {
    @Test("import --json: one object per file with the DESIGN keys; unchanged on re-import, under any name or layout")
    func importJSON() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let first = try f.write("first.gpx", SyntheticGPX.text(name: "first", points: 3))
        let second = try f.write("second.gpx", SyntheticGPX.text(name: "second", points: 4))
        let bad = try f.write("bad.gpx", "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk>\n</gpx>")

        let result = try f.run(["import", "--json", first, bad, second])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.gpx"))
        let objects = try StoreCLI.objects(result.stdout)
        try #require(objects.count == 3)
        for (object, file) in zip(objects, [first, bad, second]) {
            #expect(Set(object.keys) == StoreCLI.importKeys)
            #expect(object["file"] as? String == file)
            #expect(object["waypoints"] as? Int == 0)
            #expect(object["warnings"] as? [String] == [])
        }
        for (object, points) in [(objects[0], 3), (objects[2], 4)] {
            #expect(object["status"] as? String == "imported")
            #expect(object["error"] is NSNull)
            let routes = try #require(object["routes"] as? [[String: Any]])
            try #require(routes.count == 1)
            #expect(Set(routes[0].keys) == StoreCLI.importRouteKeys)
            #expect(StoreCLI.isUUID(routes[0]["workout"]))
            #expect(StoreCLI.isUUID(routes[0]["route"]))
            #expect(routes[0]["locations"] as? Int == points)
        }
        #expect(objects[1]["status"] as? String == "failed")
        #expect((objects[1]["routes"] as? [Any])?.isEmpty == true)
        let error = try #require(objects[1]["error"] as? [String: Any])
        #expect(Set(error.keys) == StoreCLI.errorKeys)
        #expect(error["code"] as? String == "malformedXML")
        #expect(error["line"] as? Int == 3)
        #expect(error["column"] as? Int == 1)
        #expect((error["message"] as? String)?.isEmpty == false)
        #expect(try f.routes().count == 2)

        let imported = try StoreCLI.firstRoute(objects[0])
        let again = try f.json(["import", first])
        try #require(again.count == 1)
        #expect(again[0]["status"] as? String == "unchanged")
        let againRoute = try StoreCLI.firstRoute(again[0])
        #expect(againRoute["route"] as? String == imported["route"] as? String)
        #expect(againRoute["workout"] as? String == imported["workout"] as? String)

        // The same track under another name, re-indented, with CRLF line ends and single-quoted attributes.
        let original = try String(contentsOfFile: first, encoding: .utf8)
        let reformatted =
            original
            .replacingOccurrences(of: "\n", with: "")
            .replacingOccurrences(of: "><", with: ">\r\n\t    <")
            .replacingOccurrences(of: "\"", with: "'")
        #expect(reformatted != original)
        let copy = try f.write("renamed copy.gpx", reformatted)
        let copied = try f.json(["import", copy])
        try #require(copied.count == 1)
        #expect(copied[0]["status"] as? String == "unchanged", "\(copied[0])")
        #expect(try StoreCLI.firstRoute(copied[0])["route"] as? String == imported["route"] as? String)
        #expect(try f.routes().count == 2)
        #expect(try f.workouts().count == 2)
    }

    @Test("routes --json has exactly the DESIGN keys with the imported values")
    func routesJSON() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("seven.gpx", SyntheticGPX.text(name: "seven", points: 7))
        let imported = try f.json(["import", "--source", "my-watch", file])
        try #require(imported.count == 1)
        let importedRoute = try StoreCLI.firstRoute(imported[0])

        let routes = try f.routes()
        try #require(routes.count == 1)
        let r = routes[0]
        #expect(Set(r.keys) == StoreCLI.routeKeys)
        #expect(r["uuid"] as? String == importedRoute["route"] as? String)
        #expect(r["workout"] as? String == importedRoute["workout"] as? String)
        #expect(r["source"] as? String == "my-watch")
        let syncIdentifier = try #require(r["syncIdentifier"] as? String)
        #expect(syncIdentifier.hasPrefix("gpx-"))
        #expect(r["syncVersion"] as? Int == 1)
        #expect(r["start"] as? String == "2024-05-01T00:00:00Z")
        #expect(r["end"] as? String == "2024-05-01T00:00:06Z")
        #expect(r["locations"] as? Int == 7)
        #expect(r["metadata"] is [String: Any])

        // --workout filters; another workout's uuid lists nothing.
        let workout = try #require(r["workout"] as? String)
        #expect(try f.json(["routes", "--workout", workout]).count == 1)
        #expect(try f.json(["routes", "--workout", UUID().uuidString.lowercased()]).isEmpty)

        // The same content imported by another source is that source's own route, with the same sync identifier.
        let other = try f.json(["import", file])
        #expect(other[0]["status"] as? String == "imported")
        let both = try f.routes()
        #expect(both.count == 2)
        #expect(Set(both.compactMap { $0["source"] as? String }) == ["my-watch", "routekit-import"])
        #expect(Set(both.compactMap { $0["syncIdentifier"] as? String }) == [syncIdentifier])
    }

    @Test("delete works only as the owning source; deleting a workout deletes its routes")
    func delete() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let a = try f.write("a.gpx", SyntheticGPX.text(name: "a", points: 3))
        let b = try f.write("b.gpx", SyntheticGPX.text(name: "b", points: 5))
        let importedA = try StoreCLI.firstRoute(try f.json(["import", a])[0])
        let importedB = try StoreCLI.firstRoute(try f.json(["import", b])[0])
        let routeA = try #require(importedA["route"] as? String)
        let routeB = try #require(importedB["route"] as? String)
        let workoutB = try #require(importedB["workout"] as? String)

        let refused = try f.run(["delete", routeA, "--source", "other"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error:"))
        #expect(try f.routes().compactMap { $0["uuid"] as? String }.sorted() == [routeA, routeB].sorted())

        let deleted = try f.run(["delete", routeA, "--source", "routekit-import"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(try f.routes().compactMap { $0["uuid"] as? String } == [routeB])
        #expect(try f.run(["delete", routeA]).status == 1, "a deleted route cannot be deleted again")

        #expect(try f.run(["delete", workoutB, "--source", "other"]).status == 1)
        #expect(try f.routes().count == 1)
        let deletedWorkout = try f.run(["delete", workoutB])
        #expect(deletedWorkout.status == 0, "\(deletedWorkout.stderr)")
        #expect(try f.routes().isEmpty)
        #expect(try f.workouts().compactMap { $0["uuid"] as? String }.contains(workoutB) == false)
        #expect(try f.json(["routes", "--workout", workoutB]).isEmpty)

        #expect(try f.run(["delete", "not-a-uuid"]).status == 64, "a malformed uuid is a usage error")
        #expect(try f.run(["delete"]).status == 64)
    }

    @Test("export -o out.gpx validates against the GPX 1.1 schema and re-imports unchanged; CSV has a line per location")
    func export() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let points = 6
        let file = try f.write("ride.gpx", SyntheticGPX.text(name: "ride", points: points))
        let route = try #require(try StoreCLI.firstRoute(try f.json(["import", file])[0])["route"] as? String)

        let gpx = f.directory + "/out.gpx"
        let exported = try f.run(["export", route, "-o", gpx])
        #expect(exported.status == 0, "\(exported.stderr)")
        let text = try String(contentsOfFile: gpx, encoding: .utf8)
        #expect(text.components(separatedBy: "<trkpt ").count - 1 == points)
        #expect(text.contains("<gpxtpx:hr>100</gpxtpx:hr>"))
        try StoreCLI.validate(gpx)
        let reimported = try f.json(["import", gpx])
        try #require(reimported.count == 1)
        #expect(reimported[0]["status"] as? String == "unchanged", "\(reimported[0])")
        #expect(try f.routes().count == 1)

        let csv = f.directory + "/out.csv"
        let csvResult = try f.run(["export", route, "--format", "csv", "-o", csv])
        #expect(csvResult.status == 0, "\(csvResult.stderr)")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        #expect(lines.dropLast().count == points + 1)
        #expect(lines.dropFirst().first?.contains("47.3") == true)

        let missing = try f.run(["export", UUID().uuidString, "-o", f.directory + "/none.gpx"])
        #expect(missing.status == 1)
        #expect(!FileManager.default.fileExists(atPath: f.directory + "/none.gpx"))
    }

    @Test("import then export writes the file's <metadata> back as convert does, schema-valid, by route or workout")
    func exportKeepsMetadata() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("lunch.gpx", StoreCLI.metadataGPX)
        let imported = try StoreCLI.firstRoute(try f.json(["import", file])[0])
        let route = try #require(imported["route"] as? String)
        let workout = try #require(imported["workout"] as? String)
        // convert keeps a file's <metadata>: the reference for what the store gives back.
        let converted = f.directory + "/converted.gpx"
        let conversion = try CLI.run(["convert", file, "-o", converted])
        #expect(conversion.status == 0, "\(conversion.stderr)")
        let expected = try #require(StoreCLI.metadataBlock(try String(contentsOfFile: converted, encoding: .utf8)))
        for element in [
            "<name>Lunch ride</name>", "<email id=\"jo\" domain=\"example.org\"/>", "<copyright author=\"Jo Rider\">",
            "<time>2024-05-01T08:00:00.123+02:00</time>", "<keywords>lake, lunch</keywords>", "<bounds ",
            "urn:example:unknown",
        ] {
            #expect(expected.contains(element), "\(element) in \(expected)")
        }
        for id in [route, workout] {
            let out = f.directory + "/export-\(id).gpx"
            let exported = try f.run(["export", id, "-o", out])
            #expect(exported.status == 0, "\(exported.stderr)")
            let text = try String(contentsOfFile: out, encoding: .utf8)
            #expect(StoreCLI.metadataBlock(text) == expected, "\(text)")
            #expect(text.contains("<name>Lake loop</name>"))
            try StoreCLI.validate(out)
        }
    }

    @Test("export as GeoJSON, import it and convert it: the same locations; a bad GeoJSON fails naming the member")
    func geoJSONRoundTrip() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let points = 50
        let file = try f.write("ride.gpx", SyntheticGPX.text(name: "ride", points: points))
        let route = try #require(try StoreCLI.firstRoute(try f.json(["import", file])[0])["route"] as? String)
        let geojson = f.directory + "/ride.geojson"
        let exported = try f.run(["export", route, "-o", geojson])
        #expect(exported.status == 0, "\(exported.stderr)")

        let imported = try f.json(["import", geojson])
        try #require(imported.count == 1)
        #expect(imported[0]["status"] as? String == "imported", "\(imported[0])")
        let again = try #require(try StoreCLI.firstRoute(imported[0])["route"] as? String)
        #expect(again != route, "a new route: GeoJSON holds less than the GPX (no heart rate)")
        let original = try f.json(["locations", route]).flatMap { $0["locations"] as? [[String: Any]] ?? [] }
        let back = try f.json(["locations", again]).flatMap { $0["locations"] as? [[String: Any]] ?? [] }
        #expect(back.count == points)
        for key in ["time", "latitude", "longitude", "altitude"] {
            #expect(back.map { "\($0[key] ?? "")" } == original.map { "\($0[key] ?? "")" }, "\(key)")
        }
        #expect(try f.json(["import", geojson])[0]["status"] as? String == "unchanged")

        // convert reads it (to schema-valid GPX 1.1), inspect shows it.
        let gpx = f.directory + "/converted.gpx"
        let converted = try CLI.run(["convert", geojson, "-o", gpx])
        #expect(converted.status == 0, "\(converted.stderr)")
        let text = try String(contentsOfFile: gpx, encoding: .utf8)
        #expect(text.components(separatedBy: "<trkpt ").count - 1 == points)
        #expect(text.contains("<time>\(SyntheticGPX.time(points - 1))</time>"))
        try StoreCLI.validate(gpx)
        let inspected = try StoreCLI.objects(try CLI.run(["inspect", "--json", geojson]).stdout)
        #expect(inspected.first?["format"] as? String == "geojson")
        #expect(inspected.first?["points"] as? Int == points)

        let bad = try f.write("bad.geojson", #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[]}}"#)
        let failed = try f.json(["import", bad], status: 1)
        let error = try #require(failed.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "invalidGeoJSON")
        #expect((error["message"] as? String)?.contains("geometry.type") == true, "\(error)")
        #expect(error["line"] as? Int == 1)
    }

    @Test("locations --json --batch-size 2 prints ceil(n/2) batches, only the last done")
    func locationBatches() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let points = 5
        let file = try f.write("five.gpx", SyntheticGPX.text(name: "five", points: points))
        let route = try #require(try StoreCLI.firstRoute(try f.json(["import", file])[0])["route"] as? String)
        let batches = try f.json(["locations", route, "--batch-size", "2"])
        #expect(batches.count == (points + 1) / 2)
        #expect(batches.map { $0["batch"] as? Int } == [0, 1, 2])
        #expect(batches.map { $0["done"] as? Bool } == [false, false, true])
        let locations = batches.flatMap { $0["locations"] as? [[String: Any]] ?? [] }
        #expect(batches.map { ($0["locations"] as? [Any])?.count } == [2, 2, 1])
        #expect(locations.map { $0["time"] as? String } == (0..<points).map(SyntheticGPX.time))
        #expect(locations.first?["latitude"] as? Double == 47.3)
        #expect(try f.run(["locations", route, "--batch-size", "0"]).status == 64)
        #expect(try f.run(["locations", UUID().uuidString]).status == 1)
    }
}

@Suite(
    "routekit import killed mid-way", .serialized,
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct StoreCLIKillTests {
    @Test("an import killed with SIGKILL resumes after its acknowledged batches: nothing lost, nothing duplicated")
    func killAndResume() throws {
        let clock = Date()
        let f = try StoreFixture()
        defer { f.remove() }
        let total = SyntheticGPX.bigCount
        let file = try f.write("big.gpx", SyntheticGPX.big)
        print("StoreCLI: wrote \(total) points in \(String(format: "%.2f", Date().timeIntervalSince(clock))) s")

        guard try f.importAndKill(file) != nil else { return }
        let pending = try f.builders()
        try #require(pending.count == 1, "\(pending)")
        let k = try #require(pending[0]["locations"] as? Int)
        #expect(k > 0)
        #expect(k % 1024 == 0 || k == total, "acknowledged \(k) is not a whole number of batches")
        #expect(k < total)
        let origin = try #require(pending[0]["origin"] as? [String: Any])
        #expect(origin["kind"] as? String == "gpx-import")
        #expect(origin["label"] as? String == file)
        #expect(pending[0]["source"] as? String == "routekit-import")
        #expect(try f.routes().isEmpty, "a killed import saved a route")
        if let sqlite3 = StoreCLI.sqlite3 {
            let check = try runChildProcess(sqlite3, [f.store, "PRAGMA integrity_check"])
            #expect(check.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        }

        let resumeClock = Date()
        let resumed = try f.run(["import", file, "--no-progress"])
        print("StoreCLI: the resumed import took \(String(format: "%.2f", Date().timeIntervalSince(resumeClock))) s")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("resumed after \(k) acknowledged"), "\(resumed.stdout)")
        #expect(resumed.stdout.contains("\(total) location(s)"))

        let routes = try f.routes()
        try #require(routes.count == 1)
        #expect(routes[0]["locations"] as? Int == total)
        #expect(routes[0]["start"] as? String == SyntheticGPX.time(0))
        #expect(routes[0]["end"] as? String == SyntheticGPX.time(total - 1))
        #expect(try f.builders().isEmpty)
        #expect(try f.workouts().count == 1)

        // Every location once, in order, one second apart from the first.
        let route = try #require(routes[0]["uuid"] as? String)
        let readClock = Date()
        let batches = try f.json(["locations", route, "--batch-size", "100000"])
        #expect(batches.count == (total + 99_999) / 100_000)
        #expect(batches.map { $0["done"] as? Bool == true } == batches.indices.map { $0 == batches.count - 1 })
        var index = 0
        var mismatches = 0
        for batch in batches {
            for location in batch["locations"] as? [[String: Any]] ?? [] {
                let time = location["time"] as? String
                let latitude = location["latitude"] as? Double ?? .nan
                let expectedLatitude = Double(SyntheticGPX.latitudeE7(index)) / 1e7
                if index >= total || time != SyntheticGPX.time(index) || abs(latitude - expectedLatitude) > 1e-9 {
                    if mismatches < 5 {
                        Issue.record("location \(index): time \(time ?? "nil"), latitude \(latitude)")
                    }
                    mismatches += 1
                }
                index += 1
            }
        }
        print("StoreCLI: read and checked \(index) locations in \(String(format: "%.2f", Date().timeIntervalSince(readClock))) s")
        #expect(index == total)
        #expect(mismatches == 0)

        let third = try f.json(["import", file])
        try #require(third.count == 1)
        #expect(third[0]["status"] as? String == "unchanged")
        #expect(try StoreCLI.firstRoute(third[0])["route"] as? String == route)
        #expect(try f.routes().count == 1)

        if let sqlite3 = StoreCLI.sqlite3 {
            let check = try runChildProcess(sqlite3, [f.store, "PRAGMA integrity_check"])
            #expect(check.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        }
        print("StoreCLI: the kill test took \(String(format: "%.2f", Date().timeIntervalSince(clock))) s")
    }

    @Test("discard --all drops a killed import's builder and what it collected")
    func discardAll() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("big.gpx", SyntheticGPX.big)
        guard try f.importAndKill(file) != nil else { return }
        #expect(try f.builders().count == 1)

        #expect(try f.run(["discard"]).status == 64)
        let other = try f.run(["discard", "--all", "--source", "other"])
        #expect(other.status == 0)
        #expect(try f.builders().count == 1, "discard --all of another source dropped this one")

        let discarded = try f.run(["discard", "--all"])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        #expect(discarded.stdout.contains("discarded "))
        #expect(try f.builders().isEmpty)
        #expect(try f.routes().isEmpty)
        #expect(try f.workouts().isEmpty)
        if let sqlite3 = StoreCLI.sqlite3 {
            let chunks = try runChildProcess(sqlite3, [f.store, "SELECT count(*) FROM chunk"])
            #expect(chunks.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "discarded chunks remain")
        }
        let again = try f.run(["discard", "--all"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("no pending builder"))
    }

    @Test("recover saves a builder whose file is gone as a route marked partial")
    func recoverPartial() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("big.gpx", SyntheticGPX.big)
        guard try f.importAndKill(file) != nil else { return }
        let pending = try f.builders()
        try #require(pending.count == 1)
        let k = try #require(pending[0]["locations"] as? Int)
        try FileManager.default.removeItem(atPath: file)

        let recovered = try f.run(["recover"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stdout.contains("saved as partial route"), "\(recovered.stdout)")
        #expect(try f.builders().isEmpty)
        let routes = try f.routes()
        try #require(routes.count == 1)
        let r = routes[0]
        #expect(r["locations"] as? Int == k)
        #expect(r["start"] as? String == SyntheticGPX.time(0))
        #expect(r["end"] as? String == SyntheticGPX.time(k - 1))
        let metadata = try #require(r["metadata"] as? [String: Any])
        #expect(metadata["partial"] as? Bool == true, "\(metadata)")
        #expect((r["syncIdentifier"] as? String)?.hasPrefix("partial-") == true)
        let workouts = try f.workouts()
        #expect(workouts.count == 1)
        #expect(workouts.first?["uuid"] as? String == r["workout"] as? String)
    }
}
