import Foundation
import RouteKitTesting
import Testing

/// The real FIT files of `../shared/format-corpus` (read, copied to temporary folders, never into the repository).
enum FITFixtures {
    static let root: String? = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/format-corpus").path
        return FileManager.default.fileExists(atPath: path + "/index.json") ? path : nil
    }()
    static let wahoo = "GPSBabel__gpsbabel__reference__track__wahoo-element-bolt.fit"  // 1,101 positioned records
    static let gzipped = "GoldenCheetah__GoldenCheetah__test__rides__14582164182.fit.gz"  // 2,760
    static let settings = "dtcooper__python-fitparse__tests__files__Settings.fit"
    static let course = "viking-gps__viking__test__Stonehenge.fit"  // 78 course records
    /// Run, transition, ride, transition, run: 5 sessions, 1,287 positioned records.
    static let multisport = "Runalyze__Runalyze__tests__testfiles__fit__Multisession-stop-after-transition.fit"

    static func copy(_ names: [String]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-fit-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for n in names {
            try FileManager.default.copyItem(atPath: (root ?? "") + "/" + n, toPath: dir.appendingPathComponent(n).path)
        }
        return dir.path
    }

    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }
}

@Suite(
    "routekit with FIT files",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
    .enabled(if: FITFixtures.root != nil, "../shared/format-corpus is absent"))
