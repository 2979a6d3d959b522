import Foundation
import RouteKit
import RouteKitGPX
import RouteKitHealth
import RouteKitIngest
import RouteKitSQLite
import Testing

/// Hostile numbers and shapes in an `export.xml`: errors or ignored values, never a trap.
@Suite("Apple Health: hostile exports")
struct HealthHardeningTests {
    static func export(_ workoutBody: String) throws -> URL {
        let dir = try HealthFixtures.temporaryFolder().appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" \
            sourceName="Test Watch" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100">
            \(workoutBody)
             </Workout>
            </HealthData>
            """
        try xml.write(to: dir.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test(
        "a segment event's duration of 1e300 min (or -1e300, 1e20 s, the largest double) gives a segment without an end",
        arguments: [
            ("1e300", "min"), ("-1e300", "min"), ("1e20", "s"), ("1.7976931348623157e308", "hr"), ("nan", "min"),
        ])
    func hugeEventDuration(duration: String, unit: String) async throws {
        let dir = try Self.export(
            """
              <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-03-01 09:05:00 +0100" \
            duration="\(duration)" durationUnit="\(unit)"/>
              <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-03-01 09:10:00 +0100" \
            duration="2" durationUnit="min"/>
            """)
        let store = try HealthFixtures.store(in: dir)
        let (summary, _) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.error == nil)
        #expect(summary.newWorkouts == 1)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let segments = workout.events.filter { $0.kind == .segment }
        #expect(segments.count == 2)
        #expect(segments.first?.end == nil, "the hostile duration gives no end")
        // The sane one still has its end, two minutes on.
        let second = try #require(segments.last)
        let start = try #require(second.start?.instant)
        #expect(second.end?.instant == Instant(seconds: start.seconds + 120))
    }

    @Test("a duration added to a time is checked: nil past the years 1 to 9999, exact otherwise")
    func addingChecked() {
        let t = Timestamp(Instant(seconds: 1_700_000_000, nanoseconds: 900_000_000), utcOffsetSeconds: 3600)
        #expect(t.adding(seconds: 1.25)?.instant == Instant(seconds: 1_700_000_002, nanoseconds: 150_000_000))
        #expect(t.adding(seconds: 1.25)?.utcOffsetSeconds == 3600)
        for bad in [1e300, -1e300, .infinity, .nan, Double(Int64.max), 1e12 + 1, 3e11] {
            #expect(t.adding(seconds: bad) == nil, "\(bad)")
        }
    }

    @Test("elements nested past 256 levels are an error naming the offset; 256 levels read")
    func nestingDepth() async throws {
        func nested(_ levels: Int) -> String {
            String(repeating: "<x>", count: levels) + String(repeating: "</x>", count: levels)
        }
        // HealthData and Workout are two levels.
        let fits = try Self.export(nested(254))
        let store = try HealthFixtures.store(in: fits)
        let (ok, _) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), fits.path)
        #expect(ok.error == nil)
        #expect(ok.newWorkouts == 1)

        let deep = try Self.export(nested(100_000) + "<WorkoutStatistics type=\"x\" sum=\"1\"/>")
        let store2 = try HealthFixtures.store(in: deep)
        let (refused, _) = await HealthFixtures.run(HealthImporter(store: store2, routeFiles: .gpx), deep.path)
        let error = try #require(refused.error)
        #expect(error.code == .malformedXML || error.code == .invalidValue, "\(error)")
        #expect(error.message.contains("nested more than 256 deep"), "\(error)")
        #expect(error.description.contains("export.xml"), "\(error)")
        #expect(try await store2.workouts(matching: WorkoutFilter()).isEmpty)
    }

    @Test("HealthKit's event types keep their kinds: motion pauses, laps, segments and markers apart")
    func eventKinds() async throws {
        let dir = try Self.export(
            """
              <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-03-01 09:02:00 +0100"/>
              <WorkoutEvent type="HKWorkoutEventTypeResume" date="2024-03-01 09:03:00 +0100"/>
              <WorkoutEvent type="HKWorkoutEventTypeMotionPaused" date="2024-03-01 09:04:00 +0100"/>
              <WorkoutEvent type="HKWorkoutEventTypeMotionResumed" date="2024-03-01 09:04:30 +0100"/>
              <WorkoutEvent type="HKWorkoutEventTypeLap" date="2024-03-01 09:00:00 +0100" duration="5" durationUnit="min"/>
              <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-03-01 09:05:00 +0100" duration="1" \
            durationUnit="min"/>
              <WorkoutEvent type="HKWorkoutEventTypeMarker" date="2024-03-01 09:06:00 +0100"/>
              <WorkoutEvent type="HKWorkoutEventTypePauseOrResumeRequest" date="2024-03-01 09:07:00 +0100"/>
            """)
        let store = try HealthFixtures.store(in: dir)
        let (summary, _) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.error == nil)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        #expect(
            workout.events.map(\.kind) == [.pause, .resume, .motionPaused, .motionResumed, .lap, .segment, .marker])
        let lap = try #require(workout.laps.first)
        #expect(lap.start.flatMap { s in lap.end.map { s.instant.seconds(to: $0.instant) } } == 300)
        #expect(workout.pauseIntervals.map { $0.lowerBound.seconds(to: $0.upperBound) } == [60, 30])
    }

    @Test("a workout activity with many children is read in one pass (they were copied for each child)")
    func manyActivityChildren() async throws {
        let children = (0..<2000).map { "<WorkoutEvent type=\"HKWorkoutEventTypeLap\" date=\"2024-03-01 09:0\($0 % 10):00 +0100\"/>" }
        let dir = try Self.export(
            """
            <WorkoutActivity uuid="A" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100">
            \(children.joined(separator: "\n"))
            </WorkoutActivity>
            """)
        let store = try HealthFixtures.store(in: dir)
        let (summary, _) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.error == nil)
        #expect(summary.newWorkouts == 1)
    }

    @Test("1,500 workouts and 1,500 top-level effort scores: each score to the workout it overlaps, its own source first")
    func manyEfforts() async throws {
        let dir = try HealthFixtures.temporaryFolder().appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        let base = Date(timeIntervalSince1970: 1_709_280_000)
        func at(_ minutes: Int) -> String { formatter.string(from: base.addingTimeInterval(Double(minutes) * 60)) }
        let n = 1500
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n"
        func workout(_ source: String, _ from: Int, _ to: Int) {
            xml += """
                 <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="\(to - from)" durationUnit="min" \
                sourceName="\(source)" startDate="\(at(from))" endDate="\(at(to))"/>

                """
        }
        func effort(_ source: String, _ from: Int, _ to: Int) {
            xml += """
                 <Record type="HKQuantityTypeIdentifierWorkoutEffortScore" sourceName="\(source)" unit="appleEffortScore" \
                startDate="\(at(from))" endDate="\(at(to))" value="5"/>

                """
        }
        // Efforts first, in reverse: their order does not matter.
        for k in (0..<n).reversed() { effort("Watch", 10 * k + 1, 10 * k + 4) }
        for k in 0..<n { workout("Watch", 10 * k, 10 * k + 5) }
        // One score over two workouts: the one of its own source wins over a longer overlap.
        let late = 10 * n + 100
        workout("Phone", late, late + 30)
        workout("Ring", late + 25, late + 60)
        effort("Ring", late + 5, late + 27)
        xml += "</HealthData>\n"
        try xml.write(to: dir.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
        let store = try HealthFixtures.store(in: dir)
        let (summary, _) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.error == nil)
        #expect(summary.unmatchedEffortScores == 0)
        #expect(summary.newEffortScores == n + 1)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        #expect(workouts.count == n + 2)
        for w in workouts {
            let efforts = try await store.efforts(ofWorkout: w.id).count
            let lateStart = base.addingTimeInterval(Double(late) * 60)
            if w.start?.date == lateStart {
                #expect(efforts == 0, "the Phone workout overlaps longer but is of another source")
            } else {
                #expect(efforts == 1)
            }
        }
    }
}
