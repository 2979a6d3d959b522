// The smoothing batch job's scaling (issue 5): 1,000 stored routes of 10,000 points, processed with 1 worker,
// then (with another tolerance, so everything is processed again from the raw versions) with 2.
//
//     cd Benchmarks && swift run -c release BatchScaling [ROUTES] [POINTS]

import Foundation
import RouteKit
import RouteKitGEOS
import RouteKitProcessing
import RouteKitSQLite


let args = CommandLine.arguments
let routeCount = args.count > 1 ? Int(args[1]) ?? 1_000 : 1_000
let pointCount = args.count > 2 ? Int(args[2]) ?? 10_000 : 10_000
let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-batch-\(routeCount)x\(pointCount).sqlite").path

func seconds(_ d: Duration) -> Double {
    let (s, a) = d.components
    return Double(s) + Double(a) * 1e-18
}

struct Rng {
    var state: UInt64
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}

let store = try SQLiteStore(path: path)
let source = try Source(name: "batch-bench")
let existing = try await store.routes(matching: RouteFilter(source: source)).count
if existing < routeCount {
    let t0 = ContinuousClock.now
    for r in existing..<routeCount {
        var rng = Rng(state: UInt64(r))
        let frame = LocalProjection(latitude: 47.37, longitude: 8.54)
        var x = 0.0
        var y = 0.0
        var heading = rng.next() * 6.28
        var locations: [Location] = []
        locations.reserveCapacity(pointCount)
        for i in 0..<pointCount {
            heading += (rng.next() - 0.5) * 0.1
            if rng.next() < 1.0 / 120 { heading += (rng.next() - 0.5) * 3 }
            x += 6 * sin(heading)
            y += 6 * cos(heading)
            let p = frame.unproject(x: x + (rng.next() - 0.5) * 12, y: y + (rng.next() - 0.5) * 12)
            locations.append(
                Location(
                    latitude: (p.latitude * 1e7).rounded() / 1e7, longitude: (p.longitude * 1e7).rounded() / 1e7,
                    timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64(i))), altitude: 400))
        }
        let w = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(w)
        let b = try await RouteBuilder(store: store, source: source, order: .insertion)
        var s = 0
        while s < locations.count {
            try await b.insert(Array(locations[s..<min(s + 1024, locations.count)]))
            s += 1024
        }
        _ = try await b.finish(
            workout: w,
            metadata: [MetadataKey.syncIdentifier: .string("r\(r)"), MetadataKey.syncVersion: .integer(1)])
    }
    print(String(format: "filled %d routes of %d points in %.1f s", routeCount - existing, pointCount,
        seconds(ContinuousClock.now - t0)))
}

actor Queue {
    var ids: [UUID]
    init(_ ids: [UUID]) { self.ids = ids }
    func next() -> UUID? { ids.popLast() }
}

func run(workers: Int, tolerance: Double) async throws -> Double {
    var configuration = PipelineConfiguration()
    configuration.simplification.toleranceMetres = tolerance
    let pipeline = RoutePipeline(configuration: configuration)
    let ids = try await store.routes(matching: RouteFilter(source: source)).map(\.id)
    let queue = Queue(ids)
    let t0 = ContinuousClock.now
    try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<workers {
            group.addTask {
                let context = try GEOSContext()
                let processor = RouteProcessor(store: store, pipeline: pipeline)
                var saved = 0
                while let id = await queue.next() {
                    if try await processor.process(id, context: context).newRoute != nil { saved += 1 }
                }
                return saved
            }
        }
        var total = 0
        for try await n in group { total += n }
        precondition(total == ids.count, "saved \(total) of \(ids.count)")
    }
    return seconds(ContinuousClock.now - t0)
}

// Each run uses a tolerance never used before on this store, so every route is processed from its raw version.
let base = 5 + Double(Int(Date().timeIntervalSince1970) % 1000) / 1000
let one = try await run(workers: 1, tolerance: base)
print(String(format: "1 worker:  %.2f s (%.0f routes/s, %.2f M points/s)", one, Double(routeCount) / one,
    Double(routeCount * pointCount) / one / 1e6))
let two = try await run(workers: 2, tolerance: base + 0.0001)
print(String(format: "2 workers: %.2f s (%.0f routes/s, %.2f M points/s) — %.2f× the speed of 1", two,
    Double(routeCount) / two, Double(routeCount * pointCount) / two / 1e6, one / two))
