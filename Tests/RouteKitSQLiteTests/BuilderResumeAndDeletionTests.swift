import Foundation
import GRDB
import RouteKit
import RouteKitGPX
import RouteKitIngest
import RouteKitTesting
import Testing

@testable import RouteKitSQLite

/// Regression tests for the findings of the code review of the store, the importer and the feed.
@Suite("Builder resume, waypoints and route deletion")
struct BuilderResumeAndDeletionTests {
    @Test("a builder that acknowledged a whole track (its final partial batch) is resumed, not orphaned")
    func finalBatchResume() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/t.gpx"
        // Longer than what is held in memory, so that a builder writes it.
        let count = TrackImport.deferredLimit + 1500
        try syntheticGPX(count: count).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let first = await GPXImporter(store: FaultInjectingStore(store, failingFinishes: 1)).importFile(path)
        #expect(first.status == .failed)
        #expect(try await store.pendingBuilders().map(\.progress.locationCount) == [count])
        let second = await GPXImporter(store: store).importFile(path)
        #expect(second.status == .imported)
        #expect(second.tracks.first?.resumedFrom == count)
        #expect(try await store.pendingBuilders().isEmpty)
        #expect(try await store.routes(matching: RouteFilter()).map(\.locationCount) == [count])
    }

    @Test("a short track whose save fails leaves no builder and no route; the next import stores it whole")
    func heldTrackSaveFails() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/t.gpx"
        try syntheticGPX(count: 1500).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let first = await GPXImporter(store: FaultInjectingStore(store, failingFinishes: 1)).importFile(path)
        #expect(first.status == .failed)
        #expect(first.error?.code == .storage)
        #expect(try await store.pendingBuilders().isEmpty, "a held track writes no builder")
        #expect(try await store.routes(matching: RouteFilter()).isEmpty)
        let second = await GPXImporter(store: store).importFile(path)
        #expect(second.status == .imported)
        #expect(second.tracks.first?.resumedFrom == nil)
        let routes = try await store.routes(matching: RouteFilter())
        #expect(routes.map(\.locationCount) == [1500])
        // The workout the failed import saved is the one the route joins: one workout, not two.
        #expect(try await store.workouts(matching: WorkoutFilter()).map(\.id) == routes.map(\.workoutID))
        let expected = try trackPoints(path)[0]
        #expect(try await readRoute(store, routes[0].id) == expected.map(\.location))
        var hr: [QuantitySample] = []
        for try await b in store.samples(of: .heartRate, workout: routes[0].workoutID) { hr += b.samples }
        #expect(hr.map(\.value) == expected.compactMap { $0.values[.heartRate] }, "with its heart-rate series")
    }

    @Test("waypoints are stored even when the import that stored the first track stopped before them")
    func waypointsAfterFault() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/w.gpx"
        let small = """
            <wpt lat="47.5" lon="8.5"><name>A</name></wpt><wpt lat="47.6" lon="8.6"><name>B</name></wpt>
            <trk><name>first</name><trkseg><trkpt lat="47.1" lon="8.1"><time>2020-01-01T00:00:00Z</time></trkpt>
            <trkpt lat="47.2" lon="8.2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk>
            <trk><name>second</name>
            """
        let text = syntheticGPX(count: TrackImport.deferredLimit + 3000, name: "second").replacingOccurrences(
            of: "<trk><name>second</name>", with: small)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        // The first track is short: held and saved whole. Appends 1 and 2: the second track's first batches, once
        // it is longer than what is held; append 3 fails.
        let first = await GPXImporter(store: FaultInjectingStore(store, failingAppend: 3)).importFile(path)
        #expect(first.status == .partial)
        let second = await GPXImporter(store: store).importFile(path)
        #expect(second.status == .imported)
        let w = try #require(second.tracks.first?.workout)
        #expect(try await GPXAttachments.read(workout: w, from: store).waypoints.count == 2)
    }

    @Test("a builder origin records the absolute path of its file")
    func absoluteOrigin() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/../" + (dir as NSString).lastPathComponent + "/t.gpx"
        try syntheticGPX(count: TrackImport.deferredLimit + 2000).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        _ = await GPXImporter(store: FaultInjectingStore(store, failingAppend: 2)).importFile(path)
        let label = try #require(try await store.pendingBuilders().first?.origin?.label)
        #expect(label.hasPrefix("/") && !label.contains("/../"), "\(label)")
        #expect(FileManager.default.fileExists(atPath: label))
    }

    @Test("two resumes from one listing: only the first gets the builder")
    func doubleClaim() async throws {
        let store = try makeTemporaryStore()
        let b = try await RouteBuilder(store: store, source: .defaultImport, order: .insertion)
        try await b.insert(StoreConformance.locations(count: 3))
        let listed = try #require(try await store.pendingBuilders().first)
        let first = try await RouteBuilder.resume(listed, in: store)
        let error = await #expect(throws: RouteKitError.self) { try await RouteBuilder.resume(listed, in: store) }
        #expect(error?.code == .builderState)
        try await first.insert(StoreConformance.locations(count: 3, start: 1_800_000_000))
    }

    @Test("deleting a route frees its locations; the workout's series stay")
    func deleteFreesChunks() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/t.gpx"
        try syntheticGPX(count: 3000).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let result = await GPXImporter(store: store).importFile(path)
        let track = try #require(result.tracks.first)
        let route = try #require(track.route)
        try await store.deleteRoute(id: route, as: .defaultImport)
        let counts = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT kind, COUNT(*) AS n FROM chunk GROUP BY kind")
        }
        let kinds = Dictionary(uniqueKeysWithValues: counts.map { ($0["kind"] as String, $0["n"] as Int) })
        #expect(kinds["locations"] == nil, "location chunks are gone: \(kinds)")
        #expect(kinds["heartRate"] != nil, "the series stays with the workout")
        var hr = 0
        for try await b in store.samples(of: .heartRate, workout: track.workout) { hr += b.samples.count }
        #expect(hr == 3000)
    }

    @Test(
        "feed: one page per step, with writes, deletions, compactions and restarts between pages",
        arguments: Array(0..<8))
    func interleavedFeed(seed: Int) async throws {
        let store = try makeTemporaryStore()
        var rng = SplitMix64(seed: UInt64(seed) &* 7919 &+ 17)
        let sources = [try Source(name: "alice"), try Source(name: "bob")]
        var workouts: [Source: [Workout]] = [:]
        for s in sources {
            for _ in 0..<2 {
                let w = Workout(activityType: .running, start: nil, end: nil, source: s)
                _ = try await store.saveWorkout(w)
                workouts[s, default: []].append(w)
            }
        }
        let predicate = seed % 2 == 0 ? ChangePredicate.all : ChangePredicate(source: sources[0])
        func matches(_ r: RouteSample) -> Bool { predicate.source.map { $0 == r.source } ?? true }
        var versions: [String: Int64] = [:]
        var held: [UUID: RouteSample] = [:]
        var delivered = Set<UUID>()
        var anchor: ChangeAnchor?
        for step in 0..<200 {
            let source = sources[Int.random(in: 0..<2, using: &rng)]
            let ws = workouts[source] ?? []
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<35:
                let id = "id\(Int.random(in: 0..<6, using: &rng))"
                let v = (versions["\(source.name)/\(id)"] ?? 0) + 1
                versions["\(source.name)/\(id)"] = v
                let b = try await RouteBuilder(store: store, source: source)
                try await b.insert(StoreConformance.locations(count: 2, start: Int64(step) * 10))
                _ = try await b.finish(
                    workout: ws[Int.random(in: 0..<ws.count, using: &rng)], metadata: StoreConformance.sync(id, v))
            case 35..<45:
                if let r = try await store.routes(matching: RouteFilter(source: source)).randomElement(using: &rng) {
                    try await store.deleteRoute(id: r.id, as: source)
                }
            case 45..<48:
                var list = ws
                let w = list.remove(at: Int.random(in: 0..<list.count, using: &rng))
                try await store.deleteWorkout(id: w.id, as: source)
                let fresh = Workout(activityType: .running, start: nil, end: nil, source: source)
                _ = try await store.saveWorkout(fresh)
                workouts[source] = list + [fresh]
            case 48..<52:
                _ = try await store.compactChanges(before: Date().addingTimeInterval(60))
            case 52..<54:
                held = [:]
                delivered = []
                anchor = nil
            default:
                let result: Result<ChangeSet, RouteKitError>
                do {
                    result = .success(
                        try await store.changes(
                            since: anchor, matching: predicate, limit: Int.random(in: 1...3, using: &rng)))
                } catch {
                    result = .failure(error)
                }
                guard case .success(let set) = result else {
                    if case .failure(let e) = result { #expect(e.code == .anchorExpired, "seed \(seed): \(e)") }
                    held = [:]
                    delivered = []
                    anchor = nil
                    continue
                }
                for d in set.deleted { held[d.id] = nil }
                for a in set.added {
                    #expect(!delivered.contains(a.id), "seed \(seed) step \(step): a route delivered twice")
                    delivered.insert(a.id)
                    held[a.id] = a
                }
                let ids = held.values.map { "\($0.source.name)/\($0.sync.identifier)" }
                #expect(Set(ids).count == ids.count, "seed \(seed) step \(step): two versions held")
                anchor = set.anchor
                if !set.hasMore {
                    let truth = try await store.routes(matching: RouteFilter()).filter(matches)
                    #expect(Set(held.keys) == Set(truth.map(\.id)), "seed \(seed) step \(step): caught up but differs")
                }
            }
        }
    }
}
