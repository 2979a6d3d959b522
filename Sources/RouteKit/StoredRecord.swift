import Foundation

/// How every backend stores the parts of workouts, routes and builders that no query filters on: as JSON text
/// with sorted keys, so that the SQLite and PostgreSQL stores write the same bytes and read each other's exports.
///
/// For store backends; applications use ``RouteStore``.
package enum StoredRecord {
    struct EventBody: Codable {
        var kind: WorkoutEvent.Kind
        var start: Timestamp?
        var end: Timestamp?
        /// Absent in stores written before events had metadata, and when empty.
        var metadata: [String: MetadataValue]?

        init(_ e: WorkoutEvent) {
            kind = e.kind
            start = e.start
            end = e.end
            metadata = e.metadata.isEmpty ? nil : e.metadata
        }

        var event: WorkoutEvent { WorkoutEvent(kind: kind, start: start, end: end, metadata: metadata ?? [:]) }
    }

    struct ActivityBody: Codable {
        var activity: String
        var start: Timestamp?
        var end: Timestamp?
        var metadata: [String: MetadataValue]?

        init(_ a: WorkoutActivity) {
            activity = a.activityType.rawValue
            start = a.start
            end = a.end
            metadata = a.metadata.isEmpty ? nil : a.metadata
        }

        var activityValue: WorkoutActivity {
            WorkoutActivity(
                activityType: ActivityType(rawValue: activity), start: start, end: end, metadata: metadata ?? [:])
        }
    }

    struct WorkoutBody: Codable {
        var activity: String
        var start: Timestamp?
        var end: Timestamp?
        var events: [EventBody]
        var metadata: [String: MetadataValue]
        /// Absent in stores written before workouts had activities, and when there are none.
        var activities: [ActivityBody]?
    }

    struct RouteBody: Codable {
        var start: Timestamp?
        var end: Timestamp?
        var metadata: [String: MetadataValue]
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return String(decoding: try e.encode(value), as: UTF8.self)
    }

    /// One decoder for every stored body (it holds no state between calls; making one per row was a third of the
    /// time of reading a page of 5,000 routes).
    static let decoder = JSONDecoder()

    static func unjson<T: Decodable>(_ type: T.Type, _ text: String, _ what: String) throws(RouteKitError) -> T {
        do { return try decoder.decode(type, from: Data(text.utf8)) } catch {
            throw RouteKitError(.storage, "a stored \(what) cannot be read")
        }
    }

    /// The body of a workout: activity, times, events and metadata.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when the metadata cannot be encoded.
    package static func body(of workout: Workout) throws(RouteKitError) -> String {
        let body = WorkoutBody(
            activity: workout.activityType.rawValue, start: workout.start, end: workout.end,
            events: workout.events.map(EventBody.init),
            metadata: workout.metadata,
            activities: workout.activities.isEmpty ? nil : workout.activities.map(ActivityBody.init))
        do { return try json(body) } catch {
            throw RouteKitError(.invalidArgument, "the metadata of workout \(workout.id) cannot be stored")
        }
    }

    /// A builder's chunk of workout events (`StoredChunk.events(_:sequence:)`): a JSON array of the events as a
    /// workout's body holds them.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when an event's metadata cannot be encoded.
    package static func eventChunk(_ events: [WorkoutEvent]) throws(RouteKitError) -> [UInt8] {
        do { return Array(try json(events.map(EventBody.init)).utf8) } catch {
            throw RouteKitError(.invalidArgument, "the metadata of a workout event cannot be stored")
        }
    }

    /// The events of a builder's events chunk.
    /// - Throws: ``RouteKitError/Code/storage`` when the chunk cannot be read.
    package static func events(inChunk bytes: [UInt8]) throws(RouteKitError) -> [WorkoutEvent] {
        do { return try decoder.decode([EventBody].self, from: Data(bytes)).map(\.event) } catch {
            throw RouteKitError(.storage, "a stored chunk of workout events cannot be read")
        }
    }

    /// A workout's stored body with `events` added after the events it holds (what finishing a builder that
    /// collected events writes, in the finishing transaction).
    /// - Throws: ``RouteKitError/Code/storage`` when the body cannot be read, ``RouteKitError/Code/invalidArgument``
    ///   when the result cannot be encoded.
    package static func body(_ text: String, addingEvents events: [WorkoutEvent]) throws(RouteKitError) -> String {
        var body = try unjson(WorkoutBody.self, text, "workout")
        body.events += events.map(EventBody.init)
        do { return try json(body) } catch {
            throw RouteKitError(.invalidArgument, "the events of a workout cannot be stored")
        }
    }

    /// The body of a route: times and metadata.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when the metadata cannot be encoded.
    package static func body(of route: RouteSample) throws(RouteKitError) -> String {
        do { return try json(RouteBody(start: route.start, end: route.end, metadata: route.metadata)) } catch {
            throw RouteKitError(.invalidArgument, "the route's metadata cannot be stored")
        }
    }

    /// Metadata as stored with a builder.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when it cannot be encoded.
    package static func encode(metadata: [String: MetadataValue]) throws(RouteKitError) -> String {
        do { return try json(metadata) } catch {
            throw RouteKitError(.invalidArgument, "the builder's metadata cannot be stored")
        }
    }

    /// Metadata stored with a builder.
    package static func decodeMetadata(_ text: String) throws(RouteKitError) -> [String: MetadataValue] {
        try unjson([String: MetadataValue].self, text, "builder's metadata")
    }

    /// Zone settings as stored: JSON with sorted keys.
    package static func body(of settings: ZoneSettings) throws(RouteKitError) -> String {
        do { return try json(settings) } catch {
            throw RouteKitError(.invalidArgument, "the zone settings cannot be stored")
        }
    }

    /// Stored zone settings.
    package static func zoneSettings(_ text: String) throws(RouteKitError) -> ZoneSettings {
        try unjson(ZoneSettings.self, text, "zone settings")
    }

    /// A stored source name.
    package static func source(_ name: String) throws(RouteKitError) -> Source {
        do { return try Source(name: name) } catch { throw RouteKitError(.storage, "a stored source name is invalid") }
    }

    /// A stored uuid (lowercase text).
    package static func uuid(_ text: String) throws(RouteKitError) -> UUID {
        guard let u = UUID(text: text) else { throw RouteKitError(.storage, "a stored uuid is malformed") }
        return u
    }

    /// How a uuid is stored: lowercase text.
    package static func key(_ id: UUID) -> String { id.lowercaseText }

    /// A workout from its stored columns.
    package static func workout(uuid: String, source: String, syncID: String?, syncVersion: Int64?, body: String)
        throws(RouteKitError) -> Workout
    {
        let b = try unjson(WorkoutBody.self, body, "workout")
        return Workout(
            id: try self.uuid(uuid), activityType: ActivityType(rawValue: b.activity), start: b.start, end: b.end,
            source: try self.source(source),
            sync: syncID.map { SyncIdentity(identifier: $0, version: syncVersion ?? 0) },
            events: b.events.map(\.event), metadata: b.metadata,
            activities: (b.activities ?? []).map(\.activityValue))
    }

    /// A route from its stored columns.
    package static func route(
        uuid: String, workout: String, source: String, syncID: String, syncVersion: Int64, locationCount: Int,
        body: String
    ) throws(RouteKitError) -> RouteSample {
        let b: RouteBody
        if let scanned = scanRouteBody(body) {
            b = RouteBody(start: scanned.start, end: scanned.end, metadata: scanned.metadata)
        } else {
            b = try unjson(RouteBody.self, body, "route")
        }
        return RouteSample(
            id: try self.uuid(uuid), workoutID: try self.uuid(workout), source: try self.source(source),
            sync: SyncIdentity(identifier: syncID, version: syncVersion), start: b.start, end: b.end,
            locationCount: locationCount, metadata: b.metadata)
    }
}
