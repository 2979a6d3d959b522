import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitApplication
import RouteKitProcessing
import RouteKitTesting
import Testing

@Suite("Workout splits: per lap and per distance")
struct WorkoutSplitsTests {
    static let start: Int64 = 1_714_550_400

    /// `count` fixes a second apart going north 3 m at a time (10.8 km/h).
    static func run(_ count: Int) -> [Location] {
        (0..<count).map { i in
            Location(
                latitude: 47 + Double(i) * 3 / 111_000, longitude: 8,
                timestamp: Timestamp(Instant(seconds: start + Int64(i))))
        }
    }

    static func time(_ second: Int64) -> Timestamp { Timestamp(Instant(seconds: start + second)) }

    /// A workout with `events` and a route of `count` fixes, heart rate 120 for the first 600 s and 150 after.
    static func saved(_ count: Int, events: [WorkoutEvent] = []) async throws -> (InMemoryStore, Workout) {
        let store = InMemoryStore()
        let source = try Source(name: "watch")
        let workout = Workout(
            activityType: .running, start: time(0), end: time(Int64(count - 1)), source: source, events: events)
        _ = try await store.saveWorkout(workout)
        let locations = run(count)
        let route = RouteSample(
            workoutID: workout.id, source: source, sync: SyncIdentity(identifier: "splits", version: 1),
            start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: count)
        _ = try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
        let heartRate = (0..<count).map { QuantitySample(timestamp: time(Int64($0)), value: $0 < 600 ? 120 : 150) }
        try await store.saveSeries(QuantitySeries(type: .heartRate, samples: heartRate), workout: workout.id, as: source)
        return (store, workout)
    }

