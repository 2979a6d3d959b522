import Foundation
import RouteKit
import RouteKitIngest
@_spi(RouteKitInternals) import RouteKitTCX
import RouteKitTesting
import Testing

/// TCX documents with `MultiSportSession`s, written inline.
enum MultiSportTCX {
    /// An `Activity` with one lap (10 s, 100 m) of one track of `points`, started at `id`.
    static func activity(_ sport: String, id: String, _ points: [String]) -> String {
        "<Activity Sport=\"\(sport)\"><Id>\(id)</Id><Lap StartTime=\"\(id)\"><TotalTimeSeconds>10</TotalTimeSeconds>"
            + "<DistanceMeters>100</DistanceMeters><Track>\n" + points.joined() + "</Track></Lap>"
            + "<Creator><Name>Forerunner 310XT</Name></Creator></Activity>\n"
    }

    /// A document whose `Activities` hold `content`.
    static func document(_ content: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <TrainingCenterDatabase xmlns="\(TCX.ns)"><Activities>
        \(content)
        </Activities></TrainingCenterDatabase>
        """
    }

    static let run = activity(
        "Running", id: "2024-05-01T06:00:00Z", [TCX.positioned(1, hr: 120), TCX.positioned(2, hr: 121), TCX.positioned(3, hr: 122)])
    static let ride = activity(
        "Biking", id: "2024-05-01T06:00:10Z", [TCX.positioned(11, hr: 130), TCX.positioned(12, hr: 131)])

    /// A duathlon: a run, a transition (a lap between the sports, with a trackpoint of its own), a ride.
    static let duathlon =
        "<MultiSportSession><Id>2024-05-01T06:00:00Z</Id><FirstSport>\(run)</FirstSport><NextSport>"
        + "<Transition><TotalTimeSeconds>5</TotalTimeSeconds><Track>\(TCX.positioned(5))</Track></Transition>"
        + "\(ride)</NextSport></MultiSportSession>"
}

@Suite("TCX multisport: a MultiSportSession is one workout of activities")
struct TCXMultisportTests {
    @Test("the parse says which MultiSportSession holds each activity, with the session's Id")
    func parse() throws {
        let xml = MultiSportTCX.document(MultiSportTCX.duathlon + MultiSportTCX.run)
        let doc = try TCXDocument.parse(Array(xml.utf8))
        #expect(doc.activities.map(\.multiSportSession) == [0, 0, nil])
        try #require(doc.multiSportSessions.count == 1)
        #expect(doc.multiSportSessions[0].idText == "2024-05-01T06:00:00Z")
        #expect(doc.workoutActivities.map(\.count) == [2, 1])
        // The transition's trackpoint belongs to no activity.
        let trackpoints = doc.activities.reduce(0) { $0 + Array($1.trackpoints).count }
        #expect(trackpoints == 8)
    }

    @Test("a MultiSportSession of two activities: one workout, two activities with their types, intervals and totals")
    func duathlon() async throws {
        let store = InMemoryStore()
        let bytes = Array(MultiSportTCX.document(MultiSportTCX.duathlon).utf8)
        let result = await TCXImporter(store: store).importBytes(bytes, name: "duathlon.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        try #require(result.tracks.count == 1)
        #expect(result.tracks[0].activities == 2)
        #expect(result.tracks[0].locations == 5)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        try #require(workouts.count == 1)
        let workout = workouts[0]
        #expect(workout.activityType == .multisport)
        try #require(workout.activities.count == 2)
        #expect(workout.activities.map(\.activityType) == [.running, .cycling])
        let begin = try #require(workout.start?.instant.seconds)
        #expect(workout.start == Timestamp(iso8601: "2024-05-01T06:00:00Z"))
        let end = try #require(workout.end?.instant.seconds)
        #expect(end - begin == 12)
        let starts = workout.activities.map { ($0.start?.instant.seconds ?? 0) - begin }
        #expect(starts == [0, 10])
        let ends = workout.activities.map { ($0.end?.instant.seconds ?? 0) - begin }
        #expect(ends == [3, 12])
        let run = workout.activities[0].metadata
        #expect(run["tcxSport"] == .string("Running"))
        #expect(run[MetadataKey.totalDistance] == .double(100))
        #expect(run["tcxLaps"] == .integer(1))
        #expect(run["tcxCreator"] == .string("Forerunner 310XT"))
        #expect(workout.metadata[MetadataKey.totalDistance] == .double(200))
        #expect(workout.metadata["tcxActivities"] == .integer(2))
        #expect(workout.laps.count == 2)
        // One route, every activity's trackpoints (each Track a segment); the series of both.
        let routes = try await store.routes(matching: RouteFilter())
        try #require(routes.count == 1)
        #expect(routes[0].locationCount == 5)
        #expect(routes[0].segmentStarts == [0, 3])
        var heartRate = 0
        for try await batch in store.samples(of: .heartRate, workout: workout.id) { heartRate += batch.samples.count }
        #expect(heartRate == 5)
        // Again: unchanged; in another store: the same identifier.
        let again = await TCXImporter(store: store).importBytes(bytes, name: "renamed.tcx")
        #expect(again.status == .unchanged)
        let other = InMemoryStore()
        _ = await TCXImporter(store: other).importBytes(bytes, name: "elsewhere.tcx")
        let identifier = try await other.workouts(matching: WorkoutFilter()).first?.sync?.identifier
        #expect(identifier != nil)
        #expect(identifier == workout.sync?.identifier)
        #expect(identifier?.hasPrefix("tcx-") == true)
    }

    @Test("two Activities outside a MultiSportSession stay two workouts, recording no activities")
    func separateActivities() async throws {
        let store = InMemoryStore()
        let bytes = Array(MultiSportTCX.document(MultiSportTCX.run + MultiSportTCX.ride).utf8)
        let result = await TCXImporter(store: store).importBytes(bytes, name: "two.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.tracks.count == 2)
        #expect(result.tracks.map(\.activities) == [0, 0])
        let workouts = try await store.workouts(matching: WorkoutFilter())
        try #require(workouts.count == 2)
        #expect(workouts.allSatisfy { $0.activities.isEmpty })
        let numbers = Set(workouts.compactMap { $0.metadata["tcxActivity"] })
        #expect(numbers == [.integer(0), .integer(1)])
        let types = Set(workouts.map(\.activityType.rawValue))
        #expect(types == ["running", "cycling"])
    }

    @Test("a MultiSportSession then an Activity of its own: two workouts, the first of two activities")
    func sessionAndActivity() async throws {
        let store = InMemoryStore()
        let bytes = Array(MultiSportTCX.document(MultiSportTCX.duathlon + MultiSportTCX.ride).utf8)
        let result = await TCXImporter(store: store).importBytes(bytes, name: "mixed.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.tracks.map(\.activities) == [2, 0])
        #expect(result.tracks.map(\.locations) == [5, 2])
    }

    @Test("a MultiSportSession of one activity is that activity: the same workout and identifier as an Activity of its own")
    func sessionOfOne() async throws {
        let plain = Array(MultiSportTCX.document(MultiSportTCX.run).utf8)
        let session = "<MultiSportSession><Id>2024-05-01T06:00:00Z</Id><FirstSport>\(MultiSportTCX.run)</FirstSport></MultiSportSession>"
        let wrapped = Array(MultiSportTCX.document(session).utf8)
        let store = InMemoryStore()
        let first = await TCXImporter(store: store).importBytes(plain, name: "plain.tcx")
        #expect(first.status == .imported)
        let second = await TCXImporter(store: store).importBytes(wrapped, name: "wrapped.tcx")
        #expect(second.status == .unchanged)
        #expect(second.tracks.first?.activities == 0)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        #expect(workouts.count == 1)
        #expect(workouts.first?.activities.isEmpty == true)
    }
}
