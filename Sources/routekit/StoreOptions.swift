import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitSQLite

#if Postgres
    import Logging
    import RouteKitPostgres
#endif

/// `--store`, shared by every command that touches a store.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a SQLite file path (import creates it; a command that reads refuses a path with no store), "
                + "or a PostgreSQL URL "
                + "(postgres://user:password@host:5432/database?sslmode=prefer; needs a routekit built with "
                + "--traits Postgres). Default: $ROUTEKIT_STORE, else "
                + "$XDG_DATA_HOME/routekit/store.sqlite (~/.local/share/routekit/store.sqlite).",
            valueName: "PATH|URL"))
    var store: String?

    /// The path or URL in effect.
    var resolvedPath: String {
        if let store { return store }
        let env = ProcessInfo.processInfo.environment
        if let s = env["ROUTEKIT_STORE"], !s.isEmpty { return s }
        let data = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return data + "/routekit/store.sqlite"
    }

    /// Whether the store is a PostgreSQL database.
    var isPostgres: Bool { resolvedPath.hasPrefix("postgres://") || resolvedPath.hasPrefix("postgresql://") }

    /// What messages print for the store: the SQLite path, or the PostgreSQL URL without its password.
    var label: String {
        guard isPostgres, var c = URLComponents(string: resolvedPath), c.password != nil else { return resolvedPath }
        c.password = nil
        return c.string ?? resolvedPath
    }

    /// How the error for a SQLite path with no store begins (`open` without `creating`):
    /// ``reported(_:exitCode:)`` says it plainly and exits 1.
    static let missingStorePrefix = "no store at "

    /// Whether `error` is the one for a SQLite path with no store.
    static func isMissingStore(_ error: RouteKitError) -> Bool {
        error.code == .notFound && error.message.hasPrefix(missingStorePrefix)
    }

    /// Opens the store. A SQLite path with no file is refused (`no store at PATH`) unless `creating`: only commands
    /// that write something of their own (import, serve, tokens create, zones set, privacy-zones --add) make a
    /// store; one that reads a typo'd path must not answer from a new, empty one. `durability` is SQLite's, and
    /// `onCallingThread` its reads and writes on the calling thread, for batch jobs (see ``SQLiteStore/Options``);
    /// `connections` is the PostgreSQL pool's size, `driverLog` where its driver logs (quiet when `nil`), and
    /// `longRunning` keeps the pool's connections open (a server: see `PostgresStore.Options.longRunning`).
    func open(
        creating: Bool = false, durability: SQLiteStore.Durability = .processCrash, onCallingThread: Bool = false,
        connections: Int = 4, driverLog: DriverLog? = nil, longRunning: Bool = false
    ) async throws(RouteKitError) -> any RouteStore {
        let path = resolvedPath
        if isPostgres {
            #if Postgres
                var options =
                    longRunning
                    ? PostgresStore.Options.longRunning(maximumConnections: max(2, connections))
                    : PostgresStore.Options(maximumConnections: max(2, connections))
                if let driverLog { options.logger = driverLog.logger }
                return try await PostgresStore(url: path, options: options)
            #else
                throw RouteKitError(
                    .invalidArgument,
                    "this routekit was built without PostgreSQL support; build it with `swift build --traits Postgres` "
                        + "(README: \"More than one machine\")")
            #endif
        }
        if !creating && !FileManager.default.fileExists(atPath: path) {
            throw RouteKitError(
                .notFound,
                Self.missingStorePrefix + "\(path) (import a file first, or check --store / ROUTEKIT_STORE)")
        }
        return try SQLiteStore(
            path: path,
            options: SQLiteStore.Options(
                durability: durability, writesOnCallingThread: onCallingThread, readsOnCallingThread: onCallingThread))
    }
}

/// `--person`, shared by every command that reads or writes a person's data (not `serve`, whose tokens say whose
/// data a request touches, nor `people`).
struct PersonOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Whose data: a person's id (routekit people list); default: the default person.", valueName: "ID"))
    var person: String?

    /// `store` seen as the person `--person` names (`default`, an id, or its first 8+ hex digits); `store` itself,
    /// the default person's, without it: the one call a command makes right after opening its store. A person the
    /// store does not keep is not found (exit 1, the message naming the id and `routekit people list`); text that
    /// is no id, or a prefix of several people's, is a usage error (said here, exit 64).
    func view(of store: any RouteStore) async throws -> any RouteStore {
        guard let person else { return store }
        let people = try Self.people(of: store, option: "--person")
        do throws(RouteKitError) {
            return store.forPerson(try await StoredID.resolvePerson(person, argument: "--person", in: people))
        } catch {
            if error.code == .invalidArgument {
                printError("error: \(error.message)")
                throw ExitCode.validationFailure
            }
            guard error.code == .notFound else { throw error }
            var unknown = error
            unknown.message += "; `routekit people list` lists the store's people"
            throw unknown
        }
    }

    /// `store` as the keeper of its people; `option` names what needs them when it keeps none.
    static func people(of store: any RouteStore, option: String) throws(RouteKitError) -> any PeopleStore {
        guard let people = store as? any PeopleStore else {
            throw RouteKitError(.invalidArgument, "this store keeps no people: \(option) cannot be used with it")
        }
        return people
    }
}

/// `--person` or `--all-people`, for the batch commands that work through the whole of a person's data
/// (`smooth --all`, `discard --untouched-hours`).
struct PeopleSelection: ParsableArguments {
    @OptionGroup var person: PersonOption
    @Flag(
        help: "Every person's, in turn: the default person first, then the others as `routekit people list` lists them."
    )
    var allPeople = false

