import Foundation
public import RouteKit
public import RouteKitIngest

/// Imports TCX (Garmin Training Center Database v2) files, plain or gzip-compressed, into a store.
///
/// - **Activities**: each `Activity` of its own becomes a workout: its `Sport` as
///   activity type (`ActivityType(guessingFrom:)`), its `Id` as start time (else the first lap's
///   start, else the first trackpoint's time), the last trackpoint's time as end. The metadata holds the laps'
///   `TotalTimeSeconds`, `DistanceMeters` and `Calories` summed (`totalTimerTime`, `totalDistance`,
///   `totalCalories`), the sport as written (`tcxSport`), `Creator/Name` (`tcxCreator`) and `Author/Name`
///   (`tcxAuthor`). Laps become lap events holding what the lap recorded (`TotalTimeSeconds`, `DistanceMeters`,
///   `Calories`, `MaximumSpeed`, average and maximum heart rate, `Cadence`, `Intensity`, `TriggerMethod` and the
///   `LX` extension's averages, under `MetadataKey` names); between two `Track`s of a lap (a device starts a new
///   one after a pause) a pause and a resume event.
/// - **Multisport**: a `MultiSportSession` of several activities (a triathlon) becomes one workout whose
///   activities (`WorkoutActivity`) are its `Activity`s, each with its sport, start, end and what it recorded
///   (its laps' totals, sport, lap count and device); the workout is of their type when they share one, else
///   `ActivityType.multisport`, starts at the session's `Id` and holds every activity's laps, pauses, trackpoints
///   (one route, each `Track` a segment) and series. Separate `Activity` elements not in a `MultiSportSession`
///   stay separate workouts; a `Transition` between two sports is not read. (Before, each activity of a session
///   was a workout of its own, tied to the others by `tcxActivity`.)
/// - **Trackpoints** with a position become the route, in file order, with altitude and speed (the `Speed`
///   extension); each `Track` is a segment of it (`gpxSegmentStarts`). Heart rate, cadence (`Cadence`, else the
///   `RunCadence` extension) and power (`Watts`) of every trackpoint with a time become series of the workout;
///   trackpoints without a position feed the series only (an indoor activity has series and no route).
/// - **Courses** (`Courses/Course`): each a workout of its own, its trackpoints imported as an activity's are
///   (positioned ones the route, heart rate, cadence and power the series), its `CoursePoint`s waypoints
///   (attachments of the workout). The metadata says it is a course (`course` `true`, `tcxContent` `course`) and
///   holds its `Name` (`name`); TCX gives a course no sport, so the activity type is `other`.
/// - **Identity**: an activity's sync identifier is `tcx-` and a hash of its content (every trackpoint's mapped
///   values, the track structure, the activity's `Id`, sport, creator and lap totals; a `MultiSportSession`'s: the
///   number of its activities and each one's), a course's `tcx-course-` and a hash of its trackpoints, name and
///   course points, so re-importing the same file (under any name, compressed or not) changes nothing. The version
///   is 1. An `Activity` of its own keeps the identifier it had; a `MultiSportSession` imported by the release
///   that made a workout of each of its activities gets a new workout, and those workouts stay as they were
///   (delete them to keep only the new one).
/// - **Tolerated** with a warning: whitespace or a byte order mark before `<?xml`, coordinates or values that
///   are not numbers (left out), positions outside the valid range (dropped, the values kept as series).
/// - **Not kept**: per-trackpoint `DistanceMeters`, `SensorState`, lap fields other than the three totals (average
///   and maximum heart rate, intensity, trigger method, `LX` extensions), `Notes`, workout plans
///   (`Workouts`), and other namespaces' extensions. A doubled treadmill cadence or a wrong time zone is stored
///   as written.
public final class TCXImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "tcx-import"

    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source

    /// Creates an importer.
    public init(store: any RouteStore, source: Source = .defaultImport) {
        self.store = store
        self.source = source
    }

    /// Values that win over the file's own for the workouts this importer creates (see `WorkoutOverrides` in
    /// RouteKitIngest).
    package var workoutOverrides: WorkoutOverrides?

    private func makeContext() -> ImportContext {
        ImportContext(store: store, source: source, workoutOverrides: workoutOverrides)
    }

    /// Imports TCX held in memory (an archive's entry, decompressed), reported and labelled as `name`.
    public func importBytes(_ bytes: [UInt8], name: String) async -> ImportResult {
        await .collect(file: name) { result in
            try await importDocument(TCXDocument.parse(bytes), label: name, into: &result)
        }
    }

    /// Imports TCX read as a stream from `read` (an archive's large entry, inflated as it is read), reported and
    /// labelled as `name`.
    package func importStream(
        name: String, reading read: @escaping (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
    ) async -> ImportResult {
        // Parsed once, outside `collect`: the stream cannot be read again when `collect` runs its body a second time
        // (after a ResumeMismatch).
        let document = Result { () throws(RouteKitError) -> TCXDocument in try TCXDocument.parse(reading: read) }
        return await .collect(file: name) { result in
            try await importDocument(document.get(), label: name, into: &result)
        }
    }

    /// Imports one file. Never throws: failures are in the result, naming the file (and the line and column of
    /// malformed XML).
    public func importFile(_ path: String) async -> ImportResult {
        await .collect(file: path) { result in
            // Read as a stream (gzip decompressed on the fly): memory does not grow with the file.
            let file = try StreamingFile(path: path)
            var document = try TCXDocument.parse { (b: UnsafeMutableRawBufferPointer) throws(RouteKitError) in
                try file.read(into: b)
            }
            if file.isGzip {
                document.warnings.insert("the file is gzip-compressed; it was decompressed while reading", at: 0)
            }
            try await importDocument(
                document, label: URL(fileURLWithPath: path).standardizedFileURL.path, into: &result)
        }
    }

    /// Imports a parsed document (``importFile(_:)`` without the file): `label` names it in builders.
    package func importDocument(_ document: TCXDocument, label: String, into result: inout ImportResult)
        async throws
    {
        result.warnings += document.warnings
        if document.activities.isEmpty && document.courses.isEmpty {
            result.warnings.append(
                document.workoutPlans > 0
                    ? "the file holds \(document.workoutPlans) workout plan(s) and no activity or course: nothing to import"
                    : "the file holds no activity or course: nothing to import")
        }
        var invalid = 0
        var untimed = 0
        var nullIsland = 0
        // One workout per Activity of its own, one per MultiSportSession of several activities.
        let workouts = document.workoutActivities
        for (n, activities) in workouts.enumerated() {
            if activities.count > 1 {
                let session = activities.first?.multiSportSession.flatMap { k in
                    document.multiSportSessions.indices.contains(k) ? document.multiSportSessions[k] : nil
                }
                try await importMultiSport(
                    activities, session: session, number: n, of: workouts.count, author: document.authorName,
                    label: label, into: &result, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
            } else if let activity = activities.first {
                try await importActivity(
                    activity, number: n, of: workouts.count, author: document.authorName, label: label,
                    into: &result, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
            }
        }
        for (n, course) in document.courses.enumerated() {
            try await importCourse(
                course, number: n, of: document.courses.count, author: document.authorName, label: label,
                into: &result, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
        }
        if invalid > 0 {
            result.warnings.append(
                "\(invalid) point(s) with a position outside the valid range: their positions were dropped")
        }
        if nullIsland > 0 {
            result.warnings.append(
                "\(nullIsland) trackpoint(s) at latitude 0, longitude 0 (some devices write it for no fix): kept as written"
            )
        }
        if untimed > 0 {
            result.warnings.append(
                "\(untimed) trackpoint(s) without a position or a time: their values (heart rate, cadence, power) "
                    + "cannot be series samples and were not stored")
        }
    }

    /// The location of a trackpoint with a valid position, else `nil` (counting an invalid one).
    static func location(_ p: TCXTrackpoint, invalid: inout Int) -> Location? {
        guard let lat = p.latitude, let lon = p.longitude else { return nil }
        let l = Location(latitude: lat, longitude: lon, timestamp: p.time, altitude: p.altitude, speed: p.speed)
        guard (try? l.validate()) != nil else {
            invalid += 1
            return nil
        }
        return l
    }

    /// A trackpoint's series values.
    static func values(_ p: TCXTrackpoint) -> GPXPointValues {
        var values = GPXPointValues()
        values[.heartRate] = p.heartRate
        values[.cadence] = p.cadence ?? p.runCadence
        values[.power] = p.power
        return values
    }

    /// Laps as lap events with their recorded totals; between two tracks of a lap, a pause and a resume (when time
    /// goes forward).
    static func events(_ activity: TCXActivity) -> [WorkoutEvent] {
        var events: [WorkoutEvent] = []
        for lap in activity.laps {
            var previousEnd: Timestamp?
            var lapEnd: Timestamp?
            for track in lap.tracks {
                let first = track.lazy.compactMap(\.time).first
                let last = track.reversed().lazy.compactMap(\.time).first
                if let end = previousEnd, let first, end.instant <= first.instant {
                    events.append(WorkoutEvent(kind: .pause, start: end))
                    events.append(WorkoutEvent(kind: .resume, start: first))
                }
                if let last {
                    previousEnd = last
                    lapEnd = last
                }
            }
            let start = lap.startTime ?? lap.tracks.lazy.compactMap { $0.lazy.compactMap(\.time).first }.first
            if lapEnd == nil, let s = start, let total = lap.totalTimeSeconds, total >= 0 {
                // `<TotalTimeSeconds>1e300</…>` gives no end rather than a trap.
                lapEnd = s.adding(seconds: total.rounded(.down))
            }
            events.append(WorkoutEvent(kind: .lap, start: start, end: lapEnd, metadata: lap.metadata))
        }
        return events
    }

    /// The first and last trackpoint times of an activity.
    static func times(_ activity: TCXActivity) -> (first: Timestamp?, last: Timestamp?) {
        var firstTime: Timestamp?
        var lastTime: Timestamp?
        for p in activity.trackpoints {
            guard let t = p.time else { continue }
            if firstTime == nil { firstTime = t }
            lastTime = t
        }
        return (firstTime, lastTime)
    }

    /// What an activity recorded, as metadata: its sport as written (`tcxSport`), its laps' `TotalTimeSeconds`,
    /// `DistanceMeters` and `Calories` summed (`totalTimerTime`, `totalDistance`, `totalCalories`), how many laps
    /// (`tcxLaps`), its device (`tcxCreator`).
    static func recorded(_ activity: TCXActivity) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        if let s = activity.sport { metadata["tcxSport"] = .string(s) }
        metadata.merge(totals(activity.laps)) { $1 }
        metadata["tcxLaps"] = .integer(Int64(activity.laps.count))
        if let v = activity.creatorName { metadata["tcxCreator"] = .string(v) }
        return metadata
    }

    /// The laps' `TotalTimeSeconds`, `DistanceMeters` and `Calories` summed (`totalTimerTime`, `totalDistance`,
    /// `totalCalories`), each where at least one lap has it.
    static func totals(_ laps: [TCXLap]) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        let totals = laps.reduce(into: (time: 0.0, distance: 0.0, calories: 0.0, has: (false, false, false))) {
            if let v = $1.totalTimeSeconds {
                $0.time += v
                $0.has.0 = true
            }
            if let v = $1.distanceMeters {
                $0.distance += v
                $0.has.1 = true
            }
            if let v = $1.calories {
                $0.calories += v
                $0.has.2 = true
            }
        }
        if totals.has.0 { metadata["totalTimerTime"] = .double(totals.time) }
        if totals.has.1 { metadata["totalDistance"] = .double(totals.distance) }
        if totals.has.2 { metadata["totalCalories"] = .double(totals.calories) }
        return metadata
    }

    private func importActivity(
        _ activity: TCXActivity, number n: Int, of count: Int, author: String?, label: String,
        into result: inout ImportResult, invalid: inout Int, untimed: inout Int, nullIsland: inout Int
    ) async throws {
        let (firstTime, lastTime) = Self.times(activity)
        let start = activity.id ?? activity.laps.first?.startTime ?? firstTime
        let events = Self.events(activity)
        var metadata = Self.recorded(activity)
        if let v = author { metadata["tcxAuthor"] = .string(v) }
        if count > 1 { metadata["tcxActivity"] = .integer(Int64(n)) }
        let source = self.source
        let context = makeContext()
        let track = TrackImport(
            context: context, label: count > 1 ? "\(label)#activity\(n + 1)" : label, info: GPXPathInfo(), creator: nil,
            allowResume: true, originKind: Self.originKind, syncPrefix: "tcx-",
            makeWorkout: { sync in
                Workout(
                    activityType: ActivityType(guessingFrom: activity.sport), start: start, end: lastTime ?? start,
                    source: source, sync: sync, events: events, metadata: metadata)
            })
        // The laps' own fields are part of the identity.
        for lap in activity.laps {
            track.combineIdentity([
                lap.startTime.map { Double($0.instant.seconds) }, lap.totalTimeSeconds, lap.distanceMeters,
                lap.calories, Double(lap.tracks.count),
            ])
        }
        var points: [GPXPoint] = []
        try await Self.feed(
            activity, to: track, points: &points, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
        if !points.isEmpty { try await track.add(points) }
        // The activity's own text fields, hashed at the end (GPX's track fields).
        var info = GPXPathInfo()
        info.name = activity.idText
        info.type = activity.sport
        info.description = activity.creatorName
        let done = try await track.finish(info: info)
        result.tracks.append(done.track)
        result.warnings += done.warnings
    }

    /// A `MultiSportSession` of several activities: one workout whose activities (`WorkoutActivity`) are its
    /// `Activity`s, each with its sport (`ActivityType(guessingFrom:)`), its start (its `Id`, else its first lap's
    /// start, else its first trackpoint's time), its last trackpoint's time as end and what it recorded
    /// (`recorded(_:)`). The workout is of their type when they share one, else `multisport`; it starts at the
    /// session's `Id` (else the first activity's start) and ends at the last trackpoint's time; its metadata sums
    /// every lap's totals. One route holds every activity's trackpoints, each `Track` a segment; the events are
    /// every activity's laps and pauses. Its identity: `tcx-` and a hash of the number of activities, each one's
    /// `Id`, laps and trackpoints, the session's `Id` and the sports.
    private func importMultiSport(
        _ activities: [TCXActivity], session: TCXMultiSportSession?, number n: Int, of count: Int, author: String?,
        label: String, into result: inout ImportResult, invalid: inout Int, untimed: inout Int, nullIsland: inout Int
    ) async throws {
        var parts: [WorkoutActivity] = []
        var events: [WorkoutEvent] = []
        var lastTime: Timestamp?
        for activity in activities {
            let (first, last) = Self.times(activity)
            let start = activity.id ?? activity.laps.first?.startTime ?? first
            parts.append(
                WorkoutActivity(
                    activityType: ActivityType(guessingFrom: activity.sport), start: start, end: last ?? start,
                    metadata: Self.recorded(activity)))
            events += Self.events(activity)
            if let last { lastTime = last }
        }
        let type = parts.first?.activityType ?? .other
        let oneType = parts.allSatisfy { $0.activityType == type }
        let start = session?.id ?? parts.first?.start
        var metadata = Self.totals(activities.flatMap(\.laps))
        metadata["tcxLaps"] = .integer(Int64(activities.reduce(0) { $0 + $1.laps.count }))
        metadata["tcxActivities"] = .integer(Int64(activities.count))
        if let v = activities.lazy.compactMap(\.creatorName).first { metadata["tcxCreator"] = .string(v) }
        if let v = author { metadata["tcxAuthor"] = .string(v) }
        if count > 1 { metadata["tcxActivity"] = .integer(Int64(n)) }
        let source = self.source
        let track = TrackImport(
            context: makeContext(), label: count > 1 ? "\(label)#activity\(n + 1)" : label, info: GPXPathInfo(),
            creator: nil, allowResume: true, originKind: Self.originKind, syncPrefix: "tcx-",
            makeWorkout: { sync in
                Workout(
                    activityType: oneType ? type : .multisport, start: start, end: lastTime ?? start, source: source,
                    sync: sync, events: events, metadata: metadata, activities: parts)
            })
        // How many activities, each one's start and its laps' own fields are part of the identity (never that of
        // a workout one of the activities made before, as an Activity of its own).
        track.combineIdentity([Double(activities.count)])
        for activity in activities {
            track.combineIdentity([activity.id.map { Double($0.instant.seconds) }, Double(activity.laps.count)])
            for lap in activity.laps {
                track.combineIdentity([
                    lap.startTime.map { Double($0.instant.seconds) }, lap.totalTimeSeconds, lap.distanceMeters,
                    lap.calories, Double(lap.tracks.count),
                ])
            }
        }
        var points: [GPXPoint] = []
        for activity in activities {
            try await Self.feed(
                activity, to: track, points: &points, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
        }
        if !points.isEmpty { try await track.add(points) }
        // The text fields, hashed at the end: the session's Id, the activities' Ids, sports and devices.
        var info = GPXPathInfo()
        info.name = session?.idText
        info.comment = activities.map { $0.idText ?? "" }.joined(separator: "\u{1F}")
        info.type = activities.map { $0.sport ?? "" }.joined(separator: "\u{1F}")
        info.description = activities.map { $0.creatorName ?? "" }.joined(separator: "\u{1F}")
        var done = try await track.finish(info: info)
        done.track.activities = activities.count
        result.tracks.append(done.track)
        result.warnings += done.warnings
    }

    /// Feeds an activity's tracks to `track`, each a segment, their trackpoints as the trackpoints' `feed` does.
    private static func feed(
        _ activity: TCXActivity, to track: TrackImport, points: inout [GPXPoint], invalid: inout Int,
        untimed: inout Int, nullIsland: inout Int
    ) async throws {
        for lap in activity.laps {
            for trk in lap.tracks {
                if !points.isEmpty {
                    try await track.add(points)
                    points.removeAll(keepingCapacity: true)
                }
                track.segmentStart()
                _ = try await feed(
                    trk, to: track, points: &points, invalid: &invalid, untimed: &untimed, nullIsland: &nullIsland)
            }
        }
    }

    /// Feeds `trackpoints` to `track`: each with a position a point of the route (with its values), stored a chunk
    /// at a time through `points`; the values of one without a position series samples, in order with the
    /// locations around them. Returns how many had a position.
    private static func feed(
        _ trackpoints: [TCXTrackpoint], to track: TrackImport, points: inout [GPXPoint], invalid: inout Int,
        untimed: inout Int, nullIsland: inout Int
    ) async throws -> Int {
        var positioned = 0
        for p in trackpoints {
            let values = Self.values(p)
            if let location = Self.location(p, invalid: &invalid) {
                if location.latitude == 0 && location.longitude == 0 { nullIsland += 1 }
                points.append(GPXPoint(location: location, values: values))
                positioned += 1
                if points.count == RouteBuilder.chunkSize {
                    try await track.add(points)
                    points.removeAll(keepingCapacity: true)
                }
                continue
            }
            guard !values.isEmpty else { continue }
            guard let time = p.time else {
                untimed += 1
                continue
            }
            if !points.isEmpty {
                try await track.add(points)
                points.removeAll(keepingCapacity: true)
            }
            track.addSeriesOnly(time, values)
        }
        return positioned
    }

    /// A course: a workout of its own whose route is the course's positioned trackpoints (with altitude and speed),
    /// their heart rate, cadence and power its series, its course points waypoints (attachments of the workout).
    /// Its metadata says it is a course (``MetadataKey/course``, `tcxContent`), with the course's name. TCX gives a
    /// course no sport: the activity type is `other`.
    private func importCourse(
        _ course: TCXCourse, number n: Int, of count: Int, author: String?, label: String,
        into result: inout ImportResult, invalid: inout Int, untimed: inout Int, nullIsland: inout Int
    ) async throws {
        var firstTime: Timestamp?
        var lastTime: Timestamp?
        for p in course.trackpoints {
            guard let t = p.time else { continue }
            if firstTime == nil { firstTime = t }
            lastTime = t
        }
        var metadata: [String: MetadataValue] = [
            MetadataKey.course: .bool(true), "tcxContent": .string("course"),
        ]
        if let v = course.name { metadata["name"] = .string(v) }
        if let v = author { metadata["tcxAuthor"] = .string(v) }
        if count > 1 { metadata["tcxCourse"] = .integer(Int64(n)) }
        let source = self.source
        let track = TrackImport(
            context: makeContext(), label: count > 1 ? "\(label)#course\(n + 1)" : label, info: GPXPathInfo(),
            creator: nil, allowResume: true, originKind: Self.originKind, syncPrefix: "tcx-course-",
            makeWorkout: { sync in
                Workout(
                    activityType: .other, start: firstTime, end: lastTime, source: source, sync: sync,
                    metadata: metadata)
            })
        // The course points are part of the identity: a course whose points changed is another course.
        var waypoints = GPXAttachments()
        for c in course.coursePoints {
            guard let p = c.waypoint(invalid: &invalid) else { continue }
            waypoints.add(waypoint: p)
            track.combineIdentity([
                p.location.latitude, p.location.longitude, p.location.timestamp.map { Double($0.instant.seconds) },
            ])
        }
        track.combineIdentity([Double(waypoints.waypoints.count)])
        var points: [GPXPoint] = []
        let positioned = try await Self.feed(
            course.trackpoints, to: track, points: &points, invalid: &invalid, untimed: &untimed,
            nullIsland: &nullIsland)
        if !points.isEmpty { try await track.add(points) }
        if positioned == 0 {
            result.warnings.append(
                "the course \(course.name.map { "\"\($0)\"" } ?? "without a name") has no positions")
        }
        var info = GPXPathInfo()
        info.name = course.name
        let done = try await track.finish(info: info)
        result.tracks.append(done.track)
        result.warnings += done.warnings
        try await makeContext().store(waypoints, withWorkout: done.track.workout)
        result.waypoints += waypoints.waypoints.count
        if waypoints.dropped > 0 {
            result.warnings.append(
                "\(waypoints.dropped) course point(s) beyond \(GPXAttachments.maxPoints) were not stored")
        }
    }
}
