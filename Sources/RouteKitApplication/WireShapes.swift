package import Foundation
package import RouteKit
internal import RouteKitGPX
package import RouteKitIngest
package import RouteKitProcessing

// The JSON shapes RouteKit prints (`routekit … --json`) and serves (`routekit serve`), defined once. Absent values
// are written as explicit `null`s, so a consumer sees every key of a shape whether or not it has a value.

/// A route: `routekit routes --json`, `added` in a change set, the routes of `GET /v1/routes`.
package struct RouteJSON: Codable, Hashable, Sendable {
    /// The route's uuid (lowercase).
    package var uuid: String
    /// Its workout's uuid.
    package var workout: String
    /// The source that wrote it.
    package var source: String
    /// Its sync identifier.
    package var syncIdentifier: String
    /// Its sync version.
    package var syncVersion: Int64
    /// The time of its first location (ISO 8601), or `null`.
    @ExplicitNull package var start: String?
    /// The time of its last location, or `null`.
    @ExplicitNull package var end: String?
    /// How many locations it holds.
    package var locations: Int
    /// Its metadata.
    package var metadata: [String: MetadataValue]

    /// The shape of `route`.
    package init(_ route: RouteSample) {
        uuid = route.id.lowercaseText
        workout = route.workoutID.lowercaseText
        source = route.source.name
        syncIdentifier = route.sync.identifier
        syncVersion = route.sync.version
        start = route.start?.iso8601
        end = route.end?.iso8601
        locations = route.locationCount
        metadata = route.metadata
    }

    enum CodingKeys: String, CodingKey {
        case uuid, workout, source, syncIdentifier, syncVersion, start, end, locations, metadata
    }
}

/// A route that stopped being current, as `deleted` in a change set.
package struct DeletedRouteJSON: Codable, Hashable, Sendable {
    /// The route's uuid.
    package var uuid: String
    /// Its source.
    package var source: String
    /// Its workout's uuid.
    package var workout: String
    /// Its sync identifier.
    package var syncIdentifier: String
    /// Its sync version.
    package var syncVersion: Int64

    /// The shape of `deleted`.
    package init(_ deleted: DeletedRoute) {
        uuid = deleted.id.lowercaseText
        source = deleted.source.name
        workout = deleted.workoutID.lowercaseText
        syncIdentifier = deleted.sync.identifier
        syncVersion = deleted.sync.version
    }
}

/// A change set: `routekit changes --json`, and `GET /v1/changes`.
package struct ChangeSetJSON: Codable, Hashable, Sendable {
    /// Routes that became current.
    package var added: [RouteJSON]
    /// Routes that stopped being current (apply these first).
    package var deleted: [DeletedRouteJSON]
    /// Workouts, effort scores and series that became current or changed (the types asked for).
    package var addedObjects: [ChangedObjectJSON]
    /// Workouts, effort scores and series that stopped being current (apply these first).
    package var deletedObjects: [DeletedObjectJSON]
    /// Where the next read starts.
    package var anchor: String
    /// Whether more changes are ready now.
    package var hasMore: Bool

    /// The shape of `set`.
    package init(_ set: ChangeSet) {
        added = set.added.map(RouteJSON.init)
        deleted = set.deleted.map(DeletedRouteJSON.init)
        addedObjects = set.addedObjects.map(ChangedObjectJSON.init)
        deletedObjects = set.deletedObjects.map(DeletedObjectJSON.init)
        anchor = set.anchor.text
        hasMore = set.hasMore
    }
}

