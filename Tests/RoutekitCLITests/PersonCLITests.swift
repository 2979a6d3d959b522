import Foundation
import Testing

/// `--person` on the data commands and `smooth --all-people`, run as a child process: a store with the default
/// person's route and one of a second person, B.
@Suite(
    "routekit --person and --all-people",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct PersonCLITests {
    /// The default person's id, as the CLI prints it.
    static let defaultPerson = "00000000-0000-0000-0000-000000000000"

    /// A store with a route of the default person's and one of B's (`people add B`, `import --person B`); B's id.
    static func fixture() throws -> (StoreFixture, String) {
        let f = try StoreFixture()
        let mine = try f.write("mine.gpx", SyntheticGPX.text(name: "mine", points: 300))
        let imported = try f.run(["import", mine])
        #expect(imported.status == 0, "\(imported.stderr)")
        let added = try f.run(["people", "add", "B"])
        #expect(added.status == 0, "\(added.stderr)")
        let person = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let theirs = try f.write("theirs.gpx", SyntheticGPX.text(name: "theirs", points: 400))
        let importedForB = try f.run(["import", "--person", person, theirs])
        #expect(importedForB.status == 0, "\(importedForB.stderr)")
        return (f, person)
    }

    /// The sync version of each current route of `person` (the default person's without one), by uuid.
    static func versions(_ f: StoreFixture, person: String? = nil) throws -> [String: Int] {
        let routes = try f.json(["routes"] + (person.map { ["--person", $0] } ?? []))
        var versions: [String: Int] = [:]
        for r in routes {
            if let uuid = r["uuid"] as? String { versions[uuid] = r["syncVersion"] as? Int }
        }
        return versions
    }

    @Test("--person scopes routes, workouts and export to one person; B's route without it is not found like a random id")
    func scoping() throws {
        let (f, person) = try Self.fixture()
        defer { f.remove() }
        let mine = try Self.versions(f)
        let theirs = try Self.versions(f, person: person)
        #expect(mine.count == 1)
        #expect(theirs.count == 1)
        #expect(Set(mine.keys).isDisjoint(with: theirs.keys), "each person lists their own route only")
        // By the first 8 hex digits of the id, and `default` by name.
        #expect(try Self.versions(f, person: String(person.prefix(8))) == theirs)
        #expect(try Self.versions(f, person: "default") == mine)
        #expect(try f.workouts().count == 1)
        #expect(try f.json(["workouts", "--person", person]).count == 1)

        let route = try #require(theirs.keys.first)
        let exported = try f.run(["export", route, "--person", person])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.contains("<trkpt"))
        let hidden = try f.run(["export", route])
        let random = UUID().uuidString.lowercased()
        let missing = try f.run(["export", random])
        #expect(hidden.status == 1)
        #expect(missing.status == 1)
        // The id as the error prints it (upper case): compared without case.
        let hiddenText = hidden.stderr.lowercased()
        #expect(hiddenText.contains("no route or workout \(route)"), "\(hidden.stderr)")
        #expect(
            hiddenText.replacingOccurrences(of: route, with: "ID")
                == missing.stderr.lowercased().replacingOccurrences(of: random, with: "ID"))
    }

    @Test("an unknown person is not found (exit 1, named, with routekit people list); text that is no id is a usage error (64)")
    func refusals() throws {
        let (f, _) = try Self.fixture()
        defer { f.remove() }
        let unknown = UUID().uuidString.lowercased()
        for command in [["routes"], ["stats", "ffffffff"], ["smooth", "--all"], ["changes"]] {
            let r = try f.run(command + ["--person", unknown])
            #expect(r.status == 1, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("no person \(unknown)"), "\(command): \(r.stderr)")
            #expect(r.stderr.contains("routekit people list"), "\(command): \(r.stderr)")
        }
        for arguments in [
            ["routes", "--person", "nonsense"], ["import", "--person", "nonsense", f.directory + "/mine.gpx"],
            ["smooth", "--all", "--person", "default", "--all-people"], ["smooth", "--all-people", "0C1D2E3F"],
            ["discard", "--all", "--all-people"],
        ] {
            let r = try f.run(arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
        }
        let help = try CLI.run(["routes", "--help"])
        #expect(help.stdout.contains("--person <ID>"), "\(help.stdout)")
        #expect(help.stdout.contains("Whose data"), "\(help.stdout)")
    }

    @Test("smooth --all --person B makes a new version of B's route only")
    func smoothOnePerson() throws {
        let (f, person) = try Self.fixture()
        defer { f.remove() }
        let smoothed = try f.run(["smooth", "--all", "--person", person])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        #expect(smoothed.stderr.contains("1 route(s): 1 new version(s)"), "\(smoothed.stderr)")
        #expect(try Self.versions(f, person: person).values.sorted() == [2])
        #expect(try Self.versions(f).values.sorted() == [1], "the default person's route is untouched")
    }

    @Test("smooth --all-people makes a new version of every person's routes, each part naming its person, then a total")
    func smoothEveryone() throws {
        let (f, person) = try Self.fixture()
        defer { f.remove() }
        let smoothed = try f.run(["smooth", "--all-people"])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        #expect(try Self.versions(f).values.sorted() == [2])
        #expect(try Self.versions(f, person: person).values.sorted() == [2])
        let log = smoothed.stderr
        let first = try #require(log.range(of: "person \(Self.defaultPerson) (default): 1 route(s)"), "\(log)")
        let second = try #require(log.range(of: "person \(person) (B): 1 route(s)"), "\(log)")
        #expect(first.upperBound < second.lowerBound, "the default person first")
        #expect(log.contains("person \(person) (B): 1 route(s): 1 new version(s)"), "\(log)")
        #expect(log.contains("every person (2): 2 route(s): 2 new version(s), 0 skipped, 0 failed"), "\(log)")

        // Again, as JSON: each line names its route's person, and nothing is smoothed twice.
        let again = try f.run(["smooth", "--all-people", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let lines = try StoreCLI.objects(again.stdout)
        #expect(lines.count == 2)
        #expect(Set(lines.compactMap { $0["person"] as? String }) == [Self.defaultPerson, person])
        #expect(lines.allSatisfy { $0["skipped"] is String })
    }

    @Test("discard --untouched-hours --all-people sweeps every person's builders, saying each person's count")
    func discardEveryone() throws {
        let (f, person) = try Self.fixture()
        defer { f.remove() }
        let r = try f.run(["discard", "--untouched-hours", "0", "--all-people"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("person \(Self.defaultPerson) (default): 0 builder(s) discarded"), "\(r.stdout)")
        #expect(r.stdout.contains("person \(person) (B): 0 builder(s) discarded"), "\(r.stdout)")
    }
}
