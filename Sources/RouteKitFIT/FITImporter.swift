import Foundation
public import RouteKit
public import RouteKitIngest

/// Imports FIT files (plain or gzip-compressed) into a store.
///
/// - **Activity files** (`file_id.type` 4, or files without a `file_id` that hold records): one workout, with the
///   session's sport as activity type, its start and elapsed time, and its distance, timer time and calories in the
///   metadata. Records with a position become its route, in file order, with altitude (`enhanced_altitude` over
///   `altitude`) and speed (`enhanced_speed` over `speed`); heart rate, cadence, power and temperature of every
///   record with a time become series of the workout, with a position or without (indoor sessions have series and
///   no route). Timer stop and start events become pause and resume events (motion pause and resume when the
///   device stopped the timer on its own: auto pause); laps become lap events with the totals the device recorded
///   (`MetadataKey`); user markers, course points reached, off-course and sport points become marker events.
/// - **Multisport** (several `session`s: a triathlon's swim, transitions, bike and run): still one workout, whose
///   activities (`WorkoutActivity`) are the sessions in start order, each with its sport, its start and elapsed
///   time (else its records' first and last times) and its recorded totals as metadata (`MetadataKey` names, as a
///   lap's; `fitSport`, `fitSubSport`). The workout's type is the sessions' sport when they share one, else
///   `ActivityType.multisport`; it runs from the first session's start to the last one's end; its metadata sums
///   the sessions' distances, times and calories and counts them (`fitSessions`). One route holds every
///   positioned record of the file, in one segment (a pause is an event, not a segment, as in a single session);
///   the series, pauses, laps and markers are the whole file's. (Before, each session was a workout of its own,
///   tied to the others by `fitSession`.)
/// - **Course files** (type 6): a workout of their own, imported as a session is: positioned records become its
///   route, their heart rate, cadence, power and temperature its series; course points are waypoints (attachments
///   of the workout). The course's sport is the activity type; the metadata says it is a course (`course`
///   `true`, `fitFileType` `course`) and holds its name (`name`) and sport (`fitSport`).
/// - **Other file types** (settings, monitoring, workouts, locations…) are refused with a reason.
/// - **Identity**: an activity's sync identifier is `fit-` and a hash of its content (every record's mapped
///   values, the session's fields; a multisport file's: the number of sessions and each one's fields), a course's
///   `fit-course-` and a hash of its records, sport, name and course points, so re-importing the same file (under
///   any name, compressed or not) changes nothing. The version is 1. A file of one session keeps the identifier
///   it had when each session was a workout; a multisport file imported by that release gets a new workout, and
///   the workouts its sessions made stay as they were (delete them to keep only the new one).
/// - **Times**: FIT seconds since 1989-12-31T00:00:00Z; the UTC offset from `activity.local_timestamp` when
///   present. Times below 0x10000000 (seconds since the device powered on) are not absolute: such records keep
///   no time, and their values are not series samples.
/// - **Damage**: what the decoder recovered from (a bad CRC, an unfinished or truncated file, an undefined local
///   type) becomes warnings; a position outside the valid range is dropped and counted.
/// - **Not kept**: per-record distance, developer field values (their names and units are listed in the route
///   metadata), HRV, swim lengths and device information.
public final class FITImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "fit-import"

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

    /// Imports FIT held in memory (an archive's entry, decompressed), reported and labelled as `name`.
    public func importBytes(_ bytes: [UInt8], name: String) async -> ImportResult {
        await importInput(FITInput(bytes: bytes), name: name)
    }

    /// Imports one file (plain or gzip-compressed), read a chunk at a time (twice: the summary, then the records),
    /// so that memory does not grow with the file. Never throws: failures are in the result, naming the file and
    /// the byte offset.
    public func importFile(_ path: String) async -> ImportResult {
        let gzip: Bool
        do {
            gzip = try InputFile.contents(of: path, limit: 2, stopAtLimit: true).gzip
        } catch {
            return ImportResult(file: path, status: .failed, error: error.file == nil ? error.inFile(path) : error)
        }
        // Builders record the file by its absolute path, as the GPX importer's do.
        return await importInput(
            FITInput(path: path), name: path, label: URL(fileURLWithPath: path).standardizedFileURL.path,
            warnings: gzip ? ["the file is gzip-compressed; it was decompressed while reading"] : [])
    }

    /// Imports FIT from `input` (an archive's entry, opened again for each pass), reported as `name` and labelled
    /// `label` (`name` by default).
    package func importInput(_ input: FITInput, name: String, label: String? = nil, warnings: [String] = []) async
        -> ImportResult
    {
        await .collect(file: name, warnings: warnings) { result in
            try await importInput(input, label: label ?? name, into: &result)
        }
    }

    private func importInput(_ input: FITInput, label: String, into result: inout ImportResult) async throws {
        let summary = try FITFile.summary(input)
        result.warnings += summary.warnings.map { "FIT: \($0)" }
        if summary.warnings.count >= 100 { result.warnings.append("FIT: further decoder warnings were not listed") }
        switch summary.fileType {
        case 4?:
            try await importActivity(input, summary, label: label, into: &result)
        case nil where summary.records > 0:
            result.warnings.append("the file has no file_id message: read as an activity")
            try await importActivity(input, summary, label: label, into: &result)
        case 6?:
            try await importCourse(input, summary, label: label, into: &result)
        default:
            throw RouteKitError(
                .invalidFIT,
                "a FIT \(summary.fileTypeName) file holds no activity or course: RouteKit imports activity and course files"
            )
        }
    }

    /// One workout being imported: an activity file's (all its sessions), or a course.
    private final class SessionImport {
        let track: TrackImport
        /// The first and last record times, for a workout without a start or elapsed time of its own.
        let seen: SeenTimes
        /// Each session's first and last record times (a multisport file's, in the sessions' start order): for a
        /// session without a start or elapsed time of its own.
        let sessionTimes: [SeenTimes]
        var points: [GPXPoint] = []

        init(track: TrackImport, seen: SeenTimes, sessionTimes: [SeenTimes] = []) {
            self.track = track
            self.seen = seen
            self.sessionTimes = sessionTimes
        }
    }

    /// The first and last record times of a workout or a session.
    private final class SeenTimes {
        var start: Timestamp?
        var end: Timestamp?

        /// A record's time, in file order.
        func note(_ time: Timestamp) {
            if start == nil { start = time }
            end = time
        }
    }

    /// An activity file: one workout, whatever its number of sessions (a multisport file's sessions are its
    /// activities), its route every positioned record, its series every timed value, its events the file's.
    private func importActivity(
        _ input: FITInput, _ summary: FITSummary, label: String, into result: inout ImportResult
    )
        async throws
    {
        var ordered = summary.sessions.enumerated().sorted {
            ($0.element.startTime ?? 0, $0.offset) < ($1.element.startTime ?? 0, $1.offset)
        }.map(\.element)
        if ordered.isEmpty {
            if summary.records > 0 {
                result.warnings.append("the file has no session message: its records are read as one workout")
            }
            ordered = [FITSession()]
        }
        let sessions = ordered
        let multisport = sessions.count > 1
        let source = self.source
        let context = ImportContext(store: store, source: source, workoutOverrides: workoutOverrides)
        // Every event of the file (from its start: the first session takes what comes before it): a multisport
        // file's pauses, laps and markers are its one workout's.
        let events = EventTimeline(summary).events(for: sessions[0], first: true, next: nil, summary)
        let holder = SeenTimes()
        let sessionTimes = multisport ? sessions.map { _ in SeenTimes() } : []
        let track = TrackImport(
            context: context, label: label, info: GPXPathInfo(), creator: nil, allowResume: true,
            originKind: Self.originKind, syncPrefix: "fit-",
            makeWorkout: { sync in
                if multisport {
                    return Self.multisportWorkout(sessions, sessionTimes, summary, holder, events, source, sync)
                }
                return Self.workout(of: sessions[0], summary, holder, events, source, sync)
            })
        var routeMetadata: [String: MetadataValue] = [:]
        if !summary.developerFields.isEmpty {
            let names = summary.developerFields.map { f in
                (f.name ?? "unnamed developer field \(f.number)") + (f.units.map { " (\($0))" } ?? "")
            }
            routeMetadata["fitDeveloperFields"] = .string(names.joined(separator: ", "))
        }
        track.routeMetadata = routeMetadata
        // The sessions' own fields are part of the identity; a multisport file's also their number, so that its
        // workout is never taken for the workout one of its sessions made before (when each was a workout).
        if multisport { track.combineIdentity([Double(sessions.count)]) }
        for session in sessions {
            track.combineIdentity([
                session.startTime.map(Double.init), session.sport.map(Double.init), session.totalElapsedTime,
                session.totalDistance,
            ])
        }
        let whole = SessionImport(track: track, seen: holder, sessionTimes: sessionTimes)
        // A record belongs to the last session that started at or before its time (for the session's interval).
        let starts = sessions.map { $0.startTime ?? 0 }
        var current = 0
        var invalidPositions = 0
        var relativeTimes = 0
        var untimed = 0
        // Decoded a slice of the file at a time (the decoder's callback cannot await), stored batch by batch.
        var reader = FITRecordReader(input)
        while let batch = try reader.next() {
            for record in batch {
                if let t = record.timestamp {
                    while current + 1 < starts.count && starts[current + 1] <= t { current += 1 }
                    while current > 0 && starts[current] > t { current -= 1 }
                    if summary.timestamp(t) == nil { relativeTimes += 1 }
                }
                try await add(
                    record, to: whole, session: current, summary: summary, invalid: &invalidPositions,
                    untimed: &untimed)
            }
        }
        if invalidPositions > 0 {
            result.warnings.append(
                "\(invalidPositions) record(s) with a position outside the valid range: their positions were dropped")
        }
        if untimed > 0 {
            result.warnings.append(
                "\(untimed) record(s) without a position or a time: their values (heart rate, cadence, power, "
                    + "temperature) cannot be series samples and were not stored")
        }
        if relativeTimes > 0 {
            result.warnings.append(
                "\(relativeTimes) record(s) carry device-relative times the file gives no clock for: stored without a time"
            )
        }
        if !whole.points.isEmpty {
            try await track.add(whole.points)
            whole.points = []
        }
        var done = try await track.finish(info: GPXPathInfo())
        if multisport { done.track.activities = sessions.count }
        result.tracks.append(done.track)
        result.warnings += done.warnings
    }

    /// The metadata every workout of an activity file has: its file type, manufacturer and product.
    private static func fileMetadata(_ summary: FITSummary) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = ["fitFileType": .string(summary.fileTypeName)]
        if let v = summary.manufacturer { metadata["fitManufacturer"] = .integer(Int64(v)) }
        if let v = summary.product { metadata["fitProduct"] = .integer(Int64(v)) }
        return metadata
    }

    /// The workout of a file with one session (or none): the session's sport, its start and elapsed time (else the
    /// records' first and last times), its sport, distance, times and calories in the metadata.
    private static func workout(
        of session: FITSession, _ summary: FITSummary, _ seen: SeenTimes, _ events: [WorkoutEvent], _ source: Source,
        _ sync: SyncIdentity
    ) -> Workout {
        let start = summary.timestamp(session.startTime)
        // A float total_elapsed_time can be anything (1e30): past the years 1 to 9999 it is ignored.
        let end = session.totalElapsedTime.flatMap { e in start?.adding(seconds: e.rounded(.down)) } ?? seen.end
        var metadata = fileMetadata(summary)
        if let s = session.sportName { metadata["fitSport"] = .string(s) }
        if let s = session.subSport { metadata["fitSubSport"] = .integer(Int64(s)) }
        if let v = session.totalDistance { metadata["totalDistance"] = .double(v) }
        if let v = session.totalTimerTime { metadata["totalTimerTime"] = .double(v) }
        if let v = session.totalElapsedTime { metadata["totalElapsedTime"] = .double(v) }
        if let v = session.totalCalories { metadata["totalCalories"] = .double(v) }
        return Workout(
            activityType: FITProfile.activityType(sport: session.sport), start: start ?? seen.start, end: end,
            source: source, sync: sync, events: events, metadata: metadata)
    }

    /// The workout of a multisport file: one activity per session, in start order (the session's sport, its start
    /// and elapsed time, else its records' first and last times, else the session message's time as its end; its
    /// recorded totals as metadata, as a lap's). Its type is the sessions' sport when they share one, else
    /// `multisport`; it runs from the first activity's start to the last one's end; its metadata sums the
    /// sessions' distances, times and calories, and counts them (`fitSessions`).
    private static func multisportWorkout(
        _ sessions: [FITSession], _ times: [SeenTimes], _ summary: FITSummary, _ seen: SeenTimes,
        _ events: [WorkoutEvent], _ source: Source, _ sync: SyncIdentity
    ) -> Workout {
        var activities: [WorkoutActivity] = []
        for (n, session) in sessions.enumerated() {
            let own = n < times.count ? times[n] : nil
            let start = summary.timestamp(session.startTime)
            let elapsed = session.totalElapsedTime.flatMap { e in start?.adding(seconds: e.rounded(.down)) }
            let end = elapsed ?? own?.end ?? summary.timestamp(session.timestamp)
            activities.append(
                WorkoutActivity(
                    activityType: FITProfile.activityType(sport: session.sport), start: start ?? own?.start,
                    end: end, metadata: session.metadata))
        }
        let sport = sessions.first?.sport
        let oneSport = sessions.allSatisfy { $0.sport == sport }
        var metadata = fileMetadata(summary)
        metadata["fitSessions"] = .integer(Int64(sessions.count))
        if oneSport, let name = sessions.first?.sportName { metadata["fitSport"] = .string(name) }
        let totals: [(String, [Double?])] = [
            (MetadataKey.totalDistance, sessions.map(\.totalDistance)),
            (MetadataKey.totalTimerTime, sessions.map(\.totalTimerTime)),
            (MetadataKey.totalElapsedTime, sessions.map(\.totalElapsedTime)),
            (MetadataKey.totalCalories, sessions.map(\.totalCalories)),
        ]
        for (key, values) in totals {
            let recorded = values.compactMap { $0 }.filter { $0.isFinite }
            if !recorded.isEmpty { metadata[key] = .double(recorded.reduce(0, +)) }
        }
        let start = activities.compactMap(\.start).min { $0.instant < $1.instant }
        let end = activities.compactMap(\.end).max { $0.instant < $1.instant }
        return Workout(
            activityType: oneSport ? FITProfile.activityType(sport: sport) : .multisport, start: start ?? seen.start,
            end: end ?? seen.end, source: source, sync: sync, events: events, metadata: metadata,
            activities: activities)
    }

    /// One record into its workout: a location with values, or values only. Its time counts in the workout's
    /// first and last times, and in its session's (`session`, an index into `SessionImport.sessionTimes`).
    private func add(
        _ record: FITRecord, to s: SessionImport, session: Int = 0, summary: FITSummary, invalid: inout Int,
        untimed: inout Int
    ) async throws {
        let time = summary.timestamp(record.timestamp)
        if let time {
            s.seen.note(time)
            if session < s.sessionTimes.count { s.sessionTimes[session].note(time) }
        }
        let values = GPXPointValues(
            heartRate: record.heartRate, cadence: record.cadence, temperature: record.temperature, power: record.power)
        if let lat = record.latitude, let lon = record.longitude {
            let location = Location(
                latitude: lat, longitude: lon, timestamp: time, altitude: record.altitude, speed: record.speed)
            if (try? location.validate()) != nil {
                s.points.append(GPXPoint(location: location, values: values))
                if s.points.count == RouteBuilder.chunkSize {
                    try await s.track.add(s.points)
                    s.points.removeAll(keepingCapacity: true)
                }
                return
            }
            invalid += 1
        }
        guard !values.isEmpty else { return }
        guard let time else { return untimed += 1 }
        // Values without a position are series samples, in order with the locations around them.
        if !s.points.isEmpty {
            try await s.track.add(s.points)
            s.points.removeAll(keepingCapacity: true)
        }
        s.track.addSeriesOnly(time, values)
    }

    /// The file's timer events, laps and markers sorted by time, so that a session's are found by binary search (a
    /// scan of all of them per session was O(sessions × events)). The importer takes the whole file's (from the
    /// first session, with no next one) for its one workout.
    struct EventTimeline {
        let timer: [FITTimerEvent]
        /// Laps by their start (`start_time`, or the end less the elapsed time, or the end); laps without any time
        /// go to the first session.
        let laps: [(at: UInt32, lap: FITLap)]
        let untimedLaps: [FITLap]
        let markers: [FITMarker]

        init(_ summary: FITSummary) {
            // Stable: events at the same second keep the file's order.
            timer = summary.timerEvents.enumerated().sorted {
                ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset)
            }
            .map(\.element)
            var timed: [(offset: Int, at: UInt32, lap: FITLap)] = []
            var untimed: [FITLap] = []
            for (n, lap) in summary.laps.enumerated() {
                if let at = Self.start(of: lap) { timed.append((n, at, lap)) } else { untimed.append(lap) }
            }
            laps = timed.sorted { ($0.at, $0.offset) < ($1.at, $1.offset) }.map { ($0.at, $0.lap) }
            untimedLaps = untimed
            markers = summary.markers.enumerated().sorted {
                ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset)
            }
            .map(\.element)
        }

        /// When a lap started: `start_time`, or its end less its elapsed time, or its end.
        static func start(of lap: FITLap) -> UInt32? {
            if let s = lap.startTime { return s }
            guard let end = lap.timestamp else { return nil }
            if let e = lap.totalElapsedTime, e >= 0, e <= Double(end) { return end - UInt32(e.rounded(.down)) }
            return end
        }

        /// A session's events within its time (the first session also takes what comes before it): timer stops
        /// and the next starts as pauses and resumes (motion pauses when the device stopped the timer on its own),
        /// laps with their recorded totals, markers. In time order.
        func events(for session: FITSession, first: Bool, next: FITSession?, _ summary: FITSummary) -> [WorkoutEvent] {
            let from = first ? 0 : session.startTime ?? 0
            let to = next?.startTime ?? UInt32.max
            var events: [(at: UInt32, event: WorkoutEvent)] = []
            var stopped = false
            var i = timer.partitioningIndex { $0.timestamp >= from }
            while i < timer.count && timer[i].timestamp < to {
                let e = timer[i]
                i += 1
                guard let t = summary.timestamp(e.timestamp) else { continue }
                if e.isStart {
                    if stopped {
                        events.append((e.timestamp, WorkoutEvent(kind: e.isAuto ? .motionResumed : .resume, start: t)))
                    }
                    stopped = false
                } else if !stopped {
                    events.append((e.timestamp, WorkoutEvent(kind: e.isAuto ? .motionPaused : .pause, start: t)))
                    stopped = true
                }
            }
            var j = laps.partitioningIndex { $0.at >= from }
            while j < laps.count && laps[j].at < to {
                let (at, lap) = laps[j]
                events.append(
                    (
                        at,
                        WorkoutEvent(
                            kind: .lap, start: summary.timestamp(at), end: summary.timestamp(lap.timestamp),
                            metadata: lap.metadata)
                    ))
                j += 1
            }
            if first {
                for lap in untimedLaps {
                    events.append((0, WorkoutEvent(kind: .lap, start: nil, end: nil, metadata: lap.metadata)))
                }
            }
            var k = markers.partitioningIndex { $0.timestamp >= from }
            while k < markers.count && markers[k].timestamp < to {
                let m = markers[k]
                k += 1
                guard let t = summary.timestamp(m.timestamp) else { continue }
                events.append(
                    (
                        m.timestamp,
                        WorkoutEvent(kind: .marker, start: t, metadata: [MetadataKey.eventName: .string(m.name)])
                    ))
            }
            // Stable: at one second, pauses before laps before markers, each in the file's order.
            return events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
                .map(\.element.event)
        }
    }

    /// A course: a workout of its own, imported as an activity's session is (``TrackImport``): records with a
    /// position are its route, with altitude and speed; their heart rate, cadence, power and temperature are its
    /// series. Its course points are waypoints (attachments of the workout). Its metadata says it is a course
    /// (``MetadataKey/course``, `fitFileType` `course`), with the course's name and sport; the activity type is the
    /// course's sport.
    private func importCourse(_ input: FITInput, _ summary: FITSummary, label: String, into result: inout ImportResult)
        async throws
    {
        var metadata: [String: MetadataValue] = [
            MetadataKey.course: .bool(true), "fitFileType": .string(summary.fileTypeName),
        ]
        if let v = summary.courseName { metadata["name"] = .string(v) }
        if let s = summary.courseSportName { metadata["fitSport"] = .string(s) }
        if let v = summary.manufacturer { metadata["fitManufacturer"] = .integer(Int64(v)) }
        if let v = summary.product { metadata["fitProduct"] = .integer(Int64(v)) }
        let source = self.source
        let sport = summary.courseSport
        let holder = SeenTimes()
        let context = ImportContext(store: store, source: source, workoutOverrides: workoutOverrides)
        let track = TrackImport(
            context: context, label: label, info: GPXPathInfo(), creator: nil, allowResume: true,
            originKind: Self.originKind, syncPrefix: "fit-course-",
            makeWorkout: { sync in
                Workout(
                    activityType: FITProfile.activityType(sport: sport), start: holder.start, end: holder.end,
                    source: source, sync: sync, metadata: metadata)
            })
        // The course's own fields and its course points are part of its identity.
        track.combineIdentity([sport.map(Double.init)])
        var waypoints = GPXAttachments()
        var dropped = 0
        try FITFile.coursePoints(input) { t, lat, lon, name in
            guard let lat, let lon else { return }
            let l = Location(latitude: lat, longitude: lon, timestamp: summary.timestamp(t))
            guard (try? l.validate()) != nil else { return dropped += 1 }
            var extras = GPXPointExtras()
            extras.name = name
            waypoints.add(waypoint: GPXPoint(location: l, extras: extras))
            track.combineIdentity([lat, lon, t.map(Double.init)])
        }
        track.combineIdentity([Double(waypoints.waypoints.count)])
        let session = SessionImport(track: track, seen: holder)
        var untimed = 0
        var reader = FITRecordReader(input)
        while let batch = try reader.next() {
            for record in batch {
                try await add(record, to: session, summary: summary, invalid: &dropped, untimed: &untimed)
            }
        }
        if !session.points.isEmpty {
            try await track.add(session.points)
            session.points = []
        }
        if dropped > 0 { result.warnings.append("\(dropped) point(s) with a position outside the valid range dropped") }
        if untimed > 0 {
            result.warnings.append(
                "\(untimed) record(s) without a position or a time: their values (heart rate, cadence, power, "
                    + "temperature) cannot be series samples and were not stored")
        }
        var info = GPXPathInfo()
        info.name = summary.courseName
        let done = try await track.finish(info: info)
        result.tracks.append(done.track)
        result.warnings += done.warnings
        if done.track.locations == 0 { result.warnings.append("the course has no positioned records") }
        try await context.store(waypoints, withWorkout: done.track.workout)
        result.waypoints += waypoints.waypoints.count
        if waypoints.dropped > 0 {
            result.warnings.append(
                "\(waypoints.dropped) course point(s) beyond \(GPXAttachments.maxPoints) were not stored")
        }
    }
}
