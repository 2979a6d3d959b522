// Change-feed numbers that need whole processes (issue 4), reported as medians and percentiles:
//
//   1. `changes(since:)` for the last 1,000 changes of a store of 100,000 routes (in process);
//   2. commit-to-delivery for a follower in another process (`routekit changes --follow --json`);
//   3. the CPU an idle follower uses.
//
//     make release && cd Benchmarks && swift run -c release FeedLatency [ROUTEKIT] [STORE]
//
// ROUTEKIT defaults to ../.build/release/routekit; STORE to a file in the temporary folder, filled with
// 100,000 routes on the first run (about a minute) and reused after. STORE may be a postgres:// URL (then ROUTEKIT
// must be built with --traits Postgres: `swift build -c release --traits Postgres --scratch-path .build-postgres`).

import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitPostgres
import RouteKitSQLite

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
let routekit = arguments.count > 1 ? arguments[1] : "../.build/release/routekit"
let storePath =
    arguments.count > 2 ? arguments[2] : FileManager.default.temporaryDirectory.appendingPathComponent("rk-feed-100k.sqlite").path
let routeCount = 100_000

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func ms(_ d: Duration) -> Double {
    let (s, a) = d.components
    return Double(s) * 1000 + Double(a) * 1e-15
}

let source = try Source(name: "feed-bench")
let store: any RouteStore =
    storePath.hasPrefix("postgres") ? try await PostgresStore(url: storePath) : try SQLiteStore(path: storePath)
let workout: Workout
if let w = try await store.workouts(matching: WorkoutFilter(source: source, limit: 1)).first {
    workout = w
} else {
    workout = Workout(activityType: .running, start: nil, end: nil, source: source)
    _ = try await store.saveWorkout(workout)
}
let oneLocation = [Location(latitude: 47.1, longitude: 8.5, timestamp: Timestamp(Instant(seconds: 1_700_000_000)))]

@discardableResult
func save(_ id: String, _ version: Int64) async throws -> UUID {
    let b = try await RouteBuilder(store: store, source: source)
    try await b.insert(oneLocation)
    return try await b.finish(
        workout: workout,
        metadata: [MetadataKey.syncIdentifier: .string(id), MetadataKey.syncVersion: .integer(version)]
    ).route.id
}

/// Saves a one-location route in one transaction (filling only: the measured saves go through a builder).
func saveWhole(_ id: String, _ version: Int64) async throws {
    let route = RouteSample(
        workoutID: workout.id, source: source, sync: SyncIdentity(identifier: id, version: version),
        start: oneLocation[0].timestamp, end: oneLocation[0].timestamp, locationCount: 1)
    _ = try await store.saveRoute(route, chunks: [.locations(oneLocation, sequence: 0)], releasing: nil)
}

// 1. Fill the store once (4 writers at a time).
let existing = try await store.routes(matching: RouteFilter(source: source)).count
if existing < routeCount {
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for w in 0..<4 {
            group.addTask {
                for i in stride(from: existing + w, to: routeCount, by: 4) {
                    try await saveWhole("route-\(i)", 1)
                    if i % 10_000 == 0 { FileHandle.standardError.write(Data("filling: \(i)/\(routeCount)\n".utf8)) }
                }
            }
        }
        try await group.waitForAll()
    }
    print("filled the store with \(routeCount - existing) routes in \(ms(ContinuousClock.now - started) / 1000) s")
}
let total = try await store.routes(matching: RouteFilter()).count

// 2. changes(since:) for the last 1,000 changes: 500 replacements (a deletion and an addition each).
let anchor = try await store.currentAnchor()
let round = Int64(Date().timeIntervalSince1970)
for i in 0..<500 { try await save("route-\(i)", round) }
var queryTimes: [Double] = []
var changeCount = 0
for _ in 0..<30 {
    let t0 = ContinuousClock.now
    let set = try await store.changes(since: anchor, matching: .all, limit: 1000)
    queryTimes.append(ms(ContinuousClock.now - t0))
    changeCount = set.added.count + set.deleted.count
}
print(
    String(
        format: "changes(since:) for the last %d changes of a store of %d routes: median %.2f ms, p90 %.2f ms (30 runs)",
        changeCount, total, percentile(queryTimes, 0.5), percentile(queryTimes, 0.9)))

// 3. Commit-to-delivery for a follower in another process.
let start = try await store.currentAnchor()
let follower = Process()
follower.executableURL = URL(fileURLWithPath: routekit)
follower.arguments = ["changes", "--follow", "--json", "--store", storePath, "--anchor", start.text]
let pipe = Pipe()
follower.standardOutput = pipe
try follower.run()
/// Reads the follower's lines with read(2) (Foundation's FileHandle reads trap on EINTR).
final class LineReader {
    let fd: Int32
    var pending = [UInt8]()
    init(fd: Int32) { self.fd = fd }

    func nextLine() -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeFirst(nl + 1)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            pending += buffer[0..<n]
        }
    }
}
let lines = LineReader(fd: pipe.fileHandleForReading.fileDescriptor)
_ = lines.nextLine()  // the catch-up (empty)
var latencies: [Double] = []
for i in 0..<200 {
    let t0 = ContinuousClock.now
    let id = try await save("latency", round * 1000 + Int64(i))
    let wanted = id.uuidString.lowercased()
    while let line = lines.nextLine() {
        if line.contains(wanted) { break }
    }
    latencies.append(ms(ContinuousClock.now - t0))
    try await Task.sleep(for: .milliseconds(Int.random(in: 5...60)))
}
print(
    String(
        format: "commit-to-delivery, follower in another process (200 commits): median %.1f ms, p99 %.1f ms, max %.1f ms",
        percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? 0))

// 4. The CPU an idle follower uses.
func cpuTicks(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return .nan }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the name: state is field 3, utime 14, stime 15 (1-based in proc(5)).
    return (Double(fields[11]) ?? .nan) + (Double(fields[12]) ?? .nan)
}
let idleSeconds = 20.0
let before = cpuTicks(follower.processIdentifier)
try await Task.sleep(for: .seconds(idleSeconds))
let after = cpuTicks(follower.processIdentifier)
let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
print(
    String(
        format: "idle follower: %.2f%% of a core over %.0f s (%.0f clock ticks at %.0f Hz)",
        (after - before) / hz / idleSeconds * 100, idleSeconds, after - before, hz))
kill(follower.processIdentifier, SIGINT)
follower.waitUntilExit()
print("follower exited with status \(follower.terminationStatus) after SIGINT")
