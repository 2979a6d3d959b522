import CRouteKitSystem
public import Foundation
import GRDB
@_spi(RouteKitBackend) public import RouteKit

/// The change feed on SQLite.
///
/// **Commit order.** SQLite has one writer at a time, so positions handed out by the `change` table's
/// AUTOINCREMENT inside a write transaction are in commit order, and a reader's snapshot never sees a gap
/// that a later commit fills.
///
/// PostgreSQL, with concurrent writers, keeps commit order differently (see its backend's change log).
extension SQLiteStore {
    // MARK: Recording (inside write transactions)

    // Every row records an object of `person` (the person of the view that writes), and is theirs in the feed.

    /// Records that a route stops being current; its `added` row goes.
    static func recordDeletion(_ db: Database, _ route: StoredRouteRow, person: String) throws {
        try recordDeletion(
            db,
            FeedRecord(
                type: .route, key: key(route.id), workout: key(route.workoutID), source: route.source,
                syncIdentifier: route.syncIdentifier, version: route.version, start: route.startSeconds,
                end: route.endSeconds), person: person)
    }

    /// Records that an object stops being current; its `added` row goes.
    static func recordDeletion(_ db: Database, _ record: FeedRecord, person: String) throws {
        try dropAdded(db, record, person: person)
        try insert(db, record, added: false, person: person)
    }

    /// Records that an object became current or changed: its previous `added` row (if any) goes, so that a
    /// consumer is owed it once, at its newest position.
    static func recordAddition(_ db: Database, _ record: FeedRecord, person: String) throws {
        if record.type != .route { try dropAdded(db, record, person: person) }
        try insert(db, record, added: true, person: person)
    }

    static func dropAdded(_ db: Database, _ r: FeedRecord, person: String) throws {
        try db.cachedStatement(
            sql: "DELETE FROM change WHERE added = 1 AND route_uuid = ? AND kind = ? AND detail = ? AND person = ?"
        ).execute(arguments: [r.key, r.type.rawValue, r.detail, person])
    }

