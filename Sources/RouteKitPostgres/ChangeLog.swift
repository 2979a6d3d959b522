#if Postgres
    public import Foundation
    import Logging
    import NIOCore
    import PostgresNIO
    @_spi(RouteKitBackend) public import RouteKit

    /// The change feed on PostgreSQL, in commit order under concurrent writers.
    ///
    /// **The problem.** A sequence number alone is not enough: a transaction that took number 10 can commit after one
    /// that took 11, and a consumer that read up to 11 would never see 10.
    ///
    /// **The design: positions are handed out at the end of each transaction, one transaction at a time.** A write
    /// transaction collects its changes in memory. Its last statement before `COMMIT` takes the next positions from
    /// the one-row `feed_counter` table (`UPDATE … SET position = position + n RETURNING position`) and, in the same
    /// statement, inserts its change rows with those positions, its row in `change_txn`, and a `NOTIFY`. The counter
    /// row's lock is held until the transaction ends, so the next writer's counter update waits until this one has
    /// committed: PostgreSQL makes a transaction visible before it releases its locks, so every transaction whose
    /// positions are lower is already visible to any snapshot that sees a higher one. Position order is commit order,
    /// and a reader never sees a gap that a later commit fills.
    ///
    /// The cost is that writers that record changes (saving, replacing or deleting a route or a workout, saving a
    /// series, relating or unrelating an effort score) serialise for one statement and their commit; builders'
    /// batches, claims and everything else do not touch the counter.
    /// Readers never wait. Anchors, change sets, predicates, the added-row-per-current-route design and compaction are
    /// those of the SQLite store.
    ///
    /// **A feed per person.** Every change row carries its person (a transaction writes one person's objects), and
    /// a view reads only its person's rows (`AND person = …`, on an index on (person, position)). Positions stay
    /// global, but a person's head is their own: `person_feed(person, head, token)` holds the end and token of the
    /// newest transaction with rows of theirs, and the sealing statement upserts it with the positions it takes, so
    /// it commits with them, after every transaction of lower positions. A snapshot that sees a person's head at `p`
    /// therefore sees everything of theirs up to `p` and nothing after: their anchor is never ahead of what they can
    /// read, and another person's commits never move it. The epoch, the floor and the token check of an anchor's
    /// checkpoint (`change_txn`) are the log's; a person whose head is below the floor (quiet since before the newest
    /// compacted deletion) reads the floor as their head (`feedState(_:)`).
    extension PostgresStore {
        /// A change recorded in a transaction, given its position when the transaction seals.
        struct Change: Sendable {
            var added: Bool
            var record: FeedRecord
        }

        // MARK: Recording (inside write transactions)

        /// Records that a route stops being current; its `added` row goes.
        static func recordDeletion(_ tx: Transaction, _ route: StoredRouteRow) async throws {
            try await recordDeletion(
                tx,
                FeedRecord(
                    type: .route, key: key(route.id), workout: key(route.workoutID), source: route.source,
                    syncIdentifier: route.syncIdentifier, version: route.version, start: route.startSeconds,
                    end: route.endSeconds))
        }

        /// Records that `route` became current.
        static func recordAddition(_ tx: Transaction, _ route: RouteSample) {
            tx.changes.append(Change(added: true, record: .route(route)))
        }

        /// Records that an object stops being current; its `added` row goes.
        static func recordDeletion(_ tx: Transaction, _ record: FeedRecord) async throws {
            try await dropAdded(tx, record)
            tx.changes.append(Change(added: false, record: record))
        }

        /// Records that an object other than a route became current or changed: its previous `added` row (if any)
        /// goes, so that a consumer is owed it once, at its newest position.
        static func recordAddition(_ tx: Transaction, _ record: FeedRecord) async throws {
            try await dropAdded(tx, record)
            tx.changes.append(Change(added: true, record: record))
        }

        static func dropAdded(_ tx: Transaction, _ r: FeedRecord) async throws {
            try await tx.run(
                """
                DELETE FROM change WHERE added AND route_uuid = \(r.key) AND kind = \(r.type.rawValue)
                    AND detail = \(r.detail) AND person = \(tx.person)
                """)
            tx.changes.removeAll { $0.added && $0.record.isSameObject(as: r) }
        }

        /// Records the deletions of a workout's effort scores and series, then of the workout (before its rows go).
        static func recordWorkoutDeletion(_ tx: Transaction, _ id: UUID) async throws {
            let workout = key(id)
            for e in try await tx.rows(
                "SELECT uuid, source FROM effort WHERE workout_uuid = \(workout) AND person = \(tx.person) ORDER BY id")
            {
                try await recordDeletion(
                    tx, .effort(id: try StoredRecord.uuid(e.get("uuid")), workout: id, source: try e.get("source")))
            }
            for s in try await tx.rows(
                """
                SELECT MIN(source) AS source, kind FROM series WHERE workout_uuid = \(workout) AND person = \(tx.person)
                GROUP BY kind ORDER BY kind
                """)
            {
                if let record = FeedRecord.series(workout: id, source: try s.get("source"), kind: try s.get("kind")) {
                    try await recordDeletion(tx, record)
                }
            }
            if let w = try await tx.first("SELECT * FROM workout WHERE uuid = \(workout) AND person = \(tx.person)") {
                try await recordDeletion(tx, .workout(try Self.workout(w)))
            }
        }

        /// Records that a workout's series of these chunk kinds changed (kinds that are not quantities are not
        /// series of the feed).
        static func recordSeries(_ tx: Transaction, _ workout: UUID, _ source: String, _ kinds: [String]) async throws {
            for kind in kinds {
                if let record = FeedRecord.series(workout: workout, source: source, kind: kind) {
                    try await recordAddition(tx, record)
                }
            }
        }

        /// Appends the transaction's changes to the log (the transaction's last statement before `COMMIT`; see the
        /// type's documentation), and moves the transaction's person's head (`person_feed`) to the transaction's end.
        /// Returns whether there were any.
        ///
        /// The head moves in the statement that takes the positions, after the counter row's lock is taken, so it
        /// commits with the rows it ends and under the same order: a snapshot that sees a person's head at `p` sees
        /// every transaction whose positions are lower (they committed before this one could take the counter), and
        /// no transaction of that person after `p` (it would have moved the head). Two writers of one person (on two
        /// servers) take the counter one after the other; the second's upsert (`ON CONFLICT`) updates the row the
        /// first committed, and only ever forward.
        static func seal(_ tx: Transaction) async throws -> Bool {
            let changes = tx.changes
            if changes.isEmpty { return false }
            let token = Int64.random(in: 1...Int64.max)
            let now = Date().timeIntervalSince1970
            let n = Int64(changes.count)
            // Rows per INSERT: 11 parameters each, under the protocol's 65,535.
            let group = 4_000
            var sql = SQL("")
            let count = sql.bind(n)
            let tokenParameter = sql.bind(token)
            let nowParameter = sql.bind(now)
            let personParameter = sql.bind(tx.person)
            let first = changes.prefix(group)
            sql.append(
                """
                WITH counter AS (
                    UPDATE feed_counter SET position = position + \(count)::bigint WHERE id = 1 RETURNING position),
                changes AS (
                    INSERT INTO change(position, txn, txn_end, token, person, added, kind, route_uuid, detail,
                        workout_uuid, source, sync_id, sync_version, start_s, end_s, committed)
                    SELECT counter.position - \(count)::bigint + 1 + v.i, counter.position - \(count)::bigint + 1,
                        counter.position, \(tokenParameter)::bigint, \(personParameter)::text, v.added, v.kind, v.route,
                        v.detail, v.workout, v.source, v.sync_id, v.version, v.start_s, v.end_s, \(nowParameter)::float8
                    FROM counter, (VALUES \(values(&sql, first, from: 0)))
                        AS v(i, added, kind, route, detail, workout, source, sync_id, version, start_s, end_s)),
                txn AS (
                    INSERT INTO change_txn(txn_end, token, committed)
                    SELECT position, \(tokenParameter)::bigint, \(nowParameter)::float8 FROM counter),
                feed AS (
                    INSERT INTO person_feed(person, head, token)
                    SELECT \(personParameter)::text, position, \(tokenParameter)::bigint FROM counter
                    ON CONFLICT (person) DO UPDATE SET head = excluded.head, token = excluded.token
                    WHERE person_feed.head < excluded.head)
                SELECT position, pg_notify('\(channel)', position::text) FROM counter
                """)
            guard let end = try await tx.value(sql.query, as: Int64.self) else {
                throw RouteKitError(.incompatibleStore, "the store has no change-feed counter")
            }
            // A transaction with more changes (a workout with thousands of routes deleted) inserts the rest with the
            // positions it already took, still before its commit.
            var start = group
            while start < changes.count {
                let rows = changes[start..<min(start + group, changes.count)]
                var more = SQL("")
                let lo = more.bind(end - n + 1)
                let tokenAgain = more.bind(token)
                let nowAgain = more.bind(now)
                let personAgain = more.bind(tx.person)
                more.append(
                    """
                    INSERT INTO change(position, txn, txn_end, token, person, added, kind, route_uuid, detail,
                        workout_uuid, source, sync_id, sync_version, start_s, end_s, committed)
                    SELECT \(lo)::bigint + v.i, \(lo)::bigint, \(lo)::bigint + \(n - 1), \(tokenAgain)::bigint,
                        \(personAgain)::text, v.added, v.kind, v.route, v.detail, v.workout, v.source, v.sync_id, v.version,
                        v.start_s, v.end_s, \(nowAgain)::float8
                    FROM (VALUES \(values(&more, rows, from: start)))
                        AS v(i, added, kind, route, detail, workout, source, sync_id, version, start_s, end_s)
                    """)
                try await tx.run(more.query)
                start += rows.count
            }
            return true
        }

        /// `(i, added, route, …)` rows of a `VALUES` list, numbered from `from`.
        static func values(_ sql: inout SQL, _ changes: ArraySlice<Change>, from: Int) -> String {
            changes.enumerated().map { offset, c in
                let r = c.record
                let values = [
                    sql.bind(Int64(from + offset)) + "::bigint", sql.bind(c.added) + "::boolean",
                    sql.bind(r.type.rawValue) + "::text", sql.bind(r.key) + "::text", sql.bind(r.detail) + "::text",
                    sql.bind(r.workout) + "::text", sql.bind(r.source) + "::text",
                    sql.bind(r.syncIdentifier) + "::text",
                    sql.bind(r.version) + "::bigint", sql.bind(r.start) + "::bigint", sql.bind(r.end) + "::bigint",
                ]
                return "(" + values.joined(separator: ", ") + ")"
            }.joined(separator: ", ")
        }

        // MARK: Reading

        func feedState(_ tx: Transaction) async throws -> ChangeLogState {
            var sql = SQL("SELECT ")
            sql.append(Self.stateColumns(&sql, person: tx.person, checkpoint: nil))
            guard let row = try await tx.first(sql.query) else {
                throw RouteKitError(.incompatibleStore, "the store's change log has no state")
            }
            return try Self.state(row, storeID: storeID).state
        }

        /// The columns (`st_…`) of a `SELECT` list that give the change log's state as `person` reads it, and the
        /// token of the transaction ending at `checkpoint` (an anchor's, to validate it): the epoch, the floor and
        /// its token, the person's head and its token. Uncorrelated subqueries, each run once, in the statement's
        /// snapshot: a feed read learns the state and its rows in one round trip (``state(_:storeID:)`` reads them).
        static func stateColumns(_ sql: inout SQL, person: String, checkpoint: Int64?) -> String {
            let p = sql.bind(person)
            let c = sql.bind(checkpoint ?? -1)
            return """
                (SELECT value FROM store_info WHERE key = 'epoch') AS st_epoch,
                (SELECT value FROM store_info WHERE key = 'history_floor') AS st_floor,
                (SELECT token FROM change_txn WHERE txn_end = (
                    SELECT CASE WHEN value ~ '^[0-9]{1,18}$' THEN CAST(value AS BIGINT) END
                    FROM store_info WHERE key = 'history_floor')) AS st_floor_token,
                (SELECT head FROM person_feed WHERE person = \(p)::text) AS st_head,
                (SELECT token FROM person_feed WHERE person = \(p)::text) AS st_head_token,
                (SELECT token FROM change_txn WHERE txn_end = \(c)::bigint) AS st_checkpoint_token
                """
        }

        /// The state in a row with ``stateColumns(_:person:checkpoint:)``, and the token at the checkpoint asked
        /// for (`nil` when no transaction ends there).
        ///
        /// The head is the person's, not the log's: another person's commits never move it (0 when they have none).
        /// A person quiet since before the newest compacted deletion (or who never committed) reads the floor as
        /// their head: an anchor below it would be expired as soon as it was handed out. The floor is the end of a
        /// transaction that committed before the compaction that set it, so the snapshot sees every position up to
        /// it, and the person has no rows between their head and it; its token is kept (`change_txn` loses only the
        /// transactions below the floor).
        static func state(_ row: Row, storeID: UUID) throws -> (state: ChangeLogState, checkpointToken: Int64?) {
            let epoch = (try row.get("st_epoch") as String?).flatMap { UInt32($0) }
            let floor = (try row.get("st_floor") as String?).flatMap { Int64($0) } ?? 0
            var head = try row.get("st_head") as Int64? ?? 0
            var headToken = try row.get("st_head_token") as Int64? ?? 0
            if head < floor {
                head = floor
                headToken = try row.get("st_floor_token") as Int64? ?? 0
            }
            let state = ChangeLogState(
                storeID: storeID, epoch: epoch ?? 1, floor: floor, head: head, headToken: headToken)
            return (state, try row.get("st_checkpoint_token") as Int64?)
        }

        /// The token of the transaction that ends at `position`, if one does.
        static func token(_ tx: Transaction, endingAt position: Int64) async throws -> Int64? {
            try await tx.value("SELECT token FROM change_txn WHERE txn_end = \(position)", as: Int64.self)
        }

        /// The rows of `person` after `position` a consumer at (`position`, `horizon`) is owed: every addition, and
        /// the deletions after the horizon, matching the predicate (the index on (person, position) serves them).
        static func owed(
            _ sql: inout SQL, person: String, after position: Int64, horizon: Int64, _ p: ChangePredicate
        ) {
            sql.append("person = \(sql.bind(person)) AND position > \(sql.bind(position))")
            sql.append(" AND (added OR position > \(sql.bind(horizon)))")
            // The types are fixed words, never input.
            sql.append(p.types == [.route] ? " AND kind = 'route'" : " AND kind IN (\(FeedRecord.kindList(p.types)))")
            if let w = p.workout { sql.append(" AND workout_uuid = \(sql.bind(key(w)))") }
            if let s = p.source { sql.append(" AND source = \(sql.bind(s.name))") }
            if let s = p.syncIdentifier { sql.append(" AND sync_id = \(sql.bind(s))") }
            if let i = p.interval {
                sql.append(
                    " AND end_s >= \(sql.bind(i.lowerBound.seconds)) AND start_s <= \(sql.bind(i.upperBound.seconds))")
            }
        }

        public func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
            async throws(RouteKitError) -> ChangeSet
        {
            try StoreRules.checkLimit(limit)
            // Rows are read one past the limit: when no more are owed (a live follower's read), the set is complete
            // without asking again.
            let fetch = limit < Int.max ? limit + 1 : limit
            return try await read("reading the change feed", snapshot: true) { tx in
                // The state and (from an anchor, whose start and horizon are its own) the owed rows in one statement.
                var first = SQL("SELECT ")
                first.append(Self.stateColumns(&first, person: tx.person, checkpoint: anchor?.checkpoint))
                var rows: [Row] = []
                let state: ChangeLogState
                if let anchor {
                    first.append(", c.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT * FROM change WHERE ")
                    Self.owed(&first, person: tx.person, after: anchor.position, horizon: anchor.horizon, predicate)
                    first.append(" ORDER BY position LIMIT \(fetch)) AS c ON TRUE ORDER BY c.position")
                    let all = try await tx.rows(first.query)
                    guard let top = all.first else {
                        throw RouteKitError(.incompatibleStore, "the store's change log has no state")
                    }
                    let read = try Self.state(top, storeID: self.storeID)
                    state = read.state
                    try state.validate(anchor, tokenAtCheckpoint: read.checkpointToken)
                    // Without owed rows, the one row the join keeps has no change.
                    if try top.get("position") as Int64? != nil { rows = all }
                } else {
                    guard let top = try await tx.first(first.query) else {
                        throw RouteKitError(.incompatibleStore, "the store's change log has no state")
                    }
                    state = try Self.state(top, storeID: self.storeID).state
                    let (after, horizon) = StoreRules.readStart(anchor: nil, state: state)
                    var owed = SQL("SELECT * FROM change WHERE ")
                    Self.owed(&owed, person: tx.person, after: after, horizon: horizon, predicate)
                    owed.append(" ORDER BY position LIMIT \(fetch)")
                    rows = try await tx.rows(owed.query)
                }
                let (_, horizon) = StoreRules.readStart(anchor: anchor, state: state)
                var hasMore = false
                var end = state.head
                if rows.count > limit {
                    // More is owed than the limit: never split a transaction. The row past the limit tells whether
                    // the last transaction goes on; when it does, take the rest of it, and ask whether more follows.
                    let next = rows.removeLast()
                    let last = rows[rows.count - 1]
                    let txn: Int64 = try last.get("txn")
                    let txnEnd: Int64 = try last.get("txn_end")
                    if try next.get("txn") as Int64 != txn {
                        hasMore = true
                    } else {
                        var rest = SQL("SELECT * FROM change WHERE ")
                        rest.append("txn = \(rest.bind(txn)) AND ")
                        Self.owed(
                            &rest, person: tx.person, after: try last.get("position"), horizon: horizon, predicate)
                        rest.append(" ORDER BY position")
                        rows += try await tx.rows(rest.query)
                        var more = SQL("SELECT 1 FROM change WHERE ")
                        Self.owed(&more, person: tx.person, after: txnEnd, horizon: horizon, predicate)
                        more.append(" LIMIT 1")
                        hasMore = try await tx.first(more.query) != nil
                    }
                    if hasMore { end = txnEnd }
                }
                let split = try StoreRules.split(
                    rows.map { row in (try row.get("added") as Bool, try Self.feedRecord(row)) })
                var found: [String: RouteSample] = [:]
                if !split.addedRouteIDs.isEmpty {
                    for r in try await tx.rows(
                        "SELECT * FROM route WHERE uuid = ANY(\(split.addedRouteIDs)) AND person = \(tx.person)")
                    {
                        found[try r.get("uuid")] = try Self.route(r)
                    }
                }
                let objects = try await Self.addedObjects(tx, split.addedObjects)
                let choice = StoreRules.nextAnchor(hasMore: hasMore, end: end, horizon: horizon)
                var token: Int64?
                if let position = choice.tokenPosition {
                    token = position == state.head ? state.headToken : try await Self.token(tx, endingAt: position)
                }
                return ChangeSet(
                    deleted: split.deletedRoutes, added: try StoreRules.addedRoutes(split.addedRouteIDs, found: found),
                    deletedObjects: split.deletedObjects, addedObjects: objects,
                    anchor: choice.anchor(state, token: token), hasMore: hasMore)
            }
        }

        /// A change row's record.
        static func feedRecord(_ row: Row) throws -> FeedRecord {
            guard let type = ChangeObjectType(rawValue: try row.get("kind")) else {
                throw RouteKitError(.incompatibleStore, "the change log holds a kind this version does not know")
            }
            return FeedRecord(
                type: type, key: try row.get("route_uuid"), detail: try row.get("detail"),
                workout: try row.get("workout_uuid"), source: try row.get("source"),
                syncIdentifier: try row.get("sync_id"), version: try row.get("sync_version"),
                start: try row.get("start_s"), end: try row.get("end_s"))
        }

        /// The objects other than routes that a change set adds, read by key.
        static func addedObjects(_ tx: Transaction, _ records: [FeedRecord]) async throws -> [ChangedObject] {
            if records.isEmpty { return [] }
            func keys(_ type: ChangeObjectType) -> [String] {
                Array(Set(records.filter { $0.type == type }.map(\.key))).sorted()
            }
            var workouts: [String: Workout] = [:]
            let workoutKeys = keys(.workout)
            if !workoutKeys.isEmpty {
                for r in try await tx.rows(
                    "SELECT * FROM workout WHERE uuid = ANY(\(workoutKeys)) AND person = \(tx.person)")
                {
                    workouts[try r.get("uuid")] = try Self.workout(r)
                }
            }
            var efforts: [String: EffortScore] = [:]
            let effortKeys = keys(.effort)
            if !effortKeys.isEmpty {
                for r in try await tx.rows(
                    "SELECT * FROM effort WHERE uuid = ANY(\(effortKeys)) AND person = \(tx.person)")
                {
                    efforts[try r.get("uuid")] = try Self.effort(r)
                }
            }
            var series: [String: SeriesSummary] = [:]
            let seriesKeys = keys(.series)
            if !seriesKeys.isEmpty {
                for r in try await tx.rows(
                    """
                    SELECT s.workout_uuid, s.source, s.kind, c.count, c.min_s, c.min_ns, c.max_s, c.max_ns
                    FROM series s JOIN chunk c ON c.container = s.container AND c.kind = s.kind
                    WHERE s.workout_uuid = ANY(\(seriesKeys)) AND s.person = \(tx.person)
                    """)
                {
                    try StoreRules.addChunk(
                        to: &series, workout: try r.get("workout_uuid"), source: try r.get("source"),
                        kind: try r.get("kind"), count: Int(try r.get("count") as Int64),
                        first: instant(try r.get("min_s"), try r.get("min_ns")),
                        last: instant(try r.get("max_s"), try r.get("max_ns")))
                }
            }
            return try StoreRules.addedObjects(records, workouts: workouts, efforts: efforts, series: series)
        }

        static func instant(_ seconds: Int64?, _ nanoseconds: Int64?) -> Instant? {
            guard let seconds else { return nil }
            return Instant(seconds: seconds, nanoseconds: Int32(clamping: nanoseconds ?? 0))
        }

        public func currentAnchor() async throws(RouteKitError) -> ChangeAnchor {
            // One statement: one snapshot, no transaction needed.
            try await read("reading the change feed") { tx in
                try await self.feedState(tx).headAnchor
            }
        }

        public func compactChanges(before date: Date) async throws(RouteKitError) -> Int {
            let cutoff = date.timeIntervalSince1970
            return try await write("compacting the change log") { tx in
                // One compaction at a time (the floor only moves forward).
                try await Self.lock(tx, "compaction")
                guard
                    let newest = try await tx.value(
                        "SELECT MAX(position) FROM change WHERE NOT added AND committed < \(cutoff)", as: Int64.self)
                else { return 0 }
                let dropped = try await tx.rows(
                    "DELETE FROM change WHERE NOT added AND position <= \(newest) RETURNING 1"
                )
                .count
                // Anchors before the newest dropped deletion would miss it: they expire. The anchor of the
                // transaction that held it stays valid (it had seen that deletion).
                let floor =
                    try await tx.value("SELECT MIN(txn_end) FROM change_txn WHERE txn_end >= \(newest)", as: Int64.self)
                    ?? newest
                try await tx.run(
                    """
                    UPDATE store_info SET value = \(String(floor))
                    WHERE key = 'history_floor' AND CAST(value AS BIGINT) < \(floor)
                    """)
                try await tx.run("DELETE FROM change_txn WHERE txn_end < \(floor)")
                return dropped
            }
        }

        @_spi(RouteKitBackend) public func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter {
            PostgresCommitWaiter(endpoint: endpoint, signal: commitSignal)
        }
    }

    /// Wakes a follower: at once for commits in this process, and on every `NOTIFY` from other processes and hosts,
    /// received on a `LISTEN` connection of its own. The notification is a hint only (the follower always reads the
    /// log itself, and also every second without one). When the connection is lost (the server restarts), the waiter
    /// reconnects with backoff and wakes the follower once it listens again, so that anything committed meanwhile is
    /// read.
    final class PostgresCommitWaiter: CommitWaiter {
        private let signal: CommitSignal
        private var seen: UInt64
        private let listener: Task<Void, Never>

        init(endpoint: Endpoint, signal: CommitSignal) {
            self.signal = signal
            self.seen = signal.current
            listener = Task.detached { await listenForCommits(endpoint, signal) }
        }

        func wait(timeout: Double) async {
            let milliseconds = timeout.isFinite ? Int(min(max(timeout, 0), 86_400) * 1000) : 1000
            let g = signal.current
            if g == seen { await signal.wait(seen: g, milliseconds: milliseconds) }
            seen = signal.current
        }

        func close() { listener.cancel() }

        deinit { listener.cancel() }
    }

    /// Fires `signal` on every notification of a `LISTEN` connection (see ``PostgresCommitWaiter``), reconnecting
    /// with backoff, until cancelled.
    func listenForCommits(_ endpoint: Endpoint, _ signal: CommitSignal) async {
        var backoff = 0.05
        while !Task.isCancelled {
            let started = ContinuousClock.now
            if let connection = try? await endpoint.connect() {
                do {
                    try await withTaskCancellationHandler {
                        try await connection.listen(on: PostgresStore.channel) { notifications in
                            // Listening (again): wake the follower, which reads whatever committed before.
                            signal.fire()
                            for try await _ in notifications { signal.fire() }
                        }
                    } onCancel: {
                        let _: EventLoopFuture<Void> = connection.close()
                    }
                } catch {
                    // The connection was lost (the server restarted): listen again after a pause.
                }
                // Always closed, also after an error (postgres-nio insists on it).
                try? await connection.close()
            }
            if Task.isCancelled { return }
            if ContinuousClock.now - started > .seconds(5) { backoff = 0.05 }
            try? await Task.sleep(for: .milliseconds(Int(backoff * 1000)))
            backoff = min(backoff * 2, 2)
        }
    }

#endif
