// Route store benchmarks for package-benchmark (ordo-one/benchmark): the SQLite store's route builder and
// route query on 1,000,000 generated locations.
//
//     cd Benchmarks && swift package --disable-sandbox benchmark --target Store
//
// The import of a whole GPX file, side by side with xmllint, is Benchmarks/peers/import-peers.sh.

import Benchmark
import Foundation
import RouteKit
import RouteKitSQLite

let benchmarks: @Sendable () -> Void = {
    let locationsPerSecond = BenchmarkMetric.custom("Locations/s", polarity: .prefersLarger, useScalingFactor: false)

    Benchmark(
        "Route query read-back (1M locations, batches of 4096)",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, locationsPerSecond],
            warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 20)
    ) { benchmark in
        let store = try SQLiteStore(path: StoreFixture.path)
        let start = ContinuousClock.now
        var count = 0
        for try await batch in store.locations(of: StoreFixture.routeID, batchSize: 4096) {
            count += batch.locations.count
        }
        let elapsed = start.duration(to: .now)
        precondition(count == StoreFixture.count, "read \(count) locations, expected \(StoreFixture.count)")
        benchmark.measurement(locationsPerSecond, rate(count, elapsed))
    } setup: {
        _ = try await StoreFixture.prepare()
    }

    Benchmark(
        "RouteBuilder insert + finish (1M locations, batches of 1024, new store)",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, locationsPerSecond],
            warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10)
    ) { benchmark in
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("s.sqlite").path)
        let source = try Source(name: "bench")
        let start = ContinuousClock.now
        let builder = try await RouteBuilder(store: store, source: source, order: .insertion)
        for batch in StoreFixture.batches { try await builder.insert(batch) }
        let workout = Workout(activityType: .cycling, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let finished = try await builder.finish(workout: workout)
        let elapsed = start.duration(to: .now)
        precondition(finished.route.locationCount == StoreFixture.count)
        benchmark.measurement(locationsPerSecond, rate(StoreFixture.count, elapsed))
    }
}

/// 1,000,000 locations like the generated track (1 Hz, 7-decimal coordinates, elevation to 0.1 m), and a
/// store holding them as one route.
enum StoreFixture {
    static let count = 1_000_000
    static let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-bench-read.sqlite").path
    nonisolated(unsafe) static var routeID = UUID()

    static let batches: [[Location]] = {
        var rng = SystemRandomNumberGenerator()
        var lat = 47.3768489
        var lon = 8.5416626
        var ele = 444.4
        var all: [Location] = []
        all.reserveCapacity(count)
        for i in 0..<count {
            lat = ((lat + Double.random(in: -0.00005...0.00005, using: &rng)) * 1e7).rounded() / 1e7
            lon = ((lon + Double.random(in: -0.00005...0.00005, using: &rng)) * 1e7).rounded() / 1e7
            ele = ((ele + Double.random(in: -0.5...0.5, using: &rng)) * 10).rounded() / 10
            all.append(
                Location(
                    latitude: lat, longitude: lon,
                    timestamp: Timestamp(Instant(seconds: 1_714_543_200 + Int64(i)), utcOffsetSeconds: 0), altitude: ele))
        }
        return stride(from: 0, to: count, by: 1024).map { Array(all[$0..<min($0 + 1024, count)]) }
    }()

    static func prepare() async throws -> UUID {
        try? FileManager.default.removeItem(atPath: path)
        let store = try SQLiteStore(path: path)
        let source = try Source(name: "bench")
        let builder = try await RouteBuilder(store: store, source: source, order: .insertion)
        for batch in batches { try await builder.insert(batch) }
        let workout = Workout(activityType: .cycling, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        routeID = try await builder.finish(workout: workout).route.id
        return routeID
    }
}

func rate(_ count: Int, _ elapsed: Duration) -> Int {
    let (seconds, attoseconds) = elapsed.components
    let s = Double(seconds) + Double(attoseconds) * 1e-18
    return s > 0 ? Int(Double(count) / s) : 0
}
