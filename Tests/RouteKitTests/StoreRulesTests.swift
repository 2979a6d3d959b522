import Foundation
@_spi(RouteKitBackend) import RouteKit
import Testing

/// The rules every backend applies (the conformance suite checks the backends apply them; these check the rules).
@Suite("Store rules")
struct StoreRulesTests {
    let new = UUID()
    let old = UUID()

    @Test("a sync identity's save: inserted when free, replaced by a higher version, stale at the same or lower")
    func saveOutcome() {
        #expect(StoreRules.saveOutcome(saving: new, version: 1, current: nil) == .inserted(new))
        #expect(
            StoreRules.saveOutcome(saving: new, version: 3, current: (old, 2))
                == .replaced(new, previous: old, previousVersion: 2))
        #expect(StoreRules.saveOutcome(saving: new, version: 2, current: (old, 2)) == .stale(current: old, currentVersion: 2))
        #expect(StoreRules.saveOutcome(saving: new, version: 1, current: (old, 2)) == .stale(current: old, currentVersion: 2))
    }

    @Test("provenance: a derived version keeps the raw one it replaces; a new raw version drops what was kept")
    func provenance() throws {
        let workout = UUID()
        let raw = RouteSample(
            workoutID: workout, source: try Source(name: "watch"), sync: SyncIdentity(identifier: "r", version: 1),
            start: nil, end: nil, locationCount: 0)
        var derived = raw
        derived.metadata[MetadataKey.derivedFrom] = .string(UUID().uuidString)
        #expect(StoreRules.keepsReplaced(replacedWasRaw: true, replacement: derived))
        #expect(!StoreRules.keepsReplaced(replacedWasRaw: false, replacement: derived))
        #expect(!StoreRules.keepsReplaced(replacedWasRaw: true, replacement: raw))
        #expect(StoreRules.dropsKeptProvenance(replacement: raw))
        #expect(!StoreRules.dropsKeptProvenance(replacement: derived))
    }

    @Test("ownership: another source is refused with notOwner, naming both sources")
    func ownership() throws {
        let alice = try Source(name: "alice")
        try StoreRules.checkOwner("alice", of: "workout X", is: alice)
        #expect {
            try StoreRules.checkOwner("bob", of: "workout X", is: alice)
        } throws: { error in
            (error as? RouteKitError)?.code == .notOwner && "\(error)".contains("'bob'") && "\(error)".contains("'alice'")
        }
    }

    @Test("the next anchor: the head when nothing more is owed, else the set's end, keeping a first read's horizon")
    func nextAnchor() {
        #expect(StoreRules.nextAnchor(hasMore: false, end: 5, horizon: 9) == .head)
        #expect(
            StoreRules.nextAnchor(hasMore: true, end: 5, horizon: 9) == .at(position: 5, horizon: 9, tokenPosition: 9))
        #expect(
            StoreRules.nextAnchor(hasMore: true, end: 12, horizon: 9) == .at(position: 12, horizon: 0, tokenPosition: 12))
    }

    @Test("a change set: deletions before additions, additions in log order, a missing route a storage error")
    func assembly() throws {
        let d = DeletedRoute(id: old, source: try Source(name: "a"), workoutID: UUID(), sync: SyncIdentity(identifier: "s", version: 1))
        let deletion = FeedRecord(
            type: .route, key: old.lowercaseText, workout: d.workoutID.lowercaseText, source: "a", syncIdentifier: "s",
            version: 1)
        let workout = UUID()
        let effort = FeedRecord.effort(id: UUID(), workout: workout, source: "a")
        func route(_ key: String) -> FeedRecord { FeedRecord(type: .route, key: key, workout: "w", source: "a") }
        let split = try StoreRules.split([
            (true, route("x")), (false, deletion), (true, effort), (true, route("y")),
            (false, FeedRecord.workout(Workout(id: workout, activityType: .running, start: nil, end: nil, source: try Source(name: "a")))),
        ])
        #expect(split.deletedRoutes == [d])
        #expect(split.addedRouteIDs == ["x", "y"])
        #expect(split.addedObjects == [effort])
        #expect(split.deletedObjects.map(\.key) == [ChangeObjectKey(type: .workout, id: workout, quantityType: nil)])
        let route = RouteSample(
            workoutID: UUID(), source: try Source(name: "a"), sync: SyncIdentity(identifier: "s", version: 2), start: nil,
            end: nil, locationCount: 0)
        #expect(try StoreRules.addedRoutes(["x"], found: ["x": route]) == [route])
        #expect {
            try StoreRules.addedRoutes(["x", "y"], found: ["x": route])
        } throws: { error in (error as? RouteKitError)?.code == .storage }
    }

    // MARK: Plans: what each write decides, before any backend carries it out

    /// A write as a short label, to compare plans.
    static func label(_ write: StoreWrite) -> String {
        switch write {
        case .logDeletion(let row): return "log-deletion \(row.syncIdentifier)@\(row.version)"
        case .keepAsProvenance: return "keep"
        case .deleteRoute: return "delete-route"
        case .deleteKeptVersions(_, let id): return "delete-kept \(id)"
        case .deleteIdentity(_, let id): return "delete-identity \(id)"
        case .dropContainerIfUnused: return "drop-container"
        case .insertChunks(let chunks, _): return "chunks \(chunks.map(\.sequence))"
        case .renumberLocations(_, let order): return "renumber \(order)"
        case .insertRoute(_, _, let raw, _): return raw ? "insert-raw" : "insert-derived"
        case .attachSeries(_, _, let kinds, _): return "series \(kinds)"
        case .attachStoredSeries: return "stored-series"
        case .addStoredEvents: return "stored-events"
        case .deleteBuilder: return "delete-builder"
        case .deleteContainer: return "delete-container"
        case .releaseClaim: return "release"
        case .deleteWorkoutRows: return "delete-workout"
        case .insertWorkout: return "insert-workout"
        }
    }

    func route(version: Int64, derived: Bool = false, source: String = "watch") throws -> RouteSample {
        var r = RouteSample(
            workoutID: old, source: try Source(name: source), sync: SyncIdentity(identifier: "r", version: version),
            start: nil, end: nil, locationCount: 0)
        if derived { r.metadata[MetadataKey.derivedFrom] = .string(UUID().uuidString) }
        return r
    }

    func stored(version: Int64, raw: Bool) -> StoredRouteRow {
        StoredRouteRow(
            id: UUID(), workoutID: old, source: "watch", syncIdentifier: "r", version: version, startSeconds: nil,
            endSeconds: nil, raw: raw, container: "c")
    }

    @Test("replacing: nothing written when new or stale; a raw version kept under a derived one, else deleted")
    func replacePlans() throws {
        #expect(StoreRules.replace(nil, with: try route(version: 1)).writes.isEmpty)
        let stale = StoreRules.replace(stored(version: 2, raw: true), with: try route(version: 2))
        #expect(stale.outcome.isStale && stale.writes.isEmpty)
        let derived = StoreRules.replace(stored(version: 1, raw: true), with: try route(version: 2, derived: true))
        #expect(derived.writes.map(Self.label) == ["log-deletion r@1", "keep"])
        let raw = StoreRules.replace(stored(version: 2, raw: false), with: try route(version: 3))
        #expect(raw.writes.map(Self.label) == ["log-deletion r@2", "delete-route", "drop-container", "delete-kept r"])
    }

    @Test("finishing a builder: errors in order (pending, owner, claim, workout); stale discards; order renumbers")
    func finishPlans() throws {
        let claim = UUID()
        let builder = StoredBuilderRow(source: "watch", claim: claim.lowercaseText)
        let r = try route(version: 2)
        func finish(
            _ b: StoredBuilderRow?, claim c: UUID? = nil, workout: String? = "watch", current: StoredRouteRow? = nil,
            order: [Int]? = nil, route: RouteSample? = nil
        ) throws(RouteKitError) -> WritePlan {
            try StoreRules.finishBuilder(
                new, claim: c ?? claim, route: route ?? r, body: "{}", sequenceOrder: order, builder: b,
                workoutSource: workout, current: current)
        }
        func code(_ body: () throws(RouteKitError) -> WritePlan) -> RouteKitError.Code? {
            do {
                _ = try body()
                return nil
            } catch { return error.code }
        }
        #expect(code { () throws(RouteKitError) in try finish(nil, workout: nil) } == .notFound)
        #expect(code { () throws(RouteKitError) in try finish(StoredBuilderRow(source: "phone", claim: builder.claim)) } == .notOwner)
        #expect(code { () throws(RouteKitError) in try finish(builder, claim: UUID(), workout: nil) } == .builderState)
        #expect(code { () throws(RouteKitError) in try finish(builder, workout: nil) } == .notFound)
        #expect(code { () throws(RouteKitError) in try finish(builder, workout: "phone") } == .notOwner)
        let stale = try finish(builder, current: stored(version: 5, raw: true))
        #expect(stale.outcome.isStale)
        #expect(stale.writes.map(Self.label) == ["delete-builder", "delete-container"])
        #expect(
            try finish(builder, order: [0, 2, 1]).writes.map(Self.label)
                == ["renumber [0, 2, 1]", "insert-raw", "stored-series", "stored-events", "delete-builder"])
        #expect(
            try finish(builder, current: stored(version: 1, raw: true), order: [0, 1], route: route(version: 2, derived: true))
                .writes.map(Self.label) == [
                    "log-deletion r@1", "keep", "insert-derived", "stored-series", "stored-events", "delete-builder",
                ])
    }

    @Test("finishing into a new workout: inserted first in the same plan; not when stale; refused when taken meanwhile")
    func finishCreatingPlans() throws {
        let claim = UUID()
        let builder = StoredBuilderRow(source: "watch", claim: claim.lowercaseText)
        let r = try route(version: 1)
        let workout = Workout(id: old, activityType: .running, start: nil, end: nil, source: try Source(name: "watch"))
        func finish(
            taken: Bool = false, current: (id: UUID, version: Int64)? = nil, routeCurrent: StoredRouteRow? = nil,
            workout w: Workout? = nil, claim c: UUID? = nil
        ) throws(RouteKitError) -> WritePlan {
            try StoreRules.finishBuilder(
                new, claim: c ?? claim, route: r, body: "{}", sequenceOrder: nil, builder: builder,
                workoutSource: nil, current: routeCurrent,
                creating: NewWorkoutRow(workout: w ?? workout, body: "{}", uuidTaken: taken, current: current))
        }
        #expect(
            try finish().writes.map(Self.label) == [
                "insert-workout", "insert-raw", "stored-series", "stored-events", "delete-builder",
            ])
        // A stale route saves no workout either.
        #expect(
            try finish(routeCurrent: stored(version: 3, raw: true)).writes.map(Self.label) == [
                "delete-builder", "delete-container",
            ])
        func code(_ body: () throws(RouteKitError) -> WritePlan) -> RouteKitError.Code? {
            do {
                _ = try body()
                return nil
            } catch { return error.code }
        }
        #expect(code { () throws(RouteKitError) in try finish(taken: true) } == .builderState)
        #expect(code { () throws(RouteKitError) in try finish(current: (UUID(), 1)) } == .builderState)
        #expect(code { () throws(RouteKitError) in try finish(claim: UUID()) } == .builderState)
        let other = Workout(activityType: .running, start: nil, end: nil, source: try Source(name: "watch"))
        #expect(code { () throws(RouteKitError) in try finish(workout: other) } == .invalidArgument)
        let phone = Workout(id: old, activityType: .running, start: nil, end: nil, source: try Source(name: "phone"))
        #expect(code { () throws(RouteKitError) in try finish(workout: phone) } == .notOwner)
    }

    @Test("saving a whole route: its chunks, row and series unless stale; the claim given up either way")
    func saveRoutePlans() throws {
        let chunks = [
            StoredChunk(kind: .locations, sequence: 0, count: 1, minTime: nil, maxTime: nil, bytes: []),
            StoredChunk(kind: .quantity(.heartRate), sequence: 0, count: 1, minTime: nil, maxTime: nil, bytes: []),
        ]
        let claim = WorkClaim(key: "k", holder: new)
        let saved = try StoreRules.saveRoute(
            try route(version: 1), chunks: chunks, body: "{}", releasing: claim, workoutSource: "watch", current: nil)
        #expect(!saved.outcome.isStale)
        #expect(saved.writes.map(Self.label) == ["chunks [0, 0]", "insert-raw", "series [\"heartRate\"]", "release"])
        let stale = try StoreRules.saveRoute(
            try route(version: 1), chunks: chunks, body: "{}", releasing: claim, workoutSource: "watch",
            current: stored(version: 1, raw: true))
        #expect(stale.writes.map(Self.label) == ["release"])
        #expect(throws: RouteKitError.self) {
            try StoreRules.saveRoute(
                try route(version: 1), chunks: [], body: "{}", releasing: nil, workoutSource: nil, current: nil)
        }
    }

    @Test("deleting and discarding: not found, not the owner's, or the writes that log and delete")
    func deletionPlans() throws {
        let watch = try Source(name: "watch")
        let phone = try Source(name: "phone")
        let current = stored(version: 3, raw: true)
        #expect(
            try StoreRules.deleteRoute(current.id, as: watch, current: current).map(Self.label)
                == ["log-deletion r@3", "delete-identity r"])
        #expect(throws: RouteKitError.self) { try StoreRules.deleteRoute(new, as: watch, current: nil) }
        #expect(throws: RouteKitError.self) { try StoreRules.deleteRoute(current.id, as: phone, current: current) }
        #expect(
            try StoreRules.deleteWorkout(old, as: watch, owner: "watch", currentRoutes: [current]).map(Self.label)
                == ["log-deletion r@3", "delete-workout"])
        #expect(throws: RouteKitError.self) {
            try StoreRules.deleteWorkout(old, as: phone, owner: "watch", currentRoutes: [])
        }
        #expect(try StoreRules.discardBuilder(new, as: watch, owner: "watch").map(Self.label) == ["delete-builder", "delete-container"])
        #expect(throws: RouteKitError.self) { try StoreRules.discardBuilder(new, as: watch, owner: nil) }
        let series = try StoreRules.appendSeries(
            [
                StoredChunk(kind: .quantity(.heartRate), sequence: 0, count: 1, minTime: nil, maxTime: nil, bytes: []),
                StoredChunk(kind: .quantity(.heartRate), sequence: 0, count: 1, minTime: nil, maxTime: nil, bytes: []),
            ], toWorkout: old, as: watch, owner: "watch", nextSequence: 7)
        #expect(series.map(Self.label) == ["chunks [7, 8]", "series [\"heartRate\"]"])
    }

    @Test("saving a workout: a taken uuid refused; stale when not newer; a newer version replaces the old with its routes")
    func saveWorkoutPlans() throws {
        let workout = Workout(
            id: new, activityType: .other, start: nil, end: nil, source: try Source(name: "watch"),
            sync: SyncIdentity(identifier: "w", version: 2))
        #expect(throws: RouteKitError.self) {
            try StoreRules.saveWorkout(workout, body: "{}", uuidTaken: true, current: nil, currentRoutes: [])
        }
        #expect(
            try StoreRules.saveWorkout(workout, body: "{}", uuidTaken: false, current: nil, currentRoutes: []).writes.map(
                Self.label) == ["insert-workout"])
        #expect(
            try StoreRules.saveWorkout(workout, body: "{}", uuidTaken: false, current: (old, 2), currentRoutes: []).writes
                .isEmpty)
        #expect(
            try StoreRules.saveWorkout(
                workout, body: "{}", uuidTaken: false, current: (old, 1), currentRoutes: [stored(version: 4, raw: true)]
            ).writes.map(Self.label) == ["log-deletion r@4", "delete-workout", "insert-workout"])
    }

    @Test("a timed read needs the chunks whose whole seconds meet the interval's, never one without times")
    func chunkChoice() {
        func chunk(_ lo: Double?, _ hi: Double?) -> StoredChunk {
            func instant(_ t: Double?) -> Instant? {
                t.map { Instant(seconds: Int64($0.rounded(.down)), nanoseconds: Int32(($0 - $0.rounded(.down)) * 1e9)) }
            }
            return StoredChunk(kind: .locations, sequence: 0, count: 1, minTime: instant(lo), maxTime: instant(hi), bytes: [])
        }
        let interval = Instant(seconds: 10, nanoseconds: 500_000_000)...Instant(seconds: 20, nanoseconds: 0)
        #expect(StoreRules.readNeeds(chunk(nil, nil), interval: nil))
        #expect(!StoreRules.readNeeds(chunk(nil, nil), interval: interval))
        #expect(StoreRules.readNeeds(chunk(10.2, 10.4), interval: interval))  // the same second: widened, filtered later
        #expect(StoreRules.readNeeds(chunk(19, 25), interval: interval))
        #expect(!StoreRules.readNeeds(chunk(5, 9.9), interval: interval))
        #expect(!StoreRules.readNeeds(chunk(21, 30), interval: interval))
        let window = StoreRules.chunkSeconds(of: interval)
        #expect(window.from == 10 && window.through == 20)
    }
}

