import Foundation
import GRDB
import RouteKit

/// The store's schema, as GRDB migrations: every change to it is a new migration appended here, so a store
/// written by an older RouteKit opens (and is upgraded) in a newer one, and a store written by a newer one is
/// refused instead of being misread.
enum Schema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE store_info(key TEXT PRIMARY KEY, value TEXT NOT NULL);

                    -- Current workouts. A replaced or deleted workout is removed with its routes and series.
                    CREATE TABLE workout(
                        id INTEGER PRIMARY KEY,
                        uuid TEXT NOT NULL UNIQUE,
                        source TEXT NOT NULL,
                        sync_id TEXT,
                        sync_version INTEGER,
                        start_s INTEGER,
                        end_s INTEGER,
                        body TEXT NOT NULL);
                    CREATE UNIQUE INDEX workout_sync ON workout(source, sync_id) WHERE sync_id IS NOT NULL;

                    -- Routes: current = 1 for the current version of a sync identity, 0 for a raw version kept
                    -- as provenance after a derived version replaced it. Locations live in `chunk` under
                    -- `container` (the uuid of the builder that collected them).
                    CREATE TABLE route(
                        id INTEGER PRIMARY KEY,
                        uuid TEXT NOT NULL UNIQUE,
                        workout_uuid TEXT NOT NULL,
                        source TEXT NOT NULL,
                        sync_id TEXT NOT NULL,
                        sync_version INTEGER NOT NULL,
                        current INTEGER NOT NULL,
                        raw INTEGER NOT NULL,
                        start_s INTEGER,
                        end_s INTEGER,
                        location_count INTEGER NOT NULL,
                        container TEXT NOT NULL,
                        body TEXT NOT NULL);
                    CREATE UNIQUE INDEX route_current ON route(source, sync_id) WHERE current = 1;
                    CREATE INDEX route_workout ON route(workout_uuid);
                    CREATE INDEX route_identity ON route(source, sync_id);

                    -- Pending route builders (a finished or discarded builder's row is deleted).
                    CREATE TABLE builder(
                        uuid TEXT PRIMARY KEY,
                        source TEXT NOT NULL,
                        location_order TEXT NOT NULL,
                        origin_kind TEXT,
                        origin_key TEXT,
                        origin_label TEXT,
                        location_count INTEGER NOT NULL,
                        checkpoint TEXT,
                        claim TEXT NOT NULL,
                        metadata TEXT NOT NULL,
                        created REAL NOT NULL,
                        updated REAL NOT NULL);
                    CREATE INDEX builder_origin ON builder(origin_kind, origin_key);

                    -- Packed chunks of locations or quantity samples (RouteKit's LocationChunk/QuantityChunk).
                    CREATE TABLE chunk(
                        id INTEGER PRIMARY KEY,
                        container TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        count INTEGER NOT NULL,
                        min_s INTEGER, min_ns INTEGER,
                        max_s INTEGER, max_ns INTEGER,
                        data BLOB NOT NULL,
                        UNIQUE(container, kind, seq));

                    -- Which containers hold a workout's series of a kind.
                    CREATE TABLE series(
                        id INTEGER PRIMARY KEY,
                        workout_uuid TEXT NOT NULL,
                        source TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        container TEXT NOT NULL,
                        UNIQUE(workout_uuid, kind, container));
                    """)
        }
        m.registerMigration("v2-change-log") { db in
            try db.execute(
                sql: """
                    -- The change feed's log, in commit order. `position` comes from AUTOINCREMENT: never reused,
                    -- even after rows are deleted. Every change of one transaction has the same `txn` (the
                    -- position of its first change), `txn_end` (of its last) and `token` (random). An `added` row exists only while its
                    -- route is current (it is deleted with the route's deletion row written), so the rows with
                    -- added = 1 are exactly the current routes; deletion rows are kept until compaction.
                    CREATE TABLE change(
                        position INTEGER PRIMARY KEY AUTOINCREMENT,
                        txn INTEGER NOT NULL,
                        txn_end INTEGER NOT NULL,
                        token INTEGER NOT NULL,
                        added INTEGER NOT NULL,
                        route_uuid TEXT NOT NULL,
                        workout_uuid TEXT NOT NULL,
                        source TEXT NOT NULL,
                        sync_id TEXT NOT NULL,
                        sync_version INTEGER NOT NULL,
                        start_s INTEGER,
                        end_s INTEGER,
                        committed REAL NOT NULL);
                    CREATE INDEX change_by_txn ON change(txn);
                    CREATE INDEX change_added_route ON change(route_uuid) WHERE added = 1;
                    -- One row per transaction that wrote changes: what anchors are checked against.
                    CREATE TABLE change_txn(txn_end INTEGER PRIMARY KEY, token INTEGER NOT NULL, committed REAL NOT NULL);
                    INSERT OR IGNORE INTO store_info(key, value) VALUES ('epoch', '1'), ('history_floor', '0');
                    """)
            // A store written before the change log: its current routes are the log's first transaction.
            let now = Date().timeIntervalSince1970
            try db.execute(
                sql: """
                    INSERT INTO change(txn, txn_end, token, added, route_uuid, workout_uuid, source, sync_id,
                        sync_version, start_s, end_s, committed)
                    SELECT 0, 0, 0, 1, uuid, workout_uuid, source, sync_id, sync_version, start_s, end_s, ?
                    FROM route WHERE current = 1 ORDER BY id
                    """, arguments: [now])
            try Legacy.sealChanges(db, token: Int64.random(in: 1...Int64.max))
        }
        m.registerMigration("v3-leases") { db in
            try db.execute(
                sql: """
                    -- Work claims: a worker holds `key` until `expires` (seconds since 1970), renewing as it goes.
                    CREATE TABLE lease(key TEXT PRIMARY KEY, holder TEXT NOT NULL, expires REAL NOT NULL);
                    """)
        }
        m.registerMigration("v4-effort") { db in
            try db.execute(
                sql: """
                    -- Effort scores related to workouts (HealthKit's workout effort): manual or estimated.
                    CREATE TABLE effort(
                        id INTEGER PRIMARY KEY,
                        uuid TEXT NOT NULL UNIQUE,
                        workout_uuid TEXT NOT NULL,
                        source TEXT NOT NULL,
                        score REAL NOT NULL,
                        manual INTEGER NOT NULL,
                        created REAL NOT NULL);
                    CREATE INDEX effort_workout ON effort(workout_uuid);
                    """)
        }
        m.registerMigration("v5-container-indexes") { db in
            try db.execute(
                sql: """
                    -- Whether a container is still used is asked on every replacement and deletion: without
                    -- these, each one scanned the route and series tables.
                    CREATE INDEX route_container ON route(container);
                    CREATE INDEX series_container ON series(container);
                    """)
        }
        m.registerMigration("v6-privacy-zones") { db in
            try db.execute(
                sql: """
                    -- Each source's privacy zones (circles), in the order they were set.
                    CREATE TABLE privacy_zone(
                        id INTEGER PRIMARY KEY,
                        source TEXT NOT NULL,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        radius REAL NOT NULL);
                    CREATE INDEX privacy_zone_source ON privacy_zone(source);
                    """)
        }
        m.registerMigration("v7-api-tokens") { db in
            try db.execute(
                sql: """
                    -- API tokens for `routekit serve`: a SHA-256 hash of the secret, never the secret.
                    CREATE TABLE api_token(
                        id TEXT PRIMARY KEY,
                        name TEXT NOT NULL,
                        source TEXT NOT NULL,
                        scopes TEXT NOT NULL,
                        read_sources TEXT,
                        secret_hash TEXT NOT NULL,
                        created REAL NOT NULL,
                        expires REAL,
                        revoked REAL,
                        last_used REAL);
                    """)
        }
        m.registerMigration("v8-jobs") { db in
            try db.execute(
                sql: """
                    -- Processing jobs of `routekit serve`: their state and the document served for them.
                    CREATE TABLE job(
                        id TEXT PRIMARY KEY,
                        state TEXT NOT NULL,
                        document TEXT NOT NULL,
                        created REAL NOT NULL,
                        updated REAL NOT NULL,
                        cancel_requested INTEGER NOT NULL DEFAULT 0);
                    """)
        }
        m.registerMigration("v9-used-tickets") { db in
            try db.execute(
                sql: """
                    -- Single-use stream tickets already used, until they expire: a digest of each, never the ticket.
                    CREATE TABLE used_ticket(
                        key TEXT PRIMARY KEY,
                        expires REAL NOT NULL);
                    """)
        }
        m.registerMigration("v10-workout-summaries") { db in
            try db.execute(
                sql: """
                    -- Workouts' figures (distance, durations) as the statistics computed them, and what from: a
                    -- cache that a workout list reads instead of measuring every route (deleted with the workout).
                    CREATE TABLE workout_summary(
                        workout_uuid TEXT PRIMARY KEY,
                        basis TEXT NOT NULL,
                        document TEXT NOT NULL);
                    """)
        }
        m.registerMigration("v11-zone-settings") { db in
            try db.execute(
                sql: """
                    -- Each source's zone settings (preferred configurations, maximum and resting heart rate, age,
                    -- FTP) as JSON.
                    CREATE TABLE zone_settings(
                        source TEXT PRIMARY KEY,
                        body TEXT NOT NULL);
                    """)
        }
        m.registerMigration("v12-feed-objects") { db in
            try db.execute(
                sql: """
                    -- The change feed carries every workout object: a row's `kind` is route, workout, effort or
                    -- series; `route_uuid` holds the object's uuid (a series: its workout's) and `detail` a series'
                    -- quantity type. Rows written before are routes.
                    ALTER TABLE change ADD COLUMN kind TEXT NOT NULL DEFAULT 'route';
                    ALTER TABLE change ADD COLUMN detail TEXT NOT NULL DEFAULT '';
                    DROP INDEX change_added_route;
                    CREATE INDEX change_added_object ON change(route_uuid, kind, detail) WHERE added = 1;
                    """)
            // The objects stored before: current from the log's next transaction on.
            for w in try Row.fetchAll(db, sql: "SELECT * FROM workout ORDER BY id") {
                try Legacy.recordAddition(db, .workout(try SQLiteStore.workout(w)))
            }
            for e in try Row.fetchAll(db, sql: "SELECT uuid, workout_uuid, source FROM effort ORDER BY id") {
                try Legacy.recordAddition(
                    db,
                    .effort(
                        id: try SQLiteStore.uuid(e["uuid"]), workout: try SQLiteStore.uuid(e["workout_uuid"]),
                        source: e["source"]))
            }
            for r in try Row.fetchAll(
                db,
                sql:
                    "SELECT workout_uuid, MIN(source) AS source, kind FROM series GROUP BY workout_uuid, kind ORDER BY 1, 3"
            ) {
                if let record = FeedRecord.series(
                    workout: try SQLiteStore.uuid(r["workout_uuid"]), source: r["source"], kind: r["kind"])
                {
                    try Legacy.recordAddition(db, record)
                }
            }
            try Legacy.sealChanges(db, token: Int64.random(in: 1...Int64.max))
        }
        m.registerMigration("v13-workout-zone-settings") { db in
            try db.execute(
                sql: """
                    -- The zone settings an app saved with one workout (its custom configurations), as JSON; deleted
                    -- with the workout.
                    CREATE TABLE workout_zone_settings(
                        workout_uuid TEXT PRIMARY KEY,
                        body TEXT NOT NULL);
                    """)
        }
        m.registerMigration("v14-people") { db in
            let everyone = SQLiteStore.defaultPersonKey
            try db.execute(
                sql: """
                    -- People (issue 28): every workout, route, builder, privacy zone, zone setting, job, token and
                    -- change-log row belongs to one person; what was stored before is the default person's. Series,
                    -- effort scores, summaries, a workout's zone settings and chunks belong to the person of their
                    -- workout (or route, or builder).
                    CREATE TABLE person(
                        id TEXT PRIMARY KEY,
                        name TEXT NOT NULL,
                        issuer TEXT,
                        subject TEXT,
                        created REAL NOT NULL);
                    CREATE UNIQUE INDEX person_subject ON person(issuer, subject)
                        WHERE issuer IS NOT NULL AND subject IS NOT NULL;

                    -- Sync identities are per person.
                    ALTER TABLE workout ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    DROP INDEX workout_sync;
                    CREATE UNIQUE INDEX workout_sync ON workout(person, source, sync_id) WHERE sync_id IS NOT NULL;
                    CREATE INDEX workout_person ON workout(person, id);

                    ALTER TABLE route ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    DROP INDEX route_current;
                    CREATE UNIQUE INDEX route_current ON route(person, source, sync_id) WHERE current = 1;
                    DROP INDEX route_identity;
                    CREATE INDEX route_identity ON route(person, source, sync_id);
                    CREATE INDEX route_person ON route(person, id);

                    ALTER TABLE builder ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    CREATE INDEX builder_person ON builder(person, created);
                    CREATE INDEX builder_updated ON builder(updated);

                    ALTER TABLE privacy_zone ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    DROP INDEX privacy_zone_source;
                    CREATE INDEX privacy_zone_source ON privacy_zone(person, source);

                    -- A source's zone settings are per (person, source): the table is rebuilt with that key.
                    CREATE TABLE zone_settings_by_person(
                        person TEXT NOT NULL,
                        source TEXT NOT NULL,
                        body TEXT NOT NULL,
                        PRIMARY KEY(person, source));
                    INSERT INTO zone_settings_by_person(person, source, body)
                        SELECT '\(everyone)', source, body FROM zone_settings;
                    DROP TABLE zone_settings;
                    ALTER TABLE zone_settings_by_person RENAME TO zone_settings;

                    ALTER TABLE job ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    CREATE INDEX job_person ON job(person);

                    -- NULL: an admin token (it acts as no person). Tokens made before are the default person's.
                    ALTER TABLE api_token ADD COLUMN person TEXT;
                    UPDATE api_token SET person = '\(everyone)';
                    CREATE INDEX api_token_person ON api_token(person);

                    -- Each change-log row is its object's person's; a person's feed reads only theirs.
                    ALTER TABLE change ADD COLUMN person TEXT NOT NULL DEFAULT '\(everyone)';
                    CREATE INDEX change_person ON change(person, position);

                    -- Each person's head: the end and token of the newest transaction that wrote a change of theirs
                    -- (set when a transaction is sealed). A person's anchor moves only with their own commits.
                    CREATE TABLE person_feed(
                        person TEXT PRIMARY KEY,
                        head INTEGER NOT NULL,
                        token INTEGER NOT NULL);
                    """)
            try db.execute(
                sql: "INSERT INTO person(id, name, created) VALUES (?, 'default', ?)",
                arguments: [everyone, Date().timeIntervalSince1970])
            // Anchors handed out before the upgrade were at the newest transaction: it is the default person's head.
            try db.execute(
                sql: """
                    INSERT INTO person_feed(person, head, token)
                    SELECT ?, txn_end, token FROM change_txn ORDER BY txn_end DESC LIMIT 1
                    """, arguments: [everyone])
        }
        m.registerMigration("v15-webhooks") { db in
            try db.execute(
                sql: """
                    -- Webhook subscriptions (`/v1/webhooks`), each one person's. The change log is their outbox:
                    -- `cursor` is the anchor text of the last change set the receiver acknowledged. The secrets are
                    -- kept as given (they sign every delivery); `paused_reason` is NULL while active; `recent` holds
                    -- the newest 20 attempts as JSON.
                    CREATE TABLE webhook(
                        id TEXT PRIMARY KEY,
                        person TEXT NOT NULL,
                        url TEXT NOT NULL,
                        types TEXT NOT NULL,
                        secret TEXT NOT NULL,
                        previous_secret TEXT,
                        previous_expires REAL,
                        paused_reason TEXT,
                        cursor TEXT,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt REAL,
                        pending_since REAL,
                        anchor_key TEXT,
                        recent TEXT NOT NULL DEFAULT '[]',
                        created REAL NOT NULL);
                    CREATE INDEX webhook_person ON webhook(person, created);
                    CREATE INDEX webhook_due ON webhook(next_attempt) WHERE paused_reason IS NULL;
                    """)
        }
        m.registerMigration("v16-admin-webhooks") { db in
            try db.execute(
                sql: """
                    -- Admin-wide webhook subscriptions (an admin token's, of every person's changes): a row without a
                    -- person, whose `cursor` is where its people's cursors start. Each person's cursor of one is a row
                    -- of that person whose `parent` is it (its URL, types, secrets and anchor key copied, and kept in
                    -- step), delivered as a person's subscription is and seen only by the dispatcher. The table is
                    -- rebuilt: SQLite cannot drop a column's NOT NULL.
                    CREATE TABLE webhook_v16(
                        id TEXT PRIMARY KEY,
                        person TEXT,
                        parent TEXT,
                        url TEXT NOT NULL,
                        types TEXT NOT NULL,
                        secret TEXT NOT NULL,
                        previous_secret TEXT,
                        previous_expires REAL,
                        paused_reason TEXT,
                        cursor TEXT,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt REAL,
                        pending_since REAL,
                        anchor_key TEXT,
                        recent TEXT NOT NULL DEFAULT '[]',
                        created REAL NOT NULL);
                    INSERT INTO webhook_v16(id, person, url, types, secret, previous_secret, previous_expires,
                            paused_reason, cursor, attempts, next_attempt, pending_since, anchor_key, recent, created)
                        SELECT id, person, url, types, secret, previous_secret, previous_expires, paused_reason, cursor,
                            attempts, next_attempt, pending_since, anchor_key, recent, created
                        FROM webhook;
                    DROP TABLE webhook;
                    ALTER TABLE webhook_v16 RENAME TO webhook;
                    CREATE INDEX webhook_person ON webhook(person, created);
                    CREATE INDEX webhook_due ON webhook(next_attempt) WHERE paused_reason IS NULL;
                    CREATE UNIQUE INDEX webhook_parent ON webhook(parent, person) WHERE parent IS NOT NULL;
                    """)
        }
        m.registerMigration("v17-admin-webhook-attempts") { db in
            try db.execute(
                sql: """
                    -- An admin-wide subscription shows its people's newest attempts and how many of their cursors
                    -- are failing, without reading every cursor: `last_attempt` is when a row's newest attempt
                    -- (the last of `recent`) was made, NULL before its first; the newest attempts of a subscription are
                    -- those of its cursors with the newest `last_attempt`.
                    ALTER TABLE webhook ADD COLUMN last_attempt REAL;
                    CREATE INDEX webhook_parent_attempt ON webhook(parent, last_attempt) WHERE parent IS NOT NULL;
                    CREATE INDEX webhook_parent_failing ON webhook(parent) WHERE attempts > 0;
                    """)
            try Self.fillLastAttempts(db)
        }
        return m
    }

    /// Sets `last_attempt` of the rows written before it (v17-admin-webhook-attempts) from their attempts, a
    /// thousand rows at a time.
    static func fillLastAttempts(_ db: Database) throws {
        var after = ""
        while true {
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, recent FROM webhook WHERE id > ? AND recent <> '[]' ORDER BY id LIMIT 1000",
                arguments: [after])
            guard let last: String = rows.last?["id"] else { return }
            for row in rows {
                // Attempts that cannot be read leave it NULL: the row's next attempt sets it.
                let newest = (try? WebhookAttemptRecord.list(from: row["recent"]))?.last
                try db.execute(
                    sql: "UPDATE webhook SET last_attempt = ? WHERE id = ?",
                    arguments: [newest?.time.timeIntervalSince1970, row["id"] as String])
            }
            after = last
        }
    }

    /// The change log's recording as it was before people (schema v2 to v13), for the migrations that record
    /// changes on a schema of that time: the current code writes columns and tables that did not exist yet.
    enum Legacy {
        /// Records that an object became current (`SQLiteStore.recordAddition` before people).
        static func recordAddition(_ db: Database, _ r: FeedRecord) throws {
            if r.type != .route {
                try db.execute(
                    sql: "DELETE FROM change WHERE added = 1 AND route_uuid = ? AND kind = ? AND detail = ?",
                    arguments: [r.key, r.type.rawValue, r.detail])
            }
            try db.execute(
                sql: """
                    INSERT INTO change(txn, txn_end, token, added, kind, route_uuid, detail, workout_uuid, source,
                        sync_id, sync_version, start_s, end_s, committed)
                    VALUES (0, 0, 0, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    r.type.rawValue, r.key, r.detail, r.workout, r.source, r.syncIdentifier, r.version, r.start, r.end,
                    Date().timeIntervalSince1970,
                ])
        }

        /// Seals the changes recorded in the migration's transaction (`SQLiteStore.sealChanges` before people).
        static func sealChanges(_ db: Database, token: Int64) throws {
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT MIN(position) AS lo, MAX(position) AS hi FROM change WHERE txn = 0"),
                let lo: Int64 = row["lo"], let hi: Int64 = row["hi"]
            else { return }
            try db.execute(
                sql: "UPDATE change SET txn = ?, txn_end = ?, token = ? WHERE txn = 0", arguments: [lo, hi, token])
            try db.execute(
                sql: "INSERT INTO change_txn(txn_end, token, committed) VALUES (?, ?, ?)",
                arguments: [hi, token, Date().timeIntervalSince1970])
        }
    }
}
