import Foundation

/// Whoever writes into a store: an app, a device, an importer, a batch job.
///
/// Ownership is per source: only the source that wrote a workout, route or related sample may delete or
/// replace it. The command line's default source is ``Source/defaultImport`` (`--source NAME` changes it).
public struct Source: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The source's name, unique within a store (`"routekit-import"`, `"com.example.watch"`).
    public var name: String

    /// Creates a source. The name must not be empty.
    public init(name: String) throws(RouteKitError) {
        guard !name.isEmpty, name.count <= 256 else {
            throw RouteKitError(.invalidArgument, "a source name must be 1 to 256 characters")
        }
        self.name = name
    }

    private init(known name: String) { self.name = name }

    /// The source the `routekit import` command writes as unless told otherwise.
    public static let defaultImport = Source(known: "routekit-import")

    public var description: String { name }
}

/// A stable identity across versions of one object, scoped to its source, and the version.
///
/// Mirrors HealthKit's `HKMetadataKeySyncIdentifier` and `HKMetadataKeySyncVersion`: saving an object whose
/// (source, identifier) already exists replaces it only if the version is higher.
public struct SyncIdentity: Hashable, Sendable, Codable {
    /// The identifier, unique per source.
    public var identifier: String
    /// The version; higher replaces lower.
    public var version: Int64

    /// Creates an identity.
    public init(identifier: String, version: Int64) {
        self.identifier = identifier
        self.version = version
    }

    /// Builds an identity from optional metadata values.
    ///
    /// - Returns: `nil` when neither is given.
    /// - Throws: ``RouteKitError/Code/missingSyncVersion`` when an identifier comes without a version, and
    ///   ``RouteKitError/Code/invalidArgument`` when a version comes without an identifier or is empty.
    public static func from(identifier: String?, version: Int64?) throws(RouteKitError) -> SyncIdentity? {
        switch (identifier, version) {
        case (nil, nil):
            return nil
        case (let id?, nil):
            throw RouteKitError(.missingSyncVersion, "sync identifier '\(id)' was given without a sync version")
        case (nil, _?):
            throw RouteKitError(.invalidArgument, "a sync version was given without a sync identifier")
        case (let id?, let v?):
            guard !id.isEmpty else { throw RouteKitError(.invalidArgument, "the sync identifier is empty") }
            return SyncIdentity(identifier: id, version: v)
        }
    }
}

/// A metadata value: the JSON-representable subset HealthKit metadata uses.
public enum MetadataValue: Hashable, Sendable, Codable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .integer(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        }
    }
}

/// What a workout was: running, cycling, walking…  Extensible; GPX `<type>` text maps onto it.
public struct ActivityType: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The stable name (`"running"`).
    public var rawValue: String
    /// Creates an activity type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let other = ActivityType(rawValue: "other")
    public static let running = ActivityType(rawValue: "running")
    public static let cycling = ActivityType(rawValue: "cycling")
    public static let walking = ActivityType(rawValue: "walking")
    public static let hiking = ActivityType(rawValue: "hiking")
    public static let swimming = ActivityType(rawValue: "swimming")
    /// Several sports in one workout (a triathlon, a duathlon): the type of a workout whose activities
    /// (``Workout/activities``) are of different types. FIT's name for it (sport 18); Apple Health's
    /// `HKWorkoutActivityTypeSwimBikeRun` keeps its own name, `swimBikeRun`.
    public static let multisport = ActivityType(rawValue: "multisport")

    /// Guesses a type from free text such as a GPX `<type>` ("Outdoor run", "Biking", "9").
    public init(guessingFrom text: String?) {
        let t = (text ?? "").lowercased()
        if t.contains("run") || t.contains("jog") {
            self = .running
        } else if t.contains("cycl") || t.contains("bik") || t.contains("ride") || t.contains("velo") {
            self = .cycling
        } else if t.contains("hik") || t.contains("trek") {
            self = .hiking
        } else if t.contains("walk") {
            self = .walking
        } else if t.contains("swim") {
            self = .swimming
        } else {
            self = .other
        }
    }

    public var description: String { rawValue }
}

