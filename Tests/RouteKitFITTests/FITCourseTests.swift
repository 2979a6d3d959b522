import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitIngest
import RouteKitTesting
import Testing

/// A FIT course file imports as an activity does: a workout with a route and series, its course points waypoints.
@Suite("FIT courses")
struct FITCourseTests {
    /// A course (`file_id.type` 6) named "Ridge", sport cycling: five records with position, heart rate, cadence and
    /// altitude, a record with heart rate and no position, and one course point named "Top".
    static func file(start: UInt32 = 1_000_000_000) -> [UInt8] {
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
        w.message(local: 0, [6] + w.u32(start))
        // course: sport, name (an 8-byte string).
        w.define(local: 1, global: 31, fields: [(4, 1, 0x00), (5, 8, 0x07)])
        w.message(local: 1, [2] + Array("Ridge".utf8) + [0, 0, 0])
        // record: timestamp, lat, lon, heart rate, cadence, enhanced altitude.
        w.define(
            local: 2, global: 20,
            fields: [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85), (3, 1, 0x02), (4, 1, 0x02), (78, 4, 0x86)])
        for i in 0..<5 {
            w.message(
                local: 2,
                w.u32(start + UInt32(i)) + w.i32(Int32(596_523_235 + i * 1000)) + w.i32(Int32(83_519_065 + i * 1000))
                    + [UInt8(110 + i), 85] + w.u32(2_600 + UInt32(i) * 5))
        }
        // A record without a position: heart rate only, a series sample.
        w.define(local: 3, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
        w.message(local: 3, w.u32(start + 5) + [120])
        // course_point: timestamp, lat, lon, name.
        w.define(local: 4, global: 32, fields: [(1, 4, 0x86), (2, 4, 0x85), (3, 4, 0x85), (6, 8, 0x07)])
        w.message(local: 4, w.u32(start + 2) + w.i32(596_525_235) + w.i32(83_521_065) + Array("Top".utf8) + [0, 0, 0, 0, 0])
        return w.file()
    }

    // A course used to be a planned route (a GPX <rte> attachment of a workout without a route, its values dropped).
    @Test("a course is a workout with a route and series, named, typed by its sport; its course point a waypoint")
    func course() async throws {
        let store = InMemoryStore()
        let importer = FITImporter(store: store)
        let bytes = Self.file()
        let result = await importer.importBytes(bytes, name: "ridge.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        #expect(result.waypoints == 1)
        try #require(result.tracks.count == 1)
        let t = result.tracks[0]
        #expect(t.locations == 5)
        let routeID = try #require(t.route)
        var altitudes: [Double?] = []
        for try await batch in store.locations(of: routeID) { altitudes += batch.locations.map(\.altitude) }
        #expect(altitudes == [20, 21, 22, 23, 24])

        let workout = try #require(try await store.workout(id: t.workout))
        #expect(workout.sync?.identifier.hasPrefix("fit-course-") == true)
        #expect(workout.activityType == .cycling)
        #expect(workout.metadata[MetadataKey.course] == .bool(true))
        #expect(workout.metadata["fitFileType"] == .string("course"))
        #expect(workout.metadata["name"] == .string("Ridge"))
        #expect(workout.metadata["fitSport"] == .string("cycling"))
        #expect(workout.start.map { $0.instant.seconds(to: workout.end?.instant ?? $0.instant) } == 5)

        var heartRate: [Double] = []
        for try await batch in store.samples(of: .heartRate, workout: t.workout) {
            heartRate += batch.samples.map(\.value)
        }
        #expect(heartRate == [110, 111, 112, 113, 114, 120])
        var cadence = 0
        for try await batch in store.samples(of: .cadence, workout: t.workout) { cadence += batch.samples.count }
        #expect(cadence == 5)

        let attachments = try await GPXAttachments.read(workout: t.workout, from: store)
        #expect(attachments.routes.isEmpty)
        #expect(attachments.waypoints.map { $0.extras?.name } == ["Top"])

        // Again: unchanged, nothing added.
        let again = await importer.importBytes(bytes, name: "ridge-again.fit")
        #expect(again.status == .unchanged)
        #expect(again.tracks.first?.workout == t.workout)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 1)
        #expect(try await GPXAttachments.read(workout: t.workout, from: store).waypoints.count == 1)
    }
}
