import Foundation
import RouteKitTesting
import Testing
import ZIPFoundation

/// `routekit export --archive FILE.zip [--person ID]`: everything a person has as one zip, run as a child process.
@Suite(
    "routekit export --archive",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct ArchiveExportCLITests {
    /// A store with one imported workout (a route of two points, one with a heart rate).
    static func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        let file = try f.write("a.gpx", CLITests.good)
        let imported = try f.run(["import", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        return f
    }

    @Test("the default person's archive: a summary line, a zip whose manifest lists its entries, valid GPX, no file left beside it")
    func defaultPerson() throws {
        let f = try Self.fixture()
        defer { f.remove() }
        let route = try #require(try f.routes().first)
        let routeID = try #require(route["uuid"] as? String)
        let workoutID = try #require(route["workout"] as? String)
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: f.directory))

        let zip = f.directory + "/everything.zip"
        let r = try f.run(["export", "--archive", zip])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = "person 00000000-0000-0000-0000-000000000000: 1 workout(s), 1 route(s), 1 series"
        #expect(r.stdout.hasPrefix(summary), "\(r.stdout)")
        #expect(r.stdout.contains("→ \(zip)"), "\(r.stdout)")

        // The zip and nothing else is new in the folder (no temporary or scratch file), readable by its owner only.
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: f.directory))
        #expect(after.subtracting(before) == ["everything.zip"])
        let attributes = try FileManager.default.attributesOfItem(atPath: zip)
        let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue
        #expect(permissions == 0o600)

        let archive = try Archive(url: URL(fileURLWithPath: zip), accessMode: .read)
        let names = archive.map(\.path)
        let folder = "workouts/\(workoutID)"
        #expect(names.contains("\(folder)/workout.json"))
        #expect(names.contains("\(folder)/route-\(routeID).gpx"))
        #expect(names.contains("\(folder)/series/heartRate.ndjson"))
        #expect(names.last == "manifest.json")

        var manifestData = Data()
        let manifestEntry = try #require(archive["manifest.json"])
        _ = try archive.extract(manifestEntry) { manifestData.append($0) }
        let manifest = try #require(try JSONSerialization.jsonObject(with: manifestData) as? [String: Any])
        #expect(manifest["person"] as? String == "00000000-0000-0000-0000-000000000000")
        let entries = try #require(manifest["entries"] as? [[String: Any]])
        let listed = entries.compactMap { $0["path"] as? String }
        #expect(listed == Array(names.dropLast()))

        // The route's GPX, extracted, validates against GPX 1.1.
        let gpxEntry = try #require(archive["\(folder)/route-\(routeID).gpx"])
        let gpxPath = f.directory + "/route.gpx"
        _ = try archive.extract(gpxEntry, to: URL(fileURLWithPath: gpxPath))
        try StoreCLI.validate(gpxPath)
        let gpx = try String(contentsOfFile: gpxPath, encoding: .utf8)
        #expect(gpx.components(separatedBy: "<trkpt ").count - 1 == 2)

        // --person default, and the default person's id by its first 8 hex digits, name the same person.
        for person in ["default", "00000000"] {
            let again = f.directory + "/again-\(person).zip"
            let named = try f.run(["export", "--person", person, "--archive", again])
            #expect(named.status == 0, "\(person): \(named.stderr)")
            #expect(named.stdout.contains("1 workout(s)"), "\(person): \(named.stdout)")
        }
    }

    @Test("an unknown person is not found (exit 1, no file); text that is no id, or --archive with an ID or -o, is a usage error (64)")
    func refusals() throws {
        let f = try Self.fixture()
        defer { f.remove() }
        let route = try #require(try f.routes().first)
        let routeID = try #require(route["uuid"] as? String)
        let zip = f.directory + "/nobody.zip"

        let unknown = UUID().uuidString.lowercased()
        let r = try f.run(["export", "--person", unknown, "--archive", zip])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("no person \(unknown)"), "\(r.stderr)")
        let prefix = try f.run(["export", "--person", "ffffffff", "--archive", zip])
        #expect(prefix.status == 1, "\(prefix.stderr)")
        #expect(prefix.stderr.contains("no person has an id beginning with 'ffffffff'"), "\(prefix.stderr)")
        let made = FileManager.default.fileExists(atPath: zip)
        #expect(!made, "a refused export made a file")

        for arguments in [
            ["export", "--person", "ana", "--archive", zip], ["export", routeID, "--archive", zip],
            ["export", "--archive", zip, "-o", f.directory + "/x.gpx"], ["export"],
        ] {
            let refused = try f.run(arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
        }
        let after = FileManager.default.fileExists(atPath: zip)
        #expect(!after)

        // Without --archive, export is what it was: a route as GPX on standard output.
        let plain = try f.run(["export", routeID])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("<trkpt"))
    }
}
