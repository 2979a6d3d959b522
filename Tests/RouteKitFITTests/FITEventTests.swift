import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitIngest
import RouteKitTesting
import Testing

@Suite("FIT events: pauses, motion pauses, laps with their totals, markers")
struct FITEventTests {
    /// An activity (one session: `activityFIT`'s) with a manual pause, an auto pause, a user marker, a gear change (not a marker) and two laps with
    /// totals.
    static func file(start: UInt32 = 1_000_000_000) -> [UInt8] {
        var w = activityFIT(records: 60, start: start)
        // event: timestamp, event, event_type, data (timer_trigger for the timer).
        w.define(local: 2, global: 21, fields: [(253, 4, 0x86), (0, 1, 0x00), (1, 1, 0x00), (3, 4, 0x86)])
        w.message(local: 2, w.u32(start) + [0, 0] + w.u32(0))  // timer start
        w.message(local: 2, w.u32(start + 10) + [0, 4] + w.u32(0))  // stop_all by hand
        w.message(local: 2, w.u32(start + 15) + [0, 0] + w.u32(0))
        w.message(local: 2, w.u32(start + 30) + [0, 1] + w.u32(1))  // auto pause
        w.message(local: 2, w.u32(start + 33) + [0, 0] + w.u32(1))
        w.message(local: 2, w.u32(start + 40) + [32, 3] + w.u32(0))  // user marker
        w.message(local: 2, w.u32(start + 41) + [43, 3] + w.u32(0))  // rear gear change: not a marker
        // lap: timestamp, start_time, elapsed, timer, distance, avg/max heart rate, avg power, ascent,
        // intensity, trigger, enhanced avg speed.
        w.define(
            local: 3, global: 19,
            fields: [
                (253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (8, 4, 0x86), (9, 4, 0x86), (15, 1, 0x02),
                (16, 1, 0x02), (19, 2, 0x84), (21, 2, 0x84), (23, 1, 0x00), (24, 1, 0x00), (110, 4, 0x86),
            ])
        w.message(
            local: 3,
            w.u32(start + 30) + w.u32(start) + w.u32(30_000) + w.u32(25_000) + w.u32(12_345) + [120, 150]
                + w.u16(210) + w.u16(7) + [0, 2] + w.u32(3_210))
        // The second lap has no start_time: its end less its elapsed time.
        w.message(
            local: 3,
            w.u32(start + 59) + w.u32(.max) + w.u32(29_000) + w.u32(26_000) + w.u32(9_000) + [255, 255]
                + w.u16(.max) + w.u16(.max) + [1, 0] + w.u32(.max))
        return w.file()
    }

    @Test("kinds, times and the laps' recorded totals; the pauses both count")
    func events() async throws {
        let start: UInt32 = 1_000_000_000
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(Self.file(start: start), name: "events.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let begin = try #require(workout.start?.instant.seconds)
        try #require(
            workout.events.map(\.kind) == [.lap, .pause, .resume, .motionPaused, .lap, .motionResumed, .marker])
        #expect(workout.events.map { ($0.start?.instant.seconds ?? 0) - begin } == [0, 10, 15, 30, 30, 33, 40])
        #expect(workout.events[6].metadata[MetadataKey.eventName] == .string("user_marker"))
        let laps = workout.laps
        try #require(laps.count == 2)
        let first = laps[0].metadata
        #expect(first[MetadataKey.totalElapsedTime] == .double(30))
        #expect(first[MetadataKey.totalTimerTime] == .double(25))
        #expect(first[MetadataKey.totalDistance] == .double(123.45))
        #expect(first[MetadataKey.averageHeartRate] == .double(120))
        #expect(first[MetadataKey.maximumHeartRate] == .double(150))
        #expect(first[MetadataKey.averagePower] == .double(210))
        #expect(first[MetadataKey.totalAscent] == .double(7))
        #expect(first[MetadataKey.averageSpeed] == .double(3.21))
        #expect(first[MetadataKey.intensity] == .string("active"))
        #expect(first[MetadataKey.lapTrigger] == .string("distance"))
        #expect(laps[0].end.map { $0.instant.seconds - begin } == 30)
        // Invalid values are left out, not stored as 255 or 65535.
        let second = laps[1].metadata
        #expect(second[MetadataKey.averageHeartRate] == nil && second[MetadataKey.averagePower] == nil)
        #expect(second[MetadataKey.intensity] == .string("rest"))
        #expect(laps[1].start.map { $0.instant.seconds - begin } == 30)
        // Both pauses are pauses of the workout: a manual one and the device's own.
        #expect(workout.pauseIntervals.map { $0.lowerBound.seconds(to: $0.upperBound) } == [5, 3])
    }
}