/// An object other than a route in a change set's `addedObjects`: what identifies it (`type`, `uuid`, `quantity`
/// for a series), its workout and source, and its `data`, whose shape depends on `type`.
package struct ChangedObjectJSON: Codable, Hashable, Sendable {
    /// `workout`, `effort` or `series`.
    package var type: String
    /// The workout's or effort score's uuid; a series' workout's uuid.
    package var uuid: String
    /// The uuid of the workout it is or belongs to.
    package var workout: String
    /// The source that wrote it.
    package var source: String
    /// A series' quantity type (`heartRate`…), `null` otherwise.
    package var quantity: String?
    /// What the object holds.
    package var data: Payload

    /// The `data` of each type.
    package enum Payload: Hashable, Sendable {
        case workout(WorkoutObjectJSON)
        case effort(EffortObjectJSON)
        case series(SeriesObjectJSON)
    }

    /// A workout as the feed carries it: the workout's own fields (its routes, series and effort scores are objects
    /// of their own).
    package struct WorkoutObjectJSON: Codable, Hashable, Sendable {
        package var activity: String
        @ExplicitNull package var syncIdentifier: String?
        @ExplicitNull package var syncVersion: Int64?
        @ExplicitNull package var start: String?
        @ExplicitNull package var end: String?
        package var metadata: [String: MetadataValue]
        package var events: [WorkoutEventJSON]
        package var activities: [WorkoutActivityJSON]

        enum CodingKeys: String, CodingKey {
            case activity, syncIdentifier, syncVersion, start, end, metadata, events, activities
        }
    }

    /// An effort score as the feed carries it.
    package struct EffortObjectJSON: Codable, Hashable, Sendable {
        /// 1–10.
        package var score: Double
        /// Given by a person (it wins over estimates).
        package var manual: Bool
        /// When it was related, ISO 8601.
        package var created: String
    }

    /// A series as the feed carries it: how big it is now (its samples are read from
    /// `GET /v1/workouts/ID/series/TYPE`).
    package struct SeriesObjectJSON: Codable, Hashable, Sendable {
        /// The unit of its values.
        package var unit: String
        /// How many samples it holds.
        package var count: Int
        /// Its first and last sample's times, or `null`.
        @ExplicitNull package var start: String?
        @ExplicitNull package var end: String?

        enum CodingKeys: String, CodingKey { case unit, count, start, end }
    }

    /// The shape of `object`.
    package init(_ object: ChangedObject) {
        type = object.type.rawValue
        workout = object.workoutID.lowercaseText
        source = object.source.name
        quantity = object.key.quantityType?.identifier
        uuid = object.key.id.lowercaseText
        switch object {
        case .workout(let w):
            data = .workout(
                WorkoutObjectJSON(
                    activity: w.activityType.rawValue, syncIdentifier: w.sync?.identifier, syncVersion: w.sync?.version,
                    start: w.start?.iso8601, end: w.end?.iso8601, metadata: w.metadata,
                    events: w.events.map(WorkoutEventJSON.init),
                    activities: w.allActivities.map(WorkoutActivityJSON.init))
            )
        case .effort(let e):
            data = .effort(
                EffortObjectJSON(score: e.score, manual: e.isManual, created: Timestamp(e.created).iso8601))
        case .series(let s):
            data = .series(
                SeriesObjectJSON(
                    unit: s.type.unit, count: s.count, start: s.start.map { Timestamp($0).iso8601 },
                    end: s.end.map { Timestamp($0).iso8601 }))
        }
    }

    enum CodingKeys: String, CodingKey { case type, uuid, workout, source, quantity, data }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        uuid = try c.decode(String.self, forKey: .uuid)
        workout = try c.decode(String.self, forKey: .workout)
        source = try c.decode(String.self, forKey: .source)
        quantity = try c.decodeIfPresent(String.self, forKey: .quantity)
        switch type {
        case "workout": data = .workout(try c.decode(WorkoutObjectJSON.self, forKey: .data))
        case "effort": data = .effort(try c.decode(EffortObjectJSON.self, forKey: .data))
        case "series": data = .series(try c.decode(SeriesObjectJSON.self, forKey: .data))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown type '\(type)'")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(workout, forKey: .workout)
        try c.encode(source, forKey: .source)
        try c.encode(quantity, forKey: .quantity)
        switch data {
        case .workout(let w): try c.encode(w, forKey: .data)
        case .effort(let e): try c.encode(e, forKey: .data)
        case .series(let s): try c.encode(s, forKey: .data)
        }
    }
}

/// An object other than a route that stopped being current, in a change set's `deletedObjects`.
package struct DeletedObjectJSON: Codable, Hashable, Sendable {
    /// `workout`, `effort` or `series`.
    package var type: String
    /// The workout's or effort score's uuid; a series' workout's uuid.
    package var uuid: String
    /// The uuid of the workout it was or belonged to.
    package var workout: String
    /// Its source.
    package var source: String
    /// A series' quantity type, `null` otherwise.
    @ExplicitNull package var quantity: String?
    /// A workout's sync identifier and version, `null` otherwise.
    @ExplicitNull package var syncIdentifier: String?
    @ExplicitNull package var syncVersion: Int64?

    /// The shape of `deleted`.
    package init(_ deleted: DeletedObject) {
        type = deleted.key.type.rawValue
        uuid = deleted.key.id.lowercaseText
        workout = deleted.workoutID.lowercaseText
        source = deleted.source.name
        quantity = deleted.key.quantityType?.identifier
        syncIdentifier = deleted.sync?.identifier
        syncVersion = deleted.sync?.version
    }

    enum CodingKeys: String, CodingKey { case type, uuid, workout, source, quantity, syncIdentifier, syncVersion }
}

/// The `error` object of the JSON shapes: code, message, and where in the input (line and column for text, a byte
/// offset for binary formats).
package struct ErrorJSON: Codable, Hashable, Sendable {
    /// The error's code (`RouteKitError.Code`).
    package var code: String
    /// What went wrong (never coordinates: see `RouteKitError.privateDetail`).
    package var message: String
    /// The 1-based line, or `null`.
    @ExplicitNull package var line: Int?
    /// The 1-based column, or `null`.
    @ExplicitNull package var column: Int?
    /// The byte offset (binary formats), omitted when absent.
    package var byteOffset: Int?

    /// The shape of `error`.
    package init(_ error: RouteKitError) {
        code = error.code.description
        message = error.message
        line = error.line
        column = error.column
        byteOffset = error.byteOffset
    }

    enum CodingKeys: String, CodingKey { case code, message, line, column, byteOffset }
}