/// Something that happened during a workout (HealthKit's `HKWorkoutEvent`): a pause or a resume, a lap, a segment,
/// a marker, each at a time or over an interval, with metadata.
///
/// Laps keep the totals their file recorded in ``metadata`` under the ``MetadataKey`` names
/// (``MetadataKey/totalDistance``, ``MetadataKey/totalTimerTime``, ``MetadataKey/averageHeartRate``, …); their
/// computed statistics come from `WorkoutStatistics.splits`.
public struct WorkoutEvent: Hashable, Sendable {
    /// The kind of event: HealthKit's `HKWorkoutEventType`.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// The person paused the workout (a FIT timer stopped by hand, a Health pause).
        case pause
        /// The person resumed it.
        case resume
        /// The device paused it on its own, the person having stopped moving (FIT auto pause, Health motion pause).
        case motionPaused
        /// The device resumed it, the person moving again.
        case motionResumed
        /// A lap: an interval the person or the device marked (FIT `lap`, TCX `Lap`, Health lap), with its totals.
        case lap
        /// A segment: a part of the recording (a GPX `<trkseg>`, a Health segment).
        case segment
        /// A marker: a moment the person or the device marked (FIT user markers and course points, Health markers).
        case marker

        /// Whether the event starts a pause (``pause`` or ``motionPaused``).
        public var pauses: Bool { self == .pause || self == .motionPaused }
        /// Whether the event ends a pause (``resume`` or ``motionResumed``).
        public var resumes: Bool { self == .resume || self == .motionResumed }
    }
    /// The kind of event.
    public var kind: Kind
    /// When it started.
    public var start: Timestamp?
    /// When it ended (laps and segments; `nil` for an event at one moment).
    public var end: Timestamp?
    /// What the file recorded with it: a lap's totals, a marker's name, the producer's own event name.
    public var metadata: [String: MetadataValue]

    /// Creates an event.
    public init(kind: Kind, start: Timestamp?, end: Timestamp? = nil, metadata: [String: MetadataValue] = [:]) {
        self.kind = kind
        self.start = start
        self.end = end
        self.metadata = metadata
    }
}

/// One activity of a workout (HealthKit's `HKWorkoutActivity`): the swim, the bike and the run of a triathlon, or
/// the parts of an interval workout, each with its type, its interval and its metadata. Its statistics are the
/// workout's measured over its interval (`WorkoutStatistics.splits` by activity).
///
/// A workout that records none is one activity: ``Workout/allActivities``.
public struct WorkoutActivity: Hashable, Sendable {
    /// What was done.
    public var activityType: ActivityType
    /// When it started.
    public var start: Timestamp?
    /// When it ended.
    public var end: Timestamp?
    /// What the file recorded with it (its identifier, statistics and metadata entries).
    public var metadata: [String: MetadataValue]

    /// Creates an activity.
    public init(
        activityType: ActivityType, start: Timestamp?, end: Timestamp?, metadata: [String: MetadataValue] = [:]
    ) {
        self.activityType = activityType
        self.start = start
        self.end = end
        self.metadata = metadata
    }
}

/// A workout (HealthKit's `HKWorkout`): the activity a route belongs to.
public struct Workout: Hashable, Sendable, Identifiable {
    /// The workout's identity in a store.
    public var id: UUID
    /// What was done.
    public var activityType: ActivityType
    /// When it started, if known.
    public var start: Timestamp?
    /// When it ended, if known.
    public var end: Timestamp?
    /// Who wrote it.
    public var source: Source
    /// Its sync identity, if any.
    public var sync: SyncIdentity?
    /// Pauses, resumes, laps, segments and markers, in the order recorded.
    public var events: [WorkoutEvent]
    /// Free metadata.
    public var metadata: [String: MetadataValue]
    /// Its activities as recorded (a multi-activity workout's: a FIT file's sessions, a TCX `MultiSportSession`'s
    /// activities, Apple Health's `WorkoutActivity` blocks), in the order recorded; empty when the file records
    /// none, and then the workout is one activity (``allActivities``).
    public var activities: [WorkoutActivity]

