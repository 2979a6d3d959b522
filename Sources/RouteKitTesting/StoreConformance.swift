import Foundation
@_spi(RouteKitBackend) public import RouteKit

/// A conformance failure: which check, and what was expected.
public struct ConformanceFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
}

/// One check of the store conformance suite.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// The check's name (what a test run prints).
    public let name: String
    /// Runs the check against a fresh, empty store.
    public let run: @Sendable (any RouteStore) async throws -> Void

    public var description: String { name }
}

/// The store conformance suite: the semantics of the articles "Identity and versions" and "Storage backends"
/// (Sources/RouteKit/Documentation.docc) as checks that every ``RouteStore`` backend runs, each against a fresh
/// store:
///
/// ```swift
/// @Test(arguments: StoreConformance.checks)
/// func conformance(_ check: ConformanceCheck) async throws {
///     try await check.run(try makeEmptyStore())
/// }
/// ```
public enum StoreConformance {
    /// Every check.
    public static let checks: [ConformanceCheck] =
        [
            ConformanceCheck(name: "workout sync identity: insert, stale, replace", run: workoutSyncIdentity),
            ConformanceCheck(name: "workouts without sync identity are always inserted", run: workoutWithoutSync),
            ConformanceCheck(name: "workout pages: newest first, after a workout, with a source", run: workoutPages),
            ConformanceCheck(
                name: "route pages: current routes, newest first, after a route, with a source", run: routePages),
            ConformanceCheck(
                name: "deleting a workout needs its source and takes its routes and series", run: deleteWorkout),
            ConformanceCheck(
                name: "builder orders out-of-order batches by time, losslessly", run: builderTimestampOrder),
            ConformanceCheck(name: "builder merges overlapping batches on disk", run: builderOverlappingMerge),
            ConformanceCheck(
                name: "builder in insertion order keeps order and allows missing times", run: builderInsertionOrder),
            ConformanceCheck(name: "a batch with one bad location is refused whole", run: badBatchRefused),
            ConformanceCheck(name: "finish needs a saved workout, data, and an open builder", run: finishPreconditions),
            ConformanceCheck(
                name: "route sync identity: replace keeps raw provenance, stale drops the builder",
                run: routeSyncIdentity),
            ConformanceCheck(name: "a foreign source can neither replace nor delete", run: foreignSourceRefused),
            ConformanceCheck(name: "pending builders survive and resume where they stopped", run: pendingBuilderResume),
            ConformanceCheck(name: "resuming takes a builder over; a stale resume is refused", run: resumeTakesOver),
            ConformanceCheck(
                name: "builder samples and events: resumable batches, counts kept across a resume, saved on finish",
                run: builderSamplesAndEvents),
            ConformanceCheck(name: "route query: batches, done, interval, bad batch size", run: routeQueryBatches),
            ConformanceCheck(
                name: "route query reads one version while the route is replaced", run: routeQueryConsistent),
            ConformanceCheck(
                name: "quantity series: from the builder and saved directly, in time order", run: quantitySeries),
            ConformanceCheck(name: "deleting a route removes it and its locations", run: deleteRoute),
            ConformanceCheck(name: "work claims: one holder, renewal, expiry, release", run: workClaims),
            ConformanceCheck(name: "privacy zones: per source, in order, replaced whole", run: privacyZones),
            ConformanceCheck(
                name: "zone settings: per source, exactly as set, refused when invalid", run: zoneSettings),
            ConformanceCheck(
                name: "zone settings of a workout: its source's only, exactly as set, gone with the workout",
                run: workoutZoneSettings),
            ConformanceCheck(name: "the raw version of a sync identity, current or kept", run: rawVersion),
            ConformanceCheck(name: "a whole route saved at once: sync semantics, claim given up", run: saveWholeRoute),
            ConformanceCheck(
                name: "a route held in memory saves what a builder stores, in one write", run: heldRouteMatchesBuilder),
            ConformanceCheck(name: "effort scores: manual over estimated, newest wins, owner unrelates", run: effort),
        ] + FeedConformance.checks

    // MARK: Helpers