/// What importing one file did: `routekit import --json`, and each result of `POST /v1/uploads`.
package struct ImportResultJSON: Codable, Hashable, Sendable {
    /// One track: its workout, its route (`null` for a track without locations), how many locations.
    package struct Route: Codable, Hashable, Sendable {
        /// The workout's uuid.
        package var workout: String
        /// The route's uuid, or `null`.
        @ExplicitNull package var route: String?
        /// The route's locations.
        package var locations: Int

        enum CodingKeys: String, CodingKey { case workout, route, locations }
    }

    /// The file (or archive entry) name.
    package var file: String
    /// `imported`, `unchanged`, `partial` or `failed` (``ImportResult/Status``).
    package var status: String
    /// The tracks stored.
    package var routes: [Route]
    /// The waypoints read.
    package var waypoints: Int
    /// What was dropped or repaired.
    package var warnings: [String]
    /// Why it failed (`partial`, `failed`), or `null`.
    @ExplicitNull package var error: ErrorJSON?

    /// The shape of `result`.
    package init(_ result: ImportResult) {
        file = result.file
        status = result.status.rawValue
        routes = result.tracks.map {
            Route(
                workout: $0.workout.lowercaseText, route: $0.route?.lowercaseText,
                locations: $0.locations)
        }
        waypoints = result.waypoints
        warnings = result.warnings
        error = result.error.map(ErrorJSON.init)
    }

    enum CodingKeys: String, CodingKey { case file, status, routes, waypoints, warnings, error }
}

/// A workout: `routekit workouts --json`, and `GET /v1/workouts`.
package struct WorkoutJSON: Codable, Hashable, Sendable {
    /// The workout's uuid.
    package var uuid: String
    /// Its activity type.
    package var activity: String
    /// The source that wrote it.
    package var source: String
    /// Its sync identifier, or `null`.
    @ExplicitNull package var syncIdentifier: String?
    /// Its sync version, or `null`.
    @ExplicitNull package var syncVersion: Int64?
    /// When it started (ISO 8601), or `null`.
    @ExplicitNull package var start: String?
    /// When it ended, or `null`.
    @ExplicitNull package var end: String?
    /// Its current routes, or `null` for a reader that may not read routes (an API token without `read:routes`).
    @ExplicitNull package var routes: Int?
    /// The locations of its current routes, or `null` for a reader that may not read routes.
    @ExplicitNull package var locations: Int?
    /// Its metadata.
    package var metadata: [String: MetadataValue]
    /// The distance along its recording (metres, as its statistics give it), or `null` without a route.
    @ExplicitNull package var distanceMetres: Double?
    /// The time from its recording's first fix to the last (seconds), or `null`.
    @ExplicitNull package var elapsedSeconds: Double?
    /// The time spent moving (seconds), or `null`.
    @ExplicitNull package var movingSeconds: Double?
    /// Its events (pauses, laps with their recorded totals, segments, markers), as recorded.
    package var events: [WorkoutEventJSON]
    /// Its activities: those recorded, else the workout itself as its one activity.
    package var activities: [WorkoutActivityJSON]

    /// The shape of `workout` with its current `routes` and its `figures` (``WorkoutFigures/of(_:in:)``); without
    /// `countingRoutes` (a reader that may not read routes), with neither a route count nor a location count.
    package init(_ workout: Workout, routes: [RouteSample], figures: WorkoutFigures?, countingRoutes: Bool = true) {
        uuid = workout.id.lowercaseText
        activity = workout.activityType.rawValue
        source = workout.source.name
        syncIdentifier = workout.sync?.identifier
        syncVersion = workout.sync?.version
        start = workout.start?.iso8601
        end = workout.end?.iso8601
        let locationCount = routes.reduce(0) { $0 + $1.locationCount }
        self.routes = countingRoutes ? routes.count : nil
        locations = countingRoutes ? locationCount : nil
        metadata = workout.metadata
        distanceMetres = figures?.distanceMetres
        elapsedSeconds = figures?.elapsedSeconds
        movingSeconds = figures?.movingSeconds
        events = workout.events.map(WorkoutEventJSON.init)
        activities = workout.allActivities.map(WorkoutActivityJSON.init)
    }

    /// The shape of `workout` with its current `routes` and its figures, read (or measured once) as a list has them;
    /// its counts of routes and locations only when the store's reader may read routes (`readGrant`).
    package init(_ workout: Workout, routes: [RouteSample], in store: any RouteStore) async throws {
        let figures = try await WorkoutFigures.of([(workout, routes)], in: store)
        self.init(
            workout, routes: routes, figures: figures[workout.id], countingRoutes: store.readGrant.mayRead(.routes))
    }

    /// The shapes of `workouts` with their current routes, their figures read (or measured once) as a list has
    /// them; their counts of routes and locations only when the store's reader may read routes (`readGrant`).
    package static func list(_ workouts: [(workout: Workout, routes: [RouteSample])], in store: any RouteStore)
        async throws -> [WorkoutJSON]
    {
        let figures = try await WorkoutFigures.of(workouts, in: store)
        let counting = store.readGrant.mayRead(.routes)
        return workouts.map {
            WorkoutJSON($0.workout, routes: $0.routes, figures: figures[$0.workout.id], countingRoutes: counting)
        }
    }

    enum CodingKeys: String, CodingKey {
        case uuid, activity, source, syncIdentifier, syncVersion, start, end, routes, locations, metadata
        case distanceMetres, elapsedSeconds, movingSeconds, events, activities
    }
}

