// The change feed with every object type (issue 27): a change set of 10,000 mixed objects — 2,500 workouts, each
// with a route, a heart-rate series and an effort score — read with `changes(since:)` and `types` all, on SQLite or
// PostgreSQL. Reported as the median and p90 of 10 reads (and the route-only read of the same history, for
// comparison).
//
//     cd Benchmarks && swift run -c release FeedObjects [STORE]
//
// STORE defaults to a new file in the temporary folder; a postgres:// URL uses PostgreSQL (an empty database: the
// benchmark writes 10,000 objects into it).

import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitPostgres
import RouteKitSQLite

let arguments = CommandLine.arguments
let storePath =
    arguments.count > 1
    ? arguments[1]
    : FileManager.default.temporaryDirectory.appendingPathComponent("rk-feed-objects-\(UUID().uuidString).sqlite").path

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func ms(_ d: Duration) -> Double {
    let (s, a) = d.components
    return Double(s) * 1000 + Double(a) * 1e-15
}

let store: any RouteStore =
    storePath.hasPrefix("postgres") ? try await PostgresStore(url: storePath) : try SQLiteStore(path: storePath)
let source = try Source(name: "objects-bench-\(UInt32.random(in: 0...UInt32.max))")
let before = try await store.currentAnchor()
let workouts = 2_500
let started = ContinuousClock.now
try await withThrowingTaskGroup(of: Void.self) { group in
    for w in 0..<4 {
        group.addTask {
            for i in stride(from: w, to: workouts, by: 4) {
                let t0 = Instant(seconds: 1_700_000_000 + Int64(i) * 3_600)
                let workout = Workout(
                    activityType: .running, start: Timestamp(t0), end: Timestamp(Instant(seconds: t0.seconds + 600)),
                    source: source, sync: SyncIdentity(identifier: "w\(i)", version: 1),
                    metadata: ["name": .string("workout \(i)")])
                _ = try await store.saveWorkout(workout)
                let locations = (0..<10).map {
                    Location(
                        latitude: 47 + Double($0) * 1e-4, longitude: 8.5,
                        timestamp: Timestamp(Instant(seconds: t0.seconds + Int64($0) * 60)))
                }
                let route = RouteSample(
                    workoutID: workout.id, source: source, sync: SyncIdentity(identifier: "r\(i)", version: 1),
                    start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: locations.count)
                _ = try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
                let samples = (0..<60).map {
                    QuantitySample(timestamp: Timestamp(Instant(seconds: t0.seconds + Int64($0) * 10)), value: 140)
                }
                try await store.saveSeries(
                    QuantitySeries(type: .heartRate, samples: samples), workout: workout.id, as: source)
                try await store.relateEffort(
                    try EffortScore(workoutID: workout.id, source: source, score: 6, isManual: true))
            }
        }
    }
    try await group.waitForAll()
}
print("wrote \(workouts) workouts with a route, a series and an effort score each in \(ms(ContinuousClock.now - started) / 1000) s")

let everything = ChangePredicate(types: Set(ChangeObjectType.allCases))
var times: [Double] = []
var count = 0
for _ in 0..<10 {
    let t0 = ContinuousClock.now
    let set = try await store.changes(since: before, matching: everything, limit: 10_000)
    times.append(ms(ContinuousClock.now - t0))
    count = set.count
}
print(
    String(
        format: "changes(since:) of %d mixed objects (types all, limit 10,000): median %.1f ms, p90 %.1f ms (10 runs)",
        count, percentile(times, 0.5), percentile(times, 0.9)))
var routeTimes: [Double] = []
var routeCount = 0
for _ in 0..<10 {
    let t0 = ContinuousClock.now
    let set = try await store.changes(since: before, matching: .all, limit: 10_000)
    routeTimes.append(ms(ContinuousClock.now - t0))
    routeCount = set.count
}
print(
    String(
        format: "changes(since:) of the same history, routes only: %d routes, median %.1f ms, p90 %.1f ms (10 runs)",
        routeCount, percentile(routeTimes, 0.5), percentile(routeTimes, 0.9)))
if !storePath.hasPrefix("postgres") {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
}