    static func insert(_ db: Database, _ r: FeedRecord, added: Bool, person: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO change(txn, txn_end, token, added, kind, route_uuid, detail, workout_uuid, source, sync_id,
                    sync_version, start_s, end_s, committed, person)
                VALUES (0, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            added, r.type.rawValue, r.key, r.detail, r.workout, r.source, r.syncIdentifier, r.version, r.start, r.end,
            Date().timeIntervalSince1970, person,
        ])
    }

    /// Records the deletions of a workout's effort scores and series, then of the workout (before its rows go).
    static func recordWorkoutDeletion(_ db: Database, _ id: UUID, person: String) throws {
        let workout = key(id)
        for e in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT uuid, source FROM effort WHERE workout_uuid = ? ORDER BY id"),
            arguments: [workout])
        {
            try recordDeletion(db, .effort(id: try uuid(e["uuid"]), workout: id, source: e["source"]), person: person)
        }
        for s in try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT MIN(source) AS source, kind FROM series WHERE workout_uuid = ? GROUP BY kind ORDER BY kind"
            ),
            arguments: [workout])
        {
            if let record = FeedRecord.series(workout: id, source: s["source"], kind: s["kind"]) {
                try recordDeletion(db, record, person: person)
            }
        }
        if let w = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM workout WHERE uuid = ? AND person = ?"),
            arguments: [workout, person])
        {
            try recordDeletion(db, .workout(try Self.workout(w)), person: person)
        }
    }

    /// Gives the changes recorded in this transaction their transaction number and token, and records the
    /// transaction; each person with changes in it gets the transaction's end as their head (``feedState(_:)``).
    /// Returns whether there were any.
    @discardableResult
    static func sealChanges(_ db: Database, token: Int64) throws -> Bool {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT MIN(position) AS lo, MAX(position) AS hi FROM change WHERE txn = 0"),
            let lo: Int64 = row["lo"], let hi: Int64 = row["hi"]
        else { return false }
        try db.cachedStatement(sql: "UPDATE change SET txn = ?, txn_end = ?, token = ? WHERE txn = 0").execute(
            arguments: [lo, hi, token])
        try db.cachedStatement(sql: "INSERT INTO change_txn(txn_end, token, committed) VALUES (?, ?, ?)").execute(
            arguments: [hi, token, Date().timeIntervalSince1970])
        // (The WHERE clause also keeps SQLite from reading ON CONFLICT as a join's ON.)
        try db.cachedStatement(
            sql: """
                INSERT INTO person_feed(person, head, token) SELECT DISTINCT person, ?, ? FROM change WHERE txn = ?
                ON CONFLICT(person) DO UPDATE SET head = excluded.head, token = excluded.token
                WHERE excluded.head > person_feed.head
                """
        ).execute(arguments: [hi, token, lo])
        return true
    }

    // MARK: Reading

    /// The feed as this view's person sees it: the store's epoch and floor, and the person's head (the end of the
    /// newest transaction with a change of theirs; 0 when none), so that other people's commits never move it.
    ///
    /// A head below the floor (a person quiet since before the newest compacted deletion, or who never wrote) is
    /// raised to the floor, the end of a transaction the log still has: the person has no change between the two, so
    /// nothing is skipped, and the anchors handed out stay valid after the person's next commit. (Their anchors
    /// from before the compaction expire, as everyone's do.) Only compaction raises it, never another person's
    /// commit.
    func feedState(_ db: Database) throws -> ChangeLogState {
        let epoch = try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'epoch'").flatMap {
            UInt32($0)
        }
        let floor =
            try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'history_floor'").flatMap {
                Int64($0)
            } ?? 0
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT head, token FROM person_feed WHERE person = ?"), arguments: [personKey])
        var head: Int64 = row?["head"] ?? 0
        var headToken: Int64 = row?["token"] ?? 0
        if head < floor,
            let raised = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT token FROM change_txn WHERE txn_end = ?"), arguments: [floor])
        {
            head = floor
            headToken = raised
        }
        // (Were the floor's transaction missing, the floor is lowered to the head instead: an anchor at the head is
        // owed nothing compaction dropped.)
        return ChangeLogState(
            storeID: storeID, epoch: epoch ?? 1, floor: Swift.min(floor, head), head: head, headToken: headToken)
    }

    /// The token of the transaction that ends at `position`, if one does: the person's head token at their head
    /// (whose `change_txn` row compaction may have dropped), otherwise the one `change_txn` keeps.
    static func token(_ db: Database, endingAt position: Int64, state: ChangeLogState) throws -> Int64? {
        if position == state.head && position > 0 { return state.headToken }
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT token FROM change_txn WHERE txn_end = ?"), arguments: [position])
    }

    static func predicateSQL(_ p: ChangePredicate, _ args: inout [(any DatabaseValueConvertible)?]) -> String {
        var sql = p.types == [.route] ? " AND kind = 'route'" : " AND kind IN (\(FeedRecord.kindList(p.types)))"
        if let w = p.workout {
            sql += " AND workout_uuid = ?"
            args.append(key(w))
        }
        if let s = p.source {
            sql += " AND source = ?"
            args.append(s.name)
        }
        if let s = p.syncIdentifier {
            sql += " AND sync_id = ?"
            args.append(s)
        }
        if let i = p.interval {
            sql += " AND end_s >= ? AND start_s <= ?"
            args += [i.lowerBound.seconds, i.upperBound.seconds]
        }
        return sql
    }

    /// The rows of `person` after `position` a consumer at (`position`, `horizon`) is owed: every addition, and
    /// the deletions after the horizon.
    static func owedSQL(
        after position: Int64, horizon: Int64, _ predicate: ChangePredicate,
        person: String, _ args: inout [(any DatabaseValueConvertible)?]
    ) -> String {
        args.append(person)
        args.append(position)
        args.append(horizon)
        return "person = ? AND position > ? AND (added = 1 OR position > ?)" + predicateSQL(predicate, &args)
    }

    public func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
        async throws(RouteKitError) -> ChangeSet
    {
        try StoreRules.checkLimit(limit)
        let person = personKey
        return try await read("reading the change feed") { db in
            let state = try self.feedState(db)
            if let anchor {
                try state.validate(
                    anchor, tokenAtCheckpoint: try Self.token(db, endingAt: anchor.checkpoint, state: state))
            }
            let (after, horizon) = StoreRules.readStart(anchor: anchor, state: state)
            var args: [(any DatabaseValueConvertible)?] = []
            let owed = Self.owedSQL(after: after, horizon: horizon, predicate, person: person, &args)
            var rows = try Row.fetchAll(
                db, sql: "SELECT * FROM change WHERE \(owed) ORDER BY position LIMIT \(limit)",
                arguments: StatementArguments(args))
            var hasMore = false
            var end = state.head
            if let last = rows.last {
                // Never split a transaction: take the rest of the last one, and end the anchor with it.
                let txn: Int64 = last["txn"]
                let txnEnd: Int64 = last["txn_end"]
                var restArgs: [(any DatabaseValueConvertible)?] = [txn]
                let lastPosition: Int64 = last["position"]
                rows += try Row.fetchAll(
                    db,
                    sql: "SELECT * FROM change WHERE txn = ? AND "
                        + Self.owedSQL(after: lastPosition, horizon: horizon, predicate, person: person, &restArgs)
                        + " ORDER BY position",
                    arguments: StatementArguments(restArgs))
                var moreArgs: [(any DatabaseValueConvertible)?] = []
                let more = Self.owedSQL(after: txnEnd, horizon: horizon, predicate, person: person, &moreArgs)
                hasMore =
                    try Row.fetchOne(
                        db, sql: "SELECT 1 FROM change WHERE \(more) LIMIT 1", arguments: StatementArguments(moreArgs))
                    != nil
                if hasMore { end = txnEnd }
            }
            let split = try StoreRules.split(rows.map { row in (row["added"], try Self.feedRecord(row)) })
            var found: [String: RouteSample] = [:]
            for r in try Self.rows(db, "SELECT * FROM route WHERE uuid IN", split.addedRouteIDs) {
                found[r["uuid"]] = try Self.route(r)
            }
            let objects = try Self.addedObjects(db, split.addedObjects)
            let choice = StoreRules.nextAnchor(hasMore: hasMore, end: end, horizon: horizon)
            let token = try choice.tokenPosition.flatMap { position in
                try Self.token(db, endingAt: position, state: state)
            }
            return ChangeSet(
                deleted: split.deletedRoutes, added: try StoreRules.addedRoutes(split.addedRouteIDs, found: found),
                deletedObjects: split.deletedObjects, addedObjects: objects,
                anchor: choice.anchor(state, token: token), hasMore: hasMore)
        }
    }

    /// A change row's record.
    static func feedRecord(_ row: Row) throws -> FeedRecord {
        guard let type = ChangeObjectType(rawValue: row["kind"]) else {
            throw RouteKitError(.incompatibleStore, "the change log holds a kind this version does not know")
        }
        return FeedRecord(
            type: type, key: row["route_uuid"], detail: row["detail"], workout: row["workout_uuid"],
            source: row["source"], syncIdentifier: row["sync_id"], version: row["sync_version"], start: row["start_s"],
            end: row["end_s"])
    }

    /// The rows of `select … IN (keys)`, 500 keys at a time.
    static func rows(_ db: Database, _ select: String, _ keys: [String], suffix: String = "") throws -> [Row] {
        var out: [Row] = []
        var start = 0
        while start < keys.count {
            let slice = Array(keys[start..<min(start + 500, keys.count)])
            out += try Row.fetchAll(
                db, sql: "\(select) (\(slice.map { _ in "?" }.joined(separator: ",")))\(suffix)",
                arguments: StatementArguments(slice))
            start += slice.count
        }
        return out
    }

    /// The objects other than routes that a change set adds, read by key.
    static func addedObjects(_ db: Database, _ records: [FeedRecord]) throws -> [ChangedObject] {
        if records.isEmpty { return [] }
        func keys(_ type: ChangeObjectType) -> [String] {
            Array(Set(records.filter { $0.type == type }.map(\.key))).sorted()
        }
        var workouts: [String: Workout] = [:]
        for r in try rows(db, "SELECT * FROM workout WHERE uuid IN", keys(.workout)) {
            workouts[r["uuid"]] = try workout(r)
        }
        var efforts: [String: EffortScore] = [:]
        for r in try rows(db, "SELECT * FROM effort WHERE uuid IN", keys(.effort)) {
            efforts[r["uuid"]] = try effort(r)
        }
        var series: [String: SeriesSummary] = [:]
        for r in try rows(
            db,
            """
            SELECT s.workout_uuid, s.source, s.kind, c.count, c.min_s, c.min_ns, c.max_s, c.max_ns
            FROM series s JOIN chunk c ON c.container = s.container AND c.kind = s.kind WHERE s.workout_uuid IN
            """, keys(.series))
        {
            try StoreRules.addChunk(
                to: &series, workout: r["workout_uuid"], source: r["source"], kind: r["kind"], count: r["count"],
                first: instant(r["min_s"], r["min_ns"]), last: instant(r["max_s"], r["max_ns"]))
        }
        return try StoreRules.addedObjects(records, workouts: workouts, efforts: efforts, series: series)
    }

    static func instant(_ seconds: Int64?, _ nanoseconds: Int64?) -> Instant? {
        guard let seconds else { return nil }
        return Instant(seconds: seconds, nanoseconds: Int32(clamping: nanoseconds ?? 0))
    }

    public func currentAnchor() async throws(RouteKitError) -> ChangeAnchor {
        try await read("reading the change feed") { db in
            try self.feedState(db).headAnchor
        }
    }

    public func compactChanges(before date: Date) async throws(RouteKitError) -> Int {
        try await write("compacting the change log") { db in
            let cutoff = date.timeIntervalSince1970
            guard
                let newest = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT MAX(position) FROM change WHERE added = 0 AND committed < ?"),
                    arguments: [cutoff])
            else { return 0 }
            try db.cachedStatement(sql: "DELETE FROM change WHERE added = 0 AND position <= ?").execute(arguments: [
                newest
            ])
            let dropped = db.changesCount
            // Anchors before the newest dropped deletion would miss it: they expire. The anchor of the
            // transaction that held it stays valid (it had seen that deletion).
            let floor =
                try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT MIN(txn_end) FROM change_txn WHERE txn_end >= ?"),
                    arguments: [newest]) ?? newest
            try db.cachedStatement(
                sql: "UPDATE store_info SET value = ? WHERE key = 'history_floor' AND CAST(value AS INTEGER) < ?"
            ).execute(arguments: [String(floor), floor])
            try db.cachedStatement(sql: "DELETE FROM change_txn WHERE txn_end < ?").execute(arguments: [floor])
            return dropped
        }
    }

    @_spi(RouteKitBackend) public func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter {
        try commitPoller.retain()
        return SQLiteCommitWaiter(poller: commitPoller, signal: commitSignal)
    }
}