/// A workout's activity (``WorkoutActivity``) in `routekit workouts --json` and the HTTP API.
package struct WorkoutActivityJSON: Codable, Hashable, Sendable {
    /// Its activity type.
    package var activity: String
    /// When it started (ISO 8601), or `null`.
    @ExplicitNull package var start: String?
    /// When it ended, or `null`.
    @ExplicitNull package var end: String?
    /// What the file recorded with it.
    package var metadata: [String: MetadataValue]

    /// The shape of `activity`.
    package init(_ activity: WorkoutActivity) {
        self.activity = activity.activityType.rawValue
        start = activity.start?.iso8601
        end = activity.end?.iso8601
        metadata = activity.metadata
    }

    enum CodingKeys: String, CodingKey { case activity, start, end, metadata }
}

/// A workout's event (``WorkoutEvent``) in `routekit workouts --json` and the HTTP API: its kind (HealthKit's names:
/// `pause`, `resume`, `motionPaused`, `motionResumed`, `lap`, `segment`, `marker`), its times, and what the file
/// recorded with it (a lap's totals under `MetadataKey` names).
package struct WorkoutEventJSON: Codable, Hashable, Sendable {
    /// The kind.
    package var kind: String
    /// When it started (ISO 8601), or `null`.
    @ExplicitNull package var start: String?
    /// When it ended, or `null` for an event at one moment.
    @ExplicitNull package var end: String?
    /// What the file recorded with it.
    package var metadata: [String: MetadataValue]

    /// The shape of `event`.
    package init(_ event: WorkoutEvent) {
        kind = event.kind.rawValue
        start = event.start?.iso8601
        end = event.end?.iso8601
        metadata = event.metadata
    }

    enum CodingKeys: String, CodingKey { case kind, start, end, metadata }
}

/// A workout's statistics with what they were computed from (``WorkoutStatistics/compute(store:id:request:)``):
/// `routekit stats --json`, and `GET /v1/workouts/ID/stats`. Every key is present, `null` where there is no value;
/// within a zone, the last zone's `upper` is left out (it has none).
package struct WorkoutStatisticsJSON: Codable, Hashable, Sendable {
    /// Heart rate while moving, present when there is an average.
    package struct HeartRate: Codable, Hashable, Sendable {
        /// The time-weighted average (beats a minute).
        @ExplicitNull package var average: Double?
        /// The highest heart rate, or `null`.
        @ExplicitNull package var max: Double?

        enum CodingKeys: String, CodingKey { case average, max }
    }

    /// Power while moving, present when there is an average.
    package struct Power: Codable, Hashable, Sendable {
        /// The time-weighted average (watts).
        @ExplicitNull package var average: Double?
        /// The highest power, or `null`.
        @ExplicitNull package var max: Double?
        /// The FTP the power zones used (given, or estimated), or `null`.
        @ExplicitNull package var ftp: Double?

        enum CodingKeys: String, CodingKey { case average, max, ftp }
    }

    /// The time spent in one heart-rate or power zone.
    package struct Zone: Codable, Hashable, Sendable {
        /// The zone's number, from 1.
        package var zone: Int
        /// Its lower bound.
        package var lower: Double
        /// Its upper bound, left out for the last zone (unbounded).
        package var upper: Double?
        /// The seconds spent in it while moving.
        package var seconds: Double

        /// The shape of `time`.
        package init(_ time: ZoneTime) {
            zone = time.zone
            lower = time.lower
            upper = time.upper
            seconds = time.seconds
        }

        enum CodingKeys: String, CodingKey { case zone, lower, upper, seconds }
    }

    /// The workout's uuid.
    package var workout: String
    /// The route version the numbers come from, or `null`.
    @ExplicitNull package var route: String?
    /// The distance (metres).
    package var distanceMetres: Double
    /// From the first time to the last (seconds), or `null`.
    @ExplicitNull package var elapsedSeconds: Double?
    /// The time spent moving (seconds), or `null`.
    @ExplicitNull package var movingSeconds: Double?
    /// The elevation gained (metres), or `null`.
    @ExplicitNull package var elevationGainMetres: Double?
    /// The elevation lost (metres), or `null`.
    @ExplicitNull package var elevationLossMetres: Double?
    /// The lowest elevation (metres), or `null`.
    @ExplicitNull package var minElevationMetres: Double?
    /// The highest elevation (metres), or `null`.
    @ExplicitNull package var maxElevationMetres: Double?
    /// The distance over the moving time (m/s), or `null`.
    @ExplicitNull package var averageSpeed: Double?
    /// The fastest stretch's speed (m/s), or `null`.
    @ExplicitNull package var maxSpeed: Double?
    /// The heart rate, or `null` without an average.
    @ExplicitNull package var heartRate: HeartRate?
    /// The time-weighted cadence while moving, or `null`.
    @ExplicitNull package var cadenceAverage: Double?
    /// The time in each heart-rate zone, or `null`.
    @ExplicitNull package var zones: [Zone]?
    /// The power, or `null` without an average.
    @ExplicitNull package var power: Power?
    /// The time in each power zone, or `null`.
    @ExplicitNull package var powerZones: [Zone]?
    /// The heart-rate zone configuration used and where it came from, or `null`.
    @ExplicitNull package var zoneConfiguration: ZoneConfigurationJSON?
    /// The power zone configuration used and where it came from, or `null`.
    @ExplicitNull package var powerZoneConfiguration: ZoneConfigurationJSON?

    /// The shape of `report`.
    package init(_ report: WorkoutStatisticsReport) {
        let s = report.statistics
        workout = report.workout.id.lowercaseText
        route = report.route?.id.lowercaseText
        distanceMetres = s.distanceMetres
        elapsedSeconds = s.elapsedSeconds
        movingSeconds = s.movingSeconds
        elevationGainMetres = s.elevationGainMetres
        elevationLossMetres = s.elevationLossMetres
        minElevationMetres = s.minElevation
        maxElevationMetres = s.maxElevation
        averageSpeed = s.averageSpeed
        maxSpeed = s.maxSpeed
        heartRate = s.heartRateAverage.map { HeartRate(average: $0, max: s.heartRateMax) }
        cadenceAverage = s.cadenceAverage
        zones = s.zones?.map(Zone.init)
        power = s.powerAverage.map { Power(average: $0, max: s.powerMax, ftp: report.ftp) }
        powerZones = s.powerZones?.map(Zone.init)
        zoneConfiguration = report.zoneConfiguration.map(ZoneConfigurationJSON.init)
        powerZoneConfiguration = report.powerZoneConfiguration.map(ZoneConfigurationJSON.init)
    }

    enum CodingKeys: String, CodingKey {
        case workout, route, distanceMetres, elapsedSeconds, movingSeconds, elevationGainMetres
        case elevationLossMetres, minElevationMetres, maxElevationMetres, averageSpeed, maxSpeed, heartRate
        case cadenceAverage, zones, power, powerZones, zoneConfiguration, powerZoneConfiguration
    }
}