    @Test("per kilometre: full kilometres and a shorter last one, adding up to the workout's distance and moving time")
    func perKilometre() async throws {
        let (store, workout) = try await Self.saved(1_801)  // 5.4 km in 30 minutes
        let whole = try await WorkoutStatistics.compute(store: store, id: workout.id).statistics
        let report = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .kilometre)
        #expect(report.splits.map(\.number) == [1, 2, 3, 4, 5, 6])
        let distances = report.splits.map(\.statistics.distanceMetres)
        for d in distances.dropLast() { #expect(abs(d - 1_000) < 3.1, "\(d)") }  // one 3 m step at most past
        #expect(abs(distances.reduce(0, +) - whole.distanceMetres) < 1e-3)
        let moving = report.splits.compactMap(\.statistics.movingSeconds).reduce(0, +)
        #expect(abs(moving - (whole.movingSeconds ?? 0)) < 1e-3)
        #expect(report.splits.allSatisfy { $0.recorded == nil })
        #expect(report.warnings.isEmpty)
        // A mile is 1,609.344 m.
        let miles = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .mile)
        #expect(miles.splits.count == 4)
        #expect(abs(miles.splits[0].statistics.distanceMetres - 1_609.344) < 3.1)
    }

    @Test("per lap: each lap's fixes and heart rate, its recorded totals beside; the laps add up to the whole")
    func perLap() async throws {
        let laps = [
            WorkoutEvent(
                kind: .lap, start: Self.time(0), end: Self.time(600),
                metadata: [MetadataKey.totalDistance: .double(1_800.5)]),
            WorkoutEvent(kind: .lap, start: Self.time(600), end: Self.time(1_200)),
            WorkoutEvent(kind: .lap, start: Self.time(1_200), end: Self.time(1_500)),
        ]
        let (store, workout) = try await Self.saved(1_501, events: laps)
        let whole = try await WorkoutStatistics.compute(store: store, id: workout.id).statistics
        let report = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .laps)
        try #require(report.splits.count == 3)
        let s = report.splits.map(\.statistics)
        // 1,500 equal steps: 600, 600 and 300 of them.
        let step = whole.distanceMetres / 1_500
        #expect(abs(s[0].distanceMetres - 600 * step) < 0.01 && abs(s[1].distanceMetres - 600 * step) < 0.01)
        #expect(abs(s[2].distanceMetres - 300 * step) < 0.01)
        #expect(abs(s.map(\.distanceMetres).reduce(0, +) - whole.distanceMetres) < 1e-3)
        #expect(s[0].elapsedSeconds == 600 && s[2].elapsedSeconds == 300)
        #expect(s[0].heartRateAverage == 120)
        #expect(s[1].heartRateAverage == 150)
        #expect(report.splits[0].recorded?[MetadataKey.totalDistance] == .double(1_800.5))
        #expect(report.splits[1].recorded == [:])
        #expect(report.splits[0].start == Self.time(0) && report.splits[2].end == Self.time(1_500))
        #expect(report.warnings.isEmpty)

        // The same numbers in the JSON both doors serve.
        let json = WorkoutSplitsJSON(report)
        #expect(json.by == "lap" && json.metres == nil && json.splits.count == 3)
        #expect(json.splits[1].heartRate?.average == 150)
    }

    @Test("an overlapping lap and one outside the workout are measured and named in warnings; no laps, a warning")
    func oddLaps() async throws {
        let laps = [
            WorkoutEvent(kind: .lap, start: Self.time(0), end: Self.time(700)),
            WorkoutEvent(kind: .lap, start: Self.time(600), end: Self.time(5_000)),
            WorkoutEvent(kind: .lap, start: nil, end: nil, metadata: [MetadataKey.totalDistance: .double(5)]),
        ]
        let (store, workout) = try await Self.saved(1_001, events: laps)
        let report = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .laps)
        #expect(report.splits.map(\.number) == [1, 2])
        #expect(report.warnings.contains { $0.hasPrefix("lap 1 overlaps lap 2 by 100 s") }, "\(report.warnings)")
        #expect(report.warnings.contains("lap 2 ends after its workout"), "\(report.warnings)")
        #expect(report.warnings.contains { $0.hasPrefix("1 lap(s) without a start time") }, "\(report.warnings)")
        // Lap 1 ends where lap 2 starts (600 s), not at its own end.
        #expect(report.splits[0].statistics.elapsedSeconds == 600)

        let (plain, bare) = try await Self.saved(100)
        let none = try await WorkoutStatistics.splits(store: plain, id: bare.id, rule: .laps)
        #expect(none.splits.isEmpty)
        #expect(none.warnings.first?.contains("no laps") == true)
    }

    @Test("an indoor workout (no route): heart rate over its time less its pauses, per lap too; no distance, no times")
    func indoor() async throws {
        let store = InMemoryStore()
        let source = try Source(name: "treadmill")
        let workout = Workout(
            activityType: .running, start: Self.time(0), end: Self.time(600), source: source,
            events: [
                WorkoutEvent(kind: .pause, start: Self.time(100)), WorkoutEvent(kind: .resume, start: Self.time(160)),
                WorkoutEvent(kind: .lap, start: Self.time(0), end: Self.time(300)),
                WorkoutEvent(kind: .lap, start: Self.time(300), end: Self.time(600)),
            ])
        _ = try await store.saveWorkout(workout)
        let heartRate = (0..<600).map { QuantitySample(timestamp: Self.time(Int64($0)), value: $0 < 300 ? 110 : 140) }
        try await store.saveSeries(QuantitySeries(type: .heartRate, samples: heartRate), workout: workout.id, as: source)
        let report = try await WorkoutStatistics.compute(
            store: store, id: workout.id,
            request: {
                var r = WorkoutStatisticsRequest(); r.maximumHeartRate = 200; return r
            }())
        let s = report.statistics
        #expect(report.route == nil && s.distanceMetres == 0 && s.elapsedSeconds == nil && s.movingSeconds == nil)
        // 240 s at 110 (the pause left out), 300 s at 140.
        let average = try #require(s.heartRateAverage)
        #expect(abs(average - (240.0 * 110 + 300 * 140) / 540) < 1e-9)
        #expect(abs((s.zones ?? []).map(\.seconds).reduce(0, +) - 540) < 1e-9)
        let laps = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .laps)
        #expect(laps.splits.map { $0.statistics.heartRateAverage } == [110, 140])
    }

    @Test("per activity: each recorded activity measured; a workout without any is one activity, the whole")
    func perActivity() async throws {
        let (store, plain) = try await Self.saved(1_501)
        let whole = try await WorkoutStatistics.compute(store: store, id: plain.id).statistics
        let one = try await WorkoutStatistics.splits(store: store, id: plain.id, rule: .activities)
        #expect(one.splits.count == 1 && one.warnings.isEmpty)
        #expect(abs((one.splits.first?.statistics.distanceMetres ?? 0) - whole.distanceMetres) < 1e-6)

        var workout = plain
        workout.activities = [
            WorkoutActivity(activityType: .running, start: Self.time(0), end: Self.time(500), metadata: ["part": .integer(1)]),
            WorkoutActivity(activityType: .walking, start: Self.time(500), end: Self.time(1_500)),
        ]
        workout.sync = SyncIdentity(identifier: "activities", version: 2)
        workout.id = UUID()
        _ = try await store.saveWorkout(workout)
        let route = RouteSample(
            workoutID: workout.id, source: workout.source, sync: SyncIdentity(identifier: "activities-route", version: 1),
            start: Self.time(0), end: Self.time(1_500), locationCount: 1_501)
        _ = try await store.saveRoute(route, chunks: [.locations(Self.run(1_501), sequence: 0)], releasing: nil)
        let two = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .activities)
        try #require(two.splits.count == 2)
        #expect(two.splits.map(\.statistics.elapsedSeconds) == [500, 1_000])
        #expect(two.splits[0].recorded?["part"] == .integer(1))
        #expect(WorkoutSplitsJSON(two).by == "activity")
        #expect(try SplitRule(parsing: "activity", name: "--by") == .activities)
    }

    @Test("the rule's text: lap, km, mile, metres; anything else is refused naming it")
    func parsing() throws {
        #expect(try SplitRule(parsing: "KM", name: "--by") == .kilometre)
        #expect(try SplitRule(parsing: "400", name: "--by") == .distance(metres: 400))
        #expect(try SplitRule(parsing: "laps", name: "--by") == .laps)
        for bad in ["0", "5", "nan", "furlong", "-1000", "1e9"] {
            let error = #expect(throws: RouteKitError.self) { try SplitRule(parsing: bad, name: "--by") }
            #expect(error?.message.contains("'\(bad)'") == true)
        }
    }
}
