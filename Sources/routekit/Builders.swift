import ArgumentParser
import Foundation
import RouteKit
import RouteKitFIT
import RouteKitGPX
import RouteKitGeoJSON
import RouteKitImport
import RouteKitIngest
import RouteKitTCX

struct Builders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "builders",
        abstract: "List pending route builders: routes that were being built when a process stopped.",
        discussion: """
            A builder's batches are durable as they are acknowledged. After a crash the builder stays pending: \
            `routekit recover` resumes it (re-importing its file, which picks up after the last acknowledged \
            point) or, when the file is gone, saves what it holds as a route marked partial; `routekit \
            discard` drops it.

            JSON (--json), one object per builder:
              {"uuid": "…", "source": "…", "origin": {"kind": "…", "key": "…", "label": "…"}|null,
               "locations": N, "created": "ISO 8601", "updated": "ISO 8601"}
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Flag(help: "One JSON object per builder, one per line.") var json = false

    /// ISO 8601 text of a stored date ("?" for a value no date can have, from a damaged store).
    static func iso(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        return t.isFinite && abs(t) < 1e11 ? Timestamp(date).iso8601 : "?"
    }

    struct BuilderJSON: Encodable {
        var uuid: String
        var source: String
        @ExplicitNull var origin: BuilderOrigin?
        var locations: Int
        var created: String
        var updated: String
        enum CodingKeys: String, CodingKey { case uuid, source, origin, locations, created, updated }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let pending = try await store.pendingBuilders()
            for b in pending {
                let created = Self.iso(b.created)
                let updated = Self.iso(b.updated)
                if json {
                    printJSONLine(
                        BuilderJSON(
                            uuid: b.id.uuidString.lowercased(), source: b.source.name, origin: b.origin,
                            locations: b.progress.locationCount, created: created, updated: updated))
                } else {
                    print(
                        "\(b.id.uuidString.lowercased()) \(column(b.source.name, 16)) \(b.progress.locationCount) location(s), "
                            + "updated \(updated)\(b.origin?.label.map { ", from \($0)" } ?? "")")
                }
            }
            if !json { print("\(pending.count) pending builder(s) in \(storeOptions.label)") }
        }
    }
}

struct Recover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Finish pending route builders after a crash.",
        discussion: """
            For each pending builder of --source (all of them, or the uuids given): if it came from a GPX, FIT, \
            TCX or GeoJSON import whose file still exists, the file is imported again, which resumes the builder after \
            its last acknowledged point; otherwise (the file is gone, or it was an archive's entry) what it holds \
            is saved as a route with metadata partial=true, in a new workout.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @OptionGroup var sourceOption: SourceOption
    @OptionGroup var readingOptions: GPXReadingOptions
    @Argument(help: "Builder uuids (default: every pending builder of the source).") var ids: [String] = []

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let source = try sourceOption.resolved()
            let wanted = Set(try ids.map(parseUUID))
            var pending = try await store.pendingBuilders().filter { $0.source == source }
            if !wanted.isEmpty {
                let known = Set(pending.map(\.id))
                if let missing = wanted.subtracting(known).first {
                    throw RouteKitError(.notFound, "no pending builder \(missing) of source '\(source)'")
                }
                pending = pending.filter { wanted.contains($0.id) }
            }
            var failed = false
            let importer = RouteImporter(store: store, source: source, readOptions: readingOptions.readOptions)
            // Builders of a file import (GPX, FIT, TCX, GeoJSON) are finished by importing the file again; an archive's
            // entry (`a.zip!b.gpx`) or a file that is gone leaves what the builder holds, saved as partial.
            let reimportable = [
                GPXImporter.originKind, FITImporter.originKind, TCXImporter.originKind, GeoJSONImporter.originKind,
            ]
            for b in pending {
                if let kind = b.origin?.kind, reimportable.contains(kind), let file = b.origin?.label,
                    FileManager.default.isReadableFile(atPath: file)
                {
                    var results: [ImportResult] = []
                    await importer.importPath(file) { results.append($0) }
                    let r = results.first ?? ImportResult(file: file, status: .unchanged)
                    print("\(b.id.uuidString.lowercased()): re-imported \(file): \(r.status.rawValue)")
                    if let e = r.error {
                        printError("error: \(e)")
                        failed = true
                    }
                    // A clean import that left the builder pending read different content (the file changed
                    // since): the builder's origin is gone, keep what it holds. After a failed import, wait.
                    guard r.error == nil, let still = try await store.pendingBuilder(id: b.id) else { continue }
                    try await savePartial(still, store: store, source: source)
                    continue
                }
                try await savePartial(b, store: store, source: source)
            }
            if pending.isEmpty { print("no pending builder of source '\(source)'") }
            if failed { throw exitInputFailed }
        }
    }

    /// Saves what a pending builder holds as a route marked partial, in a workout of its own.
    func savePartial(_ b: PendingBuilder, store: any RouteStore, source: Source) async throws {
        let builder = try await RouteBuilder.resume(b, in: store)
        if builder.progress.locationCount == 0 {
            try await builder.discard()
            print("\(b.id.uuidString.lowercased()): held no location; discarded")
            return
        }
        let (start, end) = try await builder.timeBounds()
        let syncID = "partial-" + b.id.uuidString.lowercased()
        let workout = Workout(
            activityType: .other, start: start, end: end, source: source,
            sync: SyncIdentity(identifier: syncID, version: 1), metadata: [MetadataKey.partial: .bool(true)])
        var target = workout
        if case .stale(let current, _) = try await store.saveWorkout(workout),
            let existing = try await store.workout(id: current)
        {
            target = existing  // an earlier, interrupted recover saved it
        }
        let finished = try await builder.finish(
            workout: target,
            metadata: [
                MetadataKey.partial: .bool(true), MetadataKey.syncIdentifier: .string(syncID),
                MetadataKey.syncVersion: .integer(1),
            ])
        print(
            "\(b.id.uuidString.lowercased()): saved as partial route "
                + "\(finished.route.id.uuidString.lowercased()) (\(finished.route.locationCount) locations)")
    }
}

struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Drop pending route builders and what they collected.",
        discussion: """
            Give builder uuids, or --all for every pending builder of --source, or --untouched-hours H for every \
            pending builder of any source that has had no batch for H hours (what `routekit serve` does on its own \
            after --builder-expiry-hours). They are --person's (the default person's without it); with \
            --untouched-hours, --all-people sweeps every person's in turn, as serve does.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var people: PeopleSelection
    @OptionGroup var sourceOption: SourceOption
    @Argument(help: "Builder uuids.") var ids: [String] = []
    @Flag(help: "Every pending builder of the source.") var all = false
    @Option(
        help: ArgumentHelp(
            "Every pending builder, of any source, without a batch for this many hours.", valueName: "hours"))
    var untouchedHours: Double?

    func validate() throws {
        let ways = (ids.isEmpty ? 0 : 1) + (all ? 1 : 0) + (untouchedHours == nil ? 0 : 1)
        if ways == 0 { throw ValidationError("Give builder uuids, --all or --untouched-hours.") }
        if ways > 1 { throw ValidationError("Give one of builder uuids, --all or --untouched-hours.") }
        if let h = untouchedHours, !(h >= 0 && h.isFinite) {
            throw ValidationError("--untouched-hours must be 0 or more.")
        }
        if people.allPeople && untouchedHours == nil {
            throw ValidationError(
                "--all-people goes with --untouched-hours (builder uuids and --all are one person's).")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let turns = try await people.turns(of: storeOptions.open())
            if let hours = untouchedHours {
                try await discardUntouched(for: hours, in: turns)
                return
            }
            guard let store = turns.first?.store else { return }
            let source = try sourceOption.resolved()
            let targets =
                all
                ? try await store.pendingBuilders().filter { $0.source == source }.map(\.id) : try ids.map(parseUUID)
            for id in targets {
                try await store.discardBuilder(id: id, as: source)
                print("discarded \(id.uuidString.lowercased())")
            }
            if targets.isEmpty { print("no pending builder of source '\(source)'") }
        }
    }

    /// `--untouched-hours`: every pending builder without a batch for `hours`, of each turn's person (with
    /// `--all-people`, each person's count after their builders).
    func discardUntouched(for hours: Double, in turns: [PersonTurn]) async throws {
        let cutoff = Date(timeIntervalSinceNow: -hours * 3600)
        var discarded = 0
        for turn in turns {
            let gone = try await turn.store.discardPendingBuilders(updatedBefore: cutoff)
            for builder in gone {
                print("discarded \(builder.id.uuidString.lowercased()) (source \(builder.source))")
            }
            if let label = turn.label { print("\(label): \(gone.count) builder(s) discarded") }
            discarded += gone.count
        }
        if discarded == 0 { print("no pending builder untouched for \(hours) hours") }
    }
}
