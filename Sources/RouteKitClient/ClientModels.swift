#if Client
    import Foundation

    // The JSON shapes of the HTTP API as plain Codable values, member for member (Sources/RouteKitServer/openapi.yaml
    // names them): times are the ISO 8601 text the server wrote (`startDate` and the like parse it), identifiers are
    // `UUID`s. The generated operations decode into these types directly (openapi-generator-config.yaml's
    // typeOverrides).

    /// A metadata value: text, a whole number, a number or a flag (JSON's scalars).
    public enum ClientMetadataValue: Codable, Hashable, Sendable, ExpressibleByStringLiteral,
        ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
    {
        /// Text.
        case string(String)
        /// A whole number.
        case integer(Int64)
        /// A number with a fraction.
        case double(Double)
        /// A flag.
        case bool(Bool)

        /// `"text"`.
        public init(stringLiteral value: String) { self = .string(value) }
        /// `42`.
        public init(integerLiteral value: Int64) { self = .integer(value) }
        /// `4.2`.
        public init(floatLiteral value: Double) { self = .double(value) }
        /// `true`.
        public init(booleanLiteral value: Bool) { self = .bool(value) }

        /// Decodes a flag, a whole number, a number or text, in that order.
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

        /// Encodes the value as its JSON scalar.
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

    /// Metadata: the key-value pairs of a route, a workout, an event or an activity.
    public typealias ClientMetadata = [String: ClientMetadataValue]

    /// Any JSON value (a problem's members, the data of a changed object).
    public enum ClientJSONValue: Codable, Hashable, Sendable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A number.
        case number(Double)
        /// A string.
        case string(String)
        /// An array.
        case array([ClientJSONValue])
        /// An object.
        case object([String: ClientJSONValue])

        /// Decodes any JSON value.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? c.decode(Double.self) {
                self = .number(n)
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else if let a = try? c.decode([ClientJSONValue].self) {
                self = .array(a)
            } else {
                self = .object(try c.decode([String: ClientJSONValue].self))
            }
        }

        /// Encodes the value.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .number(let n): try c.encode(n)
            case .string(let s): try c.encode(s)
            case .array(let a): try c.encode(a)
            case .object(let o): try c.encode(o)
            }
        }

        /// The text, when this is text.
        public var stringValue: String? {
            if case .string(let s) = self { return s }
            return nil
        }

        /// The number, when this is a whole number that fits an `Int`.
        public var intValue: Int? {
            guard case .number(let n) = self, n == n.rounded(), abs(n) < 9e15 else { return nil }
            return Int(n)
        }
    }

    /// A route version (`Route`): a recording of locations with a sync identity, in a workout.
    public struct ClientRoute: Codable, Hashable, Sendable {
        /// The route version's identifier (a route version never changes; a new version has a new one).
        public var uuid: UUID
        /// Its workout's identifier.
        public var workout: UUID
        /// The source that wrote it.
        public var source: String
        /// Its sync identifier: every version of the route has the same one.
        public var syncIdentifier: String
        /// Its sync version: a higher one replaces the current route.
        public var syncVersion: Int64
        /// The time of its first location (ISO 8601), or `nil`.
        public var start: String?
        /// The time of its last location, or `nil`.
        public var end: String?
        /// How many locations it holds.
        public var locations: Int
        /// Its metadata.
        public var metadata: ClientMetadata

        /// ``start`` as a date.
        public var startDate: Date? { start.flatMap(ISOTime.date) }
        /// ``end`` as a date.
        public var endDate: Date? { end.flatMap(ISOTime.date) }
    }

    /// A route that stopped being current (`DeletedRoute`): deleted, or replaced by a higher version.
    public struct ClientDeletedRoute: Codable, Hashable, Sendable {
        /// The route version's identifier.
        public var uuid: UUID
        /// Its workout's identifier.
        public var workout: UUID
        /// Its source.
        public var source: String
        /// Its sync identifier.
        public var syncIdentifier: String
        /// Its sync version.
        public var syncVersion: Int64
    }

    /// What the change feed follows besides routes (the `types` of `GET /v1/changes`).
    public enum ClientChangeType: String, Codable, Hashable, Sendable, CaseIterable {
        /// Routes (`added`, `deleted`): the default.
        case route
        /// Workouts, with or without a route (`addedObjects`, `deletedObjects`).
        case workout
        /// Effort scores.
        case effort
        /// A workout's samples of one quantity, as a whole (its count and time range).
        case series
    }

    /// An object other than a route that became current or changed (`ChangedObject`).
    public struct ClientChangedObject: Codable, Hashable, Sendable {
        /// `workout`, `effort` or `series`.
        public var type: String
        /// The workout's or effort score's identifier; a series': its workout's.
        public var uuid: UUID
        /// The identifier of the workout it is or belongs to.
        public var workout: UUID
        /// Its source.
        public var source: String
        /// A series' quantity type (`heartRate`, `power`…), else `nil`.
        public var quantity: String?
        /// What it holds, whose shape depends on ``type`` (`WorkoutObject`, `EffortObject`, `SeriesObject`).
        public var data: ClientJSONValue
    }

    /// An object other than a route that stopped being current (`DeletedObject`).
    public struct ClientDeletedObject: Codable, Hashable, Sendable {
        /// `workout`, `effort` or `series`.
        public var type: String
        /// The workout's or effort score's identifier; a series': its workout's.
        public var uuid: UUID
        /// The identifier of the workout it was or belonged to.
        public var workout: UUID
        /// Its source.
        public var source: String
        /// A series' quantity type, else `nil`.
        public var quantity: String?
        /// A workout's sync identifier, when it had one.
        public var syncIdentifier: String?
        /// A workout's sync version, when it had one.
        public var syncVersion: Int64?
    }

    /// A change set of the change feed (`ChangeSet`), as HealthKit's anchored object query gives one: apply
    /// ``deleted`` (and ``deletedObjects``) first, then ``added`` (and ``addedObjects``), then keep ``anchor``.
    public struct ChangeSetResponse: Codable, Hashable, Sendable {
        /// Routes that became current.
        public var added: [ClientRoute]
        /// Routes that stopped being current.
        public var deleted: [ClientDeletedRoute]
        /// Workouts, effort scores and series that became current or changed (the types followed).
        public var addedObjects: [ClientChangedObject]
        /// Workouts, effort scores and series that stopped being current.
        public var deletedObjects: [ClientDeletedObject]
        /// Where the feed continues after this set: keep it (with what the set changed) and pass it to
        /// ``RouteKitClient/RouteKitClient/changes(since:types:workout:)`` after a restart.
        public var anchor: String
        /// Whether more changes were ready when the set was read.
        public var hasMore: Bool
    }

    /// A workout event as recorded (`WorkoutEvent`, HealthKit's `HKWorkoutEvent`): a pause, a lap, a marker…
    public struct ClientWorkoutEvent: Codable, Hashable, Sendable {
        /// `pause`, `resume`, `motionPaused`, `motionResumed`, `lap`, `segment` or `marker`.
        public var kind: String
        /// When it started (ISO 8601), or `nil`.
        public var start: String?
        /// When a lap or a segment ended; `nil` for an event at one moment.
        public var end: String?
        /// What the file recorded with it.
        public var metadata: ClientMetadata
    }

    /// One activity of a workout (`WorkoutActivity`, HealthKit's `HKWorkoutActivity`).
    public struct ClientWorkoutActivity: Codable, Hashable, Sendable {
        /// The activity type (`running`, `cycling`…).
        public var activity: String
        /// When it started (ISO 8601), or `nil`.
        public var start: String?
        /// When it ended, or `nil`.
        public var end: String?
        /// What the file recorded with it.
        public var metadata: ClientMetadata
    }

    /// A workout (`Workout`) with the figures of its recording.
    public struct ClientWorkout: Codable, Hashable, Sendable {
        /// The workout's identifier.
        public var uuid: UUID
        /// Its activity type (`running`, `cycling`…).
        public var activity: String
        /// The source that wrote it.
        public var source: String
        /// Its sync identifier, or `nil`.
        public var syncIdentifier: String?
        /// Its sync version, or `nil`.
        public var syncVersion: Int64?
        /// When it started (ISO 8601), or `nil`.
        public var start: String?
        /// When it ended, or `nil`.
        public var end: String?
        /// How many current routes it has; `nil` for a token without `read:routes` (or `read`), which learns nothing
        /// of a workout's routes.
        public var routes: Int?
        /// The locations of its current routes; `nil` for a token without `read:routes` (or `read`).
        public var locations: Int?
        /// Its metadata.
        public var metadata: ClientMetadata
        /// The distance along its recording (metres), or `nil` without a route.
        public var distanceMetres: Double?
        /// From the recording's first fix with a time to its last (seconds), or `nil`.
        public var elapsedSeconds: Double?
        /// The time spent moving (seconds), or `nil`.
        public var movingSeconds: Double?
        /// Its events as recorded.
        public var events: [ClientWorkoutEvent]
        /// Its activities (the workout itself as its one activity when it recorded none).
        public var activities: [ClientWorkoutActivity]

        /// ``start`` as a date.
        public var startDate: Date? { start.flatMap(ISOTime.date) }
        /// ``end`` as a date.
        public var endDate: Date? { end.flatMap(ISOTime.date) }
    }

    /// A page of workouts (`GET /v1/workouts`).
    public struct ClientWorkoutPage: Hashable, Sendable {
        /// The workouts, in the order they were saved (or newest first).
        public var workouts: [ClientWorkout]
        /// The cursor of the next page (pass it as `after`), `nil` on the last page.
        public var next: String?
        /// The change feed's anchor read before the list: following the feed from it misses no change made after
        /// the list.
        public var anchor: String
    }

    /// A workout with its current routes (`GET /v1/workouts/ID`).
    public struct ClientWorkoutDetail: Hashable, Sendable {
        /// The workout.
        public var workout: ClientWorkout
        /// Its current routes.
        public var routes: [ClientRoute]
    }

    /// How a route builder orders the locations it is sent.
    public enum ClientLocationOrder: String, Codable, Hashable, Sendable {
        /// By time (HealthKit's order).
        case timestamp
        /// As appended.
        case insertion
    }

    /// A route builder on the server (`Builder`): what it holds, so that an upload resumes where it stopped.
    public struct ClientBuilder: Codable, Hashable, Sendable {
        /// The builder's identifier: keep it to resume after a restart.
        public var id: UUID
        /// The source it writes as (the token's).
        public var source: String
        /// `timestamp` (locations kept in time order) or `insertion`.
        public var order: String
        /// The locations it holds: the index of the next batch's first location.
        public var locations: Int
        /// The samples it holds by type (`heartRate`, `power`, `cadence`…).
        public var samples: [String: Int]
        /// The workout events it holds.
        public var events: Int
        /// When it was made (ISO 8601).
        public var created: String
        /// When it last changed (ISO 8601).
        public var updated: String
    }

    /// A finished route builder (`POST /v1/builders/ID/finish`).
    public struct ClientFinishedRoute: Hashable, Sendable {
        /// `inserted` (a new route) or `replaced` (a higher version of the sync identifier replaced the current one).
        public var outcome: String
        /// The route saved.
        public var route: ClientRoute
        /// The route version it replaced, when it replaced one.
        public var previous: UUID?
        /// That version's sync version.
        public var previousVersion: Int64?
    }

    /// One track stored by an upload: its workout, its route (`nil` for a track without locations), its locations.
    public struct ClientImportedRoute: Codable, Hashable, Sendable {
        /// The workout's identifier.
        public var workout: UUID
        /// The route's identifier, or `nil`.
        public var route: UUID?
        /// The route's locations.
        public var locations: Int
    }

    /// Why an uploaded file (or part of it) was not imported.
    public struct ClientImportError: Codable, Hashable, Sendable {
        /// The error's code (`invalidGPX`…).
        public var code: String
        /// What went wrong (never coordinates).
        public var message: String
        /// The 1-based line in a text format, or `nil`.
        public var line: Int?
        /// The 1-based column, or `nil`.
        public var column: Int?
        /// The byte offset in a binary format, or `nil`.
        public var byteOffset: Int?
    }

    /// What importing one uploaded file (or archive entry) did (`ImportResult`, as `routekit import --json`).
    public struct ClientImportResult: Codable, Hashable, Sendable {
        /// The file's (or entry's) name.
        public var file: String
        /// `imported`, `unchanged` (everything was stored already), `partial` or `failed`.
        public var status: String
        /// The tracks stored.
        public var routes: [ClientImportedRoute]
        /// The waypoints read.
        public var waypoints: Int
        /// What was dropped or repaired.
        public var warnings: [String]
        /// Why it failed (`partial`, `failed`), or `nil`.
        public var error: ClientImportError?
    }

    /// The answer of an upload (`UploadResults`): one result per file, several for an archive.
    public struct ClientUploadResults: Codable, Hashable, Sendable {
        /// The results.
        public var results: [ClientImportResult]
    }

    /// An RFC 9457 problem, as the server answers every error (`application/problem+json`): ``type`` is
    /// `urn:routekit:problem:NAME` (``name``), the same for every problem of a kind, and the other members say more
    /// (``members``: `locations` of a `builder-gap`, `index` of an invalid location…).
    public struct ClientProblem: Codable, Hashable, Sendable {
        /// The prefix of every problem type RouteKit answers.
        public static let typePrefix = "urn:routekit:problem:"

        /// `urn:routekit:problem:NAME`.
        public var type: String
        /// The same for every problem of the type.
        public var title: String
        /// The HTTP status.
        public var status: Int
        /// This occurrence.
        public var detail: String
        /// Every member, the four above included.
        public var members: [String: ClientJSONValue]

        /// The type's short name (`anchor-expired`, `builder-gap`, `not-found`…).
        public var name: String {
            type.hasPrefix(Self.typePrefix) ? String(type.dropFirst(Self.typePrefix.count)) : type
        }

        /// A problem with these members (`type`, `title`, `status` and `detail` among them).
        public init(members: [String: ClientJSONValue]) {
            self.members = members
            type = members["type"]?.stringValue ?? "about:blank"
            title = members["title"]?.stringValue ?? ""
            status = members["status"]?.intValue ?? 0
            detail = members["detail"]?.stringValue ?? ""
        }

        /// Decodes a JSON object.
        public init(from decoder: any Decoder) throws {
            self.init(members: try [String: ClientJSONValue](from: decoder))
        }

        /// Encodes ``members``.
        public func encode(to encoder: any Encoder) throws {
            try members.encode(to: encoder)
        }
    }
#endif