    func validate() throws {
        if allPeople && person.person != nil { throw ValidationError("Give --person or --all-people, not both.") }
    }

    /// The turns of a batch command over `store`: with `--all-people`, one per person the store keeps (the default
    /// person first, as ``PeopleStore/people()`` lists them), each naming its person; else one, unnamed, for the
    /// person `--person` names (``PersonOption/view(of:)``).
    func turns(of store: any RouteStore) async throws -> [PersonTurn] {
        guard allPeople else { return [PersonTurn(store: try await person.view(of: store))] }
        let people = try PersonOption.people(of: store, option: "--all-people")
        return try await people.people().map { PersonTurn(store: store.forPerson($0.id), person: $0) }
    }
}

/// One person's part of a batch command (``PeopleSelection/turns(of:)``).
struct PersonTurn: Sendable {
    /// The store seen as the person.
    var store: any RouteStore
    /// The person, when the command works for every person in turn (`--all-people`): its output then says whose
    /// each part is.
    var person: Person? = nil

    /// `person ID (NAME)`, what the output says each part is about (`nil` for a single person's run).
    var label: String? { person.map { "person \($0.id) (\($0.name))" } }
}

/// `--source`, for commands that write or delete.
struct SourceOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Who writes: ownership is per source (only the source that wrote an object may delete or replace it).",
            valueName: "NAME"))
    var source: String = Source.defaultImport.name

    func resolved() throws(RouteKitError) -> Source { try Source(name: source) }
}

extension SQLiteStore.Durability: ExpressibleByArgument {}

/// Runs a command's body, printing an error as `error: …` and exiting with `exitCode(error)` for a RouteKitError (1
/// unless the command says otherwise) and 1 for any other error: the one path from an error to its message and exit
/// code. An exit the body chose itself (`ExitCode`, `CleanExit`) passes through.
@discardableResult
func runReportingErrors<T>(
    exitCode: (RouteKitError) -> ExitCode = { _ in exitInputFailed }, _ body: () async throws -> T
) async throws -> T {
    do {
        return try await body()
    } catch {
        throw reported(error, exitCode: exitCode)
    }
}

/// Reports `error` on standard error and returns the exit to throw for it (``runReportingErrors(exitCode:_:)``, and
/// commands that catch their errors themselves to remove a temporary file first): a ``RouteKitError`` as
/// `error: …` with `exitCode(error)` (1 unless the command says otherwise), any other error with 1; a reader that
/// closed the pipe ends the command quietly with 0, and a path with no store is said plainly with 1.
func reported(_ error: any Error, exitCode: (RouteKitError) -> ExitCode = { _ in exitInputFailed }) -> any Error {
    switch error {
    case let error as RouteKitError:
        // A reader that stopped early (`| head -1`): it has what it wanted; nothing to report.
        if error.code == .io && error.message == OutputSink.closedByReader { return ExitCode.success }
        // No store where a command that reads looked: said plainly (the path is in the message), exit 1.
        if StoreOptions.isMissingStore(error) {
            printError("error: \(error.message)")
            return exitInputFailed
        }
        printError("error: \(error)")
        return exitCode(error)
    case let exit as ExitCode:
        return exit
    case let exit as CleanExit:
        return exit
    default:
        printError("error: \(error)")
        return exitInputFailed
    }
}

/// An ISO 8601 time argument (`--from`, `--to`) as an instant.
func parseTime(_ text: String) throws(RouteKitError) -> Instant {
    guard let t = Timestamp(iso8601: text) else {
        throw RouteKitError(.invalidArgument, "'\(text)' is not an ISO 8601 time (2024-05-01T06:00:00Z)")
    }
    return t.instant
}

/// The interval of `--from` and `--to` (either may be missing: open on that side), `nil` when neither is given.
/// - Throws: ``RouteKitError/Code/invalidArgument`` for text that is not a time, or `--from` after `--to`.
func parseTimeRange(from: String?, to: String?) throws(RouteKitError) -> ClosedRange<Instant>? {
    guard from != nil || to != nil else { return nil }
    let lo = try from.map(parseTime) ?? Instant(seconds: .min)
    let hi = try to.map(parseTime) ?? Instant(seconds: .max)
    guard lo <= hi else { throw RouteKitError(.invalidArgument, "--from is after --to") }
    return lo...hi
}

/// The uuid of the route or workout `text` names, whole or by its first 8 or more hex digits (`StoredID.resolve`, the
/// one resolution every command taking a route or a workout uses). Text that is neither, or a prefix that begins
/// several uuids, is a usage error: said with the argument's name, exit 64. A prefix that begins none is not found
/// (exit 1).
func resolveID(
    _ text: String, argument: String, _ kinds: StoredID.Kinds = .either, in store: any RouteStore
) async throws -> UUID {
    do throws(RouteKitError) {
        return try await StoredID.resolve(text, argument: argument, kinds: kinds, in: store)
    } catch {
        guard error.code == .invalidArgument else { throw error }
        printError("error: \(error.message)")
        throw ExitCode.validationFailure
    }
}

/// Parses a uuid argument.
func parseUUID(_ text: String) throws(RouteKitError) -> UUID {
    guard let id = UUID(uuidString: text) else {
        throw RouteKitError(.invalidArgument, "'\(text)' is not a uuid")
    }
    return id
}

/// ISO 8601 text for JSON (`null` when absent is the encoder's job).
func iso(_ t: Timestamp?) -> String? { t?.iso8601 }

/// Pads or cuts text to a column width.
func column(_ text: String, _ width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}

/// Where a store's driver logs (PostgreSQL's postgres-nio), for `routekit serve`: its own logger, at its level.
struct DriverLog {
    #if Postgres
        var logger: Logger
    #endif
}
