import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitApplication
import RouteKitProcessing
import RouteKitTesting
import Testing

@Suite("Workout figures")
struct WorkoutFiguresTests {
    /// `count` fixes a second apart going north 3 m at a time, with one spike 1 km east in the middle.
    static func run(_ count: Int, start: Int64 = 1_714_550_400) -> [Location] {
        (0..<count).map { i in
            Location(
                latitude: 47 + Double(i) * 3 / 111_000, longitude: 8 + (i == count / 2 ? 0.013 : 0),
                timestamp: Timestamp(Instant(seconds: start + Int64(i))))
        }
    }

    static func save(
        _ locations: [Location], version: Int64, workout: Workout, in store: InMemoryStore,
        metadata: [String: MetadataValue] = [:]
    ) async throws -> RouteSample {
        let route = RouteSample(
            workoutID: workout.id, source: workout.source, sync: SyncIdentity(identifier: "figures", version: version),
            start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: locations.count,
            metadata: metadata)
        _ = try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
        return route
    }

    @Test("a list's figures are the statistics', measured once and stored, kept for a smoothed version, measured again for a new recording")
    func storedOnce() async throws {
        let store = InMemoryStore()
        let source = try Source(name: "watch")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let first = try await Self.save(Self.run(101), version: 1, workout: workout, in: store)
        let figures = try await WorkoutFigures.of([(workout, [first])], in: store)
        let statistics = try await WorkoutStatistics.compute(store: store, id: workout.id)
        let measured = try #require(figures[workout.id])
        #expect(measured.distanceMetres == statistics.statistics.distanceMetres)
        #expect(measured.elapsedSeconds == statistics.statistics.elapsedSeconds)
        #expect(measured.movingSeconds == statistics.statistics.movingSeconds)
        #expect(abs(measured.distanceMetres - 300) < 5, "the spike is not counted: \(measured.distanceMetres)")
        #expect(measured.elapsedSeconds == 100)

        // Stored: a list reads it (a planted figure under the same basis comes back, so nothing was measured).
        let stored = try #require(try await store.summaries(ofWorkouts: [workout.id])[workout.id])
        #expect(stored.basis.contains(first.id.lowercaseText))
        try await store.saveSummary(
            StoredSummary(basis: stored.basis, document: #"{"distanceMetres":12345}"#), ofWorkout: workout.id)
        #expect(try await WorkoutFigures.of([(workout, [first])], in: store)[workout.id]?.distanceMetres == 12345)
        let shape = try await WorkoutJSON(workout, routes: [first], in: store)
        #expect(shape.distanceMetres == 12345 && shape.elapsedSeconds == nil)

        // A processed version (smoothed: derivedFrom names the recording) keeps the recording's figures.
        let smoothed = try await Self.save(
            Self.run(31), version: 2, workout: workout, in: store,
            metadata: [MetadataKey.derivedFrom: .string("\(first.id.lowercaseText)@1")])
        #expect(try await WorkoutFigures.of([(workout, [smoothed])], in: store)[workout.id]?.distanceMetres == 12345)

        // A new recording: another basis, measured again.
        let second = try await Self.save(Self.run(51), version: 3, workout: workout, in: store)
        let current = try await store.routes(matching: RouteFilter(workout: workout.id))
        #expect(current.map(\.id) == [second.id])
        let again = try #require(try await WorkoutFigures.of([(workout, current)], in: store)[workout.id])
        #expect(abs(again.distanceMetres - 150) < 5 && again.elapsedSeconds == 50, "\(again)")
        #expect(try await store.summaries(ofWorkouts: [workout.id])[workout.id]?.basis.contains(second.id.lowercaseText) == true)

        // A workout without a route has no figures, and nothing is stored for it.
        let bare = Workout(activityType: .walking, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(bare)
        #expect(try await WorkoutFigures.of([(bare, [])], in: store).isEmpty)
        #expect(try await store.summaries(ofWorkouts: [bare.id]).isEmpty)
    }

    @Test("a store that keeps no summaries still gets the figures, measured each time")
    func storeWithoutSummaries() async throws {
        let base = InMemoryStore()
        let store = FaultInjectingStore(base)
        let source = try Source(name: "watch")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let route = try await Self.save(Self.run(11), version: 1, workout: workout, in: base)
        let figures = try await WorkoutFigures.of([(workout, [route])], in: store)
        #expect(abs((figures[workout.id]?.distanceMetres ?? 0) - 30) < 1)
        #expect(try await base.summaries(ofWorkouts: [workout.id]).isEmpty)
    }
}
