import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitGPX
import RouteKitIngest
import RouteKitTesting
import Testing

@Suite("FIT: hostile numbers")
struct FITHardeningTests {
    /// An activity whose session states total_elapsed_time as a float64 (base type 0x89), which can hold anything.
    static func activity(elapsed: Double) -> [UInt8] {
        let start: UInt32 = 1_000_000_000
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
        w.message(local: 0, [4] + w.u32(start))
        w.define(local: 1, global: 20, fields: [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85)])
        for i in 0..<5 {
            w.message(local: 1, w.u32(start + UInt32(i)) + w.i32(Int32(596_523_235 + i * 1000)) + w.i32(83_519_065))
        }
        w.define(local: 2, global: 18, fields: [(253, 4, 0x86), (2, 4, 0x86), (7, 8, 0x89), (5, 1, 0x00)])
        let bits = elapsed.bitPattern
        w.message(local: 2, w.u32(start + 5) + w.u32(start) + (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) } + [1])
        return w.file()
    }

    @Test(
        "a float total_elapsed_time of 1e30, -1e30 or the largest double imports with the records' end, never a trap",
        arguments: [1e30 * 1000, -1e30 * 1000, Double.greatestFiniteMagnitude, 9.3e18 * 1000])
    func hugeElapsedTime(elapsed: Double) async throws {
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(Self.activity(elapsed: elapsed), name: "hostile.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        // The end falls back to the last record's time (4 s after the start).
        let start = try #require(workout.start?.instant)
        #expect(workout.end?.instant == Instant(seconds: start.seconds + 4))
    }

    @Test("a sane float total_elapsed_time still gives the session's end")
    func saneElapsedTime() async throws {
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(Self.activity(elapsed: 600_000), name: "ok.fit")
        #expect(result.status == .imported)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let start = try #require(workout.start?.instant)
        #expect(workout.end?.instant == Instant(seconds: start.seconds + 600))
    }

    @Test("laps past FITSummary.Limits.laps are counted in a warning of kind limit, not kept")
    func lapLimit() throws {
        let start: UInt32 = 1_000_000_000
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
        w.message(local: 0, [4] + w.u32(start))
        w.define(local: 1, global: 19, fields: [(253, 4, 0x86), (2, 4, 0x86)])
        let laps = FITSummary.Limits.laps + 7
        for i in 0..<laps { w.message(local: 1, w.u32(start + UInt32(i) + 1) + w.u32(start + UInt32(i))) }
        let summary = try FITFile.summary(w.file())
        #expect(summary.laps.count == FITSummary.Limits.laps)
        let warning = try #require(summary.warnings.first { $0.kind == .limit })
        #expect(warning.message.hasPrefix("7 lap message(s)"))
        #expect(warning.offset > 0)
    }

    @Test("400 sessions: one workout of 400 activities, each session's lap, pause and resume in order (events out of file order)")
    func manySessions() async throws {
        let start: UInt32 = 1_000_000_000
        let sessions = 400
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
        w.message(local: 0, [4] + w.u32(start))
        // event: timestamp, event (0 timer), event_type (0 start, 1 stop); lap: timestamp, start_time; session:
        // timestamp, start_time, sport.
        w.define(local: 1, global: 21, fields: [(253, 4, 0x86), (0, 1, 0x00), (1, 1, 0x00)])
        w.define(local: 2, global: 19, fields: [(253, 4, 0x86), (2, 4, 0x86)])
        w.define(local: 3, global: 18, fields: [(253, 4, 0x86), (2, 4, 0x86), (5, 1, 0x00)])
        // Backwards: the last session's messages first.
        for n in (0..<sessions).reversed() {
            let s = start + UInt32(n) * 100
            w.message(local: 1, w.u32(s + 20) + [0, 1])
            w.message(local: 1, w.u32(s + 30) + [0, 0])
            w.message(local: 2, w.u32(s + 50) + w.u32(s + 10))
        }
        for n in 0..<sessions { w.message(local: 3, w.u32(start + UInt32(n) * 100 + 90) + w.u32(start + UInt32(n) * 100) + [1]) }
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(w.file(), name: "many.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let workouts = try await store.workouts(matching: WorkoutFilter())
        try #require(workouts.count == 1)
        let workout = workouts[0]
        #expect(result.tracks.first?.activities == sessions)
        #expect(workout.activities.count == sessions)
        let begin = try #require(workout.start?.instant.seconds)
        #expect(begin == Int64(start) + 631_065_600)
        let kinds = workout.events.map(\.kind)
        let expectedKinds = (0..<sessions).flatMap { _ in [WorkoutEvent.Kind.lap, .pause, .resume] }
        #expect(kinds == expectedKinds)
        let times = workout.events.map { ($0.start?.instant.seconds ?? 0) - begin }
        let expectedTimes = (0..<sessions).flatMap { n in [10, 20, 30].map { Int64(n * 100 + $0) } }
        #expect(times == expectedTimes)
        // Each activity from its session's start to the session message's time (no elapsed time, no records).
        let starts = workout.activities.map { ($0.start?.instant.seconds ?? 0) - begin }
        let expectedStarts: [Int64] = (0..<sessions).map { Int64($0 * 100) }
        #expect(starts == expectedStarts)
        let ends = workout.activities.map { ($0.end?.instant.seconds ?? 0) - begin }
        let expectedEnds: [Int64] = (0..<sessions).map { Int64($0 * 100 + 90) }
        #expect(ends == expectedEnds)
    }
}
