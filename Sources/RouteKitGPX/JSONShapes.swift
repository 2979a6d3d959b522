import Foundation
public import RouteKit

// The JSON shapes RouteKit prints (`routekit … --json`) and serves (`routekit serve`), defined once. Absent values
// are written as explicit `null`s, so a consumer sees every key of a shape whether or not it has a value.

/// A route: `routekit routes --json`, `added` in a change set, the routes of `GET /v1/routes`.
public struct RouteJSON: Codable, Hashable, Sendable {
    /// The route's uuid (lowercase).
    public var uuid: String
    /// Its workout's uuid.
    public var workout: String
    /// The source that wrote it.
    public var source: String
    /// Its sync identifier.
    public var syncIdentifier: String
    /// Its sync version.
    public var syncVersion: Int64
    /// The time of its first location (ISO 8601), or `null`.
    public var start: String?
    /// The time of its last location, or `null`.
    public var end: String?
    /// How many locations it holds.
    public var locations: Int
    /// Its metadata.
    public var metadata: [String: MetadataValue]

    /// The shape of `route`.
    public init(_ route: RouteSample) {
        uuid = route.id.uuidString.lowercased()
        workout = route.workoutID.uuidString.lowercased()
        source = route.source.name
        syncIdentifier = route.sync.identifier
        syncVersion = route.sync.version
        start = route.start?.iso8601
        end = route.end?.iso8601
        locations = route.locationCount
        metadata = route.metadata
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(workout, forKey: .workout)
        try c.encode(source, forKey: .source)
        try c.encode(syncIdentifier, forKey: .syncIdentifier)
        try c.encode(syncVersion, forKey: .syncVersion)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(locations, forKey: .locations)
        try c.encode(metadata, forKey: .metadata)
    }

    enum CodingKeys: String, CodingKey {
        case uuid, workout, source, syncIdentifier, syncVersion, start, end, locations, metadata
    }
}

/// A route that stopped being current, as `deleted` in a change set.
public struct DeletedRouteJSON: Codable, Hashable, Sendable {
    /// The route's uuid.
    public var uuid: String
    /// Its source.
    public var source: String
    /// Its workout's uuid.
    public var workout: String
    /// Its sync identifier.
    public var syncIdentifier: String
    /// Its sync version.
    public var syncVersion: Int64

    /// The shape of `deleted`.
    public init(_ deleted: DeletedRoute) {
        uuid = deleted.id.uuidString.lowercased()
        source = deleted.source.name
        workout = deleted.workoutID.uuidString.lowercased()
        syncIdentifier = deleted.sync.identifier
        syncVersion = deleted.sync.version
    }
}

/// A change set: `routekit changes --json`, and `GET /v1/changes`.
public struct ChangeSetJSON: Codable, Hashable, Sendable {
    /// Routes that became current.
    public var added: [RouteJSON]
    /// Routes that stopped being current (apply these first).
    public var deleted: [DeletedRouteJSON]
    /// Where the next read starts.
    public var anchor: String
    /// Whether more changes are ready now.
    public var hasMore: Bool

    /// The shape of `set`.
    public init(_ set: ChangeSet) {
        added = set.added.map(RouteJSON.init)
        deleted = set.deleted.map(DeletedRouteJSON.init)
        anchor = set.anchor.text
        hasMore = set.hasMore
    }
}

/// The `error` object of the JSON shapes: code, message, and where in the input (line and column for text, a byte
/// offset for binary formats).
public struct ErrorJSON: Codable, Hashable, Sendable {
    /// The error's code (``RouteKitError/Code``).
    public var code: String
    /// What went wrong (never coordinates: see ``RouteKitError/privateDetail``).
    public var message: String
    /// The 1-based line, or `null`.
    public var line: Int?
    /// The 1-based column, or `null`.
    public var column: Int?
    /// The byte offset (binary formats), omitted when absent.
    public var byteOffset: Int?

