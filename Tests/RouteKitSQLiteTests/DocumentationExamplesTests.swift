import Foundation
import RouteKit
import RouteKitSQLite
import RouteKitTesting
import Testing

/// The examples of the DocC articles (Sources/*/Documentation.docc), run against a SQLite store. Each
/// `// snippet.NAME` … `// snippet.end` region is, once de-indented, a ```swift block of an article, character for
/// character: scripts/docs.sh (`make docs`) checks it.
@Suite("Documentation examples (RouteKit and RouteKitSQLite articles)")
struct DocumentationExamplesTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("rk-docs-\(UUID().uuidString).sqlite").path
    }

    /// What a consumer of the change feed keeps: the current routes by uuid.
    final class RouteIndex: @unchecked Sendable {
        private let lock = NSLock()
        private var routes: [UUID: RouteSample] = [:]
        func remove(_ id: UUID) { lock.withLock { _ = routes.removeValue(forKey: id) } }
        func put(_ route: RouteSample) { lock.withLock { routes[route.id] = route } }
        func removeAll() { lock.withLock { routes.removeAll() } }
        var ids: Set<UUID> { lock.withLock { Set(routes.keys) } }
    }

    /// Where a consumer keeps its anchor.
    final class AnchorBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: ChangeAnchor?
        var value: ChangeAnchor? {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    static func addRoute(_ store: SQLiteStore, _ id: String, _ version: Int64, source: Source) async throws
        -> RouteSample
    {
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let builder = try await RouteBuilder(store: store, source: source)
        try await builder.insert(StoreConformance.locations(count: 3))
        return try await builder.finish(workout: workout, metadata: StoreConformance.sync(id, version)).route
    }

    @Test("Identity and versions: inserted, stale, a derived version replaces the raw one, which is kept")
    func identityAndVersions() async throws {
        let store = try SQLiteStore(path: Self.temporaryPath())
        let locations = StoreConformance.locations(count: 20)
        // snippet.identity-save
        let watch = try Source(name: "my-watch")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: watch)
        _ = try await store.saveWorkout(workout)  // the workout exists before its route
        let identity: [String: MetadataValue] = [
            MetadataKey.syncIdentifier: .string("morning-run"), MetadataKey.syncVersion: .integer(1),
        ]

        let builder = try await RouteBuilder(store: store, source: watch)
        try await builder.insert(locations)  // durable when it returns
        let first = try await builder.finish(workout: workout, metadata: identity)
        // first.outcome == .inserted(first.route.id)

        // Another writer with the same version loses the race: nothing is saved.
        let late = try await RouteBuilder(store: store, source: watch)
        try await late.insert(locations)
        let again = try await late.finish(workout: workout, metadata: identity)
        if case .stale(let current, let version) = again.outcome {
            print("kept \(current), version \(version)")
        }
        // snippet.end
        #expect(first.outcome == .inserted(first.route.id))
        #expect(again.outcome == .stale(current: first.route.id, currentVersion: 1))

        // snippet.identity-derived
        // A derived version replaces the raw one; the raw one is kept as provenance.
        let smoothed = try await RouteBuilder(store: store, source: watch)
        try await smoothed.insert(locations)
        let derived = try await smoothed.finish(
            workout: workout,
            metadata: [
                MetadataKey.syncIdentifier: .string("morning-run"), MetadataKey.syncVersion: .integer(2),
                MetadataKey.derivedFrom: .string("\(first.route.id.uuidString.lowercased())@1"),
            ])
        // derived.outcome == .replaced(derived.route.id, previous: first.route.id, previousVersion: 1)
        let raw = try await store.rawRoute(source: watch, syncIdentifier: "morning-run")
        let rawIsCurrent = try await store.isCurrent(route: first.route.id)
        print(raw?.id == first.route.id, rawIsCurrent)  // true false
        // snippet.end
        #expect(derived.outcome == .replaced(derived.route.id, previous: first.route.id, previousVersion: 1))
        #expect(raw?.id == first.route.id)
        #expect(!rawIsCurrent)
        #expect(try await store.route(id: first.route.id) != nil)
        #expect(try await store.routes(matching: RouteFilter(source: watch)).map(\.id) == [derived.route.id])
    }

    /// A consumer of the change feed: the articles' `store`, `index`, `loadAnchor()` and `saveAnchor(_:)`.
    struct Consumer: Sendable {
        let store: SQLiteStore
        let index = RouteIndex()
        let saved = AnchorBox()
        func loadAnchor() -> ChangeAnchor? { saved.value }
        func saveAnchor(_ anchor: ChangeAnchor?) { saved.value = anchor }

        func catchUp() async throws {
            // snippet.tailing
            var anchor: ChangeAnchor? = loadAnchor()
            while true {
                do {
                    let set = try await store.changes(since: anchor, matching: .all, limit: 1000)
                    for d in set.deleted { index.remove(d.id) }
                    for r in set.added { index.put(r) }
                    anchor = set.anchor
                    saveAnchor(anchor)  // with the changes, atomically
                    if !set.hasMore { break }
                } catch let error where error.code.isAnchorError {  // changes(since:) throws RouteKitError only
                    index.removeAll()
                    anchor = nil  // every current route again
                } catch {
                    throw error  // the store failed: try again later from the saved anchor
                }
            }
            // snippet.end
        }

        func follow() async throws {
            // snippet.live-updates
            for try await set in store.changeUpdates(since: loadAnchor()) {
                for d in set.deleted { index.remove(d.id) }
                for r in set.added { index.put(r) }
                saveAnchor(set.anchor)
            }
            // snippet.end
        }
    }

    @Test("The change feed: catching up (after a foreign anchor), then a replacement, then live updates")
    func tailing() async throws {
        let store = try SQLiteStore(path: Self.temporaryPath())
        let source = try Source(name: "feed")
        let routes = [
            try await Self.addRoute(store, "r0", 1, source: source), try await Self.addRoute(store, "r1", 1, source: source),
            try await Self.addRoute(store, "r2", 1, source: source),
        ]
        let consumer = Consumer(store: store)
        // An anchor of another store: the consumer starts again with no anchor.
        consumer.saveAnchor(ChangeAnchor(storeID: UUID(), epoch: 1, position: 5, token: 1))
        consumer.index.put(routes[0])
        try await consumer.catchUp()
        #expect(consumer.index.ids == Set(routes.map(\.id)))
        #expect(consumer.loadAnchor()?.storeID == store.storeID)

        let replacement = try await Self.addRoute(store, "r1", 2, source: source)
        try await consumer.catchUp()
        #expect(consumer.index.ids == [routes[0].id, replacement.id, routes[2].id])

        let follower = Task { try await consumer.follow() }
        let late = try await Self.addRoute(store, "r3", 1, source: source)
        let deadline = ContinuousClock.now + .seconds(20)
        while !consumer.index.ids.contains(late.id) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        follower.cancel()
        _ = await follower.result
        #expect(consumer.index.ids == [routes[0].id, replacement.id, routes[2].id, late.id])
    }

    /// The article's `cache` of workout objects, by key.
    final class ObjectCache {
        var objects: [ChangeObjectKey: ChangedObject] = [:]
        func remove(_ key: ChangeObjectKey) { objects[key] = nil }
        func put(_ key: ChangeObjectKey, _ object: ChangedObject) { objects[key] = object }
    }

    @Test("The change feed: every workout object, kept by key; deletions first")
    func tailingObjects() async throws {
        let store = try SQLiteStore(path: Self.temporaryPath())
        let source = try Source(name: "objects")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let score = try EffortScore(workoutID: workout.id, source: source, score: 4, isManual: true)
        try await store.relateEffort(score)
        let cache = ObjectCache()
        var anchor: ChangeAnchor?
        for round in 0..<2 {
            // snippet.tailing-objects
            let types: Set<ChangeObjectType> = [.workout, .route, .effort]
            let set = try await store.changes(since: anchor, matching: ChangePredicate(types: types), limit: 1000)
            for d in set.deletedObjects { cache.remove(d.key) }
            for o in set.addedObjects { cache.put(o.key, o) }
            // snippet.end
            anchor = set.anchor
            #expect(cache.objects[ChangeObjectKey(type: .workout, id: workout.id, quantityType: nil)] != nil)
            #expect(cache.objects.count == 2, "the workout and one score")
            if round == 1 {
                #expect(cache.objects[ChangeObjectKey(type: .effort, id: score.id, quantityType: nil)] == nil)
                break
            }
            try await store.unrelateEffort(id: score.id, as: source)
            let other = try EffortScore(workoutID: workout.id, source: source, score: 5, isManual: true)
            try await store.relateEffort(other)
        }
    }

    @Test("Storage backends and the RouteKitSQLite landing page: opening a store, a durable batch")
    func sqliteStore() async throws {
        let path = Self.temporaryPath()
        do {
            // snippet.storage-sqlite
            let store = try SQLiteStore(path: path, options: SQLiteStore.Options(durability: .powerLoss))
            let pending = try await store.pendingBuilders()  // what a killed import left, to resume or discard
            print(store.storeID, pending.count)
            // snippet.end
            #expect(pending.isEmpty)
        }
        let locations = StoreConformance.locations(count: 10)
        // snippet.sqlite-landing
        let store = try SQLiteStore(path: path)  // created if missing, upgraded if older
        let builder = try await RouteBuilder(store: store, source: try Source(name: "my-watch"))
        try await builder.insert(locations)  // durable when it returns
        // snippet.end
        #expect(try await store.pendingBuilders().map(\.progress.locationCount) == [10])
    }
}
