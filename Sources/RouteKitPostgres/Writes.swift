#if Postgres
    import Foundation
    import NIOCore
    import PostgresNIO
    @_spi(RouteKitBackend) import RouteKit

    /// The SQL behind the store's rules: what a rule reads (with the locks that keep it true until the transaction
    /// ends), and each ``StoreWrite`` it decides. The rules themselves (``StoreRules``) are the same for every
    /// backend.
    extension PostgresStore {
        // MARK: Reads for the rules

        /// A `route` row as the rules see it.
        static func routeRow(_ r: Row) throws -> StoredRouteRow {
            StoredRouteRow(
                id: try StoredRecord.uuid(r.get("uuid")), workoutID: try StoredRecord.uuid(r.get("workout_uuid")),
                source: try r.get("source"), syncIdentifier: try r.get("sync_id"), version: try r.get("sync_version"),
                startSeconds: try r.get("start_s"), endSeconds: try r.get("end_s"), raw: try r.get("raw"),
                container: try r.get("container"))
        }

        /// The advisory lock's name for a sync identity of the transaction's person (sync identities are per person:
        /// two people's writers of the same source and identifier never wait for each other).
        static func routeIdentityLock(_ tx: Transaction, source: String, syncIdentifier: String) -> String {
            "route\n\(tx.person)\n\(source)\n\(syncIdentifier)"
        }

        /// The current version of a sync identity of the transaction's person, read under the identity's lock:
        /// concurrent writers of the same identity run one after the other, and each reads what the previous one
        /// committed.
        static func currentVersion(_ tx: Transaction, of route: RouteSample) async throws -> StoredRouteRow? {
            let source = route.source.name
            let syncID = route.sync.identifier
            try await lock(tx, routeIdentityLock(tx, source: source, syncIdentifier: syncID))
            return try await tx.first(
                """
                SELECT * FROM route
                WHERE person = \(tx.person) AND source = \(source) AND sync_id = \(syncID) AND current FOR UPDATE
                """
            ).map(routeRow)
        }

        /// A workout's source's name, `nil` when it is not stored or another person's (one statement: the person is
        /// in its `WHERE` clause); its row locked `FOR SHARE` (it cannot be deleted until the transaction ends) or, for
        /// writers of the workout itself, `FOR UPDATE`.
        static func workoutSource(_ tx: Transaction, _ id: UUID, forUpdate: Bool = false) async throws -> String? {
            forUpdate
                ? try await tx.value(
                    "SELECT source FROM workout WHERE uuid = \(key(id)) AND person = \(tx.person) FOR UPDATE",
                    as: String.self)
                : try await tx.value(
                    "SELECT source FROM workout WHERE uuid = \(key(id)) AND person = \(tx.person) FOR SHARE",
                    as: String.self)
        }

        /// A workout's current routes, in saving order, locked.
        static func currentRoutes(_ tx: Transaction, ofWorkout id: UUID) async throws -> [StoredRouteRow] {
            try await tx.rows(
                """
                SELECT * FROM route WHERE workout_uuid = \(key(id)) AND person = \(tx.person) AND current
                ORDER BY id FOR UPDATE
                """
            ).map(routeRow)
        }

        /// A pending builder's source and claim (`nil` when it is not pending, or another person's), its row locked
        /// until the transaction ends.
        static func builderRow(_ tx: Transaction, _ id: UUID) async throws -> StoredBuilderRow? {
            try await tx.first(
                "SELECT source, claim FROM builder WHERE uuid = \(key(id)) AND person = \(tx.person) FOR UPDATE"
            ).map {
                StoredBuilderRow(source: try $0.get("source"), claim: try $0.get("claim"))
            }
        }

        // MARK: Writes

        /// Carries out the rules' writes, in order.
        static func apply(_ writes: [StoreWrite], _ tx: Transaction) async throws {
            for write in writes { try await apply(write, tx) }
        }

        static func apply(_ write: StoreWrite, _ tx: Transaction) async throws {
            switch write {
            case .logDeletion(let row):
                try await recordDeletion(tx, row)
            case .keepAsProvenance(let id):
                try await tx.run("UPDATE route SET current = FALSE WHERE uuid = \(key(id)) AND person = \(tx.person)")
            case .deleteRoute(let id):
                try await tx.run("DELETE FROM route WHERE uuid = \(key(id)) AND person = \(tx.person)")
            case .deleteKeptVersions(let source, let syncID):
                try await dropContainersIfUnused(
                    tx,
                    tx.rows(
                        """
                        DELETE FROM route
                        WHERE person = \(tx.person) AND source = \(source) AND sync_id = \(syncID) AND NOT current
                        RETURNING container
                        """
                    ))
            case .deleteIdentity(let source, let syncID):
                try await dropContainersIfUnused(
                    tx,
                    tx.rows(
                        """
                        DELETE FROM route WHERE person = \(tx.person) AND source = \(source) AND sync_id = \(syncID)
                        RETURNING container
                        """
                    ))
            case .dropContainerIfUnused(let container):
                try await dropContainerIfUnused(tx, container)
            case .insertChunks(let chunks, let container):
                try await insert(tx, chunks, container: container)
            case .renumberLocations(let container, let order):
                for (position, s) in order.enumerated() {
                    try await tx.run(
                        """
                        UPDATE chunk SET seq = \(Int64(-1 - position))
                        WHERE container = \(container) AND kind = 'locations' AND seq = \(Int64(s))
                        """)
                }
                try await tx.run(
                    "UPDATE chunk SET seq = -1 - seq WHERE container = \(container) AND kind = 'locations' AND seq < 0")
            case .insertRoute(let route, let container, let raw, let body):
                try await tx.run(
                    """
                    INSERT INTO route(uuid, person, workout_uuid, source, sync_id, sync_version, current, raw, start_s,
                        end_s, location_count, container, body)
                    VALUES (\(key(route.id)), \(tx.person), \(key(route.workoutID)), \(route.source.name),
                        \(route.sync.identifier), \(route.sync.version), TRUE, \(raw), \(route.start?.instant.seconds),
                        \(route.end?.instant.seconds), \(Int64(route.locationCount)), \(container), \(body))
                    """)
                recordAddition(tx, route)
            case .attachSeries(let workout, let source, let kinds, let container):
                for kind in kinds {
                    try await tx.run(
                        """
                        INSERT INTO series(workout_uuid, person, source, kind, container)
                        VALUES (\(key(workout)), \(tx.person), \(source), \(kind), \(container)) ON CONFLICT DO NOTHING
                        """)
                }
                try await recordSeries(tx, workout, source, kinds)
            case .attachStoredSeries(let workout, let source, let container):
                let kinds = try await tx.rows("SELECT DISTINCT kind FROM chunk WHERE container = \(container)")
                    .map { try $0.get("kind") as String }
                    .filter { ChunkKind(name: $0).map(StoreRules.isSeriesKind) ?? true }.sorted()
                try await apply(
                    .attachSeries(workoutID: workout, source: source, kinds: kinds, container: container), tx)
            case .addStoredEvents(let workout, let container):
                let chunks = try await tx.rows(
                    "SELECT data FROM chunk WHERE container = \(container) AND kind = 'events' ORDER BY seq")
                if chunks.isEmpty { return }
                var events: [WorkoutEvent] = []
                for row in chunks {
                    let data: ByteBuffer = try row.get("data")
                    events += try StoredRecord.events(inChunk: Array(data.readableBytesView))
                }
                guard
                    let body = try await tx.value(
                        "SELECT body FROM workout WHERE uuid = \(key(workout)) AND person = \(tx.person) FOR UPDATE",
                        as: String.self)
                else { throw RouteKitError(.notFound, "no workout \(workout)") }
                let updated = try StoredRecord.body(body, addingEvents: events)
                try await tx.run(
                    "UPDATE workout SET body = \(updated) WHERE uuid = \(key(workout)) AND person = \(tx.person)")
                try await tx.run("DELETE FROM chunk WHERE container = \(container) AND kind = 'events'")
                // The workout changed: a consumer following workouts gets it again.
                if let row = try await tx.first(
                    "SELECT * FROM workout WHERE uuid = \(key(workout)) AND person = \(tx.person)")
                {
                    try await recordAddition(tx, .workout(try Self.workout(row)))
                }
            case .deleteBuilder(let id):
                try await tx.run("DELETE FROM builder WHERE uuid = \(key(id)) AND person = \(tx.person)")
            case .deleteContainer(let container):
                try await tx.run("DELETE FROM chunk WHERE container = \(container)")
            case .releaseClaim(let claim):
                try await tx.run("DELETE FROM lease WHERE key = \(claim.key) AND holder = \(key(claim.holder))")
            case .deleteWorkoutRows(let id):
                try await recordWorkoutDeletion(tx, id)
                let workout = key(id)
                let person = tx.person
                let routes = try await tx.rows(
                    "DELETE FROM route WHERE workout_uuid = \(workout) AND person = \(person) RETURNING container")
                let series = try await tx.rows(
                    "DELETE FROM series WHERE workout_uuid = \(workout) AND person = \(person) RETURNING container")
                try await tx.run("DELETE FROM effort WHERE workout_uuid = \(workout) AND person = \(person)")
                try await tx.run("DELETE FROM workout_summary WHERE workout_uuid = \(workout) AND person = \(person)")
                try await tx.run(
                    "DELETE FROM workout_zone_settings WHERE workout_uuid = \(workout) AND person = \(person)")
                try await tx.run("DELETE FROM workout WHERE uuid = \(workout) AND person = \(person)")
                try await dropContainersIfUnused(tx, routes + series)
            case .insertWorkout(let workout, let body):
                try await tx.run(
                    """
                    INSERT INTO workout(uuid, person, source, sync_id, sync_version, start_s, end_s, body)
                    VALUES (\(key(workout.id)), \(tx.person), \(workout.source.name), \(workout.sync?.identifier),
                        \(workout.sync?.version), \(workout.start?.instant.seconds), \(workout.end?.instant.seconds), \(body))
                    """)
                try await recordAddition(tx, .workout(workout))
            }
        }

        /// ``dropContainerIfUnused(_:_:)`` for the containers named by rows of a `RETURNING container`, each once,
        /// in sorted order.
        static func dropContainersIfUnused(_ tx: Transaction, _ rows: [Row]) async throws {
            for c in Set(try rows.map { try $0.get("container") as String }).sorted() {
                try await dropContainerIfUnused(tx, c)
            }
        }

        /// Deletes a container's chunks unless a route or a pending builder still uses it (the kinds a workout's
        /// series use stay).
        static func dropContainerIfUnused(_ tx: Transaction, _ container: String) async throws {
            let used = try await tx.value(
                """
                SELECT EXISTS(SELECT 1 FROM route WHERE container = \(container))
                    OR EXISTS(SELECT 1 FROM builder WHERE uuid = \(container))
                """, as: Bool.self)
            if used == true { return }
            try await tx.run(
                """
                DELETE FROM chunk WHERE container = \(container)
                    AND kind NOT IN (SELECT kind FROM series WHERE container = \(container))
                """)
        }
    }
#endif