    /// Creates a workout.
    public init(
        id: UUID = UUID(), activityType: ActivityType, start: Timestamp?, end: Timestamp?, source: Source,
        sync: SyncIdentity? = nil, events: [WorkoutEvent] = [], metadata: [String: MetadataValue] = [:],
        activities: [WorkoutActivity] = []
    ) {
        self.activities = activities
        self.id = id
        self.activityType = activityType
        self.start = start
        self.end = end
        self.source = source
        self.sync = sync
        self.events = events
        self.metadata = metadata
    }
}

/// A versioned series of locations that belongs to one workout (HealthKit's `HKWorkoutRoute`).
public struct RouteSample: Hashable, Sendable, Identifiable {
    /// The route's identity in a store (each version has its own).
    public var id: UUID
    /// The workout it belongs to.
    public var workoutID: UUID
    /// Who owns it.
    public var source: Source
    /// Its sync identity: stable identifier plus version.
    public var sync: SyncIdentity
    /// Time of the first location, `nil` when the route has no times.
    public var start: Timestamp?
    /// Time of the last location, `nil` when the route has no times.
    public var end: Timestamp?
    /// How many locations it holds.
    public var locationCount: Int
    /// Free metadata (oddities found on import, pipeline provenance…).
    public var metadata: [String: MetadataValue]

    /// Creates a route sample.
    public init(
        id: UUID = UUID(), workoutID: UUID, source: Source, sync: SyncIdentity, start: Timestamp?,
        end: Timestamp?, locationCount: Int, metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.workoutID = workoutID
        self.source = source
        self.sync = sync
        self.start = start
        self.end = end
        self.locationCount = locationCount
        self.metadata = metadata
    }
}

extension Workout {
    /// The workout's pauses: each pause (or motion pause) to the resume (or motion resume) that follows it, in time
    /// order; a pause never resumed is left out, and a second pause before a resume does not restart the first.
    public var pauseIntervals: [ClosedRange<Instant>] {
        var pauses: [ClosedRange<Instant>] = []
        var pausedAt: Instant?
        let timed = events.enumerated().compactMap { n, e in e.start.map { (n, e.kind, $0.instant) } }
            .filter { $0.1.pauses || $0.1.resumes }
            .sorted { ($0.2, $0.0) < ($1.2, $1.0) }
        for (_, kind, at) in timed {
            if kind.pauses {
                if pausedAt == nil { pausedAt = at }
            } else if let p = pausedAt {
                if p <= at { pauses.append(p...at) }
                pausedAt = nil
            }
        }
        return pauses
    }

    /// Its activities: those recorded, else the workout itself as one activity (its type and interval).
    public var allActivities: [WorkoutActivity] {
        activities.isEmpty ? [WorkoutActivity(activityType: activityType, start: start, end: end)] : activities
    }

    /// The workout's laps, in time order (events of kind ``WorkoutEvent/Kind/lap``); laps without a start last, in
    /// the order recorded.
    public var laps: [WorkoutEvent] {
        let late = Instant(seconds: .max)
        return events.enumerated().filter { $0.element.kind == .lap }
            .sorted {
                ($0.element.start?.instant ?? late, $0.offset) < ($1.element.start?.instant ?? late, $1.offset)
            }
            .map(\.element)
    }
}

extension RouteSample {
    /// The indices where the route's segments begin (its metadata `gpxSegmentStarts`, kept by the GPX, TCX and FIT
    /// importers), empty when the route was recorded in one piece.
    public var segmentStarts: [Int] {
        guard case .string(let text)? = metadata["gpxSegmentStarts"] else { return [] }
        return text.split(separator: ",").compactMap { Int($0) }
    }
}