/// A zone configuration (``ZoneConfiguration``): `routekit zones show --json`, `GET /v1/zones/{quantity}`, and
/// the statistics' `zoneConfiguration` and `powerZoneConfiguration`.
package struct ZoneConfigurationJSON: Codable, Hashable, Sendable {
    /// `heartRate` or `power`.
    package var quantity: String
    /// `system`, `user` or `app`.
    package var origin: String
    /// `bpm` or `W`.
    package var unit: String
    /// The 2 to 8 inner boundaries, ascending: zone 1 below the first, the last zone from the last up.
    package var boundaries: [Double]
    /// How a system configuration was made, or `null`.
    @ExplicitNull package var basis: String?

    /// The shape of `configuration`.
    package init(_ configuration: ZoneConfiguration) {
        quantity = configuration.quantity.rawValue
        origin = configuration.origin.rawValue
        unit = configuration.quantity.unit
        boundaries = configuration.boundaries
        basis = configuration.basis
    }

    enum CodingKeys: String, CodingKey { case quantity, origin, unit, boundaries, basis }
}

/// A workout's splits (``WorkoutStatistics/splits(store:id:rule:request:)``): `routekit splits --json` and
/// `GET /v1/workouts/ID/splits`. Every key is present, `null` where there is no value.
package struct WorkoutSplitsJSON: Codable, Hashable, Sendable {
    /// One split's numbers.
    package struct Split: Codable, Hashable, Sendable {
        /// Its number, from 1.
        package var number: Int
        /// The lap's start, or the time of the split's first fix; `null` without one.
        @ExplicitNull package var start: String?
        /// The lap's end, or the time of the split's last fix; `null` without one.
        @ExplicitNull package var end: String?
        /// The distance (metres).
        package var distanceMetres: Double
        /// From the first time to the last (seconds), or `null`.
        @ExplicitNull package var elapsedSeconds: Double?
        /// The time spent moving (seconds), or `null`.
        @ExplicitNull package var movingSeconds: Double?
        /// The elevation gained (metres), or `null`.
        @ExplicitNull package var elevationGainMetres: Double?
        /// The elevation lost (metres), or `null`.
        @ExplicitNull package var elevationLossMetres: Double?
        /// The distance over the moving time (m/s), or `null`.
        @ExplicitNull package var averageSpeed: Double?
        /// The fastest stretch's speed (m/s), or `null`.
        @ExplicitNull package var maxSpeed: Double?
        /// The heart rate, or `null` without an average.
        @ExplicitNull package var heartRate: WorkoutStatisticsJSON.HeartRate?
        /// The time-weighted cadence while moving, or `null`.
        @ExplicitNull package var cadenceAverage: Double?
        /// The power (its `ftp` always `null`), or `null` without an average.
        @ExplicitNull package var power: WorkoutStatisticsJSON.Power?
        /// A lap's totals as its file recorded them, or `null` (distance splits).
        @ExplicitNull package var recorded: [String: MetadataValue]?

        /// The shape of `split`.
        package init(_ split: WorkoutSplit) {
            let s = split.statistics
            number = split.number
            start = split.start?.iso8601
            end = split.end?.iso8601
            distanceMetres = s.distanceMetres
            elapsedSeconds = s.elapsedSeconds
            movingSeconds = s.movingSeconds
            elevationGainMetres = s.elevationGainMetres
            elevationLossMetres = s.elevationLossMetres
            averageSpeed = s.averageSpeed
            maxSpeed = s.maxSpeed
            heartRate = s.heartRateAverage.map { WorkoutStatisticsJSON.HeartRate(average: $0, max: s.heartRateMax) }
            cadenceAverage = s.cadenceAverage
            power = s.powerAverage.map { WorkoutStatisticsJSON.Power(average: $0, max: s.powerMax, ftp: nil) }
            recorded = split.recorded
        }

        enum CodingKeys: String, CodingKey {
            case number, start, end, distanceMetres, elapsedSeconds, movingSeconds, elevationGainMetres
            case elevationLossMetres, averageSpeed, maxSpeed, heartRate, cadenceAverage, power, recorded
        }
    }

    /// The workout's uuid.
    package var workout: String
    /// The route version the numbers come from, or `null`.
    @ExplicitNull package var route: String?
    /// `lap` or `distance`.
    package var by: String
    /// The split distance (metres) for `distance`, else `null`.
    @ExplicitNull package var metres: Double?
    /// The splits, in order.
    package var splits: [Split]
    /// What the caller should know (overlapping laps, laps outside the workout, no laps).
    package var warnings: [String]

    /// The shape of `report`.
    package init(_ report: WorkoutSplitsReport) {
        workout = report.workout.id.lowercaseText
        route = report.route?.id.lowercaseText
        by = report.rule.name
        if case .distance(let m) = report.rule { metres = m } else { metres = nil }
        splits = report.splits.map(Split.init)
        warnings = report.warnings
    }

    enum CodingKeys: String, CodingKey { case workout, route, by, metres, splits, warnings }
}

