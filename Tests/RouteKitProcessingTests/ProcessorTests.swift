import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitGEOS
import RouteKitProcessing
import RouteKitSQLite
import RouteKitTesting
import Testing

func temporaryStore() throws -> SQLiteStore {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-processor-\(UUID().uuidString)")
    return try SQLiteStore(path: folder.appendingPathComponent("s.sqlite").path)
}

/// A stored raw route of `count` noisy points; returns it.
func storedRoute(_ store: SQLiteStore, count: Int = 3_000, seed: UInt64 = 1) async throws -> RouteSample {
    let source = Source.defaultImport
    let w = Workout(activityType: .running, start: nil, end: nil, source: source)
    _ = try await store.saveWorkout(w)
    let b = try await RouteBuilder(store: store, source: source, order: .insertion)
    let (_, track) = noisyTrack(count: count, seed: seed)
    try await b.insert(track)
    return try await b.finish(workout: w, metadata: StoreConformance.sync("route-\(seed)", 1)).route
}

func readAll(_ store: SQLiteStore, _ id: UUID) async throws -> [Location] {
    var out: [Location] = []
    for try await b in store.locations(of: id, batchSize: 4096) { out += b.locations }
    return out
}

@Suite("Processing stored routes")
struct ProcessorTests {
    @Test("a new version from the raw one, on behalf of its source, idempotent, visible in the change feed")
    func newVersion() async throws {
        let store = try temporaryStore()
        let raw = try await storedRoute(store)
        let anchor = try await store.currentAnchor()
        let context = try GEOSContext()
        let processor = RouteProcessor(store: store, pipeline: RoutePipeline())
        let first = try await processor.process(raw.id, context: context)
        let v2id = try #require(first.newRoute)
        #expect(first.syncVersion == 2)
        let v2 = try #require(try await store.route(id: v2id))
        #expect(v2.source == raw.source && v2.workoutID == raw.workoutID && v2.sync.identifier == raw.sync.identifier)
        #expect(v2.metadata[MetadataKey.derivedFrom] == .string("\(raw.id.uuidString.lowercased())@1"))
        #expect(v2.metadata[PipelineMetadataKey.pipeline] == .string("outliers,smoothing,simplification"))
        #expect(v2.locationCount == first.metrics?.pointsOut && v2.locationCount < raw.locationCount)
        // The new locations' times are a subsequence of the raw ones'.
        let rawTimes = try await readAll(store, raw.id).map(\.timestamp)
        var i = 0
        for l in try await readAll(store, v2id) {
            while i < rawTimes.count && rawTimes[i] != l.timestamp { i += 1 }
            #expect(i < rawTimes.count)
        }
        // The raw version stays, as provenance.
        #expect(try await store.route(id: raw.id) != nil)
        #expect(try await store.isCurrent(route: raw.id) == false)
        // The feed: the old version deleted, the new one added, in one change set.
        let set = try await store.changes(since: anchor, matching: .all, limit: 10)
        #expect(set.deleted.map(\.id) == [raw.id] && set.added.map(\.id) == [v2id])
        // Again with the same parameters: nothing.
        let again = try await processor.process(v2id, context: context)
        #expect(again.newRoute == nil && again.skipped?.contains("already processed") == true)
        // Processing a version that is not current names the current one.
        let error = await #expect(throws: RouteKitError.self) { try await processor.process(raw.id, context: context) }
        #expect(error?.message.contains(v2id.uuidString) == true)
        // Other parameters: version 3, again from the raw version, not from version 2.
        var other = PipelineConfiguration()
        other.simplification.toleranceMetres = 20
        let v3 = try await RouteProcessor(store: store, pipeline: RoutePipeline(configuration: other))
            .process(v2id, context: context)
        #expect(v3.syncVersion == 3)
        let v3id = try #require(v3.newRoute)
        let v3route = try #require(try await store.route(id: v3id))
        #expect(v3route.metadata[MetadataKey.derivedFrom] == .string("\(raw.id.uuidString.lowercased())@1"))
        #expect(v3.metrics?.pointsIn == raw.locationCount, "it started from the raw version")
        #expect(try await store.route(id: v2id) == nil, "an intermediate derived version is not kept")
        #expect(try await store.route(id: raw.id) != nil, "the raw one is")
    }

    @Test("a route claimed by another live worker is skipped; after the claim expires it is processed")
    func claims() async throws {
        let store = try temporaryStore()
        let raw = try await storedRoute(store)
        let pipeline = RoutePipeline()
        let key = "pipeline/\(raw.source.name)/\(raw.sync.identifier)/1/\(pipeline.configuration.parameterHash)"
        // A long claim, so that a slow machine (the thread sanitizer, a loaded CI) cannot see it expire early.
        let other = UUID()
        #expect(try await store.claimWork(key: key, holder: other, seconds: 600))
        let context = try GEOSContext()
        let processor = RouteProcessor(store: store, pipeline: pipeline)
        let busy = try await processor.process(raw.id, context: context)
        #expect(busy.skipped?.contains("another worker") == true)
        // The other worker renews it for a moment and stops: once that runs out, the route is processed.
        #expect(try await store.claimWork(key: key, holder: other, seconds: 0.2))
        try await Task.sleep(for: .milliseconds(400))
        let done = try await processor.process(raw.id, context: context)
        #expect(done.newRoute != nil)
    }

    @Test("a batch: one claim for all, one result per route in order, reported as each finishes; no claim left")
    func batch() async throws {
        let store = try temporaryStore()
        let a = try await storedRoute(store, count: 500, seed: 1)
        let busy = try await storedRoute(store, count: 500, seed: 2)
        let c = try await storedRoute(store, count: 500, seed: 3)
        let pipeline = RoutePipeline()
        let busyKey = "pipeline/\(busy.source.name)/\(busy.sync.identifier)/1/\(pipeline.configuration.parameterHash)"
        let other = UUID()
        #expect(try await store.claimWork(key: busyKey, holder: other, seconds: 60))
        let context = try GEOSContext()
        let processor = RouteProcessor(store: store, pipeline: pipeline)
        var reported: [Int] = []
        let unknown = UUID()
        let results = await processor.process([a.id, busy.id, unknown, c.id], context: context) { i, _ in
            reported.append(i)
        }
        #expect(results.count == 4 && Set(reported) == [0, 1, 2, 3] && reported.count == 4)
        #expect((try? results[0].get())?.newRoute != nil)
        #expect((try? results[1].get())?.skipped?.contains("another worker") == true)
        guard case .failure(let error) = results[2] else {
            Issue.record("an unknown route is an error")
            return
        }
        #expect(error.code == .notFound && error.message.contains(unknown.uuidString))
        #expect((try? results[3].get())?.newRoute != nil)
        // Saving gave each claim up: the keys of a and c are free for anyone, the busy one still the other's.
        for r in [a, c] {
            let key = "pipeline/\(r.source.name)/\(r.sync.identifier)/1/\(pipeline.configuration.parameterHash)"
            #expect(try await store.claimWork(key: key, holder: other, seconds: 60))
        }
        #expect(!(try await store.claimWork(key: busyKey, holder: UUID(), seconds: 60)))
    }
}
