public import Foundation
import GRDB
@_spi(RouteKitBackend) public import RouteKit

/// The embedded default store: one SQLite file in WAL mode, through GRDB.
///
/// - **Durability:** a write (a builder's batch, a save, a delete) is one transaction; when the call returns
///   it survives a killed process. With ``Durability/powerLoss`` it also survives a power cut (SQLite's
///   `synchronous=FULL`: an fsync per commit; see `Benchmarks/README.md` for the measured cost).
/// - **Several processes** may open the same file: writes take SQLite's write lock at their start
///   (`BEGIN IMMEDIATE`) and wait up to ``Options/busyTimeout`` for it.
/// - **Migrations:** a store written by an older RouteKit is upgraded when opened; one written by a newer
///   RouteKit is refused with `RouteKitError.Code.incompatibleStore`.
/// - **Reads are consistent:** a route query reads from a snapshot, so a route replaced mid-read is read whole.
/// - **People:** a store object is one person's view (``SQLiteStore/person``; `PersonID.default` when opened by
///   path): ``SQLiteStore/forPerson(_:)`` gives another person's view of the same file, sharing its connections.
///   Every read and write of a view sees only that person's objects, and its change feed holds only their changes.
public final class SQLiteStore: RouteStore {
    /// When a write counts as done.
    public enum Durability: String, Sendable, CaseIterable {
        /// Survives the process being killed (`synchronous=NORMAL` in WAL mode). The default.
        case processCrash = "process"
        /// Also survives power loss and OS crashes (`synchronous=FULL`): slower.
        case powerLoss = "power"
    }

    /// How to open a store.
    public struct Options: Sendable {
        /// When a write counts as done.
        public var durability: Durability
        /// How long a write waits for another process's write to finish.
        public var busyTimeout: TimeInterval
        /// Runs each write transaction on the calling thread instead of handing it to GRDB's writer thread and
        /// back. That saves two thread switches per write, which lets the batch smoothing job (two writes per
        /// batch of routes, one per route) scale better from one worker to two (the `BatchScaling` benchmark;
        /// figures in `Benchmarks/README.md`). The price: while another connection holds the write lock
        /// (up to ``busyTimeout``), the calling task's thread waits instead of running other tasks. Meant for
        /// command-line batch jobs; leave it off where Swift concurrency's few threads must stay free (a server).
        public var writesOnCallingThread: Bool
        /// Runs each read on the calling thread instead of on one of GRDB's reader threads. In WAL mode a read
        /// never waits for a writer, and skipping the hop saves two thread switches per read, which kept two
        /// batch workers from scaling (`Benchmarks/README.md`). But a long read (a page of 5,000 changes, a
        /// route's chunks) then occupies one of Swift concurrency's few threads (two on a 2-core machine) for its
        /// whole length: leave it off where other tasks must keep running (a server); batch jobs turn it on with
        /// ``writesOnCallingThread``.
        public var readsOnCallingThread: Bool
        /// Creates options.
        public init(
            durability: Durability = .processCrash, busyTimeout: TimeInterval = 30, writesOnCallingThread: Bool = false,
            readsOnCallingThread: Bool = false
        ) {
            self.durability = durability
            self.busyTimeout = busyTimeout
            self.writesOnCallingThread = writesOnCallingThread
            self.readsOnCallingThread = readsOnCallingThread
        }
    }

    /// The file's path.
    package let path: String
    public let storeID: UUID
    let pool: DatabasePool
    let commitSignal: CommitSignal
    let commitPoller: CrossProcessCommitPoller
    let writesOnCallingThread: Bool
    let readsOnCallingThread: Bool
    /// How long a write waits for another's (``Options/busyTimeout``), in milliseconds.
    let busyMilliseconds: Int
    /// The store file's device and inode when it was opened: a write checks that the path still names it.
    let fileIdentity: FileIdentity?
    /// The person this store object reads and writes as (`PersonID.default` when opened by path).
    public let person: PersonID
    /// ``person`` as stored (lowercase uuid text).
    let personKey: String

    /// `PersonID.default` as stored: the person of everything a store written before people holds.
    static let defaultPersonKey = PersonID.default.uuid.lowercaseText

