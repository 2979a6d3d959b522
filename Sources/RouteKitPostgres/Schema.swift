#if Postgres
    import Foundation
    import PostgresNIO
    import RouteKit

    /// The PostgreSQL schema, as numbered migrations applied in order when a store opens. A migration is never
    /// edited once released: a change is a new one appended here. The tables mirror the SQLite store's (see
    /// RouteKitSQLite's Schema.swift) with PostgreSQL's types.
    enum Schema {
        static let migrations: [(id: String, sql: String)] = [
            (
                "v1",
                """
                CREATE TABLE store_info(key TEXT PRIMARY KEY, value TEXT NOT NULL);

                -- Current workouts. A replaced or deleted workout is removed with its routes and series.
                CREATE TABLE workout(
                    id BIGSERIAL PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,
                    source TEXT NOT NULL,
                    sync_id TEXT,
                    sync_version BIGINT,
                    start_s BIGINT,
                    end_s BIGINT,
                    body TEXT NOT NULL);
                CREATE UNIQUE INDEX workout_sync ON workout(source, sync_id) WHERE sync_id IS NOT NULL;

                -- Routes: current for the current version of a sync identity; not current for a raw version kept as
                -- provenance after a derived version replaced it. Locations live in `chunk` under `container`.
                CREATE TABLE route(
                    id BIGSERIAL PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,
                    workout_uuid TEXT NOT NULL,
                    source TEXT NOT NULL,
                    sync_id TEXT NOT NULL,
                    sync_version BIGINT NOT NULL,
                    current BOOLEAN NOT NULL,
                    raw BOOLEAN NOT NULL,
                    start_s BIGINT,
                    end_s BIGINT,
                    location_count BIGINT NOT NULL,
                    container TEXT NOT NULL,
                    body TEXT NOT NULL);
                CREATE UNIQUE INDEX route_current ON route(source, sync_id) WHERE current;
                CREATE INDEX route_workout ON route(workout_uuid);
                CREATE INDEX route_identity ON route(source, sync_id);
                CREATE INDEX route_container ON route(container);

                -- Pending route builders (a finished or discarded builder's row is deleted).
                CREATE TABLE builder(
                    uuid TEXT PRIMARY KEY,
                    source TEXT NOT NULL,
                    location_order TEXT NOT NULL,
                    origin_kind TEXT,
                    origin_key TEXT,
                    origin_label TEXT,
                    location_count BIGINT NOT NULL,
                    checkpoint TEXT,
                    claim TEXT NOT NULL,
                    metadata TEXT NOT NULL,
                    created DOUBLE PRECISION NOT NULL,
                    updated DOUBLE PRECISION NOT NULL);
                CREATE INDEX builder_origin ON builder(origin_kind, origin_key);

                -- Packed chunks of locations or samples (a few KB each). Kept in the row up to a page (MAIN storage, an 8 KB
                -- toast target): moving them out of line into TOAST cost a third of an import's time.
                CREATE TABLE chunk(
                    id BIGSERIAL PRIMARY KEY,
                    container TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    count BIGINT NOT NULL,
                    min_s BIGINT, min_ns BIGINT,
                    max_s BIGINT, max_ns BIGINT,
                    data BYTEA NOT NULL,
                    UNIQUE(container, kind, seq));
                ALTER TABLE chunk ALTER COLUMN data SET STORAGE MAIN;
                ALTER TABLE chunk SET (toast_tuple_target = 8160);

                -- Which containers hold a workout's series of a kind.
                CREATE TABLE series(
                    id BIGSERIAL PRIMARY KEY,
                    workout_uuid TEXT NOT NULL,
                    source TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    container TEXT NOT NULL,
                    UNIQUE(workout_uuid, kind, container));
                CREATE INDEX series_container ON series(container);

                -- The change feed's log, in commit order (see ChangeLog.swift): positions come from `feed_counter`,
                -- taken by each transaction as its last statement. Every change of one transaction has the same `txn`
                -- (its first position), `txn_end` (its last) and `token`. An added row exists only while its route is
                -- current; deletion rows are kept until compaction.
                CREATE TABLE feed_counter(id INTEGER PRIMARY KEY CHECK (id = 1), position BIGINT NOT NULL);
                INSERT INTO feed_counter VALUES (1, 0);
                CREATE TABLE change(
                    position BIGINT PRIMARY KEY,
                    txn BIGINT NOT NULL,
                    txn_end BIGINT NOT NULL,
                    token BIGINT NOT NULL,
                    added BOOLEAN NOT NULL,
                    route_uuid TEXT NOT NULL,
                    workout_uuid TEXT NOT NULL,
                    source TEXT NOT NULL,
                    sync_id TEXT NOT NULL,
                    sync_version BIGINT NOT NULL,
                    start_s BIGINT,
                    end_s BIGINT,
                    committed DOUBLE PRECISION NOT NULL);
                CREATE INDEX change_by_txn ON change(txn);
                CREATE INDEX change_added_route ON change(route_uuid) WHERE added;
                CREATE TABLE change_txn(
                    txn_end BIGINT PRIMARY KEY, token BIGINT NOT NULL, committed DOUBLE PRECISION NOT NULL);
                INSERT INTO store_info(key, value) VALUES ('epoch', '1'), ('history_floor', '0');

                -- Work claims: a worker holds `key` until `expires` (seconds since 1970 on the server's clock).
                CREATE TABLE lease(key TEXT PRIMARY KEY, holder TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL);

                -- Effort scores related to workouts (HealthKit's workout effort): manual or estimated.
                CREATE TABLE effort(
                    id BIGSERIAL PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,
                    workout_uuid TEXT NOT NULL,
                    source TEXT NOT NULL,
                    score DOUBLE PRECISION NOT NULL,
                    manual BOOLEAN NOT NULL,
                    created DOUBLE PRECISION NOT NULL);
                CREATE INDEX effort_workout ON effort(workout_uuid);

                -- Each source's privacy zones (circles), in the order they were set.
                CREATE TABLE privacy_zone(
                    id BIGSERIAL PRIMARY KEY,
                    source TEXT NOT NULL,
                    latitude DOUBLE PRECISION NOT NULL,
                    longitude DOUBLE PRECISION NOT NULL,
                    radius DOUBLE PRECISION NOT NULL);
                CREATE INDEX privacy_zone_source ON privacy_zone(source);
                """
            ),
            (
                "v2-api-tokens",
                """
                -- API tokens for `routekit serve`: a SHA-256 hash of the secret, never the secret.
                CREATE TABLE api_token(
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    source TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    read_sources TEXT,
                    secret_hash TEXT NOT NULL,
                    created DOUBLE PRECISION NOT NULL,
                    expires DOUBLE PRECISION,
                    revoked DOUBLE PRECISION,
                    last_used DOUBLE PRECISION);
                """
            ),
            (
                "v3-jobs",
                """
                -- Processing jobs of `routekit serve`: their state and the document served for them.
                CREATE TABLE job(
                    id TEXT PRIMARY KEY,
                    state TEXT NOT NULL,
                    document TEXT NOT NULL,
                    created DOUBLE PRECISION NOT NULL,
                    updated DOUBLE PRECISION NOT NULL,
                    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE);
                """
            ),
            (
                "v4-used-tickets",
                """
                -- Single-use stream tickets already used, until they expire: a digest of each, never the ticket.
                CREATE TABLE used_ticket(
                    key TEXT PRIMARY KEY,
                    expires DOUBLE PRECISION NOT NULL);
                """
            ),
            (
                "v5-workout-summaries",
                """
                -- Workouts' figures (distance, durations) as the statistics computed them, and what from: a cache
                -- that a workout list reads instead of measuring every route (deleted with the workout).
                CREATE TABLE workout_summary(
                    workout_uuid TEXT PRIMARY KEY,
                    basis TEXT NOT NULL,
                    document TEXT NOT NULL);
                """
            ),
            (
                "v6-zone-settings",
                """
                -- Each source's zone settings (preferred configurations, maximum and resting heart rate, age, FTP)
                -- as JSON.
                CREATE TABLE zone_settings(
                    source TEXT PRIMARY KEY,
                    body TEXT NOT NULL);
                """
            ),
            (
                "v7-feed-objects",
                """
                -- The change feed carries every workout object: a row's `kind` is route, workout, effort or series;
                -- `route_uuid` holds the object's uuid (a series: its workout's) and `detail` a series' quantity
                -- type. Rows written before are routes.
                ALTER TABLE change ADD COLUMN kind TEXT NOT NULL DEFAULT 'route';
                ALTER TABLE change ADD COLUMN detail TEXT NOT NULL DEFAULT '';
                DROP INDEX change_added_route;
                CREATE INDEX change_added_object ON change(route_uuid, kind, detail) WHERE added;
                -- The objects stored before: current from the log's next transaction on (a transaction of its own,
                -- taking its positions from the counter as every writer does).
                WITH objects AS (
                    SELECT row_number() OVER (ORDER BY o.rank, o.n) - 1 AS i, o.* FROM (
                        SELECT 1 AS rank, id AS n, 'workout' AS kind, uuid AS key, '' AS detail, uuid AS workout,
                            source, COALESCE(sync_id, '') AS sync_id, COALESCE(sync_version, 0) AS version, start_s,
                            end_s
                        FROM workout
                        UNION ALL
                        SELECT 2, id, 'effort', uuid, '', workout_uuid, source, '', 0, NULL, NULL FROM effort
                        UNION ALL
                        SELECT 3, MIN(id), 'series', workout_uuid, kind, workout_uuid, MIN(source), '', 0, NULL, NULL
                        FROM series WHERE kind IN ('heartRate', 'cadence', 'temperature', 'waterTemperature', 'depth', 'power') GROUP BY workout_uuid, kind) o),
                total AS (SELECT COUNT(*)::bigint AS n FROM objects),
                token AS (SELECT (floor(random() * 9.0e18))::bigint + 1 AS t),
                counter AS (
                    UPDATE feed_counter SET position = position + (SELECT n FROM total)
                    WHERE id = 1 AND (SELECT n FROM total) > 0 RETURNING position),
                inserted AS (
                    INSERT INTO change(position, txn, txn_end, token, added, kind, route_uuid, detail, workout_uuid,
                        source, sync_id, sync_version, start_s, end_s, committed)
                    SELECT counter.position - total.n + 1 + objects.i, counter.position - total.n + 1, counter.position,
                        token.t, TRUE, objects.kind, objects.key, objects.detail, objects.workout, objects.source,
                        objects.sync_id, objects.version, objects.start_s, objects.end_s,
                        extract(epoch FROM clock_timestamp())
                    FROM counter, total, token, objects)
                INSERT INTO change_txn(txn_end, token, committed)
                SELECT counter.position, token.t, extract(epoch FROM clock_timestamp()) FROM counter, token;
                """
            ),
            (
                "v8-workout-zone-settings",
                """
                -- The zone settings an app saved with one workout (its custom configurations), as JSON; deleted with
                -- the workout.
                CREATE TABLE workout_zone_settings(
                    workout_uuid TEXT PRIMARY KEY,
                    body TEXT NOT NULL);
                """
            ),
            (
                "v9-people",
                """
                -- People: every object, change row, job and token belongs to one person (a token to none: an admin
                -- token). Everything stored before is the default person's: each column is added with that default
                -- (no table is rewritten), which is then dropped, so that every write names its person.
                CREATE TABLE person(
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    issuer TEXT,
                    subject TEXT,
                    created DOUBLE PRECISION NOT NULL);
                CREATE UNIQUE INDEX person_subject ON person(issuer, subject)
                    WHERE issuer IS NOT NULL AND subject IS NOT NULL;
                INSERT INTO person(id, name, created)
                VALUES ('00000000-0000-0000-0000-000000000000', 'default', extract(epoch FROM clock_timestamp()));

                ALTER TABLE workout ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE workout ALTER COLUMN person DROP DEFAULT;
                -- Sync identities are per person.
                DROP INDEX workout_sync;
                CREATE UNIQUE INDEX workout_sync ON workout(person, source, sync_id) WHERE sync_id IS NOT NULL;
                CREATE INDEX workout_person ON workout(person, id);

                ALTER TABLE route ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE route ALTER COLUMN person DROP DEFAULT;
                DROP INDEX route_current;
                CREATE UNIQUE INDEX route_current ON route(person, source, sync_id) WHERE current;
                DROP INDEX route_identity;
                CREATE INDEX route_identity ON route(person, source, sync_id);
                CREATE INDEX route_person ON route(person, id) WHERE current;

                ALTER TABLE builder ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE builder ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX builder_person ON builder(person, created);

                -- Chunks have no person: they are read and deleted through the route, builder or series row that
                -- holds their container, which has one.
                ALTER TABLE series ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE series ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX series_person ON series(person);

                ALTER TABLE effort ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE effort ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX effort_person ON effort(person);

                -- Privacy zones and zone settings are per (person, source).
                ALTER TABLE privacy_zone ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE privacy_zone ALTER COLUMN person DROP DEFAULT;
                DROP INDEX privacy_zone_source;
                CREATE INDEX privacy_zone_source ON privacy_zone(person, source);

                ALTER TABLE zone_settings ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE zone_settings ALTER COLUMN person DROP DEFAULT;
                ALTER TABLE zone_settings DROP CONSTRAINT zone_settings_pkey;
                ALTER TABLE zone_settings ADD PRIMARY KEY (person, source);

                ALTER TABLE workout_zone_settings
                    ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE workout_zone_settings ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX workout_zone_settings_person ON workout_zone_settings(person);

                ALTER TABLE workout_summary ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE workout_summary ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX workout_summary_person ON workout_summary(person);

                ALTER TABLE job ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE job ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX job_person ON job(person);

                -- A token's person, NULL for an admin token. Tokens made before are the default person's.
                ALTER TABLE api_token ADD COLUMN person TEXT;
                UPDATE api_token SET person = '00000000-0000-0000-0000-000000000000';
                CREATE INDEX api_token_person ON api_token(person);

                -- The change feed per person: each row carries its person, read on (person, position).
                ALTER TABLE change ADD COLUMN person TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
                ALTER TABLE change ALTER COLUMN person DROP DEFAULT;
                CREATE INDEX change_person ON change(person, position);
                -- Each person's head: the end and token of the newest transaction with rows of theirs (see
                -- ChangeLog.swift). The default person's is the log's head, so that an anchor handed out before stays
                -- valid.
                CREATE TABLE person_feed(
                    person TEXT PRIMARY KEY,
                    head BIGINT NOT NULL,
                    token BIGINT NOT NULL);
                INSERT INTO person_feed(person, head, token)
                SELECT '00000000-0000-0000-0000-000000000000', txn_end, token FROM change_txn
                ORDER BY txn_end DESC LIMIT 1;
                """
            ),
            (
                "v10-webhooks",
                """
                -- Webhook subscriptions (`/v1/webhooks`), each one person's. The change log is their outbox: `cursor` is
                -- the anchor text of the last change set the receiver acknowledged. The secrets are kept as given (they
                -- sign every delivery); `paused_reason` is NULL while active; `recent` holds the newest 20 attempts as
                -- JSON.
                CREATE TABLE webhook(
                    id TEXT PRIMARY KEY,
                    person TEXT NOT NULL,
                    url TEXT NOT NULL,
                    types TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    previous_secret TEXT,
                    previous_expires DOUBLE PRECISION,
                    paused_reason TEXT,
                    cursor TEXT,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    next_attempt DOUBLE PRECISION,
                    pending_since DOUBLE PRECISION,
                    anchor_key TEXT,
                    recent TEXT NOT NULL DEFAULT '[]',
                    created DOUBLE PRECISION NOT NULL);
                CREATE INDEX webhook_person ON webhook(person, created);
                CREATE INDEX webhook_due ON webhook(next_attempt) WHERE paused_reason IS NULL;
                """
            ),
            (
                "v11-admin-webhooks",
                """
                -- Admin-wide webhook subscriptions (an admin token's, of every person's changes): a row without a
                -- person, whose `cursor` is where its people's cursors start. Each person's cursor of one is a row of
                -- that person whose `parent` is it (its URL, types, secrets and anchor key copied, and kept in step),
                -- delivered as a person's subscription is and seen only by the dispatcher.
                ALTER TABLE webhook ALTER COLUMN person DROP NOT NULL;
                ALTER TABLE webhook ADD COLUMN parent TEXT;
                CREATE UNIQUE INDEX webhook_parent ON webhook(parent, person) WHERE parent IS NOT NULL;
                """
            ),
            (
                "v12-admin-webhook-attempts",
                """
                -- An admin-wide subscription shows its people's newest attempts and how many of their cursors are
                -- failing, without reading every cursor: `last_attempt` is when a row's newest attempt (the last of
                -- `recent`) was made, NULL before its first; the newest attempts of a subscription are those of its
                -- cursors with the newest `last_attempt`. The rows written before take it from their attempts.
                ALTER TABLE webhook ADD COLUMN last_attempt DOUBLE PRECISION;
                UPDATE webhook SET last_attempt = (recent::jsonb -> -1 ->> 'time')::double precision
                WHERE recent <> '[]';
                CREATE INDEX webhook_parent_attempt ON webhook(parent, last_attempt) WHERE parent IS NOT NULL;
                CREATE INDEX webhook_parent_failing ON webhook(parent) WHERE attempts > 0;
                """
            ),
        ]

        /// Connects, applies the migrations this database lacks (under a session advisory lock, so that processes
        /// opening a new database at once apply them once), and returns the store's id.
        static func prepare(_ endpoint: Endpoint, label: String) async throws(RouteKitError) -> UUID {
            let connection: PostgresConnection
            do { connection = try await endpoint.connect() } catch {
                throw PostgresStore.mapError(error, "opening the store at \(label)")
            }
            do {
                let tx = Transaction(connection, logger: endpoint.logger, person: PersonID.default.description)
                try await tx.run("SELECT pg_advisory_lock(hashtextextended('routekit schema', 0))")
                // DDL only when needed: a role that may only read and write can open an existing store.
                if try await tx.value("SELECT to_regclass('routekit_migration') IS NULL", as: Bool.self) == true {
                    try await tx.run(
                        "CREATE TABLE routekit_migration(id TEXT PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now())"
                    )
                }
                let applied = Set(
                    try await tx.rows("SELECT id FROM routekit_migration").map { try $0.get("id") as String })
                if let unknown = applied.subtracting(migrations.map(\.id)).sorted().first {
                    throw RouteKitError(
                        .incompatibleStore,
                        "the store at \(label) was written by a newer RouteKit (schema '\(unknown)'); upgrade RouteKit")
                }
                for m in migrations where !applied.contains(m.id) {
                    try await tx.run("BEGIN")
                    // One statement at a time (the extended protocol takes one); the migrations' statements end
                    // with ";" at the end of a line, and none holds one anywhere else (a function body with ";" at a
                    // line's end would need another way).
                    for statement in m.sql.components(separatedBy: ";\n") {
                        let sql = statement.trimmingCharacters(
                            in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
                        if !sql.isEmpty { try await tx.run(PostgresQuery(unsafeSQL: sql)) }
                    }
                    try await tx.run("INSERT INTO routekit_migration(id) VALUES (\(m.id))")
                    try await tx.run("COMMIT")
                }
                try await tx.run(
                    "INSERT INTO store_info(key, value) VALUES ('store_id', \(UUID().uuidString.lowercased())) ON CONFLICT DO NOTHING"
                )
                let id = try await tx.value("SELECT value FROM store_info WHERE key = 'store_id'", as: String.self)
                try await tx.run("SELECT pg_advisory_unlock(hashtextextended('routekit schema', 0))")
                try? await connection.close()
                guard let id, let uuid = UUID(uuidString: id) else {
                    throw RouteKitError(.incompatibleStore, "the store at \(label) has a malformed store id")
                }
                return uuid
            } catch {
                try? await connection.close()
                throw PostgresStore.mapError(error, "opening the store at \(label)")
            }
        }
    }
#endif
