import Foundation
import RouteKit
import RouteKitTesting
import Testing

/// A `GrantedStore` that narrows writes (what the HTTP service imports an upload through): what the grant may not
/// write never reaches the store below it, whichever write carries it, and it says what it left out of each workout.
@Suite("GrantedStore narrowing writes")
struct GrantedWritesTests {
    /// `count` samples of `value`, a second apart.
    static func samples(_ count: Int, value: Double) -> [QuantitySample] {
        (0..<count).map { i in
            QuantitySample(timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64(i))), value: value)
        }
    }

    @Test(
        "without write:heartRate: a builder's heart-rate batches and a workout's heart-rate totals are left out, power kept"
    )
    func builderAndTotals() async throws {
        let base = InMemoryStore()
        let store = GrantedStore(
            base, grant: try TokenGrant(parsing: "write:workouts,write:routes,write:power"), narrowingWrites: true)
        let source = try Source(name: "watch")
        let lap = WorkoutEvent(kind: .lap, start: nil, metadata: [MetadataKey.maximumHeartRate: .double(171)])
        let workout = Workout(
            activityType: .cycling, start: nil, end: nil, source: source, events: [lap],
            metadata: [MetadataKey.averageHeartRate: .double(150), MetadataKey.averagePower: .double(210)])
        _ = try await store.saveWorkout(workout)
        let builder = try await RouteBuilder(store: store, source: source, order: .insertion)
        try await builder.insert(
            StoreConformance.locations(count: 50),
            related: [.heartRate: Self.samples(50, value: 140), .power: Self.samples(50, value: 200)])
        let finished = try await builder.finish(workout: workout, metadata: StoreConformance.sync("r", 1))
        let route = try #require(finished.outcome.savedID)

        let stored = try await base.route(id: route)
        #expect(stored?.locationCount == 50)
        let types = try await base.seriesTypes(ofWorkout: workout.id)
        #expect(types == [.power])
        let saved = try #require(try await base.workout(id: workout.id))
        #expect(saved.metadata[MetadataKey.averageHeartRate] == nil)
        #expect(saved.metadata[MetadataKey.averagePower] == .double(210))
        #expect(saved.events.count == 1)
        #expect(saved.events.first?.metadata[MetadataKey.maximumHeartRate] == nil)
        #expect(store.leftOut(ofWorkouts: [workout.id]) == [.heartRate])
        #expect(store.leftOut(ofWorkouts: [UUID()]).isEmpty)
    }

    @Test(
        "without write:heartRate: a whole route's heart-rate chunks and a heart-rate series are left out; with write kept"
    )
    func wholeRouteAndSeries() async throws {
        let base = InMemoryStore()
        let source = try Source(name: "watch")
        let narrowed = GrantedStore(
            base, grant: try TokenGrant(parsing: "write:workouts,write:routes"), narrowingWrites: true)
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await narrowed.saveWorkout(workout)
        #expect(narrowed.leftOut(ofWorkouts: [workout.id]).isEmpty)

        var held = HeldRoute()
        try held.insert(StoreConformance.locations(count: 20), related: [.heartRate: Self.samples(20, value: 130)])
        let finished = try await held.save(
            workout: workout, source: source, metadata: StoreConformance.sync("r", 1), in: narrowed)
        let route = try #require(finished.outcome.savedID)
        let stored = try await base.route(id: route)
        #expect(stored?.locationCount == 20)
        try await narrowed.appendSamples([.heartRate: Self.samples(5, value: 90)], toWorkout: workout.id, as: source)
        let none = try await base.seriesTypes(ofWorkout: workout.id)
        #expect(none.isEmpty)
        #expect(narrowed.leftOut(ofWorkouts: [workout.id]) == [.heartRate])

        let writer = GrantedStore(base, grant: TokenGrant([.write]), narrowingWrites: true)
        try await writer.appendSamples([.heartRate: Self.samples(5, value: 90)], toWorkout: workout.id, as: source)
        let kept = try await base.seriesTypes(ofWorkout: workout.id)
        #expect(kept == [.heartRate])
        #expect(writer.leftOut(ofWorkouts: [workout.id]).isEmpty)
    }

    @Test("a store that narrows only reads writes what it is given")
    func readsOnly() async throws {
        let base = InMemoryStore()
        let source = try Source(name: "watch")
        let store = GrantedStore(base, grant: try TokenGrant(parsing: "read:workouts"))
        let workout = Workout(
            activityType: .running, start: nil, end: nil, source: source,
            metadata: [MetadataKey.averageHeartRate: .double(150)])
        _ = try await store.saveWorkout(workout)
        try await store.appendSamples([.heartRate: Self.samples(5, value: 90)], toWorkout: workout.id, as: source)
        let saved = try await base.workout(id: workout.id)
        #expect(saved?.metadata[MetadataKey.averageHeartRate] == .double(150))
        let types = try await base.seriesTypes(ofWorkout: workout.id)
        #expect(types == [.heartRate])
        #expect(store.leftOut(ofWorkouts: [workout.id]).isEmpty)
    }
}