    /// Opens the store at `path`, creating it (and its folder) if needed.
    /// - Throws: `RouteKitError.Code.storage` when the file cannot be opened or is not SQLite;
    ///   `RouteKitError.Code.incompatibleStore` when a newer RouteKit wrote it.
    public init(path: String, options: Options = Options()) throws(RouteKitError) {
        self.path = path
        let signal = CommitSignal()
        self.commitSignal = signal
        self.commitPoller = CrossProcessCommitPoller(path: path, signal: signal)
        self.writesOnCallingThread = options.writesOnCallingThread
        self.readsOnCallingThread = options.readsOnCallingThread
        self.busyMilliseconds = Int((min(max(options.busyTimeout, 0), 86_400) * 1000).rounded())
        self.person = .default
        self.personKey = Self.defaultPersonKey
        var config = Configuration()
        config.busyMode = .timeout(options.busyTimeout)
        config.label = "routekit"
        let synchronous = options.durability == .powerLoss ? "FULL" : "NORMAL"
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            let pool = try DatabasePool(path: path, configuration: config)
            // GRDB sets NORMAL when it switches to WAL; the pragma is per connection, and every write goes
            // through the pool's one writer connection, so setting it there sets it for every write.
            // `secure_delete = FAST` zeroes deleted content wherever that costs no extra write (inside pages that
            // are written anyway), so that old versions of rows do not linger in pages' free space: erasing a
            // person (`erasePerson`, which also zeroes freed pages) then leaves nothing of theirs in the file.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                try db.execute(sql: "PRAGMA secure_delete = FAST")
            }
            let migrator = Schema.migrator
            let known = Set(migrator.migrations)
            let applied = try pool.read { db in try migrator.appliedIdentifiers(db) }
            if let unknown = applied.subtracting(known).sorted().first {
                throw RouteKitError(
                    .incompatibleStore,
                    "the store at \(path) was written by a newer RouteKit (schema '\(unknown)'); upgrade RouteKit")
            }
            try migrator.migrate(pool)
            let id = try pool.write { db -> String in
                if let existing = try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'store_id'") {
                    return existing
                }
                let fresh = UUID().uuidString.lowercased()
                try db.cachedStatement(sql: "INSERT INTO store_info(key, value) VALUES ('store_id', ?)").execute(
                    arguments: [fresh])
                return fresh
            }
            guard let uuid = UUID(uuidString: id) else {
                throw RouteKitError(.incompatibleStore, "the store at \(path) has a malformed store id")
            }
            self.pool = pool
            self.storeID = uuid
            self.fileIdentity = FileIdentity(path: path)
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw Self.storeError("cannot open the store at \(path)", error, path: path)
        }
    }

    /// Another person's view of `store`: the same connections, commit signal and poller.
    private init(sharing store: SQLiteStore, as person: PersonID) {
        self.path = store.path
        self.storeID = store.storeID
        self.pool = store.pool
        self.commitSignal = store.commitSignal
        self.commitPoller = store.commitPoller
        self.writesOnCallingThread = store.writesOnCallingThread
        self.readsOnCallingThread = store.readsOnCallingThread
        self.busyMilliseconds = store.busyMilliseconds
        self.fileIdentity = store.fileIdentity
        self.person = person
        self.personKey = person.uuid.lowercaseText
    }

    /// The same store seen as `person`: a new object sharing this one's connections, commit signal and poller.
    /// Nothing is opened or checked (a person with no objects sees an empty store).
    public func forPerson(_ person: PersonID) -> SQLiteStore {
        SQLiteStore(sharing: self, as: person)
    }

    /// The least free space the store's disk must have for ``checkReady()`` to pass: 1 MiB.
    package static let minimumFreeBytes = 1 << 20

    /// A file's device and inode.
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64

        /// The identity of the file at `path`; `nil` when there is none.
        init?(path: String) {
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
        }
    }

    /// The bytes free to unprivileged writers on the disk of `path`'s folder; `nil` when it cannot be told.
    static func freeBytes(near path: String) -> UInt64? {
        DiskSpace.available(in: (path as NSString).deletingLastPathComponent)
    }

    /// Refuses writes once the store file was deleted or replaced under the running process: SQLite would go on
    /// writing into the unlinked file, and everything acknowledged would be gone at the next start.
    func checkFile() throws(RouteKitError) {
        guard let opened = fileIdentity else { return }
        guard let now = FileIdentity(path: path) else {
            throw RouteKitError(
                .unavailable,
                "the store file \(path) was deleted while in use: writes are refused (restart the process)")
        }
        guard now == opened else {
            throw RouteKitError(
                .unavailable,
                "the store file \(path) was replaced while in use: writes are refused (restart the process)")
        }
    }

    /// The error for a failure of SQLite or the device under it: a full disk is ``RouteKitError/Code/storageFull``,
    /// a device that cannot be written (read-only, I/O error, the file gone) ``RouteKitError/Code/unavailable``,
    /// anything else ``RouteKitError/Code/storage``; the message names what was being done and the store.
    static func storeError(_ what: String, _ error: any Error, path: String) -> RouteKitError {
        if let e = error as? DatabaseError {
            let detail = describe(error)
            let code = e.resultCode.primaryResultCode
            // SQLite reports a full disk as an I/O error where it extends its shared-memory or journal files.
            let looksFull =
                (code == .SQLITE_IOERR || code == .SQLITE_CANTOPEN)
                && (freeBytes(near: path).map { $0 < 64 << 10 } ?? false)
            switch code {
            case _ where code == .SQLITE_FULL || looksFull:
                return RouteKitError(.storageFull, "\(what) failed: the disk holding the store is full (\(detail))")
            case .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
                return RouteKitError(.unavailable, "\(what) failed: the store's device cannot be written (\(detail))")
            default:
                break
            }
        }
        return RouteKitError(.storage, "\(what) failed: \(describe(error))")
    }

    static func describe(_ error: any Error) -> String {
        if let e = error as? DatabaseError { return e.message ?? "SQLite error \(e.resultCode)" }
        if error is CancellationError { return "cancelled (the task asking was cancelled)" }
        return "\(error)"
    }

    // MARK: Transactions

    /// One `BEGIN IMMEDIATE` transaction; a `RouteKitError` thrown inside rolls it back and comes out as is.
    /// Changes recorded inside (``recordDeletion(_:_:person:)``, ``recordAddition(_:_:person:)``) are sealed into one
    /// change-log transaction before the commit, and followers in this process are woken after it.
    func write<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T)
        async throws(RouteKitError) -> T
    {
        try checkFile()
        do {
            let transaction = { @Sendable (db: Database) throws -> (T, Bool) in
                var result: T?
                var recorded = false
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    recorded = try Self.sealChanges(db, token: Int64.random(in: 1...Int64.max))
                    return .commit
                }
                guard let result else { throw RouteKitError(.storage, "\(what): the transaction produced nothing") }
                return (result, recorded)
            }
            let (value, recorded) =
                writesOnCallingThread
                ? try syncWrite(pool, transaction) : try await pool.writeWithoutTransaction(transaction)
            if recorded { commitSignal.fire() }
            return value
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw Self.storeError("\(what) in the store at \(path)", error, path: path)
        }
    }

    func read<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T)
        async throws(RouteKitError) -> T
    {
        do {
            // On one of GRDB's reader threads, the calling task suspended meanwhile; on the calling thread for batch
            // jobs (see Options.readsOnCallingThread).
            return readsOnCallingThread ? try syncRead(pool, body) : try await pool.read(body)
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw Self.storeError("\(what) in the store at \(path)", error, path: path)
        }
    }

    // MARK: Encoding rows

    static func source(_ name: String) throws -> Source { try StoredRecord.source(name) }

    static func uuid(_ text: String) throws -> UUID { try StoredRecord.uuid(text) }

    static func workout(_ row: Row) throws -> Workout {
        try StoredRecord.workout(
            uuid: row["uuid"], source: row["source"], syncID: row["sync_id"], syncVersion: row["sync_version"],
            body: row["body"])
    }

    static func route(_ row: Row) throws -> RouteSample {
        try StoredRecord.route(
            uuid: row["uuid"], workout: row["workout_uuid"], source: row["source"], syncID: row["sync_id"],
            syncVersion: row["sync_version"], locationCount: row["location_count"], body: row["body"])
    }

    static func key(_ id: UUID) -> String { id.lowercaseText }

    /// The rows of `table` of `person` whose columns equal the given values (nil values do not filter), in saving
    /// order (`descending`: newest first), those after the row of uuid `after` in that order when given (keyset
    /// paging; nothing when that row is gone or another person's).
    static func list(
        _ db: Database, _ table: String, person: String, _ equal: KeyValuePairs<String, String?>,
        condition: String = "1", after: String? = nil, descending: Bool = false, limit: Int?
    ) throws -> [Row] {
        var sql = "SELECT * FROM \(table) WHERE person = ? AND \(condition)"
        var args: [(any DatabaseValueConvertible)?] = [person]
        for (column, value) in equal {
            guard let value else { continue }
            sql += " AND \(column) = ?"
            args.append(value)
        }
        if let after {
            sql += " AND id \(descending ? "<" : ">") (SELECT id FROM \(table) WHERE uuid = ? AND person = ?)"
            args += [after, person]
        }
        sql += descending ? " ORDER BY id DESC" : " ORDER BY id"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(args))
    }

    // MARK: Workouts

    public func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome {
        let body = try StoredRecord.body(of: workout)
        let person = personKey
        return try await write("saving workout \(workout.id)") { db in
            let (taken, current) = try Self.workoutIdentity(db, of: workout, person: person)
            let currentRoutes =
                try current.map { try Self.currentRoutes(db, ofWorkout: $0.id, person: person) } ?? []
            let plan = try StoreRules.saveWorkout(
                workout, body: body, uuidTaken: taken, current: current, currentRoutes: currentRoutes)
            try Self.apply(plan.writes, db, person: person)
            return plan.outcome
        }
    }

    /// Whether `workout`'s uuid is taken (by anyone: uuids are unique in the store), and `person`'s current workout
    /// of its sync identity with its version (sync identities are per person).
    static func workoutIdentity(_ db: Database, of workout: Workout, person: String) throws -> (
        taken: Bool, current: (id: UUID, version: Int64)?
    ) {
        let taken =
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM workout WHERE uuid = ?"), arguments: [Self.key(workout.id)])
            != nil
        guard let sync = workout.sync,
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT uuid, sync_version FROM workout WHERE person = ? AND source = ? AND sync_id = ?"),
                arguments: [person, workout.source.name, sync.identifier])
        else { return (taken, nil) }
        return (taken, (try Self.uuid(row["uuid"]), row["sync_version"]))
    }

    public func workout(id: UUID) async throws(RouteKitError) -> Workout? {
        let person = personKey
        return try await read("reading workout \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM workout WHERE uuid = ? AND person = ?"),
                arguments: [Self.key(id), person]
            ).map(Self.workout)
        }
    }

    public func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout] {
        let person = personKey
        return try await read("listing workouts") { db in
            try Self.list(
                db, "workout", person: person, ["source": filter.source?.name, "sync_id": filter.syncIdentifier],
                after: filter.after.map(Self.key), descending: filter.newestFirst, limit: filter.limit
            ).map(Self.workout)
        }
    }

    public func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError) {
        let person = personKey
        try await write("deleting workout \(id)") { db in
            try Self.apply(
                StoreRules.deleteWorkout(
                    id, as: source, owner: Self.workoutSource(db, id, person: person),
                    currentRoutes: Self.currentRoutes(db, ofWorkout: id, person: person)),
                db, person: person)
        }
    }

    // MARK: Routes

    public func route(id: UUID) async throws(RouteKitError) -> RouteSample? {
        let person = personKey
        return try await read("reading route \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM route WHERE uuid = ? AND person = ?"),
                arguments: [Self.key(id), person]
            ).map(Self.route)
        }
    }

    public func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool {
        let person = personKey
        return try await read("reading route \(id)") { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT current FROM route WHERE uuid = ? AND person = ?"),
                arguments: [Self.key(id), person]) ?? false
        }
    }

    public func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample] {
        let person = personKey
        return try await read("listing routes") { db in
            try Self.list(
                db, "route", person: person,
                [
                    "workout_uuid": filter.workout.map(Self.key), "source": filter.source?.name,
                    "sync_id": filter.syncIdentifier,
                ], condition: "current = 1", after: filter.after.map(Self.key), descending: filter.newestFirst,
                limit: filter.limit
            ).map(Self.route)
        }
    }

    public func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError) {
        let person = personKey
        try await write("deleting route \(id)") { db in
            let current = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM route WHERE uuid = ? AND person = ? AND current = 1"),
                arguments: [Self.key(id), person]
            ).map(Self.routeRow)
            try Self.apply(StoreRules.deleteRoute(id, as: source, current: current), db, person: person)
        }
    }

    @_spi(RouteKitBackend) public func routeChunks(ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?)
        async throws(RouteKitError) -> any ChunkCursor
    {
        let person = personKey
        @Sendable func ids(_ db: Database) throws -> [Int64] {
            guard
                let container = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT container FROM route WHERE uuid = ? AND person = ?"),
                    arguments: [Self.key(id), person])
            else { throw RouteKitError(.notFound, "no route \(id)") }
            var sql = "SELECT id FROM chunk WHERE container = ? AND kind = ?"
            var args: [(any DatabaseValueConvertible)?] = [container, kind.description]
            if let interval {
                // StoreRules.readNeeds in SQL: chunks without times hold no location of an interval.
                let window = StoreRules.chunkSeconds(of: interval)
                sql += " AND max_s >= ? AND min_s <= ?"
                args += [window.from, window.through]
            }
            sql += " ORDER BY seq"
            return try Int64.fetchAll(db, sql: sql, arguments: StatementArguments(args))
        }
        do {
            // Most routes: everything in one read transaction.
            let small = try await read("reading route \(id)") { db -> [StoredChunk]? in
                let found = try ids(db)
                guard found.count <= StoreRules.wholeReadChunks else { return nil }
                var chunks: [StoredChunk] = []
                chunks.reserveCapacity(found.count)
                for chunkID in found {
                    guard
                        let row = try Row.fetchOne(
                            db.cachedStatement(sql: "SELECT * FROM chunk WHERE id = ?"), arguments: [chunkID])
                    else { throw RouteKitError(.storage, "a chunk vanished inside a read transaction") }
                    chunks.append(try Self.chunk(row, withData: true))
                }
                return chunks
            }
            if let small { return ArrayChunkCursor(small) }
            let snapshot = try pool.makeSnapshot()
            let found =
                readsOnCallingThread ? try syncRead(snapshot) { db in try ids(db) } : try await snapshot.read(ids)
            return SnapshotCursor(snapshot: snapshot, ids: found, onCallingThread: readsOnCallingThread)
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw RouteKitError(.storage, "reading route \(id) failed: \(Self.describe(error))")
        }
    }

    // MARK: Series

    @_spi(RouteKitBackend) public func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        let person = personKey
        try await write("saving series of workout \(id)") { db in
            let next =
                try Int.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT MAX(seq) + 1 FROM chunk WHERE container = ?
                                AND EXISTS(SELECT 1 FROM workout WHERE uuid = ? AND person = ?)
                            """),
                    arguments: [StoreRules.seriesContainer(of: id), Self.key(id), person])
                ?? 0
            try Self.apply(
                StoreRules.appendSeries(
                    chunks, toWorkout: id, as: source, owner: Self.workoutSource(db, id, person: person),
                    nextSequence: next),
                db, person: person)
        }
    }

    public func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType] {
        let person = personKey
        return try await read("reading series of workout \(id)") { db in
            let kinds = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT DISTINCT s.kind FROM series s JOIN workout w ON w.uuid = s.workout_uuid
                        WHERE s.workout_uuid = ? AND w.person = ?
                        """),
                arguments: [Self.key(id), person])
            let known = Set(kinds)
            return QuantityType.all.filter { known.contains($0.identifier) }
        }
    }

    @_spi(RouteKitBackend) public func workoutChunks(ofWorkout id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> any ChunkCursor
    {
        let person = personKey
        do {
            let snapshot = try pool.makeSnapshot()
            @Sendable func ids(_ db: Database) throws -> [Int64] {
                try Int64.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT c.id FROM chunk c JOIN series s ON c.container = s.container AND c.kind = s.kind
                                JOIN workout w ON w.uuid = s.workout_uuid
                            WHERE s.workout_uuid = ? AND s.kind = ? AND w.person = ?
                            ORDER BY c.min_s, c.min_ns, s.id, c.seq
                            """), arguments: [Self.key(id), kind.description, person])
            }
            let found =
                readsOnCallingThread ? try syncRead(snapshot) { db in try ids(db) } : try await snapshot.read(ids)
            return SnapshotCursor(snapshot: snapshot, ids: found, onCallingThread: readsOnCallingThread)
        } catch {
            throw RouteKitError(.storage, "reading series of workout \(id) failed: \(Self.describe(error))")
        }
    }

    // MARK: Chunks

    static func insert(_ db: Database, _ chunk: StoredChunk, container: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO chunk(container, kind, seq, count, min_s, min_ns, max_s, max_ns, data)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            container, chunk.kind.description, chunk.sequence, chunk.count, chunk.minTime?.seconds,
            chunk.minTime.map { Int64($0.nanoseconds) }, chunk.maxTime?.seconds,
            chunk.maxTime.map { Int64($0.nanoseconds) }, Data(chunk.bytes),
        ])
    }

    static func chunk(_ row: Row, withData: Bool) throws -> StoredChunk {
        let kindName: String = row["kind"]
        guard let kind = ChunkKind(name: kindName) else {
            throw RouteKitError(.incompatibleStore, "the store holds chunks of an unknown kind '\(kindName)'")
        }
        func instant(_ s: String, _ ns: String) -> Instant? {
            let seconds: Int64? = row[s]
            let nanos: Int64? = row[ns]
            return seconds.map { Instant(seconds: $0, nanoseconds: Int32(truncatingIfNeeded: nanos ?? 0)) }
        }
        let data: Data? = withData ? row["data"] : nil
        return StoredChunk(
            kind: kind, sequence: row["seq"], count: row["count"], minTime: instant("min_s", "min_ns"),
            maxTime: instant("max_s", "max_ns"), bytes: data.map { [UInt8]($0) } ?? [])
    }

    // MARK: Builders

    @_spi(RouteKitBackend) public func createBuilder(_ b: PendingBuilder) async throws(RouteKitError) {
        let metadata = try StoredRecord.encode(metadata: b.metadata)
        let person = personKey
        try await write("creating route builder \(b.id)") { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO builder(uuid, person, source, location_order, origin_kind, origin_key, origin_label,
                        location_count, checkpoint, claim, metadata, created, updated)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                Self.key(b.id), person, b.source.name, b.order.rawValue, b.origin?.kind, b.origin?.key,
                b.origin?.label, b.progress.locationCount, b.progress.checkpoint, Self.key(b.claim), metadata,
                b.created.timeIntervalSince1970,
                b.updated.timeIntervalSince1970,
            ])
        }
    }

    static func builder(_ db: Database, _ row: Row) throws -> PendingBuilder {
        let key: String = row["uuid"]
        let kind: String? = row["origin_kind"]
        let originKey: String? = row["origin_key"]
        let orderName: String = row["location_order"]
        // One read of the builder's chunks by kind: the next sequence number, and the samples and events it holds.
        let kinds = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT kind, SUM(count) AS held_count, MAX(seq) AS last_seq FROM chunk WHERE container = ?
                    GROUP BY kind
                    """),
            arguments: [key])
        var progress = BuilderProgress(locationCount: row["location_count"], checkpoint: row["checkpoint"])
        var next = 0
        for k in kinds {
            let name: String = k["kind"]
            let held: Int = k["held_count"]
            let last: Int = k["last_seq"]
            next = max(next, last + 1)
            progress.count(held, ofStoredKind: name)
        }
        return PendingBuilder(
            id: try uuid(key), source: try source(row["source"]),
            order: LocationOrder(rawValue: orderName) ?? .insertion,
            origin: kind.map { BuilderOrigin(kind: $0, key: originKey ?? "", label: row["origin_label"]) },
            progress: progress,
            metadata: try StoredRecord.decodeMetadata(row["metadata"]),
            created: Date(timeIntervalSince1970: row["created"]), updated: Date(timeIntervalSince1970: row["updated"]),
            nextSequence: next, claim: try uuid(row["claim"]))
    }

    public func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder? {
        let person = personKey
        return try await read("reading route builder \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM builder WHERE uuid = ? AND person = ?"),
                arguments: [Self.key(id), person]
            ).map { try Self.builder(db, $0) }
        }
    }

    public func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder] {
        let person = personKey
        return try await read("listing route builders") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM builder WHERE person = ? ORDER BY created, uuid"),
                arguments: [person]
            ).map { try Self.builder(db, $0) }
        }
    }

    /// Checks that `claim` holds `person`'s pending builder `id`.
    static func checkClaim(_ db: Database, _ id: UUID, _ claim: UUID, person: String) throws {
        try StoreRules.checkClaim(
            id,
            held: String.fetchOne(
                db.cachedStatement(sql: "SELECT claim FROM builder WHERE uuid = ? AND person = ?"),
                arguments: [Self.key(id), person]),
            by: claim)
    }

    /// The condition that the container `?1` is a pending builder or a route of the person `?2` (for reads of a
    /// builder's chunks by the caller's id).
    static let ownedContainer = """
        container IN (SELECT uuid FROM builder WHERE uuid = ?1 AND person = ?2
            UNION ALL SELECT container FROM route WHERE container = ?1 AND person = ?2)
        """

    @_spi(RouteKitBackend) public func claimBuilder(id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID)
        async throws(RouteKitError) -> Bool
    {
        let person = personKey
        return try await write("claiming route builder \(id)") { db in
            try db.cachedStatement(
                sql: "UPDATE builder SET claim = ? WHERE uuid = ? AND person = ? AND location_count = ? AND claim = ?"
            ).execute(arguments: [Self.key(claim), Self.key(id), person, expectedLocationCount, Self.key(previous)])
            return db.changesCount == 1
        }
    }

    @_spi(RouteKitBackend) public func appendToBuilder(
        id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
    ) async throws(RouteKitError) {
        let metadataJSON = try StoredRecord.encode(metadata: metadata)
        let now = Date().timeIntervalSince1970
        let person = personKey
        try await write("storing a batch of route builder \(id)") { db in
            try Self.checkClaim(db, id, claim, person: person)
            try db.cachedStatement(
                sql: """
                    UPDATE builder SET location_count = ?, checkpoint = ?, metadata = ?, updated = ?
                    WHERE uuid = ? AND person = ?
                    """
            ).execute(arguments: [
                progress.locationCount, progress.checkpoint, metadataJSON, now, Self.key(id), person,
            ])
            for chunk in chunks { try Self.insert(db, chunk, container: Self.key(id)) }
        }
    }

    @_spi(RouteKitBackend) public func builderChunk(id: UUID, kind: ChunkKind, sequence: Int)
        async throws(RouteKitError) -> StoredChunk?
    {
        let person = personKey
        return try await read("reading route builder \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM chunk WHERE container = ?1 AND kind = ?3 AND seq = ?4
                            AND \(Self.ownedContainer)
                        """),
                arguments: [Self.key(id), person, kind.description, sequence]
            ).map { try Self.chunk($0, withData: true) }
        }
    }

    @_spi(RouteKitBackend) public func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> [StoredChunk]
    {
        let person = personKey
        return try await read("reading route builder \(id)") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT kind, seq, count, min_s, min_ns, max_s, max_ns FROM chunk
                        WHERE container = ?1 AND kind = ?3 AND \(Self.ownedContainer) ORDER BY seq
                        """), arguments: [Self.key(id), person, kind.description]
            ).map { try Self.chunk($0, withData: false) }
        }
    }

    @_spi(RouteKitBackend) public func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int])
        async throws(RouteKitError)
    {
        let person = personKey
        try await write("merging route builder \(id)") { db in
            try Self.checkClaim(db, id, claim, person: person)
            for s in sequences {
                try db.cachedStatement(sql: "DELETE FROM chunk WHERE container = ? AND kind = 'locations' AND seq = ?")
                    .execute(arguments: [Self.key(id), s])
            }
            try db.cachedStatement(sql: "UPDATE chunk SET kind = 'locations' WHERE container = ? AND kind = 'staging'")
                .execute(arguments: [Self.key(id)])
        }
    }

    @_spi(RouteKitBackend) public func dropStaging(builder id: UUID) async throws(RouteKitError) {
        let person = personKey
        try await write("cleaning route builder \(id)") { db in
            try db.cachedStatement(
                sql: "DELETE FROM chunk WHERE container = ?1 AND kind = 'staging' AND \(Self.ownedContainer)"
            ).execute(arguments: [Self.key(id), person])
        }
    }

    @_spi(RouteKitBackend) public func saveRoute(
        _ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?
    )
        async throws(RouteKitError) -> SaveOutcome
    {
        let body = try StoredRecord.body(of: route)
        try StoreRules.checkRouteChunks(chunks)
        let person = personKey
        return try await write("saving route \(route.id)") { db in
            let plan = try StoreRules.saveRoute(
                route, chunks: chunks, body: body, releasing: claim,
                workoutSource: Self.workoutSource(db, route.workoutID, person: person),
                current: Self.currentVersion(db, of: route, person: person))
            try Self.apply(plan.writes, db, person: person)
            return plan.outcome
        }
    }

    @_spi(RouteKitBackend) public func finishBuilder(
        id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?
    ) async throws(RouteKitError) -> SaveOutcome {
        let body = try StoredRecord.body(of: route)
        let workoutBody = try creating.map { w throws(RouteKitError) in try StoredRecord.body(of: w) }
        let person = personKey
        return try await write("finishing route builder \(id)") { db in
            let new = try creating.map { w in
                let (taken, current) = try Self.workoutIdentity(db, of: w, person: person)
                return NewWorkoutRow(workout: w, body: workoutBody ?? "", uuidTaken: taken, current: current)
            }
            let plan = try StoreRules.finishBuilder(
                id, claim: claim, route: route, body: body, sequenceOrder: sequenceOrder,
                builder: Self.builderRow(db, id, person: person),
                workoutSource: Self.workoutSource(db, route.workoutID, person: person),
                current: Self.currentVersion(db, of: route, person: person), creating: new)
            try Self.apply(plan.writes, db, person: person)
            return plan.outcome
        }
    }

    @_spi(RouteKitBackend) public func claimWork(key: String, holder: UUID, seconds: Double) async throws(RouteKitError)
        -> Bool
    {
        try await claimWork(keys: [key], holder: holder, seconds: seconds).contains(key)
    }

    /// Takes or renews `key` for `holder` unless another holder's claim is live; whether the holder now holds it.
    static func claim(_ db: Database, key: String, holder: String, now: Double, seconds: Double) throws -> Bool {
        try db.cachedStatement(
            sql: """
                INSERT INTO lease(key, holder, expires) VALUES (?1, ?2, ?3)
                ON CONFLICT(key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                WHERE lease.expires < ?4 OR lease.holder = excluded.holder
                """
        ).execute(arguments: [key, holder, now + seconds, now])
        return try String.fetchOne(db.cachedStatement(sql: "SELECT holder FROM lease WHERE key = ?"), arguments: [key])
            == holder
    }

    @_spi(RouteKitBackend) public func claimWork(keys: [String], holder: UUID, seconds: Double)
        async throws(RouteKitError) -> Set<String>
    {
        try StoreRules.checkClaimSeconds(seconds)
        if keys.isEmpty { return [] }
        let now = Date().timeIntervalSince1970
        return try await write("claiming \(keys.count == 1 ? "work \(keys[0])" : "\(keys.count) work keys")") { db in
            let me = Self.key(holder)
            return try Set(keys.filter { try Self.claim(db, key: $0, holder: me, now: now, seconds: seconds) })
        }
    }

    @_spi(RouteKitBackend) public func releaseWork(key: String, holder: UUID) async throws(RouteKitError) {
        try await write("releasing work \(key)") { db in
            try db.cachedStatement(sql: "DELETE FROM lease WHERE key = ? AND holder = ?").execute(arguments: [
                key, Self.key(holder),
            ])
        }
    }

    public func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError)
        -> RouteSample?
    {
        let person = personKey
        return try await read("reading the raw version of \(syncIdentifier)") { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM route WHERE person = ? AND source = ? AND sync_id = ? AND raw = 1
                        ORDER BY sync_version DESC LIMIT 1
                        """), arguments: [person, source.name, syncIdentifier]
            ).map(Self.route)
        }
    }

    public func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone] {
        let person = personKey
        let rows = try await read("reading the privacy zones of \(source)") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT latitude, longitude, radius FROM privacy_zone WHERE person = ? AND source = ?
                        ORDER BY id
                        """),
                arguments: [person, source.name]
            ).map { row -> (Double, Double, Double) in (row["latitude"], row["longitude"], row["radius"]) }
        }
        var zones: [PrivacyZone] = []
        for (lat, lon, radius) in rows {
            do {
                zones.append(try PrivacyZone(latitude: lat, longitude: lon, radiusMetres: radius))
            } catch {
                throw RouteKitError(.storage, "a stored privacy zone of \(source) is invalid: \(error.message)")
            }
        }
        return zones
    }

    public func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError) {
        let person = personKey
        try await write("setting the privacy zones of \(source)") { db in
            try db.cachedStatement(sql: "DELETE FROM privacy_zone WHERE person = ? AND source = ?").execute(
                arguments: [person, source.name])
            for z in zones {
                try db.cachedStatement(
                    sql: "INSERT INTO privacy_zone(person, source, latitude, longitude, radius) VALUES (?, ?, ?, ?, ?)"
                ).execute(arguments: [person, source.name, z.latitude, z.longitude, z.radiusMetres])
            }
        }
    }

    public func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings {
        let person = personKey
        let body = try await read("reading the zone settings of \(source)") { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM zone_settings WHERE person = ? AND source = ?"),
                arguments: [person, source.name])
        }
        return try body.map(StoredRecord.zoneSettings) ?? ZoneSettings()
    }

    public func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError) {
        try settings.validate()
        let body = try StoredRecord.body(of: settings)
        let person = personKey
        try await write("setting the zone settings of \(source)") { db in
            if settings.isEmpty {
                try db.cachedStatement(sql: "DELETE FROM zone_settings WHERE person = ? AND source = ?").execute(
                    arguments: [person, source.name])
            } else {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO zone_settings(person, source, body) VALUES (?, ?, ?)
                        ON CONFLICT(person, source) DO UPDATE SET body = excluded.body
                        """
                ).execute(arguments: [person, source.name, body])
            }
        }
    }

    public func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings {
        let person = personKey
        let body = try await read("reading the zone settings of workout \(id)") { db in
            try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT z.body FROM workout_zone_settings z JOIN workout w ON w.uuid = z.workout_uuid
                        WHERE z.workout_uuid = ? AND w.person = ?
                        """),
                arguments: [Self.key(id), person])
        }
        return try body.map(StoredRecord.zoneSettings) ?? ZoneSettings()
    }

    public func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try settings.validate()
        let body = try StoredRecord.body(of: settings)
        let person = personKey
        try await write("setting the zone settings of workout \(id)") { db in
            guard let owner = try Self.workoutSource(db, id, person: person) else {
                throw RouteKitError(.notFound, "no workout \(id)")
            }
            try StoreRules.checkOwner(owner, of: "workout \(id)", is: source)
            if settings.isEmpty {
                try db.cachedStatement(sql: "DELETE FROM workout_zone_settings WHERE workout_uuid = ?").execute(
                    arguments: [Self.key(id)])
            } else {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO workout_zone_settings(workout_uuid, body) VALUES (?, ?)
                        ON CONFLICT(workout_uuid) DO UPDATE SET body = excluded.body
                        """
                ).execute(arguments: [Self.key(id), body])
            }
        }
    }

    public func relateEffort(_ score: EffortScore) async throws(RouteKitError) {
        let person = personKey
        try await write("relating an effort score to workout \(score.workoutID)") { db in
            guard try Self.workoutSource(db, score.workoutID, person: person) != nil else {
                throw RouteKitError(.notFound, "workout \(score.workoutID) is not saved")
            }
            try db.cachedStatement(
                sql: "INSERT INTO effort(uuid, workout_uuid, source, score, manual, created) VALUES (?, ?, ?, ?, ?, ?)"
            ).execute(arguments: [
                Self.key(score.id), Self.key(score.workoutID), score.source.name, score.score, score.isManual,
                score.created.timeIntervalSince1970,
            ])
            try Self.recordAddition(
                db, .effort(id: score.id, workout: score.workoutID, source: score.source.name), person: person)
        }
    }

    public func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError) {
        let person = personKey
        try await write("unrelating effort score \(id)") { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT e.source, e.workout_uuid FROM effort e JOIN workout w ON w.uuid = e.workout_uuid
                            WHERE e.uuid = ? AND w.person = ?
                            """), arguments: [Self.key(id), person])
            else { throw RouteKitError(.notFound, "no effort score \(id)") }
            let owner: String = row["source"]
            let workout: String = row["workout_uuid"]
            try StoreRules.checkOwner(owner, of: "effort score \(id)", is: source)
            try Self.recordDeletion(db, .effort(id: id, workout: try Self.uuid(workout), source: owner), person: person)
            try db.cachedStatement(sql: "DELETE FROM effort WHERE uuid = ?").execute(arguments: [Self.key(id)])
        }
    }

    public func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore] {
        let person = personKey
        return try await read("reading effort scores of workout \(id)") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT e.* FROM effort e JOIN workout w ON w.uuid = e.workout_uuid
                        WHERE e.workout_uuid = ? AND w.person = ? ORDER BY e.created, e.id
                        """),
                arguments: [Self.key(id), person]
            ).map(Self.effort)
        }
    }

    static func effort(_ row: Row) throws -> EffortScore {
        try EffortScore(
            id: try uuid(row["uuid"]), workoutID: try uuid(row["workout_uuid"]), source: try source(row["source"]),
            score: row["score"], isManual: row["manual"], created: Date(timeIntervalSince1970: row["created"]))
    }

    public func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError) {
        let person = personKey
        try await write("discarding route builder \(id)") { db in
            try Self.apply(
                StoreRules.discardBuilder(id, as: source, owner: Self.builderRow(db, id, person: person)?.source), db,
                person: person)
        }
    }
}

/// A snapshot read without a hop to another executor (the reads are a few milliseconds at most).
func syncRead<T>(_ snapshot: DatabaseSnapshot, _ body: (Database) throws -> T) throws -> T {
    try snapshot.read(body)
}

/// A write on the calling thread (GRDB's synchronous overload, chosen outside `async` code).
func syncWrite<T>(_ pool: DatabasePool, _ body: (Database) throws -> T) throws -> T {
    try pool.writeWithoutTransaction(body)
}

/// A read on the calling thread (GRDB's synchronous overload; outside `async` code so that it is the one chosen).
func syncRead<T>(_ pool: DatabasePool, _ body: (Database) throws -> T) throws -> T {
    try pool.read(body)
}

/// Reads chunks by row id from a snapshot taken when the query started, a few at a time (one snapshot read
/// per group keeps the per-chunk cost low).
final class SnapshotCursor: ChunkCursor {
    private var snapshot: DatabaseSnapshot?
    private let ids: [Int64]
    private var position = 0
    private var ready: [StoredChunk] = []
    private var readyIndex = 0
    private let onCallingThread: Bool
    static let group = 8

    /// A cursor over the chunks `ids` of `snapshot`, read on the calling thread or on GRDB's reader thread (see
    /// ``SQLiteStore/Options/readsOnCallingThread``).
    init(snapshot: DatabaseSnapshot, ids: [Int64], onCallingThread: Bool) {
        self.snapshot = snapshot
        self.ids = ids
        self.onCallingThread = onCallingThread
    }

    func next() async throws(RouteKitError) -> StoredChunk? {
        if readyIndex < ready.count {
            defer { readyIndex += 1 }
            return ready[readyIndex]
        }
        guard let snapshot, position < ids.count else {
            close()
            return nil
        }
        let wanted = Array(ids[position..<min(position + Self.group, ids.count)])
        position += wanted.count
        do {
            @Sendable func fetch(_ db: Database) throws -> [Int64: StoredChunk] {
                var byID: [Int64: StoredChunk] = [:]
                for row in try Row.fetchAll(
                    db, sql: "SELECT * FROM chunk WHERE id IN (\(wanted.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(wanted))
                {
                    byID[row["id"]] = try SQLiteStore.chunk(row, withData: true)
                }
                return byID
            }
            let byID = onCallingThread ? try syncRead(snapshot, fetch) : try await snapshot.read(fetch)
            ready = []
            for id in wanted {
                guard let chunk = byID[id] else { throw RouteKitError(.storage, "a chunk vanished from a snapshot") }
                ready.append(chunk)
            }
            readyIndex = 1
            return ready[0]
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw RouteKitError(.storage, "reading a chunk failed: \(SQLiteStore.describe(error))")
        }
    }

    func close() {
        snapshot = nil
        ready = []
    }
}

extension SQLiteStore: StoreReadiness {
    /// Checks that the store file is still the one opened, that its disk has at least ``minimumFreeBytes`` free,
    /// and that a small write commits (a row of `store_info`).
    package func checkReady() async throws(RouteKitError) {
        try checkFile()
        if let free = Self.freeBytes(near: path), free < UInt64(Self.minimumFreeBytes) {
            throw RouteKitError(.storageFull, "the disk holding the store at \(path) has \(free) bytes free")
        }
        let now = String(Date().timeIntervalSince1970)
        _ = try await write("checking that the store can be written") { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO store_info(key, value) VALUES ('ready_probe', ?)
                    ON CONFLICT(key) DO UPDATE SET value = excluded.value
                    """
            ).execute(arguments: [now])
            return true
        }
    }
}
