import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX

/// Exit code for an anchor the store cannot answer (malformed, foreign, expired, ahead).
let exitAnchorUnusable = ExitCode(3)

struct Changes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract:
            "Print the routes (and, with --types, workouts, effort scores, series) added and deleted since an anchor.",
        discussion: """
            Without --anchor, the first change set lists every current route (and no deletions). Each change \
            set ends with its anchor: give it back with --anchor to get only what changed after it. A \
            replaced route shows as the old version deleted and the new one added, in one change set; apply \
            deletions first, then additions, and apply them idempotently (deleting an unknown route is not an \
            error). With --follow, the catch-up is printed first, then one change set per commit, until Ctrl-C.

            If the anchor cannot be used (malformed, from another store, older than the kept deletion \
            history, or ahead of a store restored from a backup) the command exits with code 3 and says \
            which: start again without --anchor.

            The feed carries routes by default. --types names what to follow, comma-separated: route, \
            workout (with or without a route: a treadmill run, a manual entry), effort (effort scores), \
            series (a workout's heart rate, power… as a whole: its count and time range), or all. A workout \
            replaced by a newer version shows as the old one deleted with its routes, effort scores and series, \
            and the new one added. A series that grows is added again: keep one copy per workout and quantity.

            JSON (--json), one object per change set:
              {"added": [route…], "deleted": [{"uuid": "…", "source": "…", "workout": "…",
               "syncIdentifier": "…", "syncVersion": N}],
               "addedObjects": [{"type": "workout|effort|series", "uuid": "…", "workout": "…", "source": "…",
                 "quantity": "heartRate"|null, "data": {…}}],
               "deletedObjects": [{"type": "…", "uuid": "…", "workout": "…", "source": "…", "quantity": …,
                 "syncIdentifier": …, "syncVersion": …}],
               "anchor": "TOKEN", "hasMore": true|false}
            where each added route has the shape of `routekit routes --json`, a workout's data holds its own \
            fields (activity, sync identity, start, end, metadata, events, activities), an effort's its score, \
            manual and created, and a series' its unit, count, start and end.

            Examples:
              routekit changes --json > sets.jsonl                  # everything current, then the anchor
              routekit changes --anchor "$(cat anchor)" --limit 500
              routekit changes --follow --json --source my-watch
              routekit changes --types workout,effort --json        # workouts with or without a route
              routekit changes --from 2025-06-01T00:00:00Z --to 2025-06-30T23:59:59Z
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Option(help: "Start after this anchor (from a previous change set).") var anchor: String?
    @Option(help: "Changes per change set (soft: a transaction is never split).") var limit: Int = 1000
    @Flag(help: "Keep printing change sets as they are committed, until interrupted.") var follow = false
    @Flag(help: "One JSON object per change set, one per line.") var json = false
    @Option(
        help: ArgumentHelp(
            "What to follow: route, workout, effort, series, comma-separated, or all.", valueName: "types"))
    var types: String = "route"
    @Option(help: "Only objects of this workout (uuid, or its first 8+ hex digits).") var workout: String?
    @Option(help: "Only objects of this source.") var source: String?
    @Option(help: "Only routes and workouts with this sync identifier.") var syncIdentifier: String?
    @Option(help: "Only routes and workouts that end at or after this ISO 8601 time.") var from: String?
    @Option(help: "Only routes and workouts that start at or before this ISO 8601 time.") var to: String?

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1.") }
        do { _ = try ChangeObjectType.parseList(types) } catch { throw ValidationError("--types: \(error.message)") }
    }

    func printSet(_ set: ChangeSet) {
        if json {
            print(String(decoding: ChangeSetJSON.bytes(set), as: UTF8.self))
        } else {
            for d in set.deleted {
                print("deleted \(d.id.uuidString.lowercased()) \(d.source) \(d.sync.identifier) v\(d.sync.version)")
            }
            for d in set.deletedObjects {
                print("deleted \(d.key.type) \(Self.describe(d.key)) \(d.source)")
            }
            for r in set.added {
                print(
                    "added   \(r.id.uuidString.lowercased()) \(r.source) \(r.sync.identifier) v\(r.sync.version) "
                        + "\(r.locationCount) locations")
            }
            for o in set.addedObjects {
                print("added   \(o.type) \(Self.describe(o.key)) \(o.source)\(Self.detail(o))")
            }
            print("anchor  \(set.anchor.text)\(set.hasMore ? " (more)" : "")")
        }
        fflush(nil)  // a follower reads each change set as soon as it is printed
    }

    /// An object's key as the text lines show it: its uuid, and a series' quantity.
    static func describe(_ key: ChangeObjectKey) -> String {
        key.id.uuidString.lowercased() + (key.quantityType.map { " " + $0.identifier } ?? "")
    }

    /// What a text line says of an added object.
    static func detail(_ object: ChangedObject) -> String {
        switch object {
        case .workout(let w): " \(w.activityType.rawValue)" + (w.sync.map { " \($0.identifier) v\($0.version)" } ?? "")
        case .effort(let e): " score \(e.score)\(e.isManual ? " (manual)" : "")"
        case .series(let s): " \(s.count) samples"
        }
    }

    func run() async throws {
        // An unusable anchor exits 3 (start again without one); any other error 1.
        try await runReportingErrors(exitCode: { $0.code.isAnchorError ? exitAnchorUnusable : exitInputFailed }) {
            let store = try await person.view(of: storeOptions.open())
            let interval = try parseTimeRange(from: from, to: to)
            var workoutID: UUID?
            if let workout { workoutID = try await resolveID(workout, argument: "--workout", .workouts, in: store) }
            let predicate = ChangePredicate(
                types: try ChangeObjectType.parseList(types), workout: workoutID,
                source: try source.map { try Source(name: $0) },
                syncIdentifier: syncIdentifier, interval: interval)
            let start = try anchor.map { text throws(RouteKitError) in try ChangeAnchor(text: text) }
            if !follow {
                let set = try await store.changes(since: start, matching: predicate, limit: limit)
                printSet(set)
                return
            }
            // Ctrl-C (or SIGTERM) ends the follow cleanly: the loop is cancelled and the command exits 0.
            let follower = Task {
                for try await set in store.changeUpdates(since: start, matching: predicate, limit: limit) {
                    printSet(set)
                }
            }
            let signals = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig)
                source.setEventHandler { follower.cancel() }
                source.resume()
                return source
            }
            defer { signals.forEach { $0.cancel() } }
            do {
                try await follower.value
            } catch is CancellationError {
                return
            }
        }
    }
}

struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Drop change-feed deletion history older than a number of days.",
        discussion: """
            The change feed keeps every deletion so that a consumer holding an old anchor learns what was \
            deleted. Compacting drops deletions older than --keep-days; an anchor from before the oldest kept \
            deletion is then refused as expired (exit code 3 in `routekit changes`), never answered wrongly. The \
            history is the whole store's: every person's deletions are compacted at once.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "Keep deletions of the last N days (0 drops all).") var keepDays: Double = 30

    func validate() throws {
        if keepDays < 0 || !keepDays.isFinite { throw ValidationError("--keep-days must be 0 or more.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await storeOptions.open()
            let dropped = try await store.compactChanges(before: Date().addingTimeInterval(-keepDays * 86_400))
            print("dropped \(dropped) deletion(s) older than \(keepDays) day(s) from \(storeOptions.label)")
        }
    }
}