@Suite("RouteBuilder: runs for the merge on finish")
struct SortedRunsTests {
    /// The first-fit grouping as it was written first: a scan of every run per chunk.
    static func naive(_ chunks: [StoredChunk]) -> [[Int]] {
        let sorted = chunks.sorted {
            let a = $0.minTime ?? Instant(seconds: .min)
            let b = $1.minTime ?? Instant(seconds: .min)
            return a < b || (a == b && $0.sequence < $1.sequence)
        }
        var runs: [[Int]] = []
        var lastTimes: [Instant] = []
        for c in sorted {
            let lo = c.minTime ?? Instant(seconds: .min)
            let hi = c.maxTime ?? lo
            if let r = lastTimes.firstIndex(where: { $0 <= lo }) {
                runs[r].append(c.sequence)
                lastTimes[r] = hi
            } else {
                runs.append([c.sequence])
                lastTimes.append(hi)
            }
        }
        return runs
    }

    static func chunk(_ sequence: Int, _ lo: Int64?, _ hi: Int64?) -> StoredChunk {
        StoredChunk(
            kind: .locations, sequence: sequence, count: 1, minTime: lo.map { Instant(seconds: $0) },
            maxTime: hi.map { Instant(seconds: $0) }, bytes: [])
    }

    @Test("the tree of minimums groups chunks exactly as a scan of every run does (random overlapping chunks)")
    func sameAsScan() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let n = Int.random(in: 0...60, using: &rng)
            let chunks = (0..<n).map { i -> StoredChunk in
                if Int.random(in: 0..<10, using: &rng) == 0 { return Self.chunk(i, nil, nil) }
                let lo = Int64.random(in: 0...100, using: &rng)
                return Self.chunk(i, lo, lo + Int64.random(in: 0...30, using: &rng))
            }
            #expect(RouteBuilder.sortedRuns(chunks) == Self.naive(chunks))
        }
    }

    @Test("50,000 overlapping chunks make 50,000 runs (quadratic with a scan); 50,000 that follow in time, one")
    func reversed() {
        let n = 50_000
        let chunks = (0..<n).map { i in Self.chunk(i, Int64(2 * (n - i)), Int64(2 * (n - i) + 1)) }
        let runs = RouteBuilder.sortedRuns(chunks)
        #expect(runs.count == 1)
        #expect(runs.first?.count == n)
        let overlapping = (0..<n).map { i in Self.chunk(i, Int64(n - i), Int64(2 * n)) }
        #expect(RouteBuilder.sortedRuns(overlapping).count == n)
    }
}
