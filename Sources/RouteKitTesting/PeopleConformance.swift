import Foundation
@_spi(RouteKitBackend) public import RouteKit

/// The people part of the conformance suite: one store partitioned by person (`PersonID`,
/// `RouteStore.forPerson(_:)`, `PeopleStore`), as every backend implements it. Each check takes a fresh, empty store
/// seen as the default person, adds people A and B (who write with the same source name and the same sync
/// identifiers, so that only the person tells their objects apart) and works through their views:
///
/// ```swift
/// @Test func people() async throws {
///     try await PeopleConformance.run { try await makeEmptyStore() }
/// }
/// ```
///
/// A failure throws ``ConformanceFailure`` naming the line and what differed. ``crowdedView(of:)`` gives a person's
/// view of a store where someone else already has objects of every kind, to run ``StoreConformance/checks`` on.
public enum PeopleConformance {
    /// Runs every check, each on a store of its own from `makeStore` (a fresh, empty store, seen as the default
    /// person).
    /// - Throws: ``ConformanceFailure`` naming what differed, or what the store threw.
    public static func run<S: RouteStore & PeopleStore & TokenStore>(makeStore: () async throws -> S) async throws {
        try await isolation(try await makeStore())
        try await syncIdentityPerPerson(try await makeStore())
        try await feedPerPerson(try await makeStore())
        try await feedAfterCompaction(try await makeStore())
        try await storeWideState(try await makeStore())
        try await tokensOfPeople(try await makeStore())
        try await peopleRecords(try await makeStore())
        try await pendingBuilderPeople(try await makeStore())
        try await erasure(try await makeStore())
        try await defaultPersonSeesEarlierWrites(try await makeStore())
        try await storagePerPerson(try await makeStore())
    }

    // MARK: Helpers