    /// The shape of `error`.
    public init(_ error: RouteKitError) {
        code = error.code.description
        message = error.message
        line = error.line
        column = error.column
        byteOffset = error.byteOffset
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encode(line, forKey: .line)
        try c.encode(column, forKey: .column)
        // Binary formats (FIT) name a byte offset instead of a line and column.
        try c.encodeIfPresent(byteOffset, forKey: .byteOffset)
    }

    enum CodingKeys: String, CodingKey { case code, message, line, column, byteOffset }
}

/// What importing one file did: `routekit import --json`, and each result of `POST /v1/uploads`.
public struct ImportResultJSON: Codable, Hashable, Sendable {
    /// One track: its workout, its route (`null` for a track without locations), how many locations.
    public struct Route: Codable, Hashable, Sendable {
        /// The workout's uuid.
        public var workout: String
        /// The route's uuid, or `null`.
        public var route: String?
        /// The route's locations.
        public var locations: Int

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(workout, forKey: .workout)
            try c.encode(route, forKey: .route)
            try c.encode(locations, forKey: .locations)
        }

        enum CodingKeys: String, CodingKey { case workout, route, locations }
    }

    /// The file (or archive entry) name.
    public var file: String
    /// `imported`, `unchanged`, `partial` or `failed` (``GPXImportResult/Status``).
    public var status: String
    /// The tracks stored.
    public var routes: [Route]
    /// The waypoints read.
    public var waypoints: Int
    /// What was dropped or repaired.
    public var warnings: [String]
    /// Why it failed (`partial`, `failed`), or `null`.
    public var error: ErrorJSON?

    /// The shape of `result`.
    public init(_ result: GPXImportResult) {
        file = result.file
        status = result.status.rawValue
        routes = result.tracks.map {
            Route(
                workout: $0.workout.uuidString.lowercased(), route: $0.route?.uuidString.lowercased(),
                locations: $0.locations)
        }
        waypoints = result.waypoints
        warnings = result.warnings
        error = result.error.map(ErrorJSON.init)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(file, forKey: .file)
        try c.encode(status, forKey: .status)
        try c.encode(routes, forKey: .routes)
        try c.encode(waypoints, forKey: .waypoints)
        try c.encode(warnings, forKey: .warnings)
        try c.encode(error, forKey: .error)
    }

    enum CodingKeys: String, CodingKey { case file, status, routes, waypoints, warnings, error }
}

/// A workout: `routekit workouts --json`, and `GET /v1/workouts`.
public struct WorkoutJSON: Codable, Hashable, Sendable {
    /// The workout's uuid.
    public var uuid: String
    /// Its activity type.
    public var activity: String
    /// The source that wrote it.
    public var source: String
    /// Its sync identifier, or `null`.
    public var syncIdentifier: String?
    /// Its sync version, or `null`.
    public var syncVersion: Int64?
    /// When it started (ISO 8601), or `null`.
    public var start: String?
    /// When it ended, or `null`.
    public var end: String?
    /// Its current routes.
    public var routes: Int
    /// The locations of its current routes.
    public var locations: Int
    /// Its metadata.
    public var metadata: [String: MetadataValue]

    /// The shape of `workout` with its current `routes`.
    public init(_ workout: Workout, routes: [RouteSample]) {
        uuid = workout.id.uuidString.lowercased()
        activity = workout.activityType.rawValue
        source = workout.source.name
        syncIdentifier = workout.sync?.identifier
        syncVersion = workout.sync?.version
        start = workout.start?.iso8601
        end = workout.end?.iso8601
        self.routes = routes.count
        locations = routes.reduce(0) { $0 + $1.locationCount }
        metadata = workout.metadata
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(activity, forKey: .activity)
        try c.encode(source, forKey: .source)
        try c.encode(syncIdentifier, forKey: .syncIdentifier)
        try c.encode(syncVersion, forKey: .syncVersion)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(routes, forKey: .routes)
        try c.encode(locations, forKey: .locations)
        try c.encode(metadata, forKey: .metadata)
    }

    enum CodingKeys: String, CodingKey {
        case uuid, activity, source, syncIdentifier, syncVersion, start, end, routes, locations, metadata
    }
}