extension ChangeSetJSON {
    /// `set` as JSON bytes, written directly: the same JSON (sorted keys, slashes unescaped) as `JSONEncoder` makes
    /// of ``ChangeSetJSON``, without going through `Encodable` (what a catch-up page writes; see
    /// `Benchmarks/README.md`, Serving over HTTP).
    /// - Parameters:
    ///   - set: the change set.
    ///   - anchorText: the anchor's text as the reader gets it (the server seals a source-limited token's anchors);
    ///     `set.anchor`'s own text by default.
    package static func bytes(_ set: ChangeSet, anchorText: String? = nil) -> [UInt8] {
        var w = JSONText()
        w.bytes.reserveCapacity(128 + set.added.count * 300 + set.deleted.count * 200)
        w.raw("{\"added\":[")
        for (i, r) in set.added.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"end\":")
            w.optionalString(r.end?.iso8601)
            w.raw(",\"locations\":")
            w.raw(String(r.locationCount))
            w.raw(",\"metadata\":")
            w.metadata(r.metadata)
            w.raw(",\"source\":")
            w.string(r.source.name)
            w.raw(",\"start\":")
            w.optionalString(r.start?.iso8601)
            w.raw(",\"syncIdentifier\":")
            w.string(r.sync.identifier)
            w.raw(",\"syncVersion\":")
            w.raw(String(r.sync.version))
            w.raw(",\"uuid\":")
            w.string(r.id.lowercaseText)
            w.raw(",\"workout\":")
            w.string(r.workoutID.lowercaseText)
            w.raw("}")
        }
        w.raw("],\"addedObjects\":")
        w.encoded(set.addedObjects.map(ChangedObjectJSON.init))
        w.raw(",\"anchor\":")
        w.string(anchorText ?? set.anchor.text)
        w.raw(",\"deleted\":[")
        for (i, d) in set.deleted.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"source\":")
            w.string(d.source.name)
            w.raw(",\"syncIdentifier\":")
            w.string(d.sync.identifier)
            w.raw(",\"syncVersion\":")
            w.raw(String(d.sync.version))
            w.raw(",\"uuid\":")
            w.string(d.id.lowercaseText)
            w.raw(",\"workout\":")
            w.string(d.workoutID.lowercaseText)
            w.raw("}")
        }
        w.raw("],\"deletedObjects\":")
        w.encoded(set.deletedObjects.map(DeletedObjectJSON.init))
        w.raw(",\"hasMore\":")
        w.raw(set.hasMore ? "true" : "false")
        w.raw("}")
        return w.bytes
    }
}

