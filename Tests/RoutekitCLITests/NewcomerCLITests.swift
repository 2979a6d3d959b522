import Foundation
import RouteKitTesting
import Testing

/// What a newcomer meets first: a typo'd store, a closed pipe, a short id, a folder or a file that holds no route,
/// a misspelt command. Each is said in a sentence with its own exit status.
@Suite(
    "routekit for a newcomer: missing stores, closed pipes, short ids, wrong files, misspelt commands",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct NewcomerCLITests {
    @Test("a command that reads refuses a path with no store (exit 66) and makes none; so does an import of missing files")
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
            #expect(r.status == 66, "\(arguments): \(r.stderr)")
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
}