struct FITCLITests {
    @Test("import a folder: FIT told by content, gzip read, a truncated file recovered, a settings file refused")
    func importFolder() throws {
        let dir = try FITFixtures.copy([FITFixtures.wahoo, FITFixtures.gzipped, FITFixtures.settings, FITFixtures.course])
        // A FIT file cut short, under a name that does not say FIT.
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + FITFixtures.wahoo))
        try whole.prefix(whole.count * 6 / 10).write(to: URL(fileURLWithPath: dir + "/cut-short.bin"))
        let store = dir + "/store.sqlite"
        let r = try CLI.run(["import", "--store", store, "--json", dir, dir + "/cut-short.bin"])
        #expect(r.status == 1, "a refused file makes the exit code 1: \(r.stderr)")
        let files = try FITFixtures.objects(r.stdout)
        func entry(_ suffix: String) -> [String: Any] {
            files.first { ($0["file"] as? String)?.hasSuffix(suffix) == true } ?? [:]
        }
        func locations(_ e: [String: Any]) -> Int {
            (e["routes"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["locations"] as? Int ?? 0) }
        }
        #expect(files.count == 5)
        #expect(entry(FITFixtures.wahoo)["status"] as? String == "imported")
        #expect(locations(entry(FITFixtures.wahoo)) == 1101)
        #expect(locations(entry(FITFixtures.gzipped)) == 2760)
        #expect((entry(FITFixtures.gzipped)["warnings"] as? [String] ?? []).contains { $0.contains("gzip") })
        // The course is a workout with its route (it was a planned route without one, 0 locations counted).
        #expect(entry(FITFixtures.course)["status"] as? String == "imported")
        #expect(locations(entry(FITFixtures.course)) == 78)
        let settings = entry(FITFixtures.settings)
        #expect(settings["status"] as? String == "failed")
        let error = settings["error"] as? [String: Any] ?? [:]
        #expect(error["code"] as? String == "invalidFIT")
        #expect((error["message"] as? String ?? "").contains("settings"))
        // The cut-short copy: the same activity's first part, with a warning that names where it ends. Its content
        // differs from the whole file's, so it is a workout of its own.
        let cut = entry("cut-short.bin")
        #expect(cut["status"] as? String == "imported")
        #expect(locations(cut) > 0 && locations(cut) < 1101)
        #expect((cut["warnings"] as? [String] ?? []).contains { $0.contains("ends inside a message") })

        // Again: nothing new.
        let again = try CLI.run(["import", "--store", store, "--json", dir + "/" + FITFixtures.wahoo, dir + "/cut-short.bin"])
        #expect(again.status == 0)
        #expect(try FITFixtures.objects(again.stdout).allSatisfy { $0["status"] as? String == "unchanged" })
    }

    @Test("inspect says a course file is a course, in text and JSON")
    func inspectCourse() throws {
        let dir = try FITFixtures.copy([FITFixtures.course])
        let file = dir + "/" + FITFixtures.course
        let text = try CLI.run(["inspect", file])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("FIT course"))
        #expect(text.stdout.contains("  course "), "\(text.stdout)")
        let report = try FITFixtures.objects(try CLI.run(["inspect", "--json", file]).stdout).first ?? [:]
        #expect((report["fit"] as? [String: Any])?["fileType"] as? String == "course")
        #expect((report["courses"] as? [[String: Any]])?.count == 1)
        // An activity file has no `courses`.
        let activity = try FITFixtures.copy([FITFixtures.wahoo]) + "/" + FITFixtures.wahoo
        let other = try FITFixtures.objects(try CLI.run(["inspect", "--json", activity]).stdout).first ?? [:]
        #expect(other["courses"] == nil)
    }

    @Test("a multisport file: import and inspect say one workout of 5 activities; splits --by activity gives 5")
    func multisport() throws {
        let dir = try FITFixtures.copy([FITFixtures.multisport])
        let file = dir + "/" + FITFixtures.multisport
        let store = dir + "/store.sqlite"
        let text = try CLI.run(["import", "--store", store, file])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("1 route(s), 1287 location(s), a workout of 5 activities"), "\(text.stdout)")
        let again = try FITFixtures.objects(try CLI.run(["import", "--store", store, "--json", file]).stdout).first ?? [:]
        #expect(again["status"] as? String == "unchanged")
        let routes = again["routes"] as? [[String: Any]] ?? []
        try #require(routes.count == 1)
        let workout = try #require(routes[0]["workout"] as? String)
        let splits = try CLI.run(["splits", "--store", store, workout, "--by", "activity", "--json"])
        #expect(splits.status == 0, "\(splits.stderr)")
        let report = try FITFixtures.objects(splits.stdout).first ?? [:]
        #expect(report["by"] as? String == "activity")
        #expect((report["splits"] as? [[String: Any]])?.count == 5)
        let inspect = try CLI.run(["inspect", file])
        #expect(inspect.stdout.contains("multisport: 5 activities, imported as one workout"), "\(inspect.stdout)")
        let inspected = try FITFixtures.objects(try CLI.run(["inspect", "--json", file]).stdout).first ?? [:]
        #expect(inspected["multisport"] as? [Int] == [5])
    }

    @Test("a file that is not FIT under a .fit name fails with a byte offset, not a GPX error")
    func notFIT() throws {
        let path = try CLI.temporaryFile("garbage.fit", "0123")
        let r = try CLI.run(["import", "--store", path + ".sqlite", "--json", path])
        #expect(r.status == 1)
        let error = try FITFixtures.objects(r.stdout).first?["error"] as? [String: Any] ?? [:]
        #expect(error["code"] as? String == "invalidFIT")
        #expect(error["byteOffset"] as? Int == 0)
    }

    @Test("inspect --json reports the FIT file's own counts; convert writes GPX 1.1 that validates")
    func inspectAndConvert() throws {
        let dir = try FITFixtures.copy([FITFixtures.wahoo])
        let file = dir + "/" + FITFixtures.wahoo
        let r = try CLI.run(["inspect", "--json", file])
        #expect(r.status == 0)
        let report = try FITFixtures.objects(r.stdout).first ?? [:]
        #expect(report["format"] as? String == "fit")
        #expect(report["points"] as? Int == 1101)
        let fit = report["fit"] as? [String: Any] ?? [:]
        #expect(fit["records"] as? Int == 1101)
        #expect(fit["recordsWithHeartRate"] as? Int == 1100)
        #expect(fit["sessions"] as? [String] == ["cycling"])
        #expect((fit["developerFields"] as? [String] ?? []).contains { $0.hasPrefix("charge") })

        let gpx = dir + "/out.gpx"
        let c = try CLI.run(["convert", file, "-o", gpx])
        #expect(c.status == 0, "\(c.stderr)")
        let text = try String(contentsOfFile: gpx, encoding: .utf8)
        #expect(text.components(separatedBy: "<trkpt ").count - 1 == 1101)
        #expect(text.contains("<gpxtpx:hr>"))
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/schemas/gpx-1.1.xsd")
            .path
        if let xmllint = ["/usr/bin/xmllint", "/usr/local/bin/xmllint"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }), FileManager.default.fileExists(atPath: schema) {
            let v = try runChildProcess(URL(fileURLWithPath: xmllint), ["--noout", "--schema", schema, gpx])
            #expect(v.status == 0, "\(v.errorOutput)")
        }
        let csv = try CLI.run(["convert", file, "--format", "csv", "-o", "-"])
        #expect(csv.status == 0)
        #expect(csv.stdout.split(separator: "\n").count == 1102)  // a header and one row per point
    }
}
