import Foundation
import RouteKit
import RouteKitSQLite
import RouteKitTesting
import Testing
import ZIPFoundation

/// What a newcomer meets first: a typo'd store, a closed pipe, a short id, a folder or a file that holds no route,
/// a misspelt command. Each is said in a sentence with its own exit status.
@Suite(
    "routekit for a newcomer: missing stores, closed pipes, short ids, wrong files, misspelt commands",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct NewcomerCLITests {
    @Test("a command that reads refuses a path with no store (exit 1) and makes none; so does an import of missing files")
    func missingStore() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let typo = f.directory + "/typo.sqlite"
        let expected = "no store at \(typo) (import a file first, or check --store / ROUTEKIT_STORE)"
        let readers: [[String]] = [
            ["routes"], ["workouts"], ["changes"], ["builders"], ["zones", "show"], ["compact"],
            ["locations", UUID().uuidString], ["stats", UUID().uuidString], ["export", UUID().uuidString],
        ]
        for arguments in readers {
            let r = try CLI.run(arguments + ["--store", typo])
            #expect(r.status == 1, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(expected), "\(arguments): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(arguments): \(r.stdout)")
            let made = FileManager.default.fileExists(atPath: typo)
            #expect(!made, "\(arguments) made a store")
        }
        let missing = try CLI.run(["import", f.directory + "/nothing.gpx", "--store", typo])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nothing.gpx"), "\(missing.stderr)")
        let madeByImport = FileManager.default.fileExists(atPath: typo)
        #expect(!madeByImport, "an import of a missing file made a store")

        // An import of a real file makes it; the readers then answer from it.
        let file = try f.write("a.gpx", CLITests.good)
        let imported = try CLI.run(["import", file, "--store", typo])
        #expect(imported.status == 0, "\(imported.stderr)")
        let routes = try CLI.run(["routes", "--store", typo])
        #expect(routes.status == 0, "\(routes.stderr)")
        #expect(routes.stdout.contains("1 route"), "\(routes.stdout)")
    }

    @Test("a route or workout is named by its first 8 hex digits; text that is no uuid is a usage error naming the argument")
    func uuidPrefixes() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("a.gpx", CLITests.good)
        #expect(try f.run(["import", file]).status == 0)
        let route = try #require(try f.routes().first)
        let routeID = try #require(route["uuid"] as? String)
        let workoutID = try #require(route["workout"] as? String)

        let exported = try f.run(["export", String(routeID.prefix(8))])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.contains("<trkpt"))
        let stats = try f.run(["stats", String(workoutID.prefix(8)).uppercased(), "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("\"workout\":\"\(workoutID)\""), "\(stats.stdout)")
        let located = try f.run(["locations", String(routeID.prefix(13))])
        #expect(located.status == 0, "\(located.stderr)")
        // A workout's prefix is no route's: locations takes routes only.
        let notARoute = try f.run(["locations", String(workoutID.prefix(8))])
        #expect(notARoute.status == 1, "\(notARoute.stderr)")
        #expect(notARoute.stderr.contains("no route has a uuid beginning with"), "\(notARoute.stderr)")

        // A prefix neither begins: not found (1); text that is no prefix: a usage error (64) naming the argument.
        let other = routeID.hasPrefix("0") || workoutID.hasPrefix("0") ? "11111111" : "00000000"
        let none = try f.run(["export", other])
        #expect(none.status == 1)
        #expect(none.stderr.contains("no route or workout has a uuid beginning with '\(other)'"), "\(none.stderr)")
        for (arguments, named) in [
            (["export", "f22ec33"], "ID 'f22ec33'"), (["locations", "my-route"], "ROUTE 'my-route'"),
            (["routes", "--workout", "nonsense"], "--workout 'nonsense'"), (["delete", "xyz"], "ID 'xyz'"),
        ] {
            let r = try f.run(arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(named), "\(arguments): \(r.stderr)")
        }
        // Nothing was deleted by the refused delete.
        #expect(try f.routes().count == 1)
    }

    @Test("an ambiguous prefix is a usage error (64) listing its candidates, each with its kind, as git does")
    func ambiguousPrefix() async throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("a.gpx", CLITests.good)
        #expect(try f.run(["import", file]).status == 0)
        let route = try #require(try f.routes().first)
        let routeID = try #require(route["uuid"] as? String)
        // A workout whose uuid begins with the route's first 8 hex digits.
        let prefix = String(routeID.prefix(8))
        let twinText = prefix + "-0000-4000-8000-000000000000"
        let twin = try #require(UUID(uuidString: twinText))
        let store = try SQLiteStore(path: f.store)
        let source = try Source(name: "treadmill")
        _ = try await store.saveWorkout(Workout(id: twin, activityType: .running, start: nil, end: nil, source: source))

        let r = try f.run(["export", prefix])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stdout.isEmpty, "\(r.stdout)")
        let said = "ID '\(prefix)' is ambiguous: it begins the uuids of 2 routes and workouts"
        #expect(r.stderr.contains(said), "\(r.stderr)")
        #expect(r.stderr.contains("\n  \(routeID) route "), "\(r.stderr)")
        #expect(r.stderr.contains("\n  \(twinText) workout  -, running"), "\(r.stderr)")
        // A command that takes routes only is not misled by the workout.
        let located = try f.run(["locations", prefix])
        #expect(located.status == 0, "\(located.stderr)")
    }

    @Test("Ctrl-C during an import says what was stored and how to finish, exits 130; the same import then finishes")
    func interruptedImport() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let folder = f.directory + "/rides"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try f.write("rides/a-small.gpx", SyntheticGPX.text(name: "small", points: 20))
        let big = try f.write("rides/b-big.gpx", SyntheticGPX.big)
        let executable = try #require(CLI.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["import", folder, "--json", "--no-progress", "--store", f.store]
        let outPath = f.directory + "/interrupted.out"
        let errPath = f.directory + "/interrupted.err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Ctrl-C once the big file is under way: its builder acknowledged 10 batches (the small file is done by then).
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline && f.acknowledged() < 10 * 1024 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let running = process.isRunning
        if running { kill(process.processIdentifier, SIGINT) }
        process.waitUntilExit()
        try out.close()
        try err.close()
        try #require(running, "the import ended before it could be interrupted: the file is too small for this machine")
        #expect(process.terminationReason == .exit, "SIGINT is handled, not the process's end")
        #expect(process.terminationStatus == 130)
        let printed = try String(contentsOfFile: outPath, encoding: .utf8)
        let said = try String(contentsOfFile: errPath, encoding: .utf8)
        // The small file's result was printed as it finished; the big one's never was.
        let objects = try StoreCLI.objects(printed)
        try #require(objects.count == 1, "\(printed)")
        let first = objects[0]["file"] as? String ?? ""
        #expect(first.hasSuffix("a-small.gpx"), "\(first)")
        #expect(objects[0]["status"] as? String == "imported")
        let summary =
            ", 1 of 2 input(s) done: 1 imported, 0 unchanged, 0 partial, 0 failed; 1 new route(s), "
            + "20 new location(s) → \(f.store)"
        #expect(said.contains("interrupted (Ctrl-C) after "), "\(said)")
        #expect(said.contains(summary), "\(said)")
        #expect(said.contains("not finished: \(big)\n"), "\(said)")
        #expect(said.contains("to finish, run the same import again"), "\(said)")

        // The same import again finishes it: the small file unchanged, the big one resumed, whole, stored once.
        let again = try f.json(["import", folder])
        try #require(again.count == 2, "\(again)")
        #expect(again[0]["status"] as? String == "unchanged", "\(again[0])")
        #expect(again[1]["status"] as? String == "imported", "\(again[1])")
        let counts = try f.routes().compactMap { $0["locations"] as? Int }.sorted()
        #expect(counts == [20, SyntheticGPX.bigCount], "\(counts)")
        let pending = try f.builders()
        #expect(pending.isEmpty, "\(pending)")
    }

    @Test("a folder with no route file is an error (1) when it is all there is, and makes no store; a warning beside a file")
    func emptyFolder() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let folder = f.directory + "/photos"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try f.write("photos/holiday.jpg", "not a route")
        let alone = try f.run(["import", folder])
        #expect(alone.status == 1, "\(alone.stderr)")
        let said = "error: no importable files in \(folder) (looked for .gpx, .fit, .tcx"
        #expect(alone.stderr.contains(said), "\(alone.stderr)")
        let made = FileManager.default.fileExists(atPath: f.store)
        #expect(!made, "a store was made for nothing")
        let file = try f.write("a.gpx", CLITests.good)
        let beside = try f.run(["import", folder, file])
        #expect(beside.status == 0, "\(beside.stderr)")
        #expect(beside.stderr.contains("warning: no importable files in \(folder)"), "\(beside.stderr)")
    }

    @Test("a PDF, a picture, an empty file or a zip of no route file fails as 'not a route file', saying what it looks like")
    func notRouteFiles() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let pdf = try f.write("ride.gpx", Data("%PDF-1.7\n%âãÏÓ\n1 0 obj\n".utf8))
        let png = try f.write("map.gpx", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]))
        let jpeg = try f.write("photo.fit", Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 1]))
        let empty = try f.write("empty.gpx", Data())
        let zipURL = URL(fileURLWithPath: f.directory + "/documents.zip")
        let archive = try Archive(url: zipURL, accessMode: .create)
        let readme = Data("hello".utf8)
        try archive.addEntry(with: "readme.txt", type: .file, uncompressedSize: Int64(readme.count)) { position, size in
            readme.subdata(in: Int(position)..<Int(position) + size)
        }
        let expected = [
            "looks like a PDF document", "looks like a PNG image", "looks like a JPEG image", "the file is empty",
            "a zip archive with no GPX, FIT, TCX or GeoJSON file in it",
        ]
        let objects = try f.json(["import", pdf, png, jpeg, empty, zipURL.path], status: 1)
        try #require(objects.count == expected.count, "\(objects)")
        for (object, message) in Swift.zip(objects, expected) {
            #expect(object["status"] as? String == "failed")
            let error = object["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "unsupportedFormat", "\(object)")
            let text = error["message"] as? String ?? ""
            #expect(text.hasPrefix("not a route file: "), "\(text)")
            #expect(text.contains(message), "\(text)")
            // What RouteKit reads instead, by name.
            #expect(text.contains("GPX, FIT, TCX"), "\(text)")
        }
        // inspect reads through the same reader: the same sentence, and the formats RouteKit reads.
        let inspected = try CLI.run(["inspect", pdf])
        #expect(inspected.status == 1)
        #expect(inspected.stderr.contains("not a route file: looks like a PDF document"), "\(inspected.stderr)")
        #expect(inspected.stderr.contains(Self.formats), "\(inspected.stderr)")
        // A text file that is no XML (a CSV) says so, and names them too.
        let csv = try f.write("laps.gpx", "lap,time\n1,300\n")
        let text = try CLI.run(["import", csv, "--store", f.store])
        #expect(text.status == 1)
        #expect(text.stderr.contains("not XML: expected '<'"), "\(text.stderr)")
        #expect(text.stderr.contains(Self.formats), "\(text.stderr)")
    }

    /// How messages about a file that is no route file name the formats RouteKit reads.
    static let formats =
        "RouteKit reads GPX, FIT, TCX and GeoJSON files (plain or gzip-compressed), zip archives of them, "
        + "and Strava and Apple Health exports"

    @Test("a misspelt command gets the one it is closest to (64); a word close to none is named; help still helps")
    func misspeltCommand() throws {
        let misspelt = [("improt", "import"), ("routse", "routes"), ("workout", "workouts"), ("exprot", "export")]
        for (typed, meant) in misspelt {
            let r = try CLI.run([typed, "x"])
            #expect(r.status == 64, "\(typed): \(r.stderr)")
            #expect(r.stderr.contains("unknown command '\(typed)'; did you mean '\(meant)'?"), "\(typed): \(r.stderr)")
        }
        let far = try CLI.run(["frobnicate"])
        #expect(far.status == 64)
        #expect(far.stderr.contains("unknown command 'frobnicate'"), "\(far.stderr)")
        #expect(!far.stderr.contains("did you mean"))
        let help = try CLI.run(["help", "import"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("routekit import"))
        let version = try CLI.run(["--version"])
        #expect(version.status == 0)
    }
}
