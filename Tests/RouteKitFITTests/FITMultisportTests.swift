import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitIngest
import RouteKitProcessing
import RouteKitTesting
import Testing

@Suite("FIT multisport: one workout whose activities are the sessions")
struct FITMultisportTests {
    static let start: UInt32 = 1_000_000_000

    /// A swim (10 s), a transition (5 s) and a ride (20 s): 35 records a second apart with heart rate, the
    /// transition's 5 without a position (30 positioned); a lap for the swim and the transition, two for the ride; the
    /// timer started at 0 and stopped at 35. The sessions are written last and in reverse order.
    static func triathlonFile() -> [UInt8] {
        let start = Self.start
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
        w.message(local: 0, [4] + w.u32(start))
        // record: timestamp, lat, lon, heart rate. The swim moves ~1 m a second, the ride ~9 m.
        w.define(local: 1, global: 20, fields: [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85), (3, 1, 0x02)])
        for i in 0..<35 {
            let positioned = i < 10 || i >= 15
            let north = i < 15 ? i * 100 : 1_500 + (i - 15) * 1_000
            let lat: Int32 = positioned ? Int32(596_523_235 + north) : .max
            let lon: Int32 = positioned ? 83_519_065 : .max
            w.message(local: 1, w.u32(start + UInt32(i)) + w.i32(lat) + w.i32(lon) + [UInt8(100 + i)])
        }
        // event: timestamp, event (0 timer), event_type (0 start, 4 stop_all), data.
        w.define(local: 2, global: 21, fields: [(253, 4, 0x86), (0, 1, 0x00), (1, 1, 0x00), (3, 4, 0x86)])
        w.message(local: 2, w.u32(start) + [0, 0] + w.u32(0))
        w.message(local: 2, w.u32(start + 35) + [0, 4] + w.u32(0))
        // lap: timestamp, start_time, total_distance (cm).
        w.define(local: 3, global: 19, fields: [(253, 4, 0x86), (2, 4, 0x86), (9, 4, 0x86)])
        for (from, to, cm) in [(0, 10, 30_000), (10, 15, 2_000), (15, 25, 250_000), (25, 35, 250_000)] {
            w.message(local: 3, w.u32(start + UInt32(to)) + w.u32(start + UInt32(from)) + w.u32(UInt32(cm)))
        }
        // session: timestamp, start_time, total_elapsed_time (ms), total_distance (cm), sport, avg_heart_rate.
        w.define(
            local: 4, global: 18,
            fields: [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (9, 4, 0x86), (5, 1, 0x00), (16, 1, 0x02)])
        // Ride (cycling, 2), transition (3), swim (swimming, 5).
        for (from, to, cm, sport, heartRate) in [(15, 35, 500_000, 2, 125), (10, 15, 2_000, 3, 112), (0, 10, 30_000, 5, 105)] {
            w.message(
                local: 4,
                w.u32(start + UInt32(to)) + w.u32(start + UInt32(from)) + w.u32(UInt32((to - from) * 1_000))
                    + w.u32(UInt32(cm)) + [UInt8(sport), UInt8(heartRate)])
        }
        return w.file()
    }

    /// Seconds from the file's start (FIT's epoch is 1989-12-31, 631,065,600 s after 1970's).
    static func offset(_ t: Timestamp?) -> Int64? {
        t.map { $0.instant.seconds - (Int64(Self.start) + 631_065_600) }
    }

    @Test("three sessions: one workout, three activities with their types, intervals and totals; one route of every positioned record")
    func triathlon() async throws {
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(Self.triathlonFile(), name: "tri.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        try #require(result.tracks.count == 1)
        let track = result.tracks[0]
        #expect(track.activities == 3)
        #expect(track.locations == 30)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        try #require(workouts.count == 1)
        let workout = workouts[0]
        #expect(workout.activityType == .multisport)
        try #require(workout.activities.count == 3)
        #expect(Self.offset(workout.start) == 0)
        #expect(Self.offset(workout.end) == 35)
        let types = workout.activities.map(\.activityType)
        #expect(types == [.swimming, ActivityType(rawValue: "transition"), .cycling])
        let starts = workout.activities.map { Self.offset($0.start) }
        #expect(starts == [0, 10, 15])
        let ends = workout.activities.map { Self.offset($0.end) }
        #expect(ends == [10, 15, 35])
        // Each activity keeps what the device recorded for its session, as a lap does.
        let ride = workout.activities[2].metadata
        #expect(ride[MetadataKey.totalDistance] == .double(5_000))
        #expect(ride[MetadataKey.totalElapsedTime] == .double(20))
        #expect(ride[MetadataKey.averageHeartRate] == .double(125))
        #expect(ride["fitSport"] == .string("cycling"))
        #expect(workout.activities[0].metadata["fitSport"] == .string("swimming"))
        // The workout: the sessions counted, their totals summed.
        #expect(workout.metadata["fitSessions"] == .integer(3))
        #expect(workout.metadata[MetadataKey.totalDistance] == .double(5_320))
        #expect(workout.metadata[MetadataKey.totalElapsedTime] == .double(35))
        #expect(workout.metadata["fitSport"] == nil)
        // The laps of every session, and the file's pause.
        #expect(workout.laps.count == 4)
        #expect(workout.events.filter { $0.kind == .pause }.count == 1)
        // One route: every positioned record, the transition's records none of it.
        let routeID = try #require(track.route)
        let route = try #require(try await store.route(id: routeID))
        #expect(route.locationCount == 30)
        #expect(route.workoutID == workout.id)
        var stored = 0
        for try await batch in store.locations(of: routeID) { stored += batch.locations.count }
        #expect(stored == 30)
        #expect(try await store.routes(matching: RouteFilter()).count == 1)
        // The series are the whole file's: the transition's heart rate too.
        var heartRate = 0
        for try await batch in store.samples(of: .heartRate, workout: workout.id) { heartRate += batch.samples.count }
        #expect(heartRate == 35)
    }

    @Test("the same sports in every session: the workout is of that sport")
    func oneSport() async throws {
        // activityFIT's session (running, sport 1: 20 s from the start), then a second run of 10 s without records.
        let start = Self.start
        var w = activityFIT(records: 20, start: start)
        w.define(local: 3, global: 18, fields: [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (5, 1, 0x00)])
        w.message(local: 3, w.u32(start + 30) + w.u32(start + 20) + w.u32(10_000) + [1])
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(w.file(), name: "two-runs.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        #expect(workout.activityType == .running)
        #expect(workout.activities.count == 2)
        #expect(workout.metadata["fitSport"] == .string("running"))
    }

    @Test("the identity is stable: importing again is unchanged, another store gets the same identifier")
    func identity() async throws {
        let bytes = Self.triathlonFile()
        let store = InMemoryStore()
        let first = await FITImporter(store: store).importBytes(bytes, name: "tri.fit")
        #expect(first.status == .imported)
        let again = await FITImporter(store: store).importBytes(bytes, name: "renamed.fit")
        #expect(again.status == .unchanged)
        #expect(again.tracks.first?.activities == 3)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 1)
        let other = InMemoryStore()
        _ = await FITImporter(store: other).importBytes(bytes, name: "elsewhere.fit")
        let a = try await store.workouts(matching: WorkoutFilter()).first?.sync?.identifier
        let b = try await other.workouts(matching: WorkoutFilter()).first?.sync?.identifier
        #expect(a != nil)
        #expect(a == b)
        #expect(a?.hasPrefix("fit-") == true)
    }

    @Test("splits by activity: one per session, the transition's without fixes, each with its recorded totals")
    func splitsByActivity() async throws {
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(Self.triathlonFile(), name: "tri.fit")
        let workoutID = try #require(result.tracks.first?.workout)
        let report = try await WorkoutStatistics.splits(store: store, id: workoutID, rule: .activities)
        try #require(report.splits.count == 3)
        #expect(report.splits.map(\.number) == [1, 2, 3])
        let swim = report.splits[0].statistics.distanceMetres
        let transition = report.splits[1].statistics.distanceMetres
        let ride = report.splits[2].statistics.distanceMetres
        #expect(swim > 0)
        #expect(transition == 0)
        #expect(ride > swim)
        #expect(report.splits[2].recorded?[MetadataKey.totalDistance] == .double(5_000))
        #expect(Self.offset(report.splits[1].start) == 10)
    }

    @Test("a single-session file imports as before: one workout recording no activities, the identifier it had")
    func singleSession() async throws {
        let bytes = activityFIT(records: 20).file()
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(bytes, name: "one.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        try #require(result.tracks.count == 1)
        #expect(result.tracks[0].activities == 0)
        #expect(result.tracks[0].locations == 20)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        try #require(workouts.count == 1)
        let workout = workouts[0]
        #expect(workout.activities.isEmpty)
        #expect(workout.allActivities.count == 1)
        #expect(workout.activityType == .running)
        #expect(workout.metadata["fitSessions"] == nil)
        #expect(workout.metadata["totalElapsedTime"] == .double(20))
        #expect(workout.metadata["fitSport"] == .string("running"))
        let expected = try await Self.previousIdentifier(bytes)
        #expect(expected?.hasPrefix("fit-") == true)
        #expect(workout.sync?.identifier == expected)
    }

    /// The sync identifier the release that made each session a workout gave a one-session file: the import
    /// engine's track identity (`TrackImport`, prefix `fit-`) of the session's start, sport, elapsed time and
    /// distance, then every positioned record as a point with its values, in file order.
    static func previousIdentifier(_ bytes: [UInt8]) async throws -> String? {
        let summary = try FITFile.summary(bytes)
        let session = try #require(summary.sessions.first)
        let store = InMemoryStore()
        let context = ImportContext(store: store, source: .defaultImport, workoutOverrides: nil)
        let track = TrackImport(
            context: context, label: "reference", info: GPXPathInfo(), creator: nil, allowResume: false,
            originKind: "reference", syncPrefix: "fit-",
            makeWorkout: { sync in
                Workout(activityType: .other, start: nil, end: nil, source: .defaultImport, sync: sync)
            })
        track.combineIdentity([
            session.startTime.map(Double.init), session.sport.map(Double.init), session.totalElapsedTime,
            session.totalDistance,
        ])
        var points: [GPXPoint] = []
        var reader = FITRecordReader(bytes)
        while let batch = try reader.next() {
            for r in batch {
                guard let lat = r.latitude, let lon = r.longitude else { continue }
                let location = Location(
                    latitude: lat, longitude: lon, timestamp: summary.timestamp(r.timestamp), altitude: r.altitude,
                    speed: r.speed)
                let values = GPXPointValues(
                    heartRate: r.heartRate, cadence: r.cadence, temperature: r.temperature, power: r.power)
                points.append(GPXPoint(location: location, values: values))
            }
        }
        try await track.add(points)
        _ = try await track.finish(info: GPXPathInfo())
        return try await store.workouts(matching: WorkoutFilter()).first?.sync?.identifier
    }
}

@Suite("FIT multisport corpus", .enabled(if: FormatCorpus.available, "../shared/format-corpus is absent"))
struct FITMultisportCorpusTests {
    @Test("an Ironman (FR935, 5 sessions): one multisport workout whose activities and splits are the sessions")
    func ironman() async throws {
        let file = try #require(FormatCorpus.root) + "/sports-alliance__sports-lib__src__specs__fixtures__triathlons__fit__4623204522.fit"
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importFile(file)
        #expect(result.error == nil, "\(String(describing: result.error))")
        try #require(result.tracks.count == 1)
        #expect(result.tracks[0].locations == 30_574)
        let workout = try #require(try await store.workout(id: result.tracks[0].workout))
        #expect(workout.activityType == .multisport)
        try #require(workout.activities.count == 5)
        let types = workout.activities.map(\.activityType.rawValue)
        #expect(types == ["swimming", "transition", "cycling", "transition", "running"])
        // fitdecode: the ride recorded 180,301.58 m, the run 42,563.91 m.
        #expect(workout.activities[2].metadata[MetadataKey.totalDistance] == .double(180_301.58))
        let report = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: .activities)
        try #require(report.splits.count == 5)
        let ride = report.splits[2].statistics.distanceMetres
        let run = report.splits[4].statistics.distanceMetres
        #expect(abs(ride - 180_301.58) / 180_301.58 < 0.05, "ride \(ride) m")
        #expect(abs(run - 42_563.91) / 42_563.91 < 0.05, "run \(run) m")
    }
}