    static func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        if !condition { throw ConformanceFailure(description: "\(file):\(line): \(message())") }
    }

    static func expectError<T>(
        _ code: RouteKitError.Code, file: String = #fileID, line: Int = #line, _ body: () async throws -> T
    ) async throws -> RouteKitError {
        do {
            _ = try await body()
        } catch let error as RouteKitError {
            try expect(error.code == code, "expected \(code), got \(error.code): \(error)", file: file, line: line)
            return error
        }
        throw ConformanceFailure(description: "\(file):\(line): expected \(code), but it succeeded")
    }

    static let alice = (try? Source(name: "conformance-alice")) ?? .defaultImport
    static let bob = (try? Source(name: "conformance-bob")) ?? .defaultImport

    /// `count` valid locations, one per second from `start`, with every optional field sometimes missing.
    public static func locations(count: Int, start: Int64 = 1_700_000_000, seed: UInt64 = 1) -> [Location] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { i in
            func maybe(_ range: ClosedRange<Double>) -> Double? {
                Int.random(in: 0..<4, using: &rng) == 0
                    ? nil : (Double.random(in: range, using: &rng) * 100).rounded() / 100
            }
            return Location(
                latitude: Double(Int.random(in: -900_000_000...900_000_000, using: &rng)) / 1e7,
                longitude: Double(Int.random(in: -1_800_000_000...1_800_000_000, using: &rng)) / 1e7,
                timestamp: Timestamp(
                    Instant(
                        seconds: start + Int64(i), nanoseconds: Int32(Int.random(in: 0..<1000, using: &rng)) * 1_000_000
                    ),
                    utcOffsetSeconds: i % 7 == 0 ? nil : 3600),
                altitude: maybe(-100...4000), horizontalAccuracy: maybe(1...50), verticalAccuracy: maybe(1...50),
                speed: maybe(0...20), speedAccuracy: maybe(0...5), course: maybe(0...359), courseAccuracy: maybe(0...10)
            )
        }
    }

    static func workout(_ source: Source, sync: SyncIdentity? = nil) -> Workout {
        Workout(
            activityType: .running, start: Timestamp(Instant(seconds: 1_700_000_000)),
            end: Timestamp(Instant(seconds: 1_700_010_000)), source: source, sync: sync,
            events: [
                WorkoutEvent(kind: .pause, start: Timestamp(Instant(seconds: 1_700_000_100))),
                WorkoutEvent(kind: .resume, start: Timestamp(Instant(seconds: 1_700_000_160))),
                WorkoutEvent(kind: .motionPaused, start: Timestamp(Instant(seconds: 1_700_000_200))),
                WorkoutEvent(kind: .motionResumed, start: Timestamp(Instant(seconds: 1_700_000_210))),
                WorkoutEvent(
                    kind: .lap, start: Timestamp(Instant(seconds: 1_700_000_000)),
                    end: Timestamp(Instant(seconds: 1_700_005_000), utcOffsetSeconds: 3600),
                    metadata: [
                        MetadataKey.totalDistance: .double(1000.5), MetadataKey.averageHeartRate: .double(141.5),
                        MetadataKey.intensity: .string("active"),
                    ]),
                WorkoutEvent(kind: .segment, start: nil, end: Timestamp(Instant(seconds: 1_700_006_000))),
                WorkoutEvent(
                    kind: .marker, start: Timestamp(Instant(seconds: 1_700_007_000)),
                    metadata: [MetadataKey.eventName: .string("user_marker")]),
            ],
            metadata: ["name": .string("conformance")],
            activities: [
                WorkoutActivity(
                    activityType: .swimming, start: Timestamp(Instant(seconds: 1_700_000_000)),
                    end: Timestamp(Instant(seconds: 1_700_003_000), utcOffsetSeconds: -18_000),
                    metadata: ["healthUuid": .string("A"), "laps": .integer(12)]),
                WorkoutActivity(activityType: .cycling, start: Timestamp(Instant(seconds: 1_700_003_000)), end: nil),
            ])
    }

    static func saved(_ store: any RouteStore, _ source: Source, sync: SyncIdentity? = nil) async throws -> Workout {
        let w = workout(source, sync: sync)
        let outcome = try await store.saveWorkout(w)
        try expect(outcome == .inserted(w.id), "a new workout is inserted, got \(outcome)")
        return w
    }

    /// Builds a route from `batches`, finishing it into `workout`.
    static func build(
        _ store: any RouteStore, _ workout: Workout, _ batches: [[Location]], order: LocationOrder = .timestamp,
        metadata: [String: MetadataValue] = [:]
    ) async throws -> RouteFinish {
        let builder = try await RouteBuilder(store: store, source: workout.source, order: order)
        for b in batches { try await builder.insert(b) }
        return try await builder.finish(workout: workout, metadata: metadata)
    }

    static func readAll(_ store: any RouteStore, _ route: UUID, batchSize: Int = 1000) async throws -> [Location] {
        var all: [Location] = []
        var sawDone = false
        for try await batch in store.locations(of: route, batchSize: batchSize) {
            try expect(!sawDone, "no batch comes after the one marked done")
            all += batch.locations
            sawDone = batch.isDone
        }
        try expect(sawDone, "the last batch is marked done")
        return all
    }

    /// Metadata giving a route the sync identity `id` at `version`.
    public static func sync(_ id: String, _ version: Int64) -> [String: MetadataValue] {
        [MetadataKey.syncIdentifier: .string(id), MetadataKey.syncVersion: .integer(version)]
    }

    static func same(_ a: [Location], _ b: [Location]) -> Bool {
        // `Location ==` compares values; also compare the written UTC offsets, which it ignores.
        a == b && zip(a, b).allSatisfy { $0.timestamp?.utcOffsetSeconds == $1.timestamp?.utcOffsetSeconds }
    }

    // MARK: Checks

    static func workoutSyncIdentity(_ store: any RouteStore) async throws {
        let w1 = try await saved(store, alice, sync: SyncIdentity(identifier: "w", version: 1))
        let again = workout(alice, sync: SyncIdentity(identifier: "w", version: 1))
        let stale = try await store.saveWorkout(again)
        try expect(stale == .stale(current: w1.id, currentVersion: 1), "an equal version is stale, got \(stale)")
        let older = try await store.saveWorkout(workout(alice, sync: SyncIdentity(identifier: "w", version: 0)))
        try expect(older == .stale(current: w1.id, currentVersion: 1), "a lower version is stale, got \(older)")
        let w2 = workout(alice, sync: SyncIdentity(identifier: "w", version: 2))
        let replaced = try await store.saveWorkout(w2)
        try expect(replaced == .replaced(w2.id, previous: w1.id, previousVersion: 1), "a higher version replaces")
        let list = try await store.workouts(matching: WorkoutFilter(source: alice))
        try expect(list.map(\.id) == [w2.id], "only the new version is current")
        try expect(try await store.workout(id: w1.id) == nil, "the old version is gone")
        let fetched = try await store.workout(id: w2.id)
        try expect(fetched == w2, "a workout reads back as saved: \(String(describing: fetched))")
        // The same identifier under another source is another identity.
        let other = try await store.saveWorkout(workout(bob, sync: SyncIdentity(identifier: "w", version: 1)))
        try expect(other.savedID != nil, "sync identifiers are scoped to their source")
    }

    static func workoutWithoutSync(_ store: any RouteStore) async throws {
        _ = try await saved(store, alice)
        _ = try await saved(store, alice)
        try expect(try await store.workouts(matching: WorkoutFilter()).count == 2, "both are stored")
        let w = try await store.workouts(matching: WorkoutFilter(limit: 1))
        try expect(w.count == 1, "the limit applies")
    }

    static func workoutPages(_ store: any RouteStore) async throws {
        var ids: [UUID] = []
        for s in [alice, bob, alice, bob, alice] { ids.append(try await saved(store, s).id) }
        let all = try await store.workouts(matching: WorkoutFilter()).map(\.id)
        try expect(all == ids, "oldest saved first")
        let newest = try await store.workouts(matching: WorkoutFilter(newestFirst: true)).map(\.id)
        try expect(newest == ids.reversed(), "newest saved first")
        let page = try await store.workouts(matching: WorkoutFilter(limit: 2, after: ids[1])).map(\.id)
        try expect(page == [ids[2], ids[3]], "after a workout, in order, limited: \(page)")
        let back = try await store.workouts(matching: WorkoutFilter(newestFirst: true, after: ids[2])).map(\.id)
        try expect(back == [ids[1], ids[0]], "after a workout, newest first: \(back)")
        let alices = try await store.workouts(matching: WorkoutFilter(source: alice, after: ids[1])).map(\.id)
        try expect(alices == [ids[2], ids[4]], "after a workout of another source, with a source: \(alices)")
        let last = try await store.workouts(matching: WorkoutFilter(after: ids[4]))
        try expect(last.isEmpty, "nothing after the last")
        try await store.deleteWorkout(id: ids[2], as: alice)
        let gone = try await store.workouts(matching: WorkoutFilter(after: ids[2]))
        try expect(gone.isEmpty, "nothing after a workout that is gone")
    }

    static func routePages(_ store: any RouteStore) async throws {
        let wa = try await saved(store, alice)
        let wb = try await saved(store, bob)
        var ids: [UUID] = []
        for (i, w) in [wa, wb, wa, wb, wa].enumerated() {
            ids.append(try await FeedConformance.route(store, w, "page-\(i)", 1).route.id)
        }
        let all = try await store.routes(matching: RouteFilter()).map(\.id)
        try expect(all == ids, "oldest saved first")
        let newest = try await store.routes(matching: RouteFilter(newestFirst: true)).map(\.id)
        try expect(newest == ids.reversed(), "newest saved first")
        let page = try await store.routes(matching: RouteFilter(limit: 2, after: ids[1])).map(\.id)
        try expect(page == [ids[2], ids[3]], "after a route, in order, limited: \(page)")
        let back = try await store.routes(matching: RouteFilter(newestFirst: true, after: ids[2])).map(\.id)
        try expect(back == [ids[1], ids[0]], "after a route, newest first: \(back)")
        let alices = try await store.routes(matching: RouteFilter(source: alice, after: ids[1])).map(\.id)
        try expect(alices == [ids[2], ids[4]], "after a route of another source, with a source: \(alices)")
        // A replaced route leaves the listing; its replacement comes last; a cursor at the replaced one still pages
        // on from where it was (the replaced version is kept as provenance only when it was raw).
        let replacement = try await FeedConformance.route(store, wa, "page-0", 2).route.id
        let afterReplace = try await store.routes(matching: RouteFilter()).map(\.id)
        try expect(afterReplace == Array(ids[1...]) + [replacement], "the replacement last: \(afterReplace)")
        let last = try await store.routes(matching: RouteFilter(after: replacement))
        try expect(last.isEmpty, "nothing after the last")
        try await store.deleteRoute(id: ids[3], as: bob)
        let gone = try await store.routes(matching: RouteFilter(after: ids[3]))
        try expect(gone.isEmpty, "nothing after a route that is gone")
    }

    static func deleteWorkout(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let finish = try await build(store, w, [locations(count: 300)])
        try await store.saveSeries(
            QuantitySeries(
                type: .heartRate, samples: [QuantitySample(timestamp: Timestamp(Instant(seconds: 5)), value: 120)]),
            workout: w.id, as: alice)
        _ = try await expectError(.notOwner) { try await store.deleteWorkout(id: w.id, as: bob) }
        try expect(try await store.workout(id: w.id) != nil, "a refused delete changes nothing")
        try expect(try await store.isCurrent(route: finish.route.id), "a refused delete keeps the route")
        try await store.deleteWorkout(id: w.id, as: alice)
        try expect(try await store.workout(id: w.id) == nil, "the workout is gone")
        try expect(try await store.routes(matching: RouteFilter(workout: w.id)).isEmpty, "its routes are gone")
        try expect(try await store.route(id: finish.route.id) == nil, "its route is gone")
        try expect(try await store.seriesTypes(ofWorkout: w.id).isEmpty, "its series are gone")
        _ = try await expectError(.notFound) { try await store.deleteWorkout(id: w.id, as: alice) }
    }

    static func builderTimestampOrder(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let all = locations(count: 3000)
        // Three batches, out of order, each shuffled inside.
        var rng = SplitMix64(seed: 9)
        let batches = [Array(all[2000..<3000]), Array(all[0..<1500]), Array(all[1500..<2000])].map {
            $0.shuffled(using: &rng)
        }
        let finish = try await build(store, w, batches)
        try expect(finish.outcome == .inserted(finish.route.id), "the route is inserted")
        try expect(finish.route.locationCount == 3000, "it counts every location")
        try expect(finish.route.start == all.first?.timestamp, "start is the first time, with its offset")
        try expect(finish.route.end == all.last?.timestamp, "end is the last time")
        let back = try await readAll(store, finish.route.id)
        try expect(same(back, all), "the locations come back in time order, bit for bit")
        let listed = try await store.routes(matching: RouteFilter(workout: w.id))
        try expect(listed == [finish.route], "the route lists as finished: \(listed)")
        try expect(try await store.pendingBuilders().isEmpty, "a finished builder is no longer pending")
    }

    static func builderOverlappingMerge(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let all = locations(count: 40 * 200)
        // 40 interleaved batches: batch k holds every 40th location from k, so every pair overlaps in time and
        // more runs than one merge pass reads at once.
        let batches = (0..<40).map { k in stride(from: k, to: all.count, by: 40).map { all[$0] } }
        let finish = try await build(store, w, batches)
        let back = try await readAll(store, finish.route.id, batchSize: 333)
        try expect(same(back, all), "overlapping batches merge into time order")
    }

    static func builderInsertionOrder(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        var all = locations(count: 2500)
        all.reverse()  // a clock running backwards stays as written
        for i in stride(from: 0, to: all.count, by: 3) { all[i].timestamp = nil }
        let batches = [Array(all[0..<1200]), Array(all[1200...])]
        let finish = try await build(store, w, batches, order: .insertion)
        let back = try await readAll(store, finish.route.id, batchSize: 4096)
        try expect(same(back, all), "insertion order is kept, with missing times")
        let noTimes = try await saved(store, alice)
        let planned = locations(count: 10).map { l -> Location in
            var l = l
            l.timestamp = nil
            return l
        }
        let f2 = try await build(store, noTimes, [planned], order: .insertion)
        try expect(f2.route.start == nil && f2.route.end == nil, "a route without times has no start or end")
        let timed = try await RouteBuilder(store: store, source: alice, order: .timestamp)
        let e = try await expectError(.invalidLocation) { try await timed.insert(planned) }
        try expect(e.index == 0, "the error names the index")
    }

    static func badBatchRefused(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let builder = try await RouteBuilder(store: store, source: alice)
        let good = locations(count: 100)
        try await builder.insert(good)
        var bad = locations(count: 10, start: 1_800_000_000)
        bad[5].latitude = 91
        let e = try await expectError(.invalidLocation) { try await builder.insert(bad) }
        try expect(e.index == 5, "the error names index 5, got \(String(describing: e.index))")
        try expect(!e.description.contains("91"), "the error's description prints no coordinate")
        var nan = locations(count: 3, start: 1_800_000_000)
        nan[2].longitude = .nan
        let e2 = try await expectError(.invalidLocation) { try await builder.insert(nan) }
        try expect(e2.index == 2, "a NaN is named by index")
        try expect(builder.progress.locationCount == 100, "refused batches add nothing")
        let pending = try await store.pendingBuilder(id: builder.id)
        try expect(pending?.progress.locationCount == 100, "nothing refused reached the store")
        let finish = try await builder.finish(workout: w)
        try expect(same(try await readAll(store, finish.route.id), good), "only the good batch is in the route")
    }

    static func finishPreconditions(_ store: any RouteStore) async throws {
        let unsaved = workout(alice)
        let builder = try await RouteBuilder(store: store, source: alice)
        _ = try await expectError(.builderState) { try await builder.finish(workout: unsaved) }
        try await builder.insert(locations(count: 5))
        _ = try await expectError(.notFound) { try await builder.finish(workout: unsaved) }
        let w = try await saved(store, alice)
        _ = try await expectError(.missingSyncVersion) {
            try await builder.finish(workout: w, metadata: [MetadataKey.syncIdentifier: .string("x")])
        }
        let finish = try await builder.finish(workout: w, metadata: ["note": .string("kept")])
        try expect(finish.route.metadata["note"] == .string("kept"), "metadata is kept")
        try expect(try await store.route(id: finish.route.id)?.metadata["note"] == .string("kept"), "and stored")
        _ = try await expectError(.builderState) { try await builder.insert(locations(count: 1)) }
        _ = try await expectError(.builderState) { try await builder.finish(workout: w) }
        let other = try await RouteBuilder(store: store, source: alice)
        try await other.insert(locations(count: 5))
        try await other.discard()
        try expect(try await store.pendingBuilders().isEmpty, "a discarded builder is gone")
        _ = try await expectError(.builderState) { try await other.discard() }
    }

    static func routeSyncIdentity(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let raw = locations(count: 1500, seed: 1)
        let v1 = try await build(store, w, [raw], metadata: sync("r", 1))
        try expect(v1.route.sync == SyncIdentity(identifier: "r", version: 1), "the sync identity comes from metadata")
        try expect(v1.route.metadata[MetadataKey.syncIdentifier] == nil, "and is not left in the metadata")
        let smoothed = locations(count: 700, seed: 2)
        var derived = sync("r", 2)
        derived[MetadataKey.derivedFrom] = .string(v1.route.id.uuidString)
        let v2 = try await build(store, w, [smoothed], metadata: derived)
        try expect(
            v2.outcome == .replaced(v2.route.id, previous: v1.route.id, previousVersion: 1),
            "a higher version replaces: \(v2.outcome)")
        let current = try await store.routes(matching: RouteFilter(syncIdentifier: "r"))
        try expect(current.map(\.id) == [v2.route.id], "only the new version is current")
        try expect(try await store.isCurrent(route: v1.route.id) == false, "the raw version is not current")
        try expect(try await store.route(id: v1.route.id) != nil, "but is kept as provenance")
        try expect(same(try await readAll(store, v1.route.id), raw), "and still readable")
        // A stale version: nothing saved, the builder is spent and dropped.
        let builder = try await RouteBuilder(store: store, source: alice)
        try await builder.insert(locations(count: 10, seed: 3))
        let stale = try await builder.finish(workout: w, metadata: sync("r", 2))
        try expect(stale.outcome == .stale(current: v2.route.id, currentVersion: 2), "an equal version is stale")
        try expect(try await store.pendingBuilders().isEmpty, "a stale builder is dropped")
        try expect(try await store.routes(matching: RouteFilter()).map(\.id) == [v2.route.id], "nothing new is current")
        // A new raw version replaces both the derived one and the kept raw one.
        let v3 = try await build(store, w, [locations(count: 20, seed: 4)], metadata: sync("r", 3))
        try expect(v3.outcome.savedID == v3.route.id, "a higher raw version replaces")
        try expect(try await store.route(id: v1.route.id) == nil, "the old raw provenance goes")
        try expect(try await store.route(id: v2.route.id) == nil, "the replaced derived version goes")
    }

    static func foreignSourceRefused(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let v1 = try await build(store, w, [locations(count: 50)], metadata: sync("r", 1))
        // Bob cannot attach a route to Alice's workout, so cannot replace her route either.
        let builder = try await RouteBuilder(store: store, source: bob)
        try await builder.insert(locations(count: 5))
        _ = try await expectError(.notOwner) { try await builder.finish(workout: w, metadata: sync("r", 2)) }
        _ = try await expectError(.notOwner) { try await store.deleteRoute(id: v1.route.id, as: bob) }
        _ = try await expectError(.notOwner) { try await store.discardBuilder(id: builder.id, as: alice) }
        _ = try await expectError(.notOwner) {
            try await store.saveSeries(QuantitySeries(type: .power), workout: w.id, as: bob)
        }
        try expect(try await store.isCurrent(route: v1.route.id), "Alice's route is untouched")
        try expect(same(try await readAll(store, v1.route.id), locations(count: 50)), "with all its locations")
        // Bob's own identity "r" is separate from Alice's.
        let bobs = try await saved(store, bob)
        let b1 = try await build(store, bobs, [locations(count: 5)], metadata: sync("r", 1))
        try expect(b1.outcome == .inserted(b1.route.id), "the same identifier from another source is another route")
    }

    static func pendingBuilderResume(_ store: any RouteStore) async throws {
        let origin = BuilderOrigin(kind: "test", key: "k1", label: "a file")
        let all = locations(count: 5000)
        var builder: RouteBuilder? = try await RouteBuilder(
            store: store, source: alice, order: .insertion, origin: origin)
        try await builder?.addMetadata(["name": .string("morning run")])
        try await builder?.insert(Array(all[0..<2000]), checkpoint: "after-2000")
        try await builder?.insert(Array(all[2000..<3000]), checkpoint: "after-3000")
        let id = builder?.id
        builder = nil  // the process "dies"
        let pending = try await store.pendingBuilders()
        try expect(pending.count == 1 && pending.first?.id == id, "the builder is pending")
        guard let p = pending.first else { return }
        try expect(p.origin == origin, "with its origin")
        try expect(p.progress == BuilderProgress(locationCount: 3000, checkpoint: "after-3000"), "and its progress")
        try expect(p.metadata["name"] == .string("morning run"), "and its metadata")
        let resumed = try await RouteBuilder.resume(p, in: store)
        try await resumed.insert(Array(all[3000...]), checkpoint: "end")
        let w = try await saved(store, alice)
        let finish = try await resumed.finish(workout: w)
        try expect(finish.route.locationCount == 5000, "the resumed route counts every location")
        try expect(finish.route.metadata["name"] == .string("morning run"), "metadata survives the resume")
        try expect(same(try await readAll(store, finish.route.id), all), "nothing lost, nothing duplicated")
        _ = try await expectError(.notFound) { try await RouteBuilder.resume(p, in: store) }
    }

    static func builderSamplesAndEvents(_ store: any RouteStore) async throws {
        let t0: Int64 = 1_700_000_000
        let all = (0..<2500).map { i in
            QuantitySample(timestamp: Timestamp(Instant(seconds: t0 + Int64(i))), value: Double(100 + i % 80))
        }
        let power = (0..<10).map { i in
            QuantitySample(timestamp: Timestamp(Instant(seconds: t0 + Int64(i))), value: 200 + Double(i))
        }
        let laps = [
            WorkoutEvent(
                kind: .lap, start: Timestamp(Instant(seconds: t0)), end: Timestamp(Instant(seconds: t0 + 600)),
                metadata: [MetadataKey.lapTrigger: .string("manual")]),
            WorkoutEvent(
                kind: .marker, start: Timestamp(Instant(seconds: t0 + 300)),
                metadata: [MetadataKey.eventName: .string("water")]),
        ]
        let pauses = [
            WorkoutEvent(kind: .pause, start: Timestamp(Instant(seconds: t0 + 1000))),
            WorkoutEvent(kind: .resume, start: Timestamp(Instant(seconds: t0 + 1060))),
        ]
        let first = try await RouteBuilder(store: store, source: alice)
        let id = first.id
        try await first.insert(locations(count: 100, start: t0))
        let stored = try await first.insert(samples: Array(all[0..<1500]), of: .heartRate, first: 0)
        try expect(stored.count == 1500, "a new batch is stored whole")
        // The same batch again (its answer was lost): acknowledged, nothing stored twice.
        let again = try await first.insert(samples: Array(all[0..<1500]), of: .heartRate, first: 0)
        try expect(again.isEmpty, "a batch held already stores nothing")
        // A batch that overlaps what is held: only its tail is stored.
        let tail = try await first.insert(samples: Array(all[1400..<2000]), of: .heartRate, first: 1400)
        try expect(tail.count == 500, "only the tail of an overlapping batch is stored, not \(tail.count)")
        // A gap is refused, naming the index to resume from; nothing changes.
        let gap = try await expectError(.batchGap) {
            try await first.insert(samples: Array(all[2100...]), of: .heartRate, first: 2100)
        }
        try expect(gap.index == 2000, "the gap names the count held: \(String(describing: gap.index))")
        // A bad value refuses the whole batch, naming its index in the batch.
        var bad = Array(all[2000..<2010])
        bad[3].value = -1
        let negative = try await expectError(.invalidValue) {
            try await first.insert(samples: bad, of: .heartRate, first: 2000)
        }
        try expect(negative.index == 3, "a negative heart rate is refused by its index")
        bad[3].value = .nan
        _ = try await expectError(.invalidValue) { try await first.insert(samples: bad, of: .power, first: 0) }
        try expect(first.progress.sampleCount(of: .heartRate) == 2000, "refused batches add nothing")
        try await first.insert(samples: power, of: .power, first: 0)
        try await first.insert(events: laps, first: 0)
        let resent = try await first.insert(events: laps, first: 0)
        try expect(resent.isEmpty, "events held already are not stored twice")
        let eventGap = try await expectError(.batchGap) { try await first.insert(events: pauses, first: 3) }
        try expect(eventGap.index == 2, "the gap names the events held")
        let backwards = [
            WorkoutEvent(kind: .lap, start: Timestamp(Instant(seconds: t0 + 9)), end: Timestamp(Instant(seconds: t0)))
        ]
        _ = try await expectError(.invalidValue) { try await first.insert(events: backwards, first: 2) }
        let held = try await store.builderSamples(of: .heartRate, builder: id)
        try expect(held == Array(all[0..<2000]), "the builder holds each sample once, in order (\(held.count))")
        let late = try await store.builderSamples(of: .heartRate, builder: id, from: 1990)
        try expect(late == Array(all[1990..<2000]), "read from an index, \(late.count) samples")
        // The process "dies": another picks the builder up from the store.
        let pending = try await store.pendingBuilders()
        try expect(pending.count == 1, "the builder is pending")
        guard let p = pending.first else { return }
        try expect(p.progress.sampleCount(of: .heartRate) == 2000, "with its heart-rate count")
        try expect(p.progress.sampleCount(of: .power) == 10, "its power count")
        try expect(p.progress.sampleCount(of: .cadence) == 0, "no cadence")
        try expect(p.progress.eventCount == 2, "its event count")
        try expect(p.progress.locationCount == 100, "and its locations")
        let resumed = try await RouteBuilder.resume(p, in: store)
        try expect(resumed.progress == p.progress, "a resumed builder goes on from the counts held")
        let rest = try await resumed.insert(samples: Array(all[1990...]), of: .heartRate, first: 1990)
        try expect(rest.count == 500, "the resumed builder stores only what it lacks")
        try await resumed.insert(events: pauses, first: 2)
        let w = try await saved(store, alice)
        _ = try await resumed.finish(workout: w)
        try expect(try await store.pendingBuilders().isEmpty, "the builder is finished")
        let series = try await store.allSamples(of: .heartRate, workout: w.id)
        try expect(series == all, "the workout's heart-rate series has every sample once (\(series.count))")
        let watts = try await store.allSamples(of: .power, workout: w.id)
        try expect(watts == power, "and its power series")
        let finished = try await store.workout(id: w.id)
        let events = finished?.events ?? []
        try expect(events == w.events + laps + pauses, "the builder's events follow the workout's, in order")
        // A builder that finishes into a new workout gives it its events too, in the same transaction.
        let other = try await RouteBuilder(store: store, source: alice)
        try await other.insert(locations(count: 10, start: t0))
        try await other.insert(events: laps, first: 0)
        let fresh = Workout(activityType: .cycling, start: nil, end: nil, source: alice)
        _ = try await other.finish(creating: fresh)
        let created = try await store.workout(id: fresh.id)
        try expect(created?.events == laps, "a workout made by the finish has the builder's events")
    }

    static func resumeTakesOver(_ store: any RouteStore) async throws {
        let all = locations(count: 30)
        let first = try await RouteBuilder(store: store, source: alice, order: .insertion)
        try await first.insert(Array(all[0..<10]))
        let listed = try await store.pendingBuilders()
        try expect(listed.count == 1, "one pending builder")
        guard let p = listed.first else { return }
        let second = try await RouteBuilder.resume(p, in: store)
        // The first handle (a process presumed dead) can no longer write.
        _ = try await expectError(.builderState) { try await first.insert(Array(all[10..<20])) }
        try await second.insert(Array(all[10..<20]))
        // A resume from an old listing (10 acknowledged, now 20) is refused: another writer moved on.
        _ = try await expectError(.builderState) { try await RouteBuilder.resume(p, in: store) }
        try await second.insert(Array(all[20...]))
        let w = try await saved(store, alice)
        _ = try await expectError(.builderState) { try await first.finish(workout: w) }
        let finish = try await second.finish(workout: w)
        try expect(same(try await readAll(store, finish.route.id), all), "each location exactly once")
    }

    static func routeQueryBatches(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let all = locations(count: 5000)
        let finish = try await build(store, w, [all])
        var sizes: [Int] = []
        var done: [Bool] = []
        for try await batch in store.locations(of: finish.route.id, batchSize: 1000) {
            sizes.append(batch.locations.count)
            done.append(batch.isDone)
        }
        try expect(sizes == [1000, 1000, 1000, 1000, 1000], "five full batches, got \(sizes)")
        try expect(done == [false, false, false, false, true], "only the last is done, got \(done)")
        try expect(same(try await readAll(store, finish.route.id, batchSize: 7), all), "odd batch sizes lose nothing")
        // A date interval clips, inclusive at both ends.
        let lo = all[1234].timestamp?.instant ?? Instant(seconds: 0)
        let hi = all[3456].timestamp?.instant ?? Instant(seconds: 0)
        var clipped: [Location] = []
        for try await batch in store.locations(of: finish.route.id, batchSize: 500, interval: lo...hi) {
            clipped += batch.locations
        }
        try expect(same(clipped, Array(all[1234...3456])), "the interval clips to \(clipped.count) locations")
        var empty: [LocationBatch] = []
        let far = Instant(seconds: 1)...Instant(seconds: 2)
        for try await batch in store.locations(of: finish.route.id, interval: far) { empty.append(batch) }
        try expect(empty == [LocationBatch(locations: [], isDone: true)], "no location in range: one empty done batch")
        _ = try await expectError(.invalidArgument) {
            for try await _ in store.locations(of: finish.route.id, batchSize: 0) {}
        }
        _ = try await expectError(.notFound) {
            for try await _ in store.locations(of: UUID()) {}
        }
        // Stopping early is allowed and leaves the store usable.
        for try await _ in store.locations(of: finish.route.id, batchSize: 10) { break }
        _ = try await saved(store, alice)
    }

    static func routeQueryConsistent(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let v1Points = locations(count: 6000, seed: 11)
        let v1 = try await build(store, w, [v1Points], metadata: sync("c", 1))
        var seen: [Location] = []
        var replaced = false
        for try await batch in store.locations(of: v1.route.id, batchSize: 1000) {
            seen += batch.locations
            if !replaced {
                replaced = true
                // Replaced by a raw version mid-read: v1 is deleted outright.
                let v2 = try await build(store, w, [locations(count: 10, seed: 12)], metadata: sync("c", 2))
                try expect(v2.outcome.savedID != nil, "the replacement is saved")
                try expect(try await store.route(id: v1.route.id) == nil, "v1 is deleted")
            }
        }
        try expect(same(seen, v1Points), "the reader saw all of v1 and nothing of v2 (\(seen.count) locations)")
    }

    static func quantitySeries(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let all = locations(count: 3000)
        let hr = all.enumerated().compactMap { i, l in
            l.timestamp.map { QuantitySample(timestamp: $0, value: Double(100 + i % 80)) }
        }
        let builder = try await RouteBuilder(store: store, source: alice, order: .insertion)
        try await builder.insert(Array(all[0..<1500]), related: [.heartRate: Array(hr[0..<1500])])
        try await builder.insert(Array(all[1500...]), related: [.heartRate: Array(hr[1500...])])
        _ = try await builder.finish(workout: w)
        try expect(try await store.seriesTypes(ofWorkout: w.id) == [.heartRate], "the workout has a heart-rate series")
        var back: [QuantitySample] = []
        var done = false
        for try await batch in store.samples(of: .heartRate, workout: w.id, batchSize: 1000) {
            back += batch.samples
            done = batch.isDone
        }
        try expect(done, "the last batch is done")
        try expect(back == hr, "the samples come back as inserted (\(back.count) of \(hr.count))")
        try expect(
            zip(back, hr).allSatisfy { $0.timestamp.utcOffsetSeconds == $1.timestamp.utcOffsetSeconds },
            "with their written offsets")
        let power = (0..<10).map {
            QuantitySample(timestamp: Timestamp(Instant(seconds: 100 - Int64($0))), value: 250.5)
        }
        try await store.saveSeries(QuantitySeries(type: .power, samples: power), workout: w.id, as: alice)
        var p: [QuantitySample] = []
        for try await batch in store.samples(of: .power, workout: w.id) { p += batch.samples }
        try expect(p == power.reversed(), "a saved series is sorted by time")
        try expect(try await store.seriesTypes(ofWorkout: w.id) == [.heartRate, .power], "both types are listed")
        _ = try await expectError(.invalidValue) {
            try await store.saveSeries(
                QuantitySeries(
                    type: .power, samples: [QuantitySample(timestamp: Timestamp(Instant(seconds: 1)), value: .infinity)]
                ),
                workout: w.id, as: alice)
        }
        _ = try await expectError(.notFound) {
            try await store.saveSeries(QuantitySeries(type: .power, samples: power), workout: UUID(), as: alice)
        }
    }

    static func workClaims(_ store: any RouteStore) async throws {
        let a = UUID()
        let b = UUID()
        try expect(try await store.claimWork(key: "k", holder: a, seconds: 60), "a free key is claimed")
        try expect(!(try await store.claimWork(key: "k", holder: b, seconds: 60)), "a live claim is not taken")
        try expect(try await store.claimWork(key: "k", holder: a, seconds: 60), "the holder renews")
        try expect(try await store.claimWork(key: "other", holder: b, seconds: 60), "keys are independent")
        try await store.releaseWork(key: "k", holder: b)
        try expect(!(try await store.claimWork(key: "k", holder: b, seconds: 60)), "only the holder releases")
        try await store.releaseWork(key: "k", holder: a)
        try expect(try await store.claimWork(key: "k", holder: b, seconds: 0.2), "a released key is free")
        try await Task.sleep(for: .milliseconds(400))
        try expect(try await store.claimWork(key: "k", holder: a, seconds: 60), "an expired claim is taken over")
        _ = try await expectError(.invalidArgument) { try await store.claimWork(key: "k", holder: a, seconds: .nan) }
        // Several at once: the live claims of others are left out, the rest are taken (or renewed).
        let held = try await store.claimWork(keys: ["k", "other", "third", "fourth"], holder: b, seconds: 60)
        try expect(held == ["other", "third", "fourth"], "a batch claim takes the free keys only: \(held.sorted())")
        try expect(!(try await store.claimWork(key: "third", holder: a, seconds: 60)), "batch claims are live")
        try expect(try await store.claimWork(keys: [], holder: a, seconds: 60).isEmpty, "an empty batch")
        _ = try await expectError(.invalidArgument) {
            try await store.claimWork(keys: ["x"], holder: a, seconds: -1)
        }
    }

    static func zoneSettings(_ store: any RouteStore) async throws {
        try expect(try await store.zoneSettings(of: alice).isEmpty, "none at first")
        let hr = try ZoneConfiguration(quantity: .heartRate, origin: .user, boundaries: [112.5, 130, 148, 166])
        let power = try ZoneConfiguration(
            quantity: .power, origin: .system, boundaries: [140, 190, 227.5, 265, 302, 377], basis: "FTP 250 W")
        let settings = ZoneSettings(
            heartRate: hr, power: power, maximumHeartRate: 187.5, restingHeartRate: 48.5, age: 41.5, ftp: 250.5)
        try await store.setZoneSettings(settings, of: alice)
        let read = try await store.zoneSettings(of: alice)
        try expect(read == settings, "read back exactly: \(read)")
        try expect(try await store.zoneSettings(of: bob).isEmpty, "per source")
        // Refused: nothing changes.
        var bad = settings
        bad.restingHeartRate = 200.5
        do {
            try await store.setZoneSettings(bad, of: alice)
            try expect(false, "a resting heart rate above the maximum is refused")
        } catch let e as RouteKitError {
            try expect(e.code == .invalidArgument, "refused as invalid: \(e)")
        }
        try expect(try await store.zoneSettings(of: alice) == settings, "a refused write changes nothing")
        try await store.setZoneSettings(ZoneSettings(maximumHeartRate: 190.5), of: alice)
        try expect(
            try await store.zoneSettings(of: alice) == ZoneSettings(maximumHeartRate: 190.5), "replaced whole")
        try await store.setZoneSettings(ZoneSettings(), of: alice)
        try expect(try await store.zoneSettings(of: alice).isEmpty, "cleared")
    }

    static func workoutZoneSettings(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let other = try await saved(store, alice)
        try expect(try await store.zoneSettings(ofWorkout: w.id).isEmpty, "none at first")
        let hr = try ZoneConfiguration(quantity: .heartRate, origin: .app, boundaries: [121.5, 141, 155, 171])
        let settings = ZoneSettings(heartRate: hr, ftp: 231.5)
        try await store.setZoneSettings(settings, ofWorkout: w.id, as: alice)
        try expect(try await store.zoneSettings(ofWorkout: w.id) == settings, "read back exactly")
        try expect(try await store.zoneSettings(ofWorkout: other.id).isEmpty, "per workout")
        try expect(try await store.zoneSettings(of: alice).isEmpty, "not the person's")
        _ = try await expectError(.notOwner) {
            try await store.setZoneSettings(ZoneSettings(ftp: 200.5), ofWorkout: w.id, as: bob)
        }
        _ = try await expectError(.notFound) {
            try await store.setZoneSettings(ZoneSettings(ftp: 200.5), ofWorkout: UUID(), as: alice)
        }
        _ = try await expectError(.invalidArgument) {
            try await store.setZoneSettings(ZoneSettings(ftp: -5), ofWorkout: w.id, as: alice)
        }
        try expect(try await store.zoneSettings(ofWorkout: w.id) == settings, "refused writes change nothing")
        try await store.setZoneSettings(ZoneSettings(), ofWorkout: other.id, as: alice)
        try expect(try await store.zoneSettings(ofWorkout: other.id).isEmpty, "clearing what is not there is fine")
        try await store.deleteWorkout(id: w.id, as: alice)
        try expect(try await store.zoneSettings(ofWorkout: w.id).isEmpty, "gone with the workout")
    }

    static func privacyZones(_ store: any RouteStore) async throws {
        let bob = try Source(name: "bob")
        try expect(try await store.privacyZones(of: alice).isEmpty, "none at first")
        let home = try PrivacyZone(latitude: 47.37, longitude: 8.54, radiusMetres: 250)
        let work = try PrivacyZone(latitude: -33.9, longitude: 151.2, radiusMetres: 1_000.5)
        try await store.setPrivacyZones([home, work], of: alice)
        try expect(try await store.privacyZones(of: alice) == [home, work], "kept in order, exactly")
        try expect(try await store.privacyZones(of: bob).isEmpty, "per source")
        try await store.setPrivacyZones([work], of: alice)
        try expect(try await store.privacyZones(of: alice) == [work], "replaced whole")
        try await store.setPrivacyZones([], of: alice)
        try expect(try await store.privacyZones(of: alice).isEmpty, "cleared")
    }

    static func rawVersion(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        try expect(try await store.rawRoute(source: alice, syncIdentifier: "r") == nil, "none yet")
        let v1 = try await build(store, w, [locations(count: 20)], metadata: sync("r", 1))
        try expect(try await store.rawRoute(source: alice, syncIdentifier: "r")?.id == v1.route.id, "the current raw")
        var derived = sync("r", 2)
        derived[MetadataKey.derivedFrom] = .string("\(v1.route.id)@1")
        _ = try await build(store, w, [locations(count: 5)], metadata: derived)
        try expect(
            try await store.rawRoute(source: alice, syncIdentifier: "r")?.id == v1.route.id,
            "the kept raw after a derived version replaced it")
        try expect(try await store.rawRoute(source: bob, syncIdentifier: "r") == nil, "scoped to the source")
    }

    static func saveWholeRoute(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let v1 = try await build(store, w, [locations(count: 30)], metadata: sync("s", 1))
        let points = locations(count: 2500, seed: 7)
        let chunks = stride(from: 0, to: points.count, by: 1024).enumerated().map { n, start in
            StoredChunk.locations(Array(points[start..<min(start + 1024, points.count)]), sequence: n)
        }
        let holder = UUID()
        try expect(try await store.claimWork(key: "save", holder: holder, seconds: 60), "claimed")
        var metadata: [String: MetadataValue] = [MetadataKey.derivedFrom: .string("\(v1.route.id)@1")]
        metadata["note"] = .string("whole")
        let v2 = RouteSample(
            workoutID: w.id, source: alice, sync: SyncIdentity(identifier: "s", version: 2),
            start: points.first?.timestamp, end: points.last?.timestamp, locationCount: points.count, metadata: metadata
        )
        let outcome = try await store.saveRoute(v2, chunks: chunks, releasing: WorkClaim(key: "save", holder: holder))
        try expect(outcome == .replaced(v2.id, previous: v1.route.id, previousVersion: 1), "replaces: \(outcome)")
        try expect(same(try await readAll(store, v2.id), points), "every location, in order")
        try expect(try await store.route(id: v1.route.id) != nil, "the raw version is kept")
        try expect(try await store.claimWork(key: "save", holder: UUID(), seconds: 60), "the claim was given up")
        let stale = try await store.saveRoute(v2, chunks: chunks, releasing: nil)
        try expect(stale == .stale(current: v2.id, currentVersion: 2), "an equal version is stale")
        var foreign = v2
        foreign.source = bob
        foreign.id = UUID()
        foreign.sync.version = 3
        _ = try await expectError(.notOwner) { try await store.saveRoute(foreign, chunks: chunks, releasing: nil) }
    }

    static func chunks(_ store: any RouteStore, _ route: UUID, _ kind: ChunkKind) async throws -> [StoredChunk] {
        let cursor = try await store.routeChunks(ofRoute: route, kind: kind, interval: nil)
        defer { cursor.close() }
        var all: [StoredChunk] = []
        while let chunk = try await cursor.next() { all.append(chunk) }
        return all
    }

    static func heldRouteMatchesBuilder(_ store: any RouteStore) async throws {
        let built = try await saved(store, alice)
        let held = try await saved(store, alice)
        let all = locations(count: 2600, seed: 3)
        // Batches of uneven sizes (one longer than a chunk), extras on two, heart rate on every one, one batch
        // of samples only.
        let cuts = [0..<700, 700..<1800, 1800..<1800, 1800..<2600]
        let builder = try await RouteBuilder(store: store, source: alice, order: .insertion)
        var memory = HeldRoute()
        for (n, range) in cuts.enumerated() {
            let batch = Array(all[range])
            let hr = (0..<(range.isEmpty ? 5 : range.count)).map { i in
                QuantitySample(timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64(n * 10_000 + i))), value: 90)
            }
            let extras: [UInt8]? = n == 1 || range.isEmpty ? nil : Array("batch \(n)".utf8)
            try await builder.insert(batch, related: [.heartRate: hr], extras: extras)
            try memory.insert(batch, related: [.heartRate: hr], extras: extras)
        }
        try expect(memory.locationCount == all.count, "every location is held: \(memory.locationCount)")
        var metadata = sync("held", 1)
        metadata["note"] = .string("same")
        let a = try await builder.finish(workout: built, metadata: metadata)
        metadata = sync("held-too", 1)
        metadata["note"] = .string("same")
        let b = try await memory.save(workout: held, source: alice, metadata: metadata, in: store)
        try expect(b.outcome == .inserted(b.route.id), "a new route is inserted: \(b.outcome)")
        try expect(
            a.route.start == b.route.start && a.route.end == b.route.end
                && a.route.start?.utcOffsetSeconds == b.route.start?.utcOffsetSeconds
                && a.route.end?.utcOffsetSeconds == b.route.end?.utcOffsetSeconds,
            "the same time bounds: \(String(describing: b.route.start))…\(String(describing: b.route.end))")
        try expect(a.route.metadata == b.route.metadata && b.route.locationCount == 2600, "the same metadata, count")
        try expect(b.route.sync == SyncIdentity(identifier: "held-too", version: 1), "the sync identity from metadata")
        for kind in [ChunkKind.locations, .extras, .quantity(.heartRate)] {
            let x = try await chunks(store, a.route.id, kind)
            let y = try await chunks(store, b.route.id, kind)
            try expect(
                x.map(\.sequence) == y.map(\.sequence) && x.map(\.bytes) == y.map(\.bytes) && !x.isEmpty,
                "the same \(kind) chunks: \(x.map(\.sequence)) and \(y.map(\.sequence))")
        }
        try expect(same(try await readAll(store, b.route.id), all), "every location reads back, in order")
        try expect(try await store.seriesTypes(ofWorkout: held.id) == [.heartRate], "the samples are a series")
        var samples = 0
        for try await batch in store.samples(of: .heartRate, workout: held.id) { samples += batch.samples.count }
        try expect(samples == 700 + 1100 + 5 + 800, "every sample: \(samples)")
        let again = try await memory.save(workout: held, source: alice, metadata: metadata, in: store)
        try expect(again.outcome == .stale(current: b.route.id, currentVersion: 1), "saved twice: stale")
        _ = try await expectError(.builderState) {
            try await HeldRoute().save(workout: held, source: alice, metadata: [:], in: store)
        }
        _ = try await expectError(.notOwner) {
            try await memory.save(workout: held, source: bob, metadata: [:], in: store)
        }
        _ = try await expectError(.notFound) {
            try await memory.save(workout: workout(alice), source: alice, metadata: [:], in: store)
        }
        _ = try await expectError(.invalidLocation) {
            var bad = HeldRoute()
            try bad.insert([Location(latitude: 91, longitude: 0)])
        }
        let staging = StoredChunk(kind: .staging, sequence: 0, count: 0, minTime: nil, maxTime: nil, bytes: [])
        _ = try await expectError(.invalidArgument) {
            try await store.saveRoute(
                RouteSample(
                    workoutID: held.id, source: alice, sync: SyncIdentity(identifier: "x", version: 1), start: nil,
                    end: nil, locationCount: 0), chunks: [staging], releasing: nil)
        }
    }

    static func effort(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        let estimate = try EffortScore(workoutID: w.id, source: bob, score: 6, isManual: false, created: t0)
        try await store.relateEffort(estimate)
        try expect(
            EffortScore.effective(try await store.efforts(ofWorkout: w.id)) == estimate, "an estimate alone counts")
        let manual = try EffortScore(
            workoutID: w.id, source: alice, score: 8, isManual: true, created: t0.addingTimeInterval(10))
        let newerEstimate = try EffortScore(
            workoutID: w.id, source: bob, score: 3, isManual: false, created: t0.addingTimeInterval(20))
        try await store.relateEffort(manual)
        try await store.relateEffort(newerEstimate)
        try expect(
            EffortScore.effective(try await store.efforts(ofWorkout: w.id)) == manual, "manual wins over estimates")
        let newerManual = try EffortScore(
            workoutID: w.id, source: alice, score: 9, isManual: true, created: t0.addingTimeInterval(30))
        try await store.relateEffort(newerManual)
        try expect(
            EffortScore.effective(try await store.efforts(ofWorkout: w.id)) == newerManual, "the newest manual one wins"
        )
        _ = try await expectError(.notOwner) { try await store.unrelateEffort(id: newerManual.id, as: bob) }
        try await store.unrelateEffort(id: newerManual.id, as: alice)
        try expect(EffortScore.effective(try await store.efforts(ofWorkout: w.id)) == manual, "unrelated by its owner")
        _ = try await expectError(.notFound) { try await store.unrelateEffort(id: newerManual.id, as: alice) }
        _ = try await expectError(.invalidArgument) {
            try EffortScore(workoutID: w.id, source: alice, score: 11, isManual: true)
        }
        _ = try await expectError(.notFound) {
            try await store.relateEffort(try EffortScore(workoutID: UUID(), source: alice, score: 5, isManual: true))
        }
        try await store.deleteWorkout(id: w.id, as: alice)
        try expect(try await store.efforts(ofWorkout: w.id).isEmpty, "a deleted workout's scores go with it")
    }

    static func deleteRoute(_ store: any RouteStore) async throws {
        let w = try await saved(store, alice)
        let f = try await build(store, w, [locations(count: 10)])
        try await store.deleteRoute(id: f.route.id, as: alice)
        try expect(try await store.routes(matching: RouteFilter()).isEmpty, "the route no longer lists")
        try expect(try await store.workout(id: w.id) != nil, "its workout stays")
        _ = try await expectError(.notFound) {
            for try await _ in store.locations(of: f.route.id) {}
        }
        _ = try await expectError(.notFound) { try await store.deleteRoute(id: f.route.id, as: alice) }
    }
}
