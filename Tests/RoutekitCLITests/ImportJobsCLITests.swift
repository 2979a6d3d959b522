import Foundation
import RouteKitTesting
import Testing

@Suite(
    "routekit import --jobs",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
    .enabled(if: CLI.corpus != nil, "../shared/gpx-corpus is absent"))
struct ImportJobsCLITests {
    /// What an import said per input, without the store's own identifiers.
    static func outcomes(_ stdout: String) throws -> [String] {
        try stdout.split(separator: "\n").map { line in
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let routes = (o["routes"] as? [[String: Any]] ?? []).map { "\($0["locations"] as? Int ?? -1)" }
            let error = (o["error"] as? [String: Any])?["code"] as? String ?? "-"
            let warnings = (o["warnings"] as? [String] ?? []).joined(separator: "|")
            return "\(o["status"] ?? "") \(o["file"] ?? "") \(routes) \(error) \(warnings)"
        }
    }

    static func syncIdentities(_ store: String) throws -> [String] {
        let r = try CLI.run(["routes", "--store", store, "--json"])
        return try r.stdout.split(separator: "\n").map { line in
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            return "\(o["syncIdentifier"] ?? "") \(o["syncVersion"] ?? "") \(o["locations"] ?? "")"
        }.sorted()
    }

    @Test("--jobs 2 gives the same outcomes, in the same order, and the same routes as --jobs 1 on the corpus")
    func sameAsOneJob() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-jobs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let inputs = ["valid", "quirks", "malformed"].map { (CLI.corpus ?? "") + "/" + $0 }
        let one = try CLI.run(["import", "--store", dir.path + "/one.sqlite", "--json", "--jobs", "1"] + inputs)
        let two = try CLI.run(["import", "--store", dir.path + "/two.sqlite", "--json", "--jobs", "2"] + inputs)
        #expect(one.status == two.status)
        let a = try Self.outcomes(one.stdout)
        let b = try Self.outcomes(two.stdout)
        #expect(a.count > 50)
        #expect(a == b)
        #expect(try Self.syncIdentities(dir.path + "/one.sqlite") == Self.syncIdentities(dir.path + "/two.sqlite"))
        // More workers than cores: the same again.
        let three = try CLI.run(["import", "--store", dir.path + "/three.sqlite", "--json", "--jobs", "3"] + inputs)
        #expect(three.status == one.status)
        #expect(try Self.outcomes(three.stdout) == a)
        // Again with two jobs: every file that imported is now unchanged.
        let again = try CLI.run(["import", "--store", dir.path + "/two.sqlite", "--json", "--jobs", "2"] + inputs)
        #expect(try !Self.outcomes(again.stdout).contains { $0.hasPrefix("imported ") })
        #expect(try CLI.run(["import", "--jobs", "0", inputs[0]]).status == 64)
    }
}