    static func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        try StoreConformance.expect(condition, message(), file: file, line: line)
    }

    /// The source both people write as.
    static let phone = (try? Source(name: "phone")) ?? .defaultImport
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let issuer = "https://id.example"

    /// Adds people A (with an identity provider's subject) and B to `store`, and returns their views.
    static func twoPeople<S: RouteStore & PeopleStore>(_ store: S) async throws -> (a: S, b: S) {
        let a = Person(name: "A", subject: ExternalSubject(issuer: issuer, subject: "a"), created: t0)
        let b = Person(name: "B", created: t0.addingTimeInterval(1))
        try await store.addPerson(a)
        try await store.addPerson(b)
        return (store.forPerson(a.id), store.forPerson(b.id))
    }

    /// A person's objects of every kind, as ``populate(_:source:)`` made them.
    struct Owned {
        /// A workout (sync identity `w` version 1) with heart-rate and power series, an effort score and zone settings.
        var workout: Workout
        /// Its route (sync identity `r` version 1, a raw recording), with heart rate.
        var route: RouteSample
        var effort: EffortScore
        /// A builder left pending, with locations and heart rate.
        var builder: PendingBuilder
        /// An ended job (when the store keeps jobs).
        var job: UUID?
        /// A read-and-write token of the person.
        var token: UUID
    }

    static func beats(_ count: Int, from start: Int64) -> [QuantitySample] {
        (0..<count).map { QuantitySample(timestamp: Timestamp(Instant(seconds: start + Int64($0))), value: 120.5) }
    }

    /// Gives `view`'s person one object of every kind, written as `source`: a workout with a route, series, an
    /// effort score, zone settings of the workout and of the source, privacy zones, a pending builder, a token, a
    /// summary and an ended job (when the store keeps them).
    static func populate<S: RouteStore & TokenStore>(_ view: S, source: Source = PeopleConformance.phone)
        async throws -> Owned
    {
        let w = try await StoreConformance.saved(view, source, sync: SyncIdentity(identifier: "w", version: 1))
        let built = try await RouteBuilder(store: view, source: source, order: .insertion)
        try await built.insert(
            StoreConformance.locations(count: 50), related: [.heartRate: beats(50, from: 1_700_000_000)])
        let finish = try await built.finish(workout: w, metadata: StoreConformance.sync("r", 1))
        let power = (0..<10).map {
            QuantitySample(timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64($0))), value: 250.5)
        }
        try await view.saveSeries(QuantitySeries(type: .power, samples: power), workout: w.id, as: source)
        let effort = try EffortScore(workoutID: w.id, source: source, score: 7, isManual: true, created: t0)
        try await view.relateEffort(effort)
        try await view.setZoneSettings(ZoneSettings(maximumHeartRate: 190.5), of: source)
        try await view.setZoneSettings(ZoneSettings(ftp: 250.5), ofWorkout: w.id, as: source)
        try await view.setPrivacyZones(
            [try PrivacyZone(latitude: 47.37, longitude: 8.54, radiusMetres: 250)], of: source)
        let left = try await RouteBuilder(store: view, source: source, order: .insertion)
        try await left.insert(
            StoreConformance.locations(count: 30, start: 1_700_100_000),
            related: [.heartRate: beats(30, from: 1_700_100_000)])
        guard let pending = try await view.pendingBuilder(id: left.id) else {
            throw ConformanceFailure(description: "a builder with a batch is pending")
        }
        var job: UUID?
        if let jobs = view as? any JobStore {
            let j = StoredJob(id: UUID(), state: .finished, document: #"{"done":1}"#, created: t0, updated: t0)
            _ = try await jobs.saveJob(j)
            job = j.id
        }
        if let summaries = view as? any SummaryStore {
            try await summaries.saveSummary(StoredSummary(basis: "b1", document: #"{"n":1}"#), ofWorkout: w.id)
        }
        let token = APIToken(
            id: UUID(), name: "phone", person: view.person, source: source, scopes: [.read, .write],
            secretHash: String(repeating: "ab", count: 32), created: t0)
        try await view.saveToken(token)
        return Owned(
            workout: w, route: finish.route, effort: effort, builder: pending, job: job, token: token.id)
    }

    /// What a view holds of `owned`'s objects, read every way there is: compared before and after another person's
    /// attempts (or an erasure) to show that nothing changed.
    struct Snapshot {
        var parts: [(name: String, value: AnyHashable)] = []

        mutating func add<T: Hashable>(_ name: String, _ value: T) { parts.append((name, AnyHashable(value))) }

        /// The names of the parts that differ from `other`'s.
        func differences(from other: Snapshot) -> [String] {
            var names: [String] = []
            for (x, y) in zip(parts, other.parts) where x.value != y.value { names.append(x.name) }
            if parts.count != other.parts.count { names.append("the number of parts") }
            return names
        }
    }

    static func snapshot<S: RouteStore>(_ view: S, _ owned: Owned, source: Source = PeopleConformance.phone)
        async throws -> Snapshot
    {
        let w = owned.workout.id
        let r = owned.route.id
        let p = owned.builder.id
        var s = Snapshot()
        s.add("workouts", try await view.workouts(matching: WorkoutFilter()))
        s.add("workout", try await view.workout(id: w))
        s.add("routes", try await view.routes(matching: RouteFilter()))
        s.add("route", try await view.route(id: r))
        s.add("route is current", try await view.isCurrent(route: r))
        s.add("route locations", try await StoreConformance.readAll(view, r))
        s.add("route chunks", try await StoreConformance.chunks(view, r, .locations))
        s.add("series types", try await view.seriesTypes(ofWorkout: w))
        s.add("heart rate", try await view.allSamples(of: .heartRate, workout: w))
        s.add("power", try await view.allSamples(of: .power, workout: w))
        s.add("effort scores", try await view.efforts(ofWorkout: w))
        s.add("zone settings of the workout", try await view.zoneSettings(ofWorkout: w))
        s.add("zone settings of the source", try await view.zoneSettings(of: source))
        s.add("privacy zones", try await view.privacyZones(of: source))
        s.add("raw route", try await view.rawRoute(source: source, syncIdentifier: "r"))
        s.add("pending builders", try await view.pendingBuilders())
        s.add("pending builder", try await view.pendingBuilder(id: p))
        s.add("builder chunk bounds", try await view.builderChunkBounds(id: p, kind: .locations))
        s.add("builder staging bounds", try await view.builderChunkBounds(id: p, kind: .staging))
        s.add("builder chunk", try await view.builderChunk(id: p, kind: .locations, sequence: 0))
        s.add("builder heart rate", try await view.builderSamples(of: .heartRate, builder: p))
        s.add("current anchor", try await view.currentAnchor())
        s.add("feed", try await FeedConformance.drain(view, from: nil, FeedConformance.everything).sets)
        if let summaries = view as? any SummaryStore {
            s.add("summaries", try await summaries.summaries(ofWorkouts: [w]))
        }
        if let jobs = view as? any JobStore, let j = owned.job { s.add("job", try await jobs.job(id: j)) }
        return s
    }

    /// What a call answered, with the id it was given written as `ID`, so that the answers for two ids compare.
    enum Answer: Equatable, CustomStringConvertible {
        case value(String)
        case error(code: String, message: String)

        var description: String {
            switch self {
            case .value(let v): return "value \(v.prefix(300))"
            case .error(let code, let message): return "\(code) error \"\(message)\""
            }
        }
    }

    static func answer<T>(_ id: UUID, _ call: (UUID) async throws -> T) async throws -> Answer {
        func hide(_ text: String) -> String {
            text.replacingOccurrences(of: id.uuidString, with: "ID", options: .caseInsensitive)
        }
        do {
            let value = try await call(id)
            return .value(hide(String(describing: value)))
        } catch let error as RouteKitError {
            return .error(code: error.code.description, message: hide(error.message))
        }
    }

    /// Checks that `call` answers for another person's object (`id`) exactly what it answers for a random uuid: the
    /// same value, or the same error with the same text.
    static func sameAsMissing<T>(
        _ what: String, _ id: UUID, file: String = #fileID, line: Int = #line, _ call: (UUID) async throws -> T
    ) async throws {
        let theirs = try await answer(id, call)
        let missing = try await answer(UUID(), call)
        try expect(
            theirs == missing, "\(what): another person's object answers \(theirs), a missing one \(missing)",
            file: file, line: line)
    }

    /// A cursor's chunks as kind, sequence number and count (no bytes: they would be another person's locations).
    static func drained(_ cursor: any ChunkCursor) async throws -> [String] {
        defer { cursor.close() }
        var out: [String] = []
        while let c = try await cursor.next() { out.append("\(c.kind) \(c.sequence) \(c.count)") }
        return out
    }

    /// Runs a call that must be answered (not refused with an anchor or other error), naming it when it is not.
    static func answered<T>(
        _ what: String, file: String = #fileID, line: Int = #line, _ call: () async throws -> T
    ) async throws -> T {
        do {
            return try await call()
        } catch let error as RouteKitError {
            throw ConformanceFailure(description: "\(file):\(line): \(what): \(error)")
        }
    }

    /// Every read of `owned`'s objects through `view` (a view that must not see them) answers as for a missing
    /// object.
    static func readsAsMissing<S: RouteStore>(_ view: S, _ owned: Owned) async throws {
        let w = owned.workout.id
        let r = owned.route.id
        let p = owned.builder.id
        try await sameAsMissing("workout(id:)", w) { id in try await view.workout(id: id) }
        try await sameAsMissing("workouts after", w) { id in
            try await view.workouts(matching: WorkoutFilter(after: id))
        }
        try await sameAsMissing("route(id:)", r) { id in try await view.route(id: id) }
        try await sameAsMissing("isCurrent(route:)", r) { id in try await view.isCurrent(route: id) }
        try await sameAsMissing("routes of a workout", w) { id in
            try await view.routes(matching: RouteFilter(workout: id))
        }
        try await sameAsMissing("routes after", r) { id in try await view.routes(matching: RouteFilter(after: id)) }
        try await sameAsMissing("routeChunks(ofRoute:)", r) { id in
            try await drained(try await view.routeChunks(ofRoute: id, kind: .locations, interval: nil))
        }
        try await sameAsMissing("locations(of:)", r) { id in try await StoreConformance.readAll(view, id).count }
        try await sameAsMissing("seriesTypes(ofWorkout:)", w) { id in try await view.seriesTypes(ofWorkout: id) }
        try await sameAsMissing("workoutChunks(ofWorkout:)", w) { id in
            try await drained(try await view.workoutChunks(ofWorkout: id, kind: .quantity(.heartRate)))
        }
        try await sameAsMissing("samples(of:workout:)", w) { id in
            try await view.allSamples(of: .power, workout: id).count
        }
        try await sameAsMissing("efforts(ofWorkout:)", w) { id in try await view.efforts(ofWorkout: id) }
        try await sameAsMissing("zoneSettings(ofWorkout:)", w) { id in try await view.zoneSettings(ofWorkout: id) }
        try await sameAsMissing("pendingBuilder(id:)", p) { id in try await view.pendingBuilder(id: id) }
        try await sameAsMissing("builderChunk", p) { id in
            try await view.builderChunk(id: id, kind: .locations, sequence: 0)?.count
        }
        try await sameAsMissing("builderChunkBounds", p) { id in
            try await view.builderChunkBounds(id: id, kind: .locations).map(\.sequence)
        }
        try await sameAsMissing("builderSamples", p) { id in
            try await view.builderSamples(of: .heartRate, builder: id).count
        }
        try await sameAsMissing("changes matching a workout", w) { id in
            try await view.changes(
                since: nil, matching: ChangePredicate(types: Set(ChangeObjectType.allCases), workout: id), limit: 100)
        }
        if let summaries = view as? any SummaryStore {
            try await sameAsMissing("summaries(ofWorkouts:)", w) { id in
                try await summaries.summaries(ofWorkouts: [id])
            }
        }
        if let jobs = view as? any JobStore, let j = owned.job {
            try await sameAsMissing("job(id:)", j) { id in try await jobs.job(id: id) }
        }
    }

    // MARK: Checks

    /// B cannot see, list, read the chunks of, delete, replace, append to, finish, discard, relate an effort score
    /// to, or set the zones of A's objects: every answer is the answer for a random uuid, and A's objects are
    /// unchanged afterwards (A's anchor too).
    public static func isolation<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let mine = try await populate(a)
        let theirs = try await populate(b)
        let held = mine.builder
        // A merge of A's builder under way: a staging chunk, which B's promoteStaging and dropStaging must not touch.
        let staged = StoreConformance.locations(count: 2, start: 1_700_200_000)
        try await a.appendToBuilder(
            id: held.id, claim: held.claim, chunks: [.locations(staged, sequence: held.nextSequence, kind: .staging)],
            progress: held.progress, metadata: held.metadata)
        let before = try await snapshot(a, mine)
        let anchorA = try await a.currentAnchor()
        let w = mine.workout.id

        // Lists hold only the person's own objects.
        let workouts = try await b.workouts(matching: WorkoutFilter())
        try expect(workouts.map(\.id) == [theirs.workout.id], "B lists only B's workouts")
        let same = try await b.workouts(matching: WorkoutFilter(source: phone, syncIdentifier: "w"))
        try expect(same.map(\.id) == [theirs.workout.id], "B's listing by source and sync identifier is B's")
        let routes = try await b.routes(matching: RouteFilter())
        try expect(routes.map(\.id) == [theirs.route.id], "B lists only B's routes")
        let builders = try await b.pendingBuilders()
        try expect(builders.map(\.id) == [theirs.builder.id], "B lists only B's pending builders")
        let raw = try await b.rawRoute(source: phone, syncIdentifier: "r")
        try expect(raw?.id == theirs.route.id, "B's raw version of a sync identity is B's")
        let feed = try await FeedConformance.drain(b, from: nil, FeedConformance.everything)
        let ids = Set(feed.sets.flatMap(\.addedObjects).map(\.key.id) + feed.sets.flatMap(\.added).map(\.id))
        try expect(
            ids == [theirs.workout.id, theirs.route.id, theirs.effort.id],
            "B's feed holds B's workout, route, effort score and series only")

        // Reads.
        try await readsAsMissing(b, mine)

        // Writes: refused as for a missing object.
        try await sameAsMissing("deleteWorkout", w) { id in try await b.deleteWorkout(id: id, as: phone) }
        try await sameAsMissing("deleteRoute", mine.route.id) { id in try await b.deleteRoute(id: id, as: phone) }
        try await sameAsMissing("appendSeries", w) { id in
            try await b.saveSeries(
                QuantitySeries(type: .power, samples: beats(5, from: 1_700_000_000)), workout: id, as: phone)
        }
        try await sameAsMissing("relateEffort", w) { id in
            try await b.relateEffort(try EffortScore(workoutID: id, source: phone, score: 5, isManual: true))
        }
        try await sameAsMissing("unrelateEffort", mine.effort.id) { id in
            try await b.unrelateEffort(id: id, as: phone)
        }
        try await sameAsMissing("setZoneSettings(ofWorkout:)", w) { id in
            try await b.setZoneSettings(ZoneSettings(ftp: 100.5), ofWorkout: id, as: phone)
        }
        try await sameAsMissing("claimBuilder", held.id) { id in
            try await b.claimBuilder(
                id: id, expectedLocationCount: held.progress.locationCount, previous: held.claim, claim: UUID())
        }
        try await sameAsMissing("appendToBuilder", held.id) { id in
            try await b.appendToBuilder(
                id: id, claim: held.claim,
                chunks: [
                    .locations(
                        StoreConformance.locations(count: 3, start: 1_800_000_000), sequence: held.nextSequence)
                ],
                progress: BuilderProgress(locationCount: held.progress.locationCount + 3),
                metadata: ["note": .string("B's")])
        }
        try await sameAsMissing("promoteStaging", held.id) { id in
            try await b.promoteStaging(builder: id, claim: held.claim, replacing: [0])
        }
        try await sameAsMissing("dropStaging", held.id) { id in try await b.dropStaging(builder: id) }
        let intoTheirs = RouteSample(
            workoutID: theirs.workout.id, source: phone, sync: SyncIdentity(identifier: "f", version: 1), start: nil,
            end: nil, locationCount: held.progress.locationCount)
        try await sameAsMissing("finishBuilder of another person's builder", held.id) { id in
            try await b.finishBuilder(id: id, claim: held.claim, route: intoTheirs, sequenceOrder: nil, creating: nil)
        }
        try await sameAsMissing("finishBuilder into another person's workout", w) { id in
            var route = intoTheirs
            route.workoutID = id
            return try await b.finishBuilder(
                id: theirs.builder.id, claim: theirs.builder.claim, route: route, sequenceOrder: nil, creating: nil)
        }
        try await sameAsMissing("discardBuilder", held.id) { id in try await b.discardBuilder(id: id, as: phone) }
        let points = StoreConformance.locations(count: 3, start: 1_800_000_000)
        try await sameAsMissing("saveRoute into another person's workout", w) { id in
            try await b.saveRoute(
                RouteSample(
                    workoutID: id, source: phone, sync: SyncIdentity(identifier: "s", version: 1),
                    start: points.first?.timestamp, end: points.last?.timestamp, locationCount: points.count),
                chunks: [.locations(points, sequence: 0)], releasing: nil)
        }
        if let summaries = b as? any SummaryStore {
            try await sameAsMissing("saveSummary", w) { id in
                try await summaries.saveSummary(StoredSummary(basis: "B's", document: "{}"), ofWorkout: id)
            }
        }
        if let jobs = b as? any JobStore, let j = mine.job {
            try await sameAsMissing("requestJobCancellation", j) { id in try await jobs.requestJobCancellation(id: id) }
        }
        let stillPending = try await b.pendingBuilder(id: theirs.builder.id)
        try expect(stillPending != nil, "B's builder is still pending after its refused finishes")

        // Saves of the same sync identities by B replace B's objects, never A's.
        let v2 = RouteSample(
            workoutID: theirs.workout.id, source: phone, sync: SyncIdentity(identifier: "r", version: 2),
            start: points.first?.timestamp, end: points.last?.timestamp, locationCount: points.count)
        let replacedRoute = try await b.saveRoute(v2, chunks: [.locations(points, sequence: 0)], releasing: nil)
        try expect(
            replacedRoute == .replaced(v2.id, previous: theirs.route.id, previousVersion: 1),
            "B's version 2 of route r replaces B's version 1: \(replacedRoute)")
        let w2 = StoreConformance.workout(phone, sync: SyncIdentity(identifier: "w", version: 2))
        let replacedWorkout = try await b.saveWorkout(w2)
        try expect(
            replacedWorkout == .replaced(w2.id, previous: theirs.workout.id, previousVersion: 1),
            "B's version 2 of workout w replaces B's version 1: \(replacedWorkout)")
        try await b.setPrivacyZones([], of: phone)
        try await b.setZoneSettings(ZoneSettings(), of: phone)

        let after = try await snapshot(a, mine)
        let changed = after.differences(from: before)
        try expect(changed.isEmpty, "A's objects changed while B tried: \(changed)")
        let anchorAfter = try await a.currentAnchor()
        try expect(anchorAfter == anchorA, "B's writes leave A's anchor as it was")
    }

    /// Sync identity is per person: the same source, sync identifier and version saved by A and B are both
    /// inserted; A's next version replaces only A's (workouts, routes finished by a builder or saved whole, and
    /// workouts a finish creates); staleness is judged against the person's own current version.
    public static func syncIdentityPerPerson<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let v1 = SyncIdentity(identifier: "same", version: 1)
        let wa = StoreConformance.workout(phone, sync: v1)
        let wb = StoreConformance.workout(phone, sync: v1)
        let savedA = try await a.saveWorkout(wa)
        try expect(savedA == .inserted(wa.id), "A's workout is inserted: \(savedA)")
        let savedB = try await b.saveWorkout(wb)
        try expect(savedB == .inserted(wb.id), "B's workout of the same identity and version is inserted: \(savedB)")
        let againB = try await b.saveWorkout(StoreConformance.workout(phone, sync: v1))
        try expect(againB == .stale(current: wb.id, currentVersion: 1), "B's second save is stale against B's")

        let ra = try await FeedConformance.route(a, wa, "same", 1)
        let rb = try await FeedConformance.route(b, wb, "same", 1)
        try expect(ra.outcome == .inserted(ra.route.id), "A's route is inserted: \(ra.outcome)")
        try expect(rb.outcome == .inserted(rb.route.id), "B's route of the same identity is inserted: \(rb.outcome)")
        let rawA = try await a.rawRoute(source: phone, syncIdentifier: "same")
        let rawB = try await b.rawRoute(source: phone, syncIdentifier: "same")
        try expect(rawA?.id == ra.route.id && rawB?.id == rb.route.id, "each person's raw version is their own")

        let ra2 = try await FeedConformance.route(a, wa, "same", 2)
        try expect(
            ra2.outcome == .replaced(ra2.route.id, previous: ra.route.id, previousVersion: 1),
            "A's version 2 replaces A's version 1: \(ra2.outcome)")
        let bRoutes = try await b.routes(matching: RouteFilter(syncIdentifier: "same"))
        try expect(bRoutes.map(\.id) == [rb.route.id], "B's route is still current")
        let staleB = try await FeedConformance.route(b, wb, "same", 1)
        try expect(
            staleB.outcome == .stale(current: rb.route.id, currentVersion: 1),
            "B's version 1 again is stale against B's, not A's version 2: \(staleB.outcome)")
        let points = StoreConformance.locations(count: 5, start: 1_700_000_500)
        let whole = RouteSample(
            workoutID: wb.id, source: phone, sync: SyncIdentity(identifier: "same", version: 2),
            start: points.first?.timestamp, end: points.last?.timestamp, locationCount: points.count)
        let savedWhole = try await b.saveRoute(whole, chunks: [.locations(points, sequence: 0)], releasing: nil)
        try expect(
            savedWhole == .replaced(whole.id, previous: rb.route.id, previousVersion: 1),
            "B's whole version 2 replaces B's version 1, not A's version 2: \(savedWhole)")
        let aRoutes = try await a.routes(matching: RouteFilter(syncIdentifier: "same"))
        try expect(aRoutes.map(\.id) == [ra2.route.id], "A's version 2 is still current")

        let wa2 = StoreConformance.workout(phone, sync: SyncIdentity(identifier: "same", version: 2))
        let replaced = try await a.saveWorkout(wa2)
        try expect(
            replaced == .replaced(wa2.id, previous: wa.id, previousVersion: 1),
            "A's workout version 2 replaces A's: \(replaced)")
        let bWorkout = try await b.workout(id: wb.id)
        try expect(bWorkout == wb, "B's workout of the same identity stays")
        let bWorkouts = try await b.workouts(matching: WorkoutFilter(syncIdentifier: "same"))
        try expect(bWorkouts.map(\.id) == [wb.id], "B's listing holds B's version 1")
        let aWorkouts = try await a.workouts(matching: WorkoutFilter(syncIdentifier: "same"))
        try expect(aWorkouts.map(\.id) == [wa2.id], "A's listing holds A's version 2")
        let bCurrent = try await b.isCurrent(route: whole.id)
        try expect(bCurrent, "B's route stays when A's workout of the same identity is replaced")
        let aLeft = try await a.routes(matching: RouteFilter())
        try expect(aLeft.isEmpty, "A's routes went with A's replaced workout")

        // A builder's finish that creates its workout: the same identity for both is two new workouts.
        let made = SyncIdentity(identifier: "made", version: 1)
        for view in [a, b] {
            let builder = try await RouteBuilder(store: view, source: phone)
            try await builder.insert(StoreConformance.locations(count: 5))
            let workout = StoreConformance.workout(phone, sync: made)
            let finish = try await builder.finish(creating: workout, metadata: StoreConformance.sync("made", 1))
            try expect(
                finish.outcome == .inserted(finish.route.id),
                "a finish creating a workout of an identity the other person has is inserted: \(finish.outcome)")
            let created = try await view.workout(id: workout.id)
            try expect(created != nil, "and its workout is saved")
        }
    }

    /// Feeds are per person: A's feed holds only A's changes; B's commits leave A's current anchor equal and A's
    /// changes since it empty, with the same anchor; then A's commit reaches A's follower, and nothing else does.
    public static func feedPerPerson<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let everything = FeedConformance.everything
        let wa = try await StoreConformance.saved(a, phone)
        let ra = try await FeedConformance.route(a, wa, "a", 1)
        let ea = try EffortScore(workoutID: wa.id, source: phone, score: 6, isManual: true, created: t0)
        try await a.relateEffort(ea)
        let wb = try await StoreConformance.saved(b, phone)
        let rb = try await FeedConformance.route(b, wb, "a", 1)

        let feedA = try await FeedConformance.drain(a, from: nil, everything, limit: 1)
        let keysA = feedA.sets.flatMap(\.addedObjects).map(\.key)
        let expectedA = [
            ChangeObjectKey(type: .workout, id: wa.id, quantityType: nil),
            ChangeObjectKey(type: .effort, id: ea.id, quantityType: nil),
        ]
        try expect(keysA == expectedA, "A's feed holds A's workout and effort score only: \(keysA)")
        let routesA = feedA.sets.flatMap(\.added).map(\.id)
        try expect(routesA == [ra.route.id], "A's feed holds A's route only")
        let feedB = try await FeedConformance.drain(b, from: nil, everything)
        let routesB = feedB.sets.flatMap(\.added).map(\.id)
        let keysB = feedB.sets.flatMap(\.addedObjects).map(\.key.id)
        try expect(routesB == [rb.route.id] && keysB == [wb.id], "B's feed holds B's only")
        let anchorA = try await a.currentAnchor()
        try expect(feedA.anchor == anchorA, "A's feed ends at A's current anchor")

        var follower = a.changeUpdates(since: anchorA).makeAsyncIterator()
        let catchUp = try await follower.next()
        try expect(catchUp?.count == 0, "A's follower starts with an empty catch-up")

        // B commits every kind of change.
        let anchorB0 = try await b.currentAnchor()
        let rb2 = try await FeedConformance.route(b, wb, "a", 2)
        try await b.relateEffort(try EffortScore(workoutID: wb.id, source: phone, score: 4, isManual: false))
        try await b.saveSeries(
            QuantitySeries(type: .heartRate, samples: FeedConformance.samples(20)), workout: wb.id, as: phone)
        let wb2 = try await StoreConformance.saved(b, phone)
        _ = try await FeedConformance.route(b, wb2, "c", 1)
        try await b.deleteRoute(id: rb2.route.id, as: phone)
        try await b.deleteWorkout(id: wb2.id, as: phone)
        let anchorB = try await b.currentAnchor()
        try expect(anchorB != anchorB0, "B's commits move B's anchor")

        let stillA = try await a.currentAnchor()
        try expect(stillA == anchorA, "B's commits leave A's current anchor equal")
        let nothing = try await a.changes(since: anchorA, matching: everything, limit: 100)
        try expect(nothing.count == 0 && !nothing.hasMore, "A owes nothing of B's commits: \(nothing.count) changes")
        try expect(nothing.anchor == anchorA, "and A's anchor stays the same")
        let routesOnly = try await a.changes(since: anchorA, matching: .all, limit: 1)
        try expect(routesOnly.count == 0 && routesOnly.anchor == anchorA, "with the default predicate too")
        let ofB = try await FeedConformance.drain(b, from: anchorB0, everything)
        var seenByB: Set<UUID> = []
        for set in ofB.sets {
            seenByB.formUnion(set.added.map(\.id))
            seenByB.formUnion(set.deleted.map(\.id))
            seenByB.formUnion(set.addedObjects.map(\.key.id))
            seenByB.formUnion(set.deletedObjects.map(\.key.id))
        }
        try expect(seenByB.contains(rb.route.id), "B's feed holds the deletion of B's replaced route")
        try expect(seenByB.isDisjoint(with: [wa.id, ra.route.id, ea.id]), "and nothing of A's")

        // A commits: A's follower gets exactly that commit.
        let ra2 = try await FeedConformance.route(a, wa, "a", 2)
        let seen = try await follower.next()
        let deleted = seen?.deleted.map(\.id)
        let added = seen?.added.map(\.id)
        try expect(deleted == [ra.route.id], "A's follower sees A's replaced route deleted: \(deleted ?? [])")
        try expect(added == [ra2.route.id], "and A's new version added, nothing of B's: \(added ?? [])")
        let nowA = try await a.currentAnchor()
        try expect(nowA != anchorA && seen?.anchor == nowA, "the follower ends at A's new anchor")
        let stillB = try await b.currentAnchor()
        try expect(stillB == anchorB, "A's commit leaves B's current anchor equal")
    }

    /// Compaction is the store's (its floor too), but it never leaves a person with an anchor that has already
    /// expired: a person quiet since before the newest compacted deletion (or without a change at all) still reads
    /// from no anchor, from the anchor that read hands out, and from their current anchor; their next commit reaches
    /// them.
    public static func feedAfterCompaction<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let wa = try await StoreConformance.saved(a, phone)
        let ra = try await FeedConformance.route(a, wa, "a", 1)
        let anchorA = try await a.currentAnchor()
        let wb = try await StoreConformance.saved(b, phone)
        let rb = try await FeedConformance.route(b, wb, "b", 1)
        try await b.deleteRoute(id: rb.route.id, as: phone)
        _ = try await FeedConformance.route(b, wb, "b2", 1)
        let dropped = try await store.compactChanges(before: Date().addingTimeInterval(60))
        try expect(dropped >= 1, "B's deletion was compacted")

        let fresh = try await answered("A's read from no anchor after a compaction of B's deletion") {
            try await FeedConformance.drain(a, from: nil)
        }
        try expect(fresh.sets.flatMap(\.added).map(\.id) == [ra.route.id], "A's read lists A's route")
        let onward = try await answered("A's read from the anchor A's read from no anchor handed out") {
            try await a.changes(since: fresh.anchor, matching: .all, limit: 10)
        }
        try expect(onward.count == 0, "nothing after it")
        let current = try await a.currentAnchor()
        _ = try await answered("A's read from A's current anchor") {
            try await a.changes(since: current, matching: .all, limit: 10)
        }
        do {
            // The floor is the store's: A's anchor from before it may expire, but never answers wrongly.
            let old = try await a.changes(since: anchorA, matching: .all, limit: 10)
            try expect(old.count == 0, "A's anchor from before the compaction owes nothing")
        } catch let error as RouteKitError {
            try expect(error.code == .anchorExpired, "A's anchor from before the compaction expired: \(error)")
        }

        let c = Person(name: "C", created: t0.addingTimeInterval(2))
        try await store.addPerson(c)
        let cv = store.forPerson(c.id)
        let cAnchor = try await cv.currentAnchor()
        let cSet = try await answered("a new person's read from their current anchor") {
            try await cv.changes(since: cAnchor, matching: FeedConformance.everything, limit: 10)
        }
        try expect(cSet.count == 0, "a new person owes nothing")
        let cFresh = try await cv.changes(since: nil, matching: .all, limit: 10)
        _ = try await answered("a new person's read from the anchor their first read handed out") {
            try await cv.changes(since: cFresh.anchor, matching: .all, limit: 10)
        }

        let ra2 = try await FeedConformance.route(a, wa, "a", 2)
        let next = try await a.changes(since: onward.anchor, matching: .all, limit: 10)
        try expect(
            next.deleted.map(\.id) == [ra.route.id] && next.added.map(\.id) == [ra2.route.id],
            "A's next commit reaches A from the anchor handed out after the compaction")
    }

    /// What is the store's rather than a person's: leases, single-use tickets, the token list, the people list,
    /// compaction and old jobs' deletion act the same through any view.
    public static func storeWideState<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let h1 = UUID()
        let h2 = UUID()
        try expect(try await a.claimWork(key: "k", holder: h1, seconds: 60), "A's view claims a free key")
        try expect(!(try await b.claimWork(key: "k", holder: h2, seconds: 60)), "B's view cannot take A's key")
        try await a.releaseWork(key: "k", holder: h1)
        try expect(try await b.claimWork(key: "k", holder: h2, seconds: 60), "released through A's view, free for B's")

        let ticket = String(repeating: "0f", count: 32)
        let now = Date()
        try expect(
            try await a.redeemTicket(key: ticket, expires: now.addingTimeInterval(60), now: now),
            "a ticket's first use through A's view is accepted")
        try expect(
            !(try await b.redeemTicket(key: ticket, expires: now.addingTimeInterval(60), now: now)),
            "its second use, through B's view, is refused")

        let mine = try await populate(a)
        let theirs = try await populate(b)
        let listed = Set(try await a.tokens().map(\.id))
        try expect(listed == [mine.token, theirs.token], "every view lists every token")
        let people = try await b.people().map(\.id)
        try expect(people == [.default, a.person, b.person], "every view lists every person")

        // Compaction through A's view compacts B's deletions too.
        let beforeDeletion = try await b.currentAnchor()
        try await b.deleteRoute(id: theirs.route.id, as: phone)
        let dropped = try await a.compactChanges(before: Date().addingTimeInterval(60))
        try expect(dropped >= 1, "compaction through A's view drops B's deletion")
        _ = try await StoreConformance.expectError(.anchorExpired) {
            try await b.changes(since: beforeDeletion, matching: .all, limit: 10)
        }

        // Old ended jobs are deleted for everyone, through any view.
        if let jobs = store as? any JobStore, let ja = a as? any JobStore, let jb = b as? any JobStore,
            let mineJob = mine.job, let theirsJob = theirs.job
        {
            let running = StoredJob(id: UUID(), state: .running, document: "{}", created: t0, updated: t0)
            _ = try await ja.saveJob(running)
            let deleted = try await jobs.deleteJobs(endedBefore: t0.addingTimeInterval(100))
            try expect(deleted == 2, "A's and B's ended jobs are deleted through the default view: \(deleted)")
            try expect(try await ja.job(id: mineJob) == nil, "A's ended job is gone")
            try expect(try await jb.job(id: theirsJob) == nil, "B's ended job is gone")
            try expect(try await ja.job(id: running.id) != nil, "A's running job stays")
        }
    }

    /// Tokens carry their person: `tokens()` lists every token, `tokens(of:)` a person's (`nil`: the admin tokens),
    /// oldest first, whichever view saves or reads them.
    public static func tokensOfPeople<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        func token(_ name: String, _ person: PersonID?, _ second: Double, _ scopes: Set<APIScope> = [.read, .write])
            -> APIToken
        {
            APIToken(
                id: UUID(), name: name, person: person, source: phone, scopes: scopes,
                secretHash: String(repeating: "cd", count: 32), created: t0.addingTimeInterval(second))
        }
        let admin = token("admin", nil, 0, [.admin])
        let a1 = token("a1", a.person, 1)
        let b1 = token("b1", b.person, 2)
        let a2 = token("a2", a.person, 3)
        let d1 = token("d1", .default, 4)
        try await store.saveToken(admin)
        try await a.saveToken(a1)
        try await b.saveToken(b1)
        try await b.saveToken(a2)  // a token's person is its own, not the view's
        try await store.saveToken(d1)
        let all = try await store.tokens().map(\.id)
        try expect(all == [admin.id, a1.id, b1.id, a2.id, d1.id], "every token, oldest first")
        let fromB = try await b.tokens().map(\.id)
        try expect(fromB == all, "the same list through B's view")
        let ofA = try await store.tokens(of: a.person)
        try expect(ofA == [a1, a2], "A's tokens, oldest first, as saved (with their person)")
        let ofB = try await a.tokens(of: b.person)
        try expect(ofB == [b1], "B's tokens, through A's view")
        let admins = try await store.tokens(of: nil)
        try expect(admins == [admin], "the admin tokens, with no person")
        let ofDefault = try await store.tokens(of: .default)
        try expect(ofDefault.map(\.id) == [d1.id], "the default person's tokens")
        let ofNobody = try await store.tokens(of: PersonID(UUID()))
        try expect(ofNobody.isEmpty, "an unknown person has none")
        let readBack = try await a.token(id: a2.id)
        try expect(readBack?.person == a.person, "a token reads back with its person")
        let adminBack = try await b.token(id: admin.id)
        try expect(adminBack == admin && adminBack?.person == nil, "an admin token reads back without a person")
        try expect(try await a.revokeToken(id: a1.id, at: t0.addingTimeInterval(10)), "a token is revoked")
        let revoked = try await store.tokens(of: a.person)
        try expect(revoked.map(\.id) == [a1.id, a2.id], "a revoked token is still listed")
    }

    /// People: the default person exists from the start and comes first, then oldest first; an id or subject taken
    /// is refused (naming it); a subject is per issuer; every view sees every person.
    public static func peopleRecords<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let initial = try await store.people()
        try expect(initial.map(\.id) == [.default] && initial.first?.name == "default", "a new store has the default")
        let fromStore = try await store.person(id: .default)
        try expect(fromStore?.name == "default", "the default person reads back")
        let subject = ExternalSubject(issuer: issuer, subject: "user-1")
        let older = Person(name: "Older", subject: subject, created: t0)
        let newer = Person(name: "Newer", created: t0.addingTimeInterval(10))
        try await store.addPerson(newer)
        try await store.addPerson(older)
        let listed = try await store.people().map(\.id)
        try expect(listed == [.default, older.id, newer.id], "the default person first, then oldest first")
        let readOlder = try await store.person(id: older.id)
        try expect(readOlder == older, "a person reads back as added: \(String(describing: readOlder))")
        let bySubject = try await store.person(subject: subject)
        try expect(bySubject == older, "a person is found by their subject")
        let otherSubject = try await store.person(subject: ExternalSubject(issuer: issuer, subject: "user-2"))
        try expect(otherSubject == nil, "an unknown subject finds no one")
        let elsewhereSubject = ExternalSubject(issuer: "https://other.example", subject: "user-1")
        let otherIssuer = try await store.person(subject: elsewhereSubject)
        try expect(otherIssuer == nil, "a subject is per issuer")
        let unknown = try await store.person(id: PersonID(UUID()))
        try expect(unknown == nil, "an unknown id finds no one")

        let takenID = try await StoreConformance.expectError(.invalidArgument) {
            try await store.addPerson(Person(id: newer.id, name: "Again", created: t0.addingTimeInterval(20)))
        }
        try expect(
            takenID.message.lowercased().contains(newer.id.description), "the refusal names the id: \(takenID)")
        let takenSubject = try await StoreConformance.expectError(.invalidArgument) {
            try await store.addPerson(Person(name: "Twin", subject: subject, created: t0.addingTimeInterval(30)))
        }
        try expect(takenSubject.message.contains("user-1"), "the refusal names the subject: \(takenSubject)")
        _ = try await StoreConformance.expectError(.invalidArgument) {
            try await store.addPerson(Person(id: .default, name: "Again"))
        }
        let elsewhere = Person(name: "Elsewhere", subject: elsewhereSubject, created: t0.addingTimeInterval(40))
        try await store.addPerson(elsewhere)
        let all = try await store.people().map(\.id)
        try expect(all == [.default, older.id, newer.id, elsewhere.id], "refused additions added no one: \(all)")
        let view = store.forPerson(newer.id)
        let fromView = try await view.people().map(\.id)
        try expect(fromView == all, "a person's view lists everyone")
        let named = try await view.person(id: older.id)
        try expect(named == older, "and reads anyone")
    }

    /// The people with pending builders: each once, whoever's view asks; a person's view sweeps only their own
    /// abandoned builders.
    public static func pendingBuilderPeople<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let a1 = try await RouteBuilder(store: a, source: phone)
        try await a1.insert(StoreConformance.locations(count: 5))
        let a2 = try await RouteBuilder(store: a, source: phone)
        try await a2.insert(StoreConformance.locations(count: 5))
        let d1 = try await RouteBuilder(store: store, source: phone)
        try await d1.insert(StoreConformance.locations(count: 5))
        let wb = try await StoreConformance.saved(b, phone)
        _ = try await StoreConformance.build(b, wb, [StoreConformance.locations(count: 5)])
        let later = Date().addingTimeInterval(60)
        let found = try await b.peopleWithPendingBuilders(updatedBefore: later)
        try expect(
            found.count == 2 && Set(found) == [a.person, .default],
            "A and the default person, each once, not B: \(found)")
        let none = try await store.peopleWithPendingBuilders(updatedBefore: Date(timeIntervalSince1970: 0))
        try expect(none.isEmpty, "no one's builders were updated before 1970")
        let listedA = Set(try await a.pendingBuilders().map(\.id))
        try expect(listedA == [a1.id, a2.id], "A's view lists A's builders")
        let listedB = try await b.pendingBuilders()
        try expect(listedB.isEmpty, "B's view lists none")
        let swept = try await a.discardPendingBuilders(updatedBefore: later)
        try expect(Set(swept.map(\.id)) == [a1.id, a2.id], "A's sweep discards A's builders")
        let left = try await store.pendingBuilders().map(\.id)
        try expect(left == [d1.id], "and only those: the default person's stays")
        let after = try await store.peopleWithPendingBuilders(updatedBefore: later)
        try expect(after == [.default], "A no longer has pending builders")
    }

    /// Erasing a person: nothing of theirs is readable afterwards (every read answers as for a missing object, their
    /// lists and feed are empty, their old anchor is refused), their tokens are gone, B is untouched; erasing again
    /// or an unknown person is `false`; erasing the default person is refused.
    public static func erasure<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let ours = try await populate(store)
        let mine = try await populate(a)
        let theirs = try await populate(b)
        let admin = APIToken(
            id: UUID(), name: "admin", person: nil, source: phone, scopes: [.admin],
            secretHash: String(repeating: "ef", count: 32), created: t0)
        try await store.saveToken(admin)
        let beforeB = try await snapshot(b, theirs)
        let beforeDefault = try await snapshot(store, ours)
        let anchorA = try await a.currentAnchor()
        let anchorB = try await b.currentAnchor()

        try expect(try await store.erasePerson(id: a.person), "erasing a person says they existed")

        let gone = try await store.person(id: a.person)
        try expect(gone == nil, "the person is gone")
        let people = try await store.people().map(\.id)
        try expect(people == [.default, b.person], "and no longer listed: \(people)")
        let bySubject = try await store.person(subject: ExternalSubject(issuer: issuer, subject: "a"))
        try expect(bySubject == nil, "nor found by their subject")

        try await readsAsMissing(a, mine)
        let workouts = try await a.workouts(matching: WorkoutFilter())
        let routes = try await a.routes(matching: RouteFilter())
        let builders = try await a.pendingBuilders()
        try expect(workouts.isEmpty && routes.isEmpty && builders.isEmpty, "A's view lists nothing")
        let zones = try await a.privacyZones(of: phone)
        let settings = try await a.zoneSettings(of: phone)
        let raw = try await a.rawRoute(source: phone, syncIdentifier: "r")
        try expect(zones.isEmpty && settings.isEmpty && raw == nil, "A's privacy zones and zone settings are gone")
        let feed = try await FeedConformance.drain(a, from: nil, FeedConformance.everything)
        try expect(feed.sets.allSatisfy { $0.count == 0 }, "A's feed is empty")
        do {
            let old = try await a.changes(since: anchorA, matching: FeedConformance.everything, limit: 10)
            try expect(false, "A's old anchor is refused, not answered (\(old.count) changes)")
        } catch let error as RouteKitError {
            try expect(error.code == .anchorExpired, "A's old anchor has expired with A: \(error)")
        }

        let tokensA = try await store.tokens(of: a.person)
        try expect(tokensA.isEmpty, "A's tokens are gone")
        let tokenA = try await store.token(id: mine.token)
        try expect(tokenA == nil, "A's token reads as unknown")
        let tokens = Set(try await store.tokens().map(\.id))
        try expect(tokens == [ours.token, theirs.token, admin.id], "the other tokens stay")
        let pending = try await store.peopleWithPendingBuilders(updatedBefore: Date().addingTimeInterval(60))
        try expect(!pending.contains(a.person), "A has no pending builder left")

        let afterB = try await snapshot(b, theirs)
        let changedB = afterB.differences(from: beforeB)
        try expect(changedB.isEmpty, "B's objects changed with A's erasure: \(changedB)")
        let nowB = try await b.currentAnchor()
        try expect(nowB == anchorB, "B's anchor is as it was")

        try expect(!(try await store.erasePerson(id: a.person)), "erasing A again is false")
        try expect(!(try await b.erasePerson(id: PersonID(UUID()))), "erasing an unknown person is false")
        let refused = try await StoreConformance.expectError(.invalidArgument) {
            try await store.erasePerson(id: .default)
        }
        try expect(!refused.message.isEmpty, "the refusal says why")
        let stillDefault = try await store.person(id: .default)
        try expect(stillDefault != nil, "the default person stays")
        let afterDefault = try await snapshot(store, ours)
        let changedDefault = afterDefault.differences(from: beforeDefault)
        try expect(changedDefault.isEmpty, "the default person's objects changed: \(changedDefault)")
    }

    /// The default person sees what the store as opened (`forPerson` not used) wrote, and the store as opened sees
    /// what the default person's view writes; another person's view sees none of it.
    public static func defaultPersonSeesEarlierWrites<S: RouteStore & PeopleStore & TokenStore>(_ store: S)
        async throws
    {
        try expect(store.person == .default, "a store as opened is the default person's")
        let w = try await StoreConformance.saved(store, phone)
        let r = try await FeedConformance.route(store, w, "d", 1)
        let token = APIToken(
            id: UUID(), name: "d", source: phone, scopes: [.read], secretHash: String(repeating: "ab", count: 32),
            created: t0)
        try await store.saveToken(token)
        let anchor = try await store.currentAnchor()

        let view = store.forPerson(.default)
        try expect(view.person == .default, "the default person's view is theirs")
        let workout = try await view.workout(id: w.id)
        try expect(workout == w, "the default person reads the workout written before")
        let routes = try await view.routes(matching: RouteFilter()).map(\.id)
        try expect(routes == [r.route.id], "and lists the route")
        let points = try await StoreConformance.readAll(view, r.route.id)
        try expect(points.count == r.route.locationCount, "and reads its locations")
        let viewAnchor = try await view.currentAnchor()
        try expect(viewAnchor == anchor, "with the same current anchor")
        let feed = try await FeedConformance.drain(view, from: nil)
        try expect(feed.sets.flatMap(\.added).map(\.id) == [r.route.id], "and the same feed")
        let tokens = try await view.tokens(of: .default)
        try expect(tokens.map(\.id) == [token.id], "a token made without a person is the default person's")

        let a = Person(name: "A", created: t0)
        try await store.addPerson(a)
        let other = store.forPerson(a.id)
        try expect(other.person == a.id, "a person's view is theirs")
        let none = try await other.workouts(matching: WorkoutFilter())
        try expect(none.isEmpty, "another person sees none of it")
        let back = other.forPerson(.default)
        let again = try await back.workout(id: w.id)
        try expect(again == w, "a view made from another person's view sees the default person's again")

        let w2 = try await StoreConformance.saved(view, phone)
        let seen = try await store.workout(id: w2.id)
        try expect(seen == w2, "the store as opened reads what the default person's view wrote")
        let moved = try await store.currentAnchor()
        let viewMoved = try await view.currentAnchor()
        try expect(moved == viewMoved && moved != anchor, "and they share one feed")
    }

    /// Each person's storage (`storageUsed(by:)`): 0 for a new person and for an unknown one; it grows with what A
    /// stores (a pending builder's batch, then a workout with a route and a series) while B's stays as it was; deleting
    /// A's workout takes A back to the builder's bytes exactly; erasing A takes A to 0, and B's stays.
    public static func storagePerPerson<S: RouteStore & PeopleStore & TokenStore>(_ store: S) async throws {
        let (a, b) = try await twoPeople(store)
        let fresh = try await store.storageUsed(by: a.person)
        try expect(fresh == 0, "a new person stores nothing, not \(fresh) bytes")
        let unknown = try await store.storageUsed(by: PersonID(UUID()))
        try expect(unknown == 0, "an unknown person stores nothing, not \(unknown) bytes")
        _ = try await populate(b)
        let usedB = try await store.storageUsed(by: b.person)
        try expect(usedB > 0, "B's objects take bytes")

        let pending = try await RouteBuilder(store: a, source: phone, order: .insertion)
        try await pending.insert(StoreConformance.locations(count: 200, start: 1_700_100_000))
        let builderOnly = try await a.storageUsed(by: a.person)
        try expect(builderOnly > 0, "a pending builder's batch counts")
        let w = try await StoreConformance.saved(a, phone)
        _ = try await StoreConformance.build(a, w, [StoreConformance.locations(count: 500)])
        try await a.saveSeries(
            QuantitySeries(type: .heartRate, samples: beats(500, from: 1_700_000_000)), workout: w.id, as: phone)
        let withWorkout = try await store.storageUsed(by: a.person)
        try expect(
            withWorkout > builderOnly + 500,
            "a workout with 500 locations and 500 samples adds more than 500 bytes: \(builderOnly) → \(withWorkout)")
        let stillB = try await a.storageUsed(by: b.person)
        try expect(stillB == usedB, "B's storage does not move with A's writes: \(usedB) → \(stillB)")

        try await a.deleteWorkout(id: w.id, as: phone)
        let afterDelete = try await store.storageUsed(by: a.person)
        try expect(
            afterDelete == builderOnly,
            "deleting A's workout frees what it took: \(afterDelete) bytes left, the builder alone took \(builderOnly)")

        try expect(try await store.erasePerson(id: a.person), "A is erased")
        let erased = try await store.storageUsed(by: a.person)
        try expect(erased == 0, "an erased person stores nothing, not \(erased) bytes")
        let lastB = try await store.storageUsed(by: b.person)
        try expect(lastB == usedB, "B's storage does not move with A's erasure: \(usedB) → \(lastB)")
    }

    // MARK: A crowded store

    /// A view of a new person of `store` (a fresh, empty store) in which another person already has objects of every
    /// kind, written with the sources and sync identifiers ``StoreConformance/checks`` use: running those checks on
    /// the view proves that nothing of the other person's shows in any of them (a list, a count, a feed, a sync
    /// decision).
    public static func crowdedView<S: RouteStore & PeopleStore & TokenStore>(of store: S) async throws -> S {
        let crowd = Person(name: "crowd", created: t0)
        let person = Person(name: "checked", created: t0.addingTimeInterval(1))
        try await store.addPerson(crowd)
        try await store.addPerson(person)
        let view = store.forPerson(crowd.id)
        for source in [StoreConformance.alice, StoreConformance.bob] { _ = try await populate(view, source: source) }
        return store.forPerson(person.id)
    }
}