/// JSON written by hand, for the shapes that are written often.
struct JSONText {
    var bytes: [UInt8] = []

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A value as `JSONEncoder` writes it (sorted keys, slashes unescaped), for the shapes written seldom.
    mutating func encoded(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The shapes hold strings, numbers and metadata only: encoding them cannot fail.
        if let data = try? encoder.encode(value) { bytes.append(contentsOf: data) } else { raw("[]") }
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    /// A JSON string (``JSONEscaping``).
    mutating func string(_ text: String) { JSONEscaping.appendQuoted(text, to: &bytes) }

    /// Metadata, keys sorted as `JSONEncoder`'s `.sortedKeys` sorts them.
    mutating func metadata(_ m: [String: MetadataValue]) {
        raw("{")
        for (i, key) in m.keys.sorted().enumerated() {
            if i > 0 { raw(",") }
            string(key)
            raw(":")
            switch m[key] {
            case .string(let s)?: string(s)
            case .integer(let n)?: raw(String(n))
            case .bool(let b)?: raw(b ? "true" : "false")
            case .double(let d)?:
                if !d.isFinite {
                    raw("null")
                } else if d == d.rounded(), abs(d) < 1e15 {
                    raw(String(Int64(d)))
                } else {
                    raw("\(d)")
                }
            case nil: raw("null")
            }
        }
        raw("}")
    }
}

/// One sample of a quantity series: `{"time": "…", "value": x}` (`routekit series --json`, and the lines of
/// `GET /v1/workouts/ID/series/TYPE`).
package struct SampleJSON: Codable, Hashable, Sendable {
    /// ISO 8601, with the sample's own UTC offset.
    package var time: String
    /// In the type's unit.
    package var value: Double

    /// The shape of `sample`.
    package init(_ sample: QuantitySample) {
        time = sample.timestamp.iso8601
        value = sample.value
    }

    /// `sample` as one NDJSON line, its line end included: `{"time":"…","value":x}` (keys sorted, the value in the
    /// shortest text that reads back as the same number), written directly. The lines of
    /// `GET /v1/workouts/ID/series/TYPE` and of a person's archive (`series/TYPE.ndjson`).
    package static func line(_ sample: QuantitySample) -> String {
        "{\"time\":\"\(sample.timestamp.iso8601)\",\"value\":\(decimalText(sample.value))}\n"
    }
}

/// A workout's effort scores and the one that counts: `GET /v1/workouts/ID/effort`, and the `effort` of a workout in a
/// person's archive.
package struct WorkoutEffortJSON: Codable, Hashable, Sendable {
    /// The score that counts (`EffortScore.effective(_:)`), or `null` without scores.
    @ExplicitNull package var effective: EffortScoreJSON?
    /// Every score, oldest first.
    package var scores: [EffortScoreJSON]

    /// The shape of `scores` (the workout's, oldest first).
    package init(_ scores: [EffortScore]) {
        let counts = EffortScore.effective(scores)
        effective = counts.map { EffortScoreJSON($0, effective: true) }
        self.scores = scores.map { EffortScoreJSON($0, effective: $0 == counts) }
    }

    enum CodingKeys: String, CodingKey { case effective, scores }
}

/// An effort score related to a workout: `routekit effort --json`, and `GET /v1/workouts/ID/effort`.
package struct EffortScoreJSON: Codable, Hashable, Sendable {
    package var uuid: String
    package var source: String
    /// 1–10.
    package var score: Double
    /// Given by a person (it wins over estimates).
    package var manual: Bool
    /// When it was related, ISO 8601.
    package var created: String
    /// Whether it is the score that counts for the workout.
    package var effective: Bool

    /// The shape of `score`.
    package init(_ score: EffortScore, effective: Bool) {
        uuid = score.id.lowercaseText
        source = score.source.name
        self.score = score.score
        manual = score.isManual
        created = Timestamp(score.created).iso8601
        self.effective = effective
    }
}

// MARK: - A person's archive

/// `workouts/<uuid>/workout.json` in a person's archive (``PersonArchive``): the workout as `GET /v1/workouts/ID`
/// shows it (its type, times, source, sync identity, metadata, activities, events and the figures the store keeps for
/// it), its routes with the archive entry that holds each, its series with theirs, its effort scores, and the zone
/// settings saved with it.
package struct ArchivedWorkoutJSON: Codable, Hashable, Sendable {
    /// One route version and the entry that holds its locations.
    package struct Route: Codable, Hashable, Sendable {
        /// The route as `GET /v1/routes/ID` shows it.
        package var route: RouteJSON
        /// Its entry's path in the archive (`workouts/<workout>/route-<route>.gpx`), GPX 1.1 with extensions.
        package var file: String

        /// A route and its entry.
        package init(route: RouteJSON, file: String) {
            self.route = route
            self.file = file
        }
    }

    /// One quantity series and the entry that holds its samples.
    package struct Series: Codable, Hashable, Sendable {
        /// Its quantity type (`heartRate`, `power`, …).
        package var type: String
        /// The unit of its values.
        package var unit: String
        /// How many samples the entry holds (one a line).
        package var samples: Int
        /// The first sample's time, or `null` without samples.
        @ExplicitNull package var start: String?
        /// The last sample's time, or `null`.
        @ExplicitNull package var end: String?
        /// Its entry's path in the archive (`workouts/<workout>/series/<type>.ndjson`).
        package var file: String

        /// A series' description.
        package init(type: QuantityType, samples: Int, start: Timestamp?, end: Timestamp?, file: String) {
            self.type = type.identifier
            unit = type.unit
            self.samples = samples
            self.start = start?.iso8601
            self.end = end?.iso8601
            self.file = file
        }

        enum CodingKeys: String, CodingKey { case type, unit, samples, start, end, file }
    }

    /// The workout.
    package var workout: WorkoutJSON
    /// Its current routes (every version that is current: a raw recording and the versions made from it).
    package var routes: [Route]
    /// Its series.
    package var series: [Series]
    /// Its effort scores.
    package var effort: WorkoutEffortJSON
    /// The zone settings saved with the workout (not its person's: those are in `GET /v1/zones`), or `null` when
    /// none are.
    @ExplicitNull package var zoneSettings: ZoneSettingsJSON?
    /// A workout's waypoints and planned routes (GPX attachments) when it has no route to carry them: the entry that
    /// holds them, else `null` (with a route, they are in its first route's file).
    @ExplicitNull package var attachments: String?

    /// A workout's document.
    package init(
        workout: WorkoutJSON, routes: [Route], series: [Series], effort: WorkoutEffortJSON,
        zoneSettings: ZoneSettingsJSON?, attachments: String?
    ) {
        self.workout = workout
        self.routes = routes
        self.series = series
        self.effort = effort
        self.zoneSettings = zoneSettings
        self.attachments = attachments
    }

    enum CodingKeys: String, CodingKey { case workout, routes, series, effort, zoneSettings, attachments }
}

/// `manifest.json`, the last entry of a person's archive (``PersonArchive``): what the archive is, whose, from which
/// store and release, and every other entry with its size and checksum.
package struct PersonArchiveManifestJSON: Codable, Hashable, Sendable {
    /// One entry of the archive.
    package struct Entry: Codable, Hashable, Sendable {
        /// Its path in the archive.
        package var path: String
        /// `workout` (`workout.json`), `route` (a route's GPX), `series` (a series' NDJSON) or `attachments` (a
        /// workout's waypoints and planned routes as GPX, when it has no route).
        package var kind: String
        /// The uuid of the object it holds: the workout, the route, or the series' workout.
        package var object: String
        /// The uuid of the workout it belongs to.
        package var workout: String
        /// A series' quantity type, else `null`.
        @ExplicitNull package var quantity: String?
        /// Its size uncompressed, in bytes.
        package var bytes: Int64
        /// The CRC-32 of its uncompressed bytes (the zip format's own checksum), 8 lowercase hex digits.
        package var crc32: String

        /// An entry.
        package init(
            path: String, kind: String, object: UUID, workout: UUID, quantity: QuantityType?, bytes: Int64,
            crc32: UInt32
        ) {
            self.path = path
            self.kind = kind
            self.object = object.lowercaseText
            self.workout = workout.lowercaseText
            self.quantity = quantity?.identifier
            self.bytes = bytes
            let hex = String(crc32, radix: 16)
            self.crc32 = String(repeating: "0", count: max(0, 8 - hex.count)) + hex
        }

        enum CodingKeys: String, CodingKey { case path, kind, object, workout, quantity, bytes, crc32 }
    }

    /// How many of each thing the archive holds.
    package struct Counts: Codable, Hashable, Sendable {
        /// Workouts (`workout.json` entries).
        package var workouts: Int
        /// Route versions (GPX entries).
        package var routes: Int
        /// The locations of those routes.
        package var locations: Int
        /// Series (NDJSON entries).
        package var series: Int
        /// The samples of those series.
        package var samples: Int
        /// Effort scores.
        package var efforts: Int
        /// Entries, this manifest included.
        package var entries: Int
        /// Objects listed when the archive was planned that were gone (deleted or replaced meanwhile) when their
        /// entry was to be written, and so are not in it.
        package var skipped: Int

        /// Counts.
        package init(
            workouts: Int = 0, routes: Int = 0, locations: Int = 0, series: Int = 0, samples: Int = 0,
            efforts: Int = 0, entries: Int = 0, skipped: Int = 0
        ) {
            self.workouts = workouts
            self.routes = routes
            self.locations = locations
            self.series = series
            self.samples = samples
            self.efforts = efforts
            self.entries = entries
            self.skipped = skipped
        }
    }

    /// `routekit-person-archive`.
    package var format: String
    /// The version of this layout (``PersonArchive/formatVersion``).
    package var formatVersion: Int
    /// The RouteKit release that wrote it.
    package var routekitVersion: String
    /// The store's uuid (`RouteStore.storeID`).
    package var store: String
    /// The person's id.
    package var person: String
    /// When it was written (ISO 8601).
    package var created: String
    /// How `crc32` of each entry is computed: `crc32` (CRC-32 as zip computes it; not a cryptographic hash).
    package var checksum: String
    /// How routes are written: `gpx-1.1`, GPX 1.1 with extensions, for every route (RouteKit keeps a route's
    /// locations and fields, not the file it came from: a route imported from FIT, TCX or GeoJSON is GPX here too).
    package var routeFormat: String
    /// What a reader should know, in sentences (``PersonArchive/notes``).
    package var notes: [String]
    /// The sources the archive was limited to (an API token that may read only some), sorted; `null` for every
    /// source.
    @ExplicitNull package var sources: [String]?
    /// How many of each thing it holds.
    package var counts: Counts
    /// Every entry but this manifest, in the order they were written.
    package var entries: [Entry]

    /// A manifest.
    package init(
        formatVersion: Int, routekitVersion: String, store: UUID, person: PersonID, created: Date,
        routeFormat: String, notes: [String], sources: Set<Source>?, counts: Counts, entries: [Entry]
    ) {
        format = "routekit-person-archive"
        self.formatVersion = formatVersion
        self.routekitVersion = routekitVersion
        self.store = store.lowercaseText
        self.person = person.description
        self.created = Timestamp(created).iso8601
        checksum = "crc32"
        self.routeFormat = routeFormat
        self.notes = notes
        self.sources = sources.map { $0.map(\.name).sorted() }
        self.counts = counts
        self.entries = entries
    }

    enum CodingKeys: String, CodingKey {
        case format, formatVersion, routekitVersion, store, person, created, checksum, routeFormat, notes, sources
        case counts, entries
    }
}

/// A person as the doors show them (`GET /v1/people`, `routekit people list --json`).
package struct PersonJSON: Codable, Hashable, Sendable {
    package var id: String
    package var name: String
    package var created: String
    /// The identity provider (`iss`) and subject (`sub`) the person was made for, if any.
    package var issuer: String?
    package var subject: String?

    package init(_ p: Person) {
        id = p.id.description
        name = p.name
        created = Timestamp(p.created).iso8601
        issuer = p.subject?.issuer
        subject = p.subject?.subject
    }
}
