import Foundation
import GRDB
@_spi(RouteKitBackend) import RouteKit

/// The SQL behind the store's rules: what a rule reads, and each ``StoreWrite`` it decides. The rules themselves
/// (``StoreRules``) are the same for every backend.
extension SQLiteStore {
    // MARK: Reads for the rules

    /// A `route` row as the rules see it.
    static func routeRow(_ row: Row) throws -> StoredRouteRow {
        StoredRouteRow(
            id: try uuid(row["uuid"]), workoutID: try uuid(row["workout_uuid"]), source: row["source"],
            syncIdentifier: row["sync_id"], version: row["sync_version"], startSeconds: row["start_s"],
            endSeconds: row["end_s"], raw: row["raw"], container: row["container"])
    }

    /// `person`'s current version of a sync identity (sync identities are per person).
    static func currentVersion(_ db: Database, of route: RouteSample, person: String) throws -> StoredRouteRow? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT * FROM route WHERE person = ? AND source = ? AND sync_id = ? AND current = 1"),
            arguments: [person, route.source.name, route.sync.identifier]
        ).map(routeRow)
    }

    /// The source's name of `person`'s workout `id`, `nil` when they have no such workout.
    static func workoutSource(_ db: Database, _ id: UUID, person: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT source FROM workout WHERE uuid = ? AND person = ?"),
            arguments: [key(id), person])
    }

    /// The current routes of `person`'s workout `id`, in saving order.
    static func currentRoutes(_ db: Database, ofWorkout id: UUID, person: String) throws -> [StoredRouteRow] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT * FROM route WHERE workout_uuid = ? AND person = ? AND current = 1 ORDER BY id"),
            arguments: [key(id), person]
        ).map(routeRow)
    }

    /// The source and claim of `person`'s pending builder `id`.
    static func builderRow(_ db: Database, _ id: UUID, person: String) throws -> StoredBuilderRow? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT source, claim FROM builder WHERE uuid = ? AND person = ?"),
            arguments: [key(id), person]
        ).map { StoredBuilderRow(source: $0["source"], claim: $0["claim"]) }
    }

    // MARK: Writes

    /// Carries out the rules' writes, in order, for `person` (the person of the view that writes: the objects it
    /// inserts and the change-log rows it records are theirs, and the rows it changes by id must be theirs).
    static func apply(_ writes: [StoreWrite], _ db: Database, person: String) throws {
        for write in writes { try apply(write, db, person: person) }
    }

    static func apply(_ write: StoreWrite, _ db: Database, person: String) throws {
        switch write {
        case .logDeletion(let row):
            try recordDeletion(db, row, person: person)
        case .keepAsProvenance(let id):
            try db.cachedStatement(sql: "UPDATE route SET current = 0 WHERE uuid = ? AND person = ?").execute(
                arguments: [key(id), person])
        case .deleteRoute(let id):
            try db.cachedStatement(sql: "DELETE FROM route WHERE uuid = ? AND person = ?").execute(arguments: [
                key(id), person,
            ])
        case .deleteKeptVersions(let source, let syncID):
            try deleteVersions(db, source, syncID, person: person, condition: " AND current = 0")
        case .deleteIdentity(let source, let syncID):
            try deleteVersions(db, source, syncID, person: person, condition: "")
        case .dropContainerIfUnused(let container):
            try dropContainerIfUnused(db, container)
        case .insertChunks(let chunks, let container):
            for chunk in chunks { try insert(db, chunk, container: container) }
        case .renumberLocations(let container, let order):
            for (position, s) in order.enumerated() {
                try db.cachedStatement(
                    sql: "UPDATE chunk SET seq = ? WHERE container = ? AND kind = 'locations' AND seq = ?"
                ).execute(arguments: [-1 - position, container, s])
            }
            try db.cachedStatement(
                sql: "UPDATE chunk SET seq = -1 - seq WHERE container = ? AND kind = 'locations' AND seq < 0"
            ).execute(arguments: [container])
        case .insertRoute(let route, let container, let raw, let body):
            try db.cachedStatement(
                sql: """
                    INSERT INTO route(uuid, person, workout_uuid, source, sync_id, sync_version, current, raw, start_s,
                        end_s, location_count, container, body)
                    VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                key(route.id), person, key(route.workoutID), route.source.name, route.sync.identifier,
                route.sync.version, raw, route.start?.instant.seconds, route.end?.instant.seconds, route.locationCount,
                container, body,
            ])
            try recordAddition(db, .route(route), person: person)
        case .attachSeries(let workout, let source, let kinds, let container):
            for kind in kinds { try attachSeries(db, workout, source, kind, container) }
            try recordSeries(db, workout, source, kinds, person: person)
        case .attachStoredSeries(let workout, let source, let container):
            let kinds = try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT kind FROM chunk WHERE container = ?"), arguments: [container])
            let attached = kinds.filter { ChunkKind(name: $0).map(StoreRules.isSeriesKind) ?? true }
            for kind in attached { try attachSeries(db, workout, source, kind, container) }
            try recordSeries(db, workout, source, attached.sorted(), person: person)
        case .addStoredEvents(let workout, let container):
            let chunks = try Data.fetchAll(
                db.cachedStatement(sql: "SELECT data FROM chunk WHERE container = ? AND kind = 'events' ORDER BY seq"),
                arguments: [container])
            if chunks.isEmpty { return }
            var events: [WorkoutEvent] = []
            for data in chunks { events += try StoredRecord.events(inChunk: [UInt8](data)) }
            guard
                let body = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT body FROM workout WHERE uuid = ? AND person = ?"),
                    arguments: [key(workout), person])
            else { throw RouteKitError(.notFound, "no workout \(workout)") }
            try db.cachedStatement(sql: "UPDATE workout SET body = ? WHERE uuid = ? AND person = ?").execute(
                arguments: [try StoredRecord.body(body, addingEvents: events), key(workout), person])
            try db.cachedStatement(sql: "DELETE FROM chunk WHERE container = ? AND kind = 'events'").execute(
                arguments: [container])
            // The workout changed: a consumer following workouts gets it again.
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM workout WHERE uuid = ? AND person = ?"),
                arguments: [key(workout), person])
            {
                try recordAddition(db, .workout(try Self.workout(row)), person: person)
            }
        case .deleteBuilder(let id):
            try db.cachedStatement(sql: "DELETE FROM builder WHERE uuid = ?").execute(arguments: [key(id)])
        case .deleteContainer(let container):
            try db.cachedStatement(sql: "DELETE FROM chunk WHERE container = ?").execute(arguments: [container])
        case .releaseClaim(let claim):
            try db.cachedStatement(sql: "DELETE FROM lease WHERE key = ? AND holder = ?").execute(arguments: [
                claim.key, key(claim.holder),
            ])
        case .deleteWorkoutRows(let id):
            // `id` is the person's: the rules decided this after reading it with the person in the query.
            try recordWorkoutDeletion(db, id, person: person)
            let workout = key(id)
            let containers =
                try String.fetchAll(
                    db.cachedStatement(sql: "SELECT container FROM route WHERE workout_uuid = ? AND person = ?"),
                    arguments: [workout, person])
                + String.fetchAll(
                    db.cachedStatement(sql: "SELECT container FROM series WHERE workout_uuid = ?"), arguments: [workout]
                )
            try db.cachedStatement(sql: "DELETE FROM route WHERE workout_uuid = ? AND person = ?").execute(
                arguments: [workout, person])
            try db.cachedStatement(sql: "DELETE FROM series WHERE workout_uuid = ?").execute(arguments: [workout])
            try db.cachedStatement(sql: "DELETE FROM effort WHERE workout_uuid = ?").execute(arguments: [workout])
            try db.cachedStatement(sql: "DELETE FROM workout_summary WHERE workout_uuid = ?").execute(
                arguments: [workout])
            try db.cachedStatement(sql: "DELETE FROM workout_zone_settings WHERE workout_uuid = ?").execute(
                arguments: [workout])
            try db.cachedStatement(sql: "DELETE FROM workout WHERE uuid = ? AND person = ?").execute(arguments: [
                workout, person,
            ])
            for c in Set(containers).sorted() { try dropContainerIfUnused(db, c) }
        case .insertWorkout(let workout, let body):
            try db.cachedStatement(
                sql: """
                    INSERT INTO workout(uuid, person, source, sync_id, sync_version, start_s, end_s, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                key(workout.id), person, workout.source.name, workout.sync?.identifier, workout.sync?.version,
                workout.start?.instant.seconds, workout.end?.instant.seconds, body,
            ])
            try recordAddition(db, .workout(workout), person: person)
        }
    }

    /// Deletes `person`'s route rows of a sync identity (`condition` narrows them), then the containers no one uses
    /// any more.
    static func deleteVersions(
        _ db: Database, _ source: String, _ syncID: String, person: String, condition: String
    ) throws {
        let containers = try String.fetchAll(
            db.cachedStatement(
                sql: "SELECT container FROM route WHERE person = ? AND source = ? AND sync_id = ?" + condition),
            arguments: [person, source, syncID])
        try db.cachedStatement(sql: "DELETE FROM route WHERE person = ? AND source = ? AND sync_id = ?" + condition)
            .execute(arguments: [person, source, syncID])
        for c in Set(containers).sorted() { try dropContainerIfUnused(db, c) }
    }

    static func attachSeries(_ db: Database, _ workout: UUID, _ source: String, _ kind: String, _ container: String)
        throws
    {
        try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO series(workout_uuid, source, kind, container) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [key(workout), source, kind, container])
    }

    /// Records that a workout's series of these chunk kinds changed (kinds that are not quantities are not series of
    /// the feed).
    static func recordSeries(_ db: Database, _ workout: UUID, _ source: String, _ kinds: [String], person: String)
        throws
    {
        for kind in kinds {
            if let record = FeedRecord.series(workout: workout, source: source, kind: kind) {
                try recordAddition(db, record, person: person)
            }
        }
    }

    /// Deletes a container's chunks unless a route or a pending builder still uses it (the kinds a workout's
    /// series use stay).
    static func dropContainerIfUnused(_ db: Database, _ container: String) throws {
        let used = try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS(SELECT 1 FROM route WHERE container = ?1)
                        OR EXISTS(SELECT 1 FROM builder WHERE uuid = ?1)
                    """), arguments: [container])
        if used == true { return }
        // Series attached to a workout may live in the container of the builder that collected them: keep
        // those kinds, drop the rest (locations, extras).
        try db.cachedStatement(
            sql: """
                DELETE FROM chunk WHERE container = ?1
                    AND kind NOT IN (SELECT kind FROM series WHERE container = ?1)
                """
        ).execute(arguments: [container])
    }
}
