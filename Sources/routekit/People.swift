import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication

/// `routekit people`: the people one store serves (the admin API's `/v1/people` on the command line).
struct People: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "people",
        abstract: "Add, list and erase the people a store keeps apart.",
        discussion: """
            Every workout, route, series, builder and token belongs to one person; a person's tokens read and \
            write only their objects, and their change feed holds only their changes. A store starts with one \
            person, `default` (00000000-0000-0000-0000-000000000000), who holds everything stored before people \
            existed and whom the other commands act as unless given --person.

            Examples:
              routekit people add "Ana"
              routekit import --person 3f2a9c1e ride.gpx
              routekit tokens create --person 3f2a9c1e --source phone --scope read,write
              routekit export --person 3f2a9c1e --archive ana.zip
              routekit people erase 3f2a9c1e --yes
            """,
        subcommands: [Add.self, List.self, Erase.self])

    /// The store's people.
    static func peopleStore(_ options: StoreOptions, creating: Bool = false) async throws(RouteKitError)
        -> any PeopleStore
    {
        guard let store = try await options.open(creating: creating) as? any PeopleStore else {
            throw RouteKitError(.invalidArgument, "this store keeps no people")
        }
        return store
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a person and print their id.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "A name for the operator (1 to 256 characters; never shown to other people).")
        var name: String
        @Flag(help: "Print the person as one JSON object.") var json = false

        func validate() throws {
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.count <= 256 else {
                throw ValidationError("the name must be 1 to 256 characters")
            }
        }

        func run() async throws {
            try await runReportingErrors {
                let store = try await peopleStore(storeOptions, creating: true)
                let person = Person(name: name.trimmingCharacters(in: .whitespacesAndNewlines))
                try await store.addPerson(person)
                if json {
                    printJSONLine(PersonJSON(person))
                } else {
                    print(person.id.description)
                    printError("added \(person.name) as \(person.id) to \(storeOptions.label)")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the people, the default person first.")
        @OptionGroup var storeOptions: StoreOptions
        @Flag(help: "One JSON object per person, one per line.") var json = false

        func run() async throws {
            try await runReportingErrors {
                let store = try await peopleStore(storeOptions)
                let people = try await store.people()
                for p in people {
                    if json {
                        printJSONLine(PersonJSON(p))
                    } else {
                        let subject = p.subject.map { "  (\($0.issuer) \($0.subject))" } ?? ""
                        print("\(p.id.description) \(Timestamp(p.created).iso8601) \(p.name)\(subject)")
                    }
                }
                if !json { print("\(people.count) person(s) in \(storeOptions.label)") }
            }
        }
    }

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase",
            abstract: "Erase a person: every object, token, builder and feed entry of theirs, in one transaction.",
            discussion: """
                What is erased cannot be recovered: export it first (`routekit export --person ID --archive \
                FILE.zip`). On SQLite the freed pages are overwritten (secure_delete) and the write-ahead log is \
                truncated, so nothing of theirs stays readable in the store's files; backups taken before keep it. \
                The default person cannot be erased (delete their objects instead).
                """)
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The person's id, or its first 8 or more hex digits.") var id: String
        @Flag(help: "Erase without asking (required when not run at a terminal).") var yes = false

        func run() async throws {
            try await runReportingErrors {
                let store = try await peopleStore(storeOptions)
                let person = try await StoredID.resolvePerson(id, argument: "ID", in: store)
                guard person != .default else {
                    throw RouteKitError(
                        .invalidArgument,
                        "the default person cannot be erased; delete their objects instead (routekit delete)")
                }
                if !yes {
                    guard isatty(STDIN_FILENO) != 0 else {
                        throw RouteKitError(.invalidArgument, "erasing cannot be undone: add --yes to erase \(person)")
                    }
                    printErrorRaw("erase \(person) and everything they have? type yes: ")
                    guard readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes" else {
                        throw RouteKitError(.invalidArgument, "not erased")
                    }
                }
                guard try await store.erasePerson(id: person) else {
                    throw RouteKitError(.notFound, "no person \(person)")
                }
                print("erased \(person)")
            }
        }
    }
}
