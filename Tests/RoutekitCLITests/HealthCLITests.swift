import Foundation
import RouteKitTesting
import Testing

/// The export generator of `Benchmarks/peers`, run with python3 from PATH.
enum HealthExportGenerator {
    static let python: URL? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(dir)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    /// A new export under a temporary folder (returned), with the counts the generator printed.
    static func generate(_ arguments: [String]) throws -> (String, [String: Any]) {
        guard let python else { throw CocoaError(.fileNoSuchFile) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-health-cli-\(UUID().uuidString)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks/peers/make-health-export.py").path
        let r = try runChildProcess(python, [script, dir.path] + arguments)
        #expect(r.status == 0, "\(r.errorOutput)")
        return (dir.path, try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any] ?? [:])
    }

    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }
}

@Suite(
    "routekit with Apple Health exports",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
    .enabled(if: HealthExportGenerator.python != nil, "python3 is not on PATH: the export generator cannot run"))
struct HealthCLITests {
    @Test("import an export folder with --json: one object per workout and one for export.xml; again unchanged")
    func importFolder() throws {
        let (dir, counts) = try HealthExportGenerator.generate([
            "--workouts", "10", "--points", "120", "--heart-rate", "200", "--size", "300K",
        ])
        let export = dir + "/apple_health_export"
        let store = dir + "/store.sqlite"
        let r = try CLI.run(["import", "--store", store, "--json", export])
        #expect(r.status == 0, "\(r.stderr)")
        let objects = try HealthExportGenerator.objects(r.stdout)
        #expect(objects.count == (counts["workouts"] as? Int ?? -1) + 1)
        let routes = objects.flatMap { $0["routes"] as? [[String: Any]] ?? [] }
        #expect(routes.reduce(0) { $0 + ($1["locations"] as? Int ?? 0) } == counts["route_points"] as? Int)
        #expect(routes.filter { !($0["route"] is NSNull) }.count == counts["routes"] as? Int)
        #expect(objects.dropLast().allSatisfy { $0["status"] as? String == "imported" })
        // Route files are named as files of the export; a workout without a route by its place in export.xml.
        #expect(objects.contains { ($0["file"] as? String ?? "").contains("/workout-routes/route_") })
        #expect(objects.contains { ($0["file"] as? String ?? "").hasSuffix("export.xml#workout-10") })
        let last = try #require(objects.last)
        #expect(last["file"] as? String == export + "/export.xml")
        let heartRate = counts["heart_rate_in_workouts"] as? Int ?? -1
        #expect((last["warnings"] as? [String] ?? []).contains { $0.contains("\(heartRate) became series samples") })
        // The workout-routes GPX files were not imported on their own.
        #expect(!r.stderr.contains("input(s): \(objects.count + (counts["routes"] as? Int ?? 0))"))

        // Again, through the bare export.xml and through the folder that holds the export: nothing new.
        for path in [export + "/export.xml", dir] {
            let again = try CLI.run(["import", "--store", store, "--json", path])
            #expect(again.status == 0, "\(again.stderr)")
            let objects2 = try HealthExportGenerator.objects(again.stdout)
            #expect(objects2.count == objects.count, "\(path)")
            #expect(objects2.allSatisfy { $0["status"] as? String == "unchanged" }, "\(path)")
        }
    }

    @Test("a malformed export.xml fails with its line and column and exit code 1")
    func malformed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-health-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let xml = dir.appendingPathComponent("export.xml").path
        try "<HealthData>\n<Record type=\"a\" value=\"&bad;\"/>\n</HealthData>\n".write(
            toFile: xml, atomically: true, encoding: .utf8)
        let r = try CLI.run(["import", "--store", dir.path + "/s.sqlite", "--json", dir.path])
        #expect(r.status == 1)
        let objects = try HealthExportGenerator.objects(r.stdout)
        let error = objects.first?["error"] as? [String: Any] ?? [:]
        #expect(error["code"] as? String == "malformedXML")
        #expect(error["line"] as? Int == 2 && error["column"] as? Int == 25)
    }
}
