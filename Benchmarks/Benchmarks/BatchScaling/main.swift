// The smoothing batch job's scaling (issue 5): 1,000 stored routes of 10,000 points, processed with 1 worker,
// then (with another tolerance, so everything is processed again from the raw versions) with 2.
//
//     cd Benchmarks && swift run -c release BatchScaling [ROUTES] [POINTS] [WORKER ORDER, e.g. 1,2,2,1]
//
// It opens the store and hands out routes as `routekit smooth` does (writes on the calling thread, batches of up to
// 8 routes per claim, the batch allocator settings) and prints each run's CPU use. With COMPUTE_ONLY=1 it runs only
// the pipeline, on 50 routes read into memory first (STAGES=outliers,smoothing,... picks stages): how far the
// computation alone scales.

import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitGEOS
@_spi(RouteKitInternals) import RouteKitProcessing
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

BatchAllocator.tuneForBatchProcessing()
// As `routekit smooth` opens it.
let store = try SQLiteStore(path: path, options: SQLiteStore.Options(writesOnCallingThread: true, readsOnCallingThread: true))
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

/// Hands out routes the way `routekit smooth` does: up to 8 at a time, fewer as the queue runs low.
actor Queue {
    var ids: [UUID]
    init(_ ids: [UUID]) { self.ids = ids }
    func next(workers: Int) -> [UUID] {
        let n = RouteProcessor.batchSize(pending: ids.count, workers: workers)
        return (0..<n).compactMap { _ in ids.popLast() }
    }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

func run(workers: Int, tolerance: Double) async throws -> Double {
    var configuration = PipelineConfiguration()
    configuration.simplification.toleranceMetres = tolerance
    let pipeline = RoutePipeline(configuration: configuration)
    let ids = try await store.routes(matching: RouteFilter(source: source)).map(\.id)
    let queue = Queue(ids)
    let t0 = ContinuousClock.now
    let cpu0 = cpuSeconds()
    defer {
        let wall = seconds(ContinuousClock.now - t0)
        print(String(format: "  %d worker(s): CPU %.2f s over %.2f s wall = %.2f cores", workers, cpuSeconds() - cpu0,
            wall, (cpuSeconds() - cpu0) / wall))
    }
    try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<workers {
            group.addTask {
                let context = try GEOSContext()
                let processor = RouteProcessor(store: store, pipeline: pipeline)
                var saved = 0
                while case let some = await queue.next(workers: workers), !some.isEmpty {
                    for result in await processor.process(some, context: context) where try result.get().newRoute != nil {
                        saved += 1
                    }
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

if ProcessInfo.processInfo.environment["COMPUTE_ONLY"] != nil {
    var loaded: [[Location]] = []
    for r in try await store.routes(matching: RouteFilter(source: source)).prefix(50) {
        guard let id = try await store.rawRoute(source: source, syncIdentifier: r.sync.identifier)?.id else { continue }
        var l: [Location] = []
        for try await b in store.locations(of: id, batchSize: 1024) { l += b.locations }
        loaded.append(l)
    }
    let inputs = loaded
    var cfg = PipelineConfiguration()
    if let st = ProcessInfo.processInfo.environment["STAGES"] { cfg.stages = st.split(separator: ",").compactMap { PipelineStage(rawValue: String($0)) } }
    let pipeline = RoutePipeline(configuration: cfg)
    for workers in [1, 2, 1, 2] {
        let t0 = ContinuousClock.now
        let c0 = cpuSeconds()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<workers {
                group.addTask {
                    let context = try GEOSContext()
                    for k in stride(from: w, to: 1000, by: workers) {
                        let input = Array(inputs[k % inputs.count])
                        _ = try pipeline.run(input, activity: .running, context: context)
                    }
                }
            }
            try await group.waitForAll()
        }
        let t = seconds(ContinuousClock.now - t0)
        print(String(format: "compute only, %d worker(s): %.2f s, %.2f cores", workers, t, (cpuSeconds() - c0) / t))
    }
    exit(0)
}
// Each run uses a tolerance never used before on this store, so every route is processed from its raw version.
// A third argument lists the worker counts to run, in order (default "1,2").
let order = (args.count > 3 ? args[3] : "1,2").split(separator: ",").compactMap { Int($0) }
var base = 5 + Double(Int(Date().timeIntervalSince1970) % 1000) / 1000
var timings: [Int: Double] = [:]
for workers in order {
    let t = try await run(workers: workers, tolerance: base)
    base += 0.0001
    timings[workers] = t
    print(String(format: "%d worker(s): %.2f s (%.0f routes/s, %.2f M points/s)", workers, t, Double(routeCount) / t,
        Double(routeCount * pointCount) / t / 1e6))
}
if let one = timings[1], let two = timings[2] {
    print(String(format: "2 workers: %.2f× the speed of 1", one / two))
}