/// Notices commits by other processes (and other store handles) on the same file, for every waiter of one store
/// handle: one thread of its own reads SQLite's `PRAGMA data_version` on a read-only connection of its own every 50
/// ms, and fires the store's ``CommitSignal`` when it changes. It runs only while a waiter is open.
///
/// One thread, not a read through GRDB per waiter: reads scheduled on dispatch queues 20 times a second kept every
/// dispatch worker thread a burst had started alive (each woken in turn before its idle timeout), with its stack and
/// allocator arena, and woke an idle server 40 times a second.
final class CrossProcessCommitPoller: @unchecked Sendable {
    static let pollMilliseconds = 50
    private let path: String
    private let signal: CommitSignal
    private let condition = NSCondition()
    /// Open waiters, and whether a thread polls (both under `condition`).
    private var users = 0
    private var polling = false
    private var started = 0

    /// Whether a thread polls, and how many were started so far (for tests).
    var state: (polling: Bool, threadsStarted: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (polling, started)
    }

    init(path: String, signal: CommitSignal) {
        self.path = path
        self.signal = signal
    }

    /// Counts a waiter; the first starts the thread (opening its connection here, so that a failure is thrown).
    func retain() throws(RouteKitError) {
        condition.lock()
        defer { condition.unlock() }
        users += 1
        guard !polling else { return }
        let queue: DatabaseQueue
        do {
            var config = Configuration()
            config.readonly = true
            config.busyMode = .timeout(5)
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            users -= 1
            throw RouteKitError(.storage, "cannot watch the store for changes: \(SQLiteStore.describe(error))")
        }
        polling = true
        started += 1
        let seen = Self.dataVersion(queue)  // before the first waiter reads: a commit after this is noticed
        BlockingExecutor.shared.start(named: "rk-commit-poll") { [self] in poll(queue, seen: seen) }
    }

    /// Uncounts a waiter; after the last, the thread ends within one interval.
    func release() {
        condition.lock()
        users -= 1
        if users == 0 { condition.signal() }
        condition.unlock()
    }

    private func poll(_ queue: DatabaseQueue, seen: Int64?) {
        rk_name_this_thread("rk-commit-poll")
        var seen = seen
        while true {
            condition.lock()
            if users > 0 { _ = condition.wait(until: Date().addingTimeInterval(Double(Self.pollMilliseconds) / 1000)) }
            if users == 0 {
                polling = false
                condition.unlock()
                return
            }
            condition.unlock()
            let version = Self.dataVersion(queue)
            if version != seen {
                seen = version
                signal.fire()
            }
        }
    }

    /// On the calling thread: `inDatabase` runs its block there when the queue is free, and only this thread uses
    /// the queue.
    private static func dataVersion(_ queue: DatabaseQueue) -> Int64? {
        try? queue.inDatabase { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") }
    }
}

/// Wakes a follower: at once for commits in this process, within 50 ms for commits by other processes (through the
/// store's ``CrossProcessCommitPoller``, which fires the same signal).
final class SQLiteCommitWaiter: CommitWaiter {
    private var poller: CrossProcessCommitPoller?
    private let signal: CommitSignal
    private var seenGeneration: UInt64

    init(poller: CrossProcessCommitPoller, signal: CommitSignal) {
        self.poller = poller
        self.signal = signal
        self.seenGeneration = signal.current
    }

    func wait(timeout: Double) async {
        let milliseconds = timeout.isFinite ? Int(min(max(timeout, 0), 86_400) * 1000) : 1000
        let g = signal.current
        if g == seenGeneration { await signal.wait(seen: g, milliseconds: milliseconds) }
        seenGeneration = signal.current
    }

    func close() {
        poller?.release()
        poller = nil
    }

    deinit { poller?.release() }
}
