#if Postgres
    public import Foundation
    import NIOCore
    import NIOSSL
    import PostgresNIO
    @_spi(RouteKitBackend) public import RouteKit
    public import Logging
    public import ServiceLifecycle

    /// The shared store on PostgreSQL, through postgres-nio: the same `RouteStore` semantics as the embedded
    /// SQLite store, for importers, batch workers and consumers on many machines.
    ///
    /// - **Opening:** `PostgresStore(url: "postgres://user:password@host:5432/database?sslmode=prefer")`. The schema is
    ///   created (or upgraded) when the store opens, under an advisory lock, so several processes may open a new
    ///   database at once. A database written by a newer RouteKit is refused (`RouteKitError.Code.incompatibleStore`).
    /// - **Connections:** a pool (``Options/maximumConnections``). A server that cannot be reached gives
    ///   `RouteKitError.Code.unavailable`; the pool reconnects by itself, and live updates
    ///   (`RouteStore.changeUpdates(since:matching:limit:)`) wait and resume from their anchor.
    /// - **Concurrent writers:** every write is one transaction. Writers of the same sync identity are serialised by
    ///   a transaction-scoped advisory lock on the identity, so two importers of one route never both insert it.
    /// - **The change feed in commit order:** see ``PostgresStore`` (ChangeLog.swift in this module).
    /// - **People:** a store opened by URL is `PersonID.default`'s view; ``forPerson(_:)`` gives another person's
    ///   view of the same pool. Every row of an object carries its person, every statement that takes an id from the
    ///   caller has the person in its `WHERE` clause (another person's object is not found, exactly as a missing
    ///   one), and each person's change feed has a head of its own (`person_feed`, moved by the same statement that
    ///   takes a transaction's positions, so it is never ahead of what that person can read). The people themselves
    ///   (`PeopleStore`) are the operator's, whichever view is asked.
    /// - **TLS:** `sslmode=disable`, `prefer` (the default, as libpq: TLS when the server offers it, unverified),
    ///   `require` (TLS, unverified) or `verify-full` (TLS, certificate and host name verified against the system's
    ///   trust roots).
    /// - **Logging:** the driver's log lines go to ``Options/logger`` (quiet by default: only critical ones).
    /// - **Lifetime:** the pool runs from `init` until ``close()``; as a `Service` (swift-service-lifecycle) in a
    ///   `ServiceGroup`, ``run()`` returns at graceful shutdown or cancellation and closes it.
    public final class PostgresStore: RouteStore, Service {
        /// How to open a store.
        public struct Options: Sendable {
            /// Connections the pool opens at most (each process: batch workers and importers use one at a time each).
            public var maximumConnections: Int
            /// How long opening a connection may take.
            public var connectTimeout: Duration
            /// Where the driver (postgres-nio: the pool, connections, the `LISTEN` connection) logs. The default logs
            /// only critical events; a server passes its own logger, at its own level. At `debug` and below the
            /// driver logs statements (their text, never their bound values).
            public var logger: Logger

            /// Connections the pool keeps open however long they stay idle (at most ``maximumConnections``); the
            /// others close after 60 s without use. A long-running server keeps them all (see
            /// ``keepAliveInterval``).
            public var minimumConnections: Int
            /// How often a connection that stays idle runs `SELECT 1`, so that the server and the network between
            /// see it alive; `nil`: never.
            ///
            /// Memory: each time a connection goes back to the pool, the driver starts a timer for this check and,
            /// above ``minimumConnections``, one for the 60 s idle timeout; the next use cancels them, but Swift keeps
            /// a cancelled timer's memory until its deadline. A process running many statements a second so holds
            /// memory in proportion to its statements per second times (this interval + the idle timeout). Keeping
            /// every connection and checking every 5 s (``longRunning(maximumConnections:logger:)``, what `routekit
            /// serve` uses) bounds it; `Benchmarks/README.md` has what `serve` measured both ways.
            public var keepAliveInterval: Duration?

            /// Creates options.
            public init(
                maximumConnections: Int = 8, connectTimeout: Duration = .seconds(10),
                logger: Logger = PostgresStore.quietLogger, minimumConnections: Int = 0,
                keepAliveInterval: Duration? = .seconds(30)
            ) {
                self.maximumConnections = maximumConnections
                self.connectTimeout = connectTimeout
                self.logger = logger
                self.minimumConnections = minimumConnections
                self.keepAliveInterval = keepAliveInterval
            }

            /// For a process that runs for a long time under load (`routekit serve`): every connection kept open,
            /// checked every 5 s when idle (see ``keepAliveInterval``).
            public static func longRunning(maximumConnections: Int = 8, logger: Logger = PostgresStore.quietLogger)
                -> Options
            {
                Options(
                    maximumConnections: maximumConnections, logger: logger, minimumConnections: maximumConnections,
                    keepAliveInterval: .seconds(5))
            }
        }

        /// What every view of one opened store shares (``forPerson(_:)``): the pool and the task that runs it, the
        /// commit signal followers wait on. The pool closes when the last view goes, or at ``close()``.
        final class Shared: Sendable {
            let storeID: UUID
            let label: String
            let client: PostgresClient
            let endpoint: Endpoint
            let commitSignal = CommitSignal()
            let runner: Task<Void, Never>

            init(storeID: UUID, label: String, client: PostgresClient, endpoint: Endpoint, runner: Task<Void, Never>) {
                self.storeID = storeID
                self.label = label
                self.client = client
                self.endpoint = endpoint
                self.runner = runner
            }

            deinit { runner.cancel() }
        }

        let shared: Shared
        /// The person this view reads and writes as (`PersonID.default` for a store opened by URL).
        public let person: PersonID
        /// ``person`` as the tables keep it (lowercase uuid text).
        let personKey: String

        public var storeID: UUID { shared.storeID }
        /// The server and database, without the password (what messages and listings print).
        package var label: String { shared.label }
        var client: PostgresClient { shared.client }
        var endpoint: Endpoint { shared.endpoint }
        var commitSignal: CommitSignal { shared.commitSignal }

        /// The default driver logger: `routekit.postgres`, critical events only.
        public static let quietLogger: Logger = {
            var l = Logger(label: "routekit.postgres")
            l.logLevel = .critical
            return l
        }()
        /// The `NOTIFY` channel every commit that recorded changes signals (a wake-up hint only).
        static let channel = "routekit_changes"

        /// Opens the store in the database `url` names, creating its schema if needed, as `PersonID.default`.
        /// - Throws: `RouteKitError.Code.invalidArgument` for a URL that is not a PostgreSQL URL;
        ///   `RouteKitError.Code.unavailable` when the server cannot be reached; `RouteKitError.Code.storage`
        ///   when it refuses (authentication, a missing database); `RouteKitError.Code.incompatibleStore`.
        public init(url: String, options: Options = Options()) async throws(RouteKitError) {
            var endpoint = try Endpoint(url: url)
            endpoint.logger = options.logger
            var configuration = PostgresClient.Configuration(
                host: endpoint.host, port: endpoint.port, username: endpoint.user, password: endpoint.password,
                database: endpoint.database, tls: endpoint.clientTLS)
            configuration.options.maximumConnections = max(1, options.maximumConnections)
            configuration.options.connectTimeout = options.connectTimeout
            configuration.options.minimumConnections = min(
                max(0, options.minimumConnections), max(1, options.maximumConnections))
            configuration.options.keepAliveBehavior = options.keepAliveInterval.map {
                PostgresClient.Configuration.Options.KeepAliveBehavior(frequency: $0)
            }
            let client = PostgresClient(configuration: configuration, backgroundLogger: options.logger)
            let runner = Task { await client.run() }
            let storeID: UUID
            do {
                storeID = try await Schema.prepare(endpoint, label: endpoint.label)
            } catch {
                runner.cancel()
                throw error
            }
            shared = Shared(storeID: storeID, label: endpoint.label, client: client, endpoint: endpoint, runner: runner)
            person = .default
            personKey = PersonID.default.description
        }

        private init(shared: Shared, person: PersonID) {
            self.shared = shared
            self.person = person
            self.personKey = person.description
        }

        /// The same store seen as `person`: a new view sharing this one's pool, commit signal and followers' wake-ups
        /// (nothing is opened, and whether the person exists is not checked). Every method of the view reads and
        /// writes only `person`'s objects; ``close()`` on any view closes the pool they share.
        public func forPerson(_ person: PersonID) -> PostgresStore {
            PostgresStore(shared: shared, person: person)
        }

        /// Closes the pool's connections (those every view of this store shares). The store cannot be used
        /// afterwards.
        public func close() { shared.runner.cancel() }

        /// Runs as a service: returns at graceful shutdown (or when its task is cancelled), then closes the pool.
        public func run() async throws {
            let runner = shared.runner
            await withTaskCancellationOrGracefulShutdownHandler {
                await runner.value
            } onCancelOrGracefulShutdown: {
                runner.cancel()
            }
        }

        // MARK: Transactions

        /// Runs `body` in one transaction on a pooled connection (READ COMMITTED: each statement sees what committed
        /// before it, and row and advisory locks order concurrent writers). Changes recorded inside are appended to the
        /// change log in commit order just before the commit. A serialisation failure or deadlock is retried.
        ///
        /// The transaction is the view's person's (`Transaction.person`): a view of a person other than the default
        /// first takes that person's lock, shared (``holdPerson(_:exclusive:)``), so that an erasure of the person
        /// waits for the writes under way and none commits behind it; `personal: false` (the erasure itself) does not.
        func write<T: Sendable>(
            _ what: String, personal: Bool = true, _ body: @Sendable (Transaction) async throws -> T
        )
            async throws(RouteKitError) -> T
        {
            let logger = endpoint.logger
            let personKey = self.personKey
            let holdsPerson = personal && person != .default
            var attempt = 0
            while true {
                attempt += 1
                let result: Result<(T, Bool), any Error>
                do {
                    result = .success(
                        try await client.withConnection { connection in
                            let tx = Transaction(connection, logger: logger, person: personKey)
                            try await tx.run("BEGIN")
                            do {
                                if holdsPerson { try await Self.holdPerson(tx, exclusive: false) }
                                let value = try await body(tx)
                                let recorded = try await Self.seal(tx)
                                try await tx.run("COMMIT")
                                return (value, recorded)
                            } catch {
                                try? await tx.run("ROLLBACK")
                                throw error
                            }
                        })
                } catch {
                    result = .failure(error)
                }
                switch result {
                case .success(let (value, recorded)):
                    if recorded { commitSignal.fire() }
                    return value
                case .failure(let error):
                    if attempt < 8, Self.isRetryable(error) {
                        try? await Task.sleep(for: .milliseconds(Int.random(in: 1...(5 * attempt))))
                        continue
                    }
                    throw Self.mapError(error, what)
                }
            }
        }

        /// Runs `body` on a pooled connection; with `snapshot`, in one read-only REPEATABLE READ transaction, so that
        /// its statements see one version of the store.
        func read<T: Sendable>(
            _ what: String, snapshot: Bool = false, _ body: @Sendable (Transaction) async throws -> T
        )
            async throws(RouteKitError) -> T
        {
            let logger = endpoint.logger
            let personKey = self.personKey
            do {
                return try await client.withConnection { connection in
                    let tx = Transaction(connection, logger: logger, person: personKey)
                    guard snapshot else { return try await body(tx) }
                    try await tx.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    do {
                        let value = try await body(tx)
                        try await tx.run("COMMIT")
                        return value
                    } catch {
                        try? await tx.run("ROLLBACK")
                        throw error
                    }
                }
            } catch {
                throw Self.mapError(error, what)
            }
        }

        static func isRetryable(_ error: any Error) -> Bool {
            guard let e = error as? PSQLError, e.code == .server, let state = e.serverInfo?[.sqlState] else {
                return false
            }
            return state == "40001" || state == "40P01"
        }

        /// A RouteKitError for what postgres-nio threw: the server's message and SQLSTATE (never the values of a
        /// statement, which may be coordinates), or ``RouteKitError/Code/unavailable`` when the server cannot be
        /// reached.
        static func mapError(_ error: any Error, _ what: String) -> RouteKitError {
            if let e = error as? RouteKitError { return e }
            if let e = error as? PSQLError {
                if e.code == .server, let state = e.serverInfo?[.sqlState] {
                    let message = e.serverInfo?[.message] ?? "server error"
                    if state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state) {
                        return RouteKitError(.unavailable, "\(what) failed: the server is unavailable: \(message)")
                    }
                    // disk_full: the server's disk (not the input) is the problem.
                    if state == "53100" {
                        return RouteKitError(.storageFull, "\(what) failed: the PostgreSQL server's disk is full")
                    }
                    // io_error, read-only transaction (a standby), system errors: the device, not the input.
                    if ["58030", "25006"].contains(state) || state.hasPrefix("58") {
                        return RouteKitError(.unavailable, "\(what) failed: the server cannot write: \(message)")
                    }
                    return RouteKitError(.storage, "\(what) failed: \(message) (SQLSTATE \(state))")
                }
                let connection: [PSQLError.Code] = [
                    .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
                ]
                if let u = e.underlying, u is NIOSSLError || u is BoringSSLError {
                    // A certificate the client does not trust, or no TLS where sslmode requires it: not transient.
                    return RouteKitError(.storage, "\(what) failed: the TLS handshake failed (\(u)); check sslmode")
                }
                if connection.contains(e.code) {
                    return RouteKitError(.unavailable, "\(what) failed: cannot reach the PostgreSQL server (\(e.code))")
                }
                return RouteKitError(.storage, "\(what) failed: \(e.code)")
            }
            if error is PostgresDecodingError {
                return RouteKitError(
                    .incompatibleStore, "\(what) failed: the database holds a value of an unexpected type")
            }
            if error is CancellationError { return RouteKitError(.storage, "\(what) was cancelled") }
            return RouteKitError(.unavailable, "\(what) failed: cannot reach the PostgreSQL server (\(error))")
        }

        /// Takes a transaction-scoped advisory lock on `name` (a sync identity): concurrent writers of the same
        /// identity run one after the other, and each reads what the previous one committed.
        static func lock(_ tx: Transaction, _ name: String) async throws {
            try await tx.run("SELECT pg_advisory_xact_lock(hashtextextended(\(name), 0))")
        }

        /// Takes the transaction's person's lock until the transaction ends: shared by every write of a person other
        /// than the default (they do not wait for each other), exclusive for erasing the person (it waits for the
        /// writes under way, and the writes that start meanwhile wait for it).
        static func holdPerson(_ tx: Transaction, exclusive: Bool) async throws {
            try await holdPerson(tx, tx.person, exclusive: exclusive)
        }

        /// Takes `person`'s lock (lowercase uuid text) until the transaction ends, as ``holdPerson(_:exclusive:)``
        /// does the transaction's person's: for a write that makes a row of a person other than its view's (a token).
        static func holdPerson(_ tx: Transaction, _ person: String, exclusive: Bool) async throws {
            let name = "person\n\(person)"
            if exclusive {
                try await tx.run("SELECT pg_advisory_xact_lock(hashtextextended(\(name), 0))")
            } else {
                try await tx.run("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(name), 0))")
            }
        }

        static func key(_ id: UUID) -> String { StoredRecord.key(id) }

        static func workout(_ r: Row) throws -> Workout {
            try StoredRecord.workout(
                uuid: r.get("uuid"), source: r.get("source"), syncID: r.get("sync_id"),
                syncVersion: r.get("sync_version"), body: r.get("body"))
        }

        static func route(_ r: Row) throws -> RouteSample {
            try StoredRecord.route(
                uuid: r.get("uuid"), workout: r.get("workout_uuid"), source: r.get("source"), syncID: r.get("sync_id"),
                syncVersion: r.get("sync_version"), locationCount: Int(r.get("location_count") as Int64),
                body: r.get("body"))
        }

        // MARK: Workouts

        public func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome {
            let body = try StoredRecord.body(of: workout)
            return try await write("saving workout \(workout.id)") { tx in
                let (taken, current) = try await Self.workoutIdentity(tx, of: workout)
                var currentRoutes: [StoredRouteRow] = []
                if let current { currentRoutes = try await Self.currentRoutes(tx, ofWorkout: current.id) }
                let plan = try StoreRules.saveWorkout(
                    workout, body: body, uuidTaken: taken, current: current, currentRoutes: currentRoutes)
                try await Self.apply(plan.writes, tx)
                return plan.outcome
            }
        }

        /// Whether `workout`'s uuid is taken and, when it is not and it has a sync identity, the identity's current
        /// workout and version (the transaction's person's), read under the identity's lock (held to the
        /// transaction's end) and the row's.
        ///
        /// Uuids are unique in the whole store (a workout's uuid keys its routes, series and change rows), so
        /// whether one is taken is asked of every person's workouts: saving a workout with another person's uuid is
        /// refused as taken (uuids are random: no one finds another's by guessing).
        static func workoutIdentity(_ tx: Transaction, of workout: Workout) async throws -> (
            taken: Bool, current: (id: UUID, version: Int64)?
        ) {
            let id = Self.key(workout.id)
            let taken = try await tx.first("SELECT 1 FROM workout WHERE uuid = \(id)") != nil
            guard !taken, let sync = workout.sync else { return (taken, nil) }
            try await Self.lock(tx, "workout\n\(tx.person)\n\(workout.source.name)\n\(sync.identifier)")
            guard
                let row = try await tx.first(
                    """
                    SELECT uuid, sync_version FROM workout
                    WHERE person = \(tx.person) AND source = \(workout.source.name) AND sync_id = \(sync.identifier)
                    FOR UPDATE
                    """
                )
            else { return (taken, nil) }
            return (taken, (try StoredRecord.uuid(row.get("uuid")), try row.get("sync_version")))
        }

        public func workout(id: UUID) async throws(RouteKitError) -> Workout? {
            try await read("reading workout \(id)") { tx in
                try await tx.first("SELECT * FROM workout WHERE uuid = \(Self.key(id)) AND person = \(tx.person)")
                    .map(Self.workout)
            }
        }

        public func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout] {
            try await read("listing workouts") { tx in
                try await Self.list(
                    tx, "workout", [("source", filter.source?.name), ("sync_id", filter.syncIdentifier)],
                    after: filter.after.map(Self.key), descending: filter.newestFirst, limit: filter.limit
                ).map(Self.workout)
            }
        }

        public func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError) {
            try await write("deleting workout \(id)") { tx in
                let owner = try await Self.workoutSource(tx, id, forUpdate: true)
                let routes = owner == nil ? [] : try await Self.currentRoutes(tx, ofWorkout: id)
                try await Self.apply(StoreRules.deleteWorkout(id, as: source, owner: owner, currentRoutes: routes), tx)
            }
        }

        /// The rows of `table` whose columns equal the given values (nil values do not filter), in insertion order.
        /// Rows of `table` in saving order (`descending`: newest first), those after the row of uuid `after` in
        /// that order when given (keyset paging; nothing when that row is gone).
        static func list(
            _ tx: Transaction, _ table: String, _ equal: [(String, String?)], condition: String = "TRUE",
            after: String? = nil, descending: Bool = false, limit: Int?
        ) async throws -> [Row] {
            var sql = SQL("SELECT * FROM \(table) WHERE \(condition)")
            sql.append(" AND person = \(sql.bind(tx.person))")
            for (column, value) in equal {
                guard let value else { continue }
                sql.append(" AND \(column) = \(sql.bind(value))")
            }
            if let after {
                sql.append(
                    " AND id \(descending ? "<" : ">") (SELECT id FROM \(table) WHERE uuid = \(sql.bind(after))"
                        + " AND person = \(sql.bind(tx.person)))")
            }
            sql.append(descending ? " ORDER BY id DESC" : " ORDER BY id")
            if let limit { sql.append(" LIMIT \(max(0, limit))") }
            return try await tx.rows(sql.query)
        }

        // MARK: Routes

        public func route(id: UUID) async throws(RouteKitError) -> RouteSample? {
            try await read("reading route \(id)") { tx in
                try await tx.first("SELECT * FROM route WHERE uuid = \(Self.key(id)) AND person = \(tx.person)")
                    .map(Self.route)
            }
        }

        public func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool {
            try await read("reading route \(id)") { tx in
                try await tx.value(
                    "SELECT current FROM route WHERE uuid = \(Self.key(id)) AND person = \(tx.person)", as: Bool.self)
                    ?? false
            }
        }

        public func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample] {
            try await read("listing routes") { tx in
                try await Self.list(
                    tx, "route",
                    [
                        ("workout_uuid", filter.workout.map(Self.key)), ("source", filter.source?.name),
                        ("sync_id", filter.syncIdentifier),
                    ], condition: "current", after: filter.after.map(Self.key), descending: filter.newestFirst,
                    limit: filter.limit
                ).map(Self.route)
            }
        }

        public func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError) {
            try await write("deleting route \(id)") { tx in
                var current: StoredRouteRow?
                if let first = try await tx.first(
                    "SELECT source, sync_id FROM route WHERE uuid = \(Self.key(id)) AND person = \(tx.person) AND current"
                ) {
                    let identitySource: String = try first.get("source")
                    let syncID: String = try first.get("sync_id")
                    try await Self.lock(
                        tx, Self.routeIdentityLock(tx, source: identitySource, syncIdentifier: syncID))
                    // Read again under the identity's lock: a concurrent writer may have replaced it meanwhile.
                    current = try await tx.first(
                        "SELECT * FROM route WHERE uuid = \(Self.key(id)) AND person = \(tx.person) AND current FOR UPDATE"
                    ).map(Self.routeRow)
                }
                try await Self.apply(StoreRules.deleteRoute(id, as: source, current: current), tx)
            }
        }

        @_spi(RouteKitBackend) public func routeChunks(
            ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?
        )
            async throws(RouteKitError) -> any ChunkCursor
        {
            let routeKey = Self.key(id)
            let kindName = kind.description
            return try await chunkCursor("reading route \(id)") { tx in
                guard
                    let container = try await tx.value(
                        "SELECT container FROM route WHERE uuid = \(routeKey) AND person = \(tx.person)",
                        as: String.self)
                else { throw RouteKitError(.notFound, "no route \(id)") }
                var sql = SQL("SELECT id FROM chunk WHERE container = ")
                sql.append(sql.bind(container) + " AND kind = " + sql.bind(kindName))
                if let interval {
                    // StoreRules.readNeeds in SQL: chunks without times hold no location of an interval.
                    let window = StoreRules.chunkSeconds(of: interval)
                    sql.append(" AND max_s >= \(sql.bind(window.from))")
                    sql.append(" AND min_s <= \(sql.bind(window.through))")
                }
                sql.append(" ORDER BY seq")
                return try await tx.rows(sql.query).map { try $0.get("id") as Int64 }
            }
        }

        /// Chunks in the order `ids` lists them. Small reads come whole from one snapshot; longer ones through a
        /// connection of their own that holds a REPEATABLE READ snapshot while they are iterated.
        func chunkCursor(_ what: String, ids: @escaping @Sendable (Transaction) async throws -> [Int64])
            async throws(RouteKitError) -> any ChunkCursor
        {
            let small = try await read(what, snapshot: true) { tx -> [StoredChunk]? in
                let found = try await ids(tx)
                guard found.count <= StoreRules.wholeReadChunks else { return nil }
                return try await Self.chunks(tx, found)
            }
            if let small { return ArrayChunkCursor(small) }
            return try await SnapshotCursor.open(endpoint, what, person: personKey, ids: ids)
        }

        /// The chunks with these row ids, in that order.
        static func chunks(_ tx: Transaction, _ ids: [Int64]) async throws -> [StoredChunk] {
            if ids.isEmpty { return [] }
            var byID: [Int64: StoredChunk] = [:]
            for row in try await tx.rows("SELECT * FROM chunk WHERE id = ANY(\(ids))") {
                byID[try row.get("id")] = try chunk(row, withData: true)
            }
            return try ids.map { id in
                guard let c = byID[id] else {
                    throw RouteKitError(.storage, "a chunk vanished inside a read transaction")
                }
                return c
            }
        }

        // MARK: Series

        @_spi(RouteKitBackend) public func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source)
            async throws(RouteKitError)
        {
            try await write("saving series of workout \(id)") { tx in
                // The workout's row lock orders concurrent appends (each numbers its chunks after the others').
                let owner = try await Self.workoutSource(tx, id, forUpdate: true)
                // The chunks are read only once the workout is known to be the person's.
                var next: Int64?
                if owner != nil {
                    next = try await tx.value(
                        "SELECT MAX(seq) + 1 FROM chunk WHERE container = \(StoreRules.seriesContainer(of: id))",
                        as: Int64.self)
                }
                try await Self.apply(
                    StoreRules.appendSeries(
                        chunks, toWorkout: id, as: source, owner: owner, nextSequence: Int(next ?? 0)), tx)
            }
        }

        public func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType] {
            try await read("reading series of workout \(id)") { tx in
                let kinds = try await tx.rows(
                    "SELECT DISTINCT kind FROM series WHERE workout_uuid = \(Self.key(id)) AND person = \(tx.person)"
                )
                .map { try $0.get("kind") as String }
                let known = Set(kinds)
                return QuantityType.all.filter { known.contains($0.identifier) }
            }
        }

        @_spi(RouteKitBackend) public func workoutChunks(ofWorkout id: UUID, kind: ChunkKind)
            async throws(RouteKitError) -> any ChunkCursor
        {
            let workoutKey = Self.key(id)
            let kindName = kind.description
            return try await chunkCursor("reading series of workout \(id)") { tx in
                try await tx.rows(
                    """
                    SELECT c.id FROM chunk c JOIN series s ON c.container = s.container AND c.kind = s.kind
                    WHERE s.workout_uuid = \(workoutKey) AND s.person = \(tx.person) AND s.kind = \(kindName)
                    ORDER BY c.min_s NULLS FIRST, c.min_ns NULLS FIRST, s.id, c.seq
                    """
                ).map { try $0.get("id") as Int64 }
            }
        }

        // MARK: Chunks

        /// Inserts chunks, several per statement.
        static func insert(_ tx: Transaction, _ chunks: [StoredChunk], container: String) async throws {
            var start = 0
            while start < chunks.count {
                let group = chunks[start..<min(start + 32, chunks.count)]
                start += group.count
                var sql = SQL(
                    "INSERT INTO chunk(container, kind, seq, count, min_s, min_ns, max_s, max_ns, data) VALUES ")
                for (i, chunk) in group.enumerated() {
                    if i > 0 { sql.append(", ") }
                    let values = [sql.bind(container)] + chunkValues(&sql, chunk)
                    sql.append("(" + values.joined(separator: ", ") + ")")
                }
                try await tx.run(sql.query)
            }
        }

        /// `appendToBuilder(id:claim:chunks:progress:metadata:)` as one prepared statement: the same text every
        /// time (the chunks go as arrays), so the server parses and plans it once per connection.
        struct AppendBatch: PostgresPreparedStatement {
            /// Stands for NULL in the time arrays (postgres-nio's arrays carry no NULLs).
            static let noTime = Int64.min
            static let sql = """
                WITH b AS (
                    UPDATE builder SET location_count = $3, checkpoint = $4, metadata = $5, updated = $6
                    WHERE uuid = $1 AND claim = $2 AND person = $16 RETURNING uuid),
                c AS (
                    INSERT INTO chunk(container, kind, seq, count, min_s, min_ns, max_s, max_ns, data)
                    SELECT b.uuid, v.kind, v.seq, v.count, NULLIF(v.min_s, $15), NULLIF(v.min_ns, $15),
                        NULLIF(v.max_s, $15), NULLIF(v.max_ns, $15), v.data
                    FROM b, unnest($7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[],
                        $13::bigint[], $14::bytea[]) AS v(kind, seq, count, min_s, min_ns, max_s, max_ns, data)
                    RETURNING 1)
                SELECT count(*) FROM b
                """
            static var bindingDataTypes: [PostgresDataType] {
                [.text, .text, .int8, .text, .text, .float8] + [.textArray] + Array(repeating: .int8Array, count: 6)
                    + [.byteaArray, .int8, .text]
            }
            typealias Row = Int64

            var builder: String
            var claim: String
            /// The person the builder must be of (lowercase uuid text).
            var person: String
            var locationCount: Int64
            var checkpoint: String?
            var metadata: String
            var updated: Double
            var chunks: [StoredChunk]

            func makeBindings() throws -> PostgresBindings {
                var b = PostgresBindings(capacity: 16)
                b.append(builder)
                b.append(claim)
                b.append(locationCount)
                b.append(checkpoint)
                b.append(metadata)
                b.append(updated)
                b.append(chunks.map(\.kind.description))
                b.append(chunks.map { Int64($0.sequence) })
                b.append(chunks.map { Int64($0.count) })
                b.append(chunks.map { $0.minTime?.seconds ?? Self.noTime })
                b.append(chunks.map { $0.minTime.map { Int64($0.nanoseconds) } ?? Self.noTime })
                b.append(chunks.map { $0.maxTime?.seconds ?? Self.noTime })
                b.append(chunks.map { $0.maxTime.map { Int64($0.nanoseconds) } ?? Self.noTime })
                b.append(chunks.map { ByteBuffer(bytes: $0.bytes) })
                b.append(Self.noTime)
                b.append(person)
                return b
            }

            func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
        }

        /// A chunk's parameters after its container: kind, seq, count, min_s, min_ns, max_s, max_ns, data.
        static func chunkValues(_ sql: inout SQL, _ chunk: StoredChunk) -> [String] {
            [
                sql.bind(chunk.kind.description), sql.bind(Int64(chunk.sequence)), sql.bind(Int64(chunk.count)),
                sql.bind(chunk.minTime?.seconds), sql.bind(chunk.minTime.map { Int64($0.nanoseconds) }),
                sql.bind(chunk.maxTime?.seconds), sql.bind(chunk.maxTime.map { Int64($0.nanoseconds) }),
                sql.bind(ByteBuffer(bytes: chunk.bytes)),
            ]
        }

        static func chunk(_ r: Row, withData: Bool) throws -> StoredChunk {
            let kindName: String = try r.get("kind")
            guard let kind = ChunkKind(name: kindName) else {
                throw RouteKitError(.incompatibleStore, "the store holds chunks of an unknown kind '\(kindName)'")
            }
            func instant(_ s: String, _ ns: String) throws -> Instant? {
                let seconds: Int64? = try r.get(s)
                let nanos: Int64? = try r.get(ns)
                return seconds.map { Instant(seconds: $0, nanoseconds: Int32(truncatingIfNeeded: nanos ?? 0)) }
            }
            let data: ByteBuffer? = withData ? try r.get("data") : nil
            return StoredChunk(
                kind: kind, sequence: Int(try r.get("seq") as Int64), count: Int(try r.get("count") as Int64),
                minTime: try instant("min_s", "min_ns"), maxTime: try instant("max_s", "max_ns"),
                bytes: data.map { Array($0.readableBytesView) } ?? [])
        }

        // MARK: Builders

        @_spi(RouteKitBackend) public func createBuilder(_ b: PendingBuilder) async throws(RouteKitError) {
            let metadata = try StoredRecord.encode(metadata: b.metadata)
            try await write("creating route builder \(b.id)") { tx in
                try await tx.run(
                    """
                    INSERT INTO builder(uuid, person, source, location_order, origin_kind, origin_key, origin_label,
                        location_count, checkpoint, claim, metadata, created, updated)
                    VALUES (\(Self.key(b.id)), \(tx.person), \(b.source.name), \(b.order.rawValue), \(b.origin?.kind),
                        \(b.origin?.key), \(b.origin?.label), \(Int64(b.progress.locationCount)), \(b.progress.checkpoint),
                        \(Self.key(b.claim)), \(metadata), \(b.created.timeIntervalSince1970), \(b.updated.timeIntervalSince1970))
                    """)
            }
        }

        static func builder(_ tx: Transaction, _ r: Row) async throws -> PendingBuilder {
            let key: String = try r.get("uuid")
            let kind: String? = try r.get("origin_kind")
            let originKey: String? = try r.get("origin_key")
            let label: String? = try r.get("origin_label")
            let orderName: String = try r.get("location_order")
            // One read of the builder's chunks by kind: the next sequence number, and the samples and events it holds.
            let kinds = try await tx.rows(
                """
                SELECT kind, SUM(count)::BIGINT AS held_count, MAX(seq) AS last_seq FROM chunk
                WHERE container = \(key) GROUP BY kind
                """)
            var progress = BuilderProgress(
                locationCount: Int(try r.get("location_count") as Int64), checkpoint: try r.get("checkpoint"))
            var next: Int64 = 0
            for k in kinds {
                let name: String = try k.get("kind")
                let held: Int64 = try k.get("held_count")
                let last: Int64 = try k.get("last_seq")
                next = max(next, last + 1)
                progress.count(Int(held), ofStoredKind: name)
            }
            return PendingBuilder(
                id: try StoredRecord.uuid(key), source: try StoredRecord.source(r.get("source")),
                order: LocationOrder(rawValue: orderName) ?? .insertion,
                origin: kind.map { BuilderOrigin(kind: $0, key: originKey ?? "", label: label) },
                progress: progress,
                metadata: try StoredRecord.decodeMetadata(r.get("metadata")),
                created: Date(timeIntervalSince1970: try r.get("created")),
                updated: Date(timeIntervalSince1970: try r.get("updated")), nextSequence: Int(next),
                claim: try StoredRecord.uuid(r.get("claim")))
        }

        public func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder? {
            try await read("reading route builder \(id)", snapshot: true) { tx in
                guard
                    let row = try await tx.first(
                        "SELECT * FROM builder WHERE uuid = \(Self.key(id)) AND person = \(tx.person)")
                else {
                    return nil
                }
                return try await Self.builder(tx, row)
            }
        }

        public func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder] {
            // Most people have none (every import looks for one to resume): one statement says so, without the
            // snapshot a list of several needs.
            let any = try await read("listing route builders") { tx in
                try await tx.first("SELECT 1 FROM builder WHERE person = \(tx.person) LIMIT 1") != nil
            }
            if !any { return [] }
            return try await read("listing route builders", snapshot: true) { tx in
                var found: [PendingBuilder] = []
                for row in try await tx.rows(
                    "SELECT * FROM builder WHERE person = \(tx.person) ORDER BY created, uuid")
                {
                    found.append(try await Self.builder(tx, row))
                }
                return found
            }
        }

        /// Checks that `claim` holds the pending builder `id`, and locks its row until the transaction ends.
        static func checkClaim(_ tx: Transaction, _ id: UUID, _ claim: UUID) async throws {
            try StoreRules.checkClaim(id, held: try await builderRow(tx, id)?.claim, by: claim)
        }

        @_spi(RouteKitBackend) public func claimBuilder(
            id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID
        )
            async throws(RouteKitError) -> Bool
        {
            try await write("claiming route builder \(id)") { tx in
                try await !tx.rows(
                    """
                    UPDATE builder SET claim = \(Self.key(claim)) WHERE uuid = \(Self.key(id)) AND person = \(tx.person)
                        AND location_count = \(Int64(expectedLocationCount)) AND claim = \(Self.key(previous)) RETURNING 1
                    """
                ).isEmpty
            }
        }

        @_spi(RouteKitBackend) public func appendToBuilder(
            id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
        ) async throws(RouteKitError) {
            let metadataJSON = try StoredRecord.encode(metadata: metadata)
            let now = Date().timeIntervalSince1970
            let key = Self.key(id)
            // One prepared statement, so one round trip and one implicit transaction (the importer's hot path: a
            // batch of 1,024 locations each): the builder's row is updated only if `claim` holds it, and the chunks
            // are inserted only if it was.
            let batch = AppendBatch(
                builder: key, claim: Self.key(claim), person: personKey, locationCount: Int64(progress.locationCount),
                checkpoint: progress.checkpoint, metadata: metadataJSON, updated: now, chunks: chunks)
            let updated: Int64
            do {
                updated = try await client.execute(batch, logger: endpoint.logger).reduce(0) { $0 + $1 }
            } catch {
                throw Self.mapError(error, "storing a batch of route builder \(id)")
            }
            if updated == 1 { return }
            // Why not: gone, or taken over.
            try await read("storing a batch of route builder \(id)") { tx in try await Self.checkClaim(tx, id, claim) }
            throw RouteKitError(.storage, "route builder \(id): a batch was not stored")
        }

        @_spi(RouteKitBackend) public func builderChunk(id: UUID, kind: ChunkKind, sequence: Int)
            async throws(RouteKitError) -> StoredChunk?
        {
            try await read("reading route builder \(id)") { tx in
                try await tx.first(
                    """
                    SELECT * FROM chunk WHERE container = \(Self.key(id)) AND kind = \(kind.description)
                        AND seq = \(Int64(sequence))
                        AND EXISTS(SELECT 1 FROM builder WHERE uuid = \(Self.key(id)) AND person = \(tx.person))
                    """
                ).map { try Self.chunk($0, withData: true) }
            }
        }

        @_spi(RouteKitBackend) public func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError)
            -> [StoredChunk]
        {
            try await read("reading route builder \(id)") { tx in
                try await tx.rows(
                    """
                    SELECT kind, seq, count, min_s, min_ns, max_s, max_ns FROM chunk
                    WHERE container = \(Self.key(id)) AND kind = \(kind.description)
                        AND EXISTS(SELECT 1 FROM builder WHERE uuid = \(Self.key(id)) AND person = \(tx.person))
                    ORDER BY seq
                    """
                ).map { try Self.chunk($0, withData: false) }
            }
        }

        @_spi(RouteKitBackend) public func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int])
            async throws(RouteKitError)
        {
            let key = Self.key(id)
            try await write("merging route builder \(id)") { tx in
                // The claim check reads (and locks) the builder's row with the person in its WHERE clause: nothing
                // below runs for another person's builder.
                try await Self.checkClaim(tx, id, claim)
                try await tx.run(
                    "DELETE FROM chunk WHERE container = \(key) AND kind = 'locations' AND seq = ANY(\(sequences.map { Int64($0) }))"
                )
                try await tx.run("UPDATE chunk SET kind = 'locations' WHERE container = \(key) AND kind = 'staging'")
            }
        }

        @_spi(RouteKitBackend) public func dropStaging(builder id: UUID) async throws(RouteKitError) {
            try await write("cleaning route builder \(id)") { tx in
                try await tx.run(
                    """
                    DELETE FROM chunk WHERE container = \(Self.key(id)) AND kind = 'staging'
                        AND EXISTS(SELECT 1 FROM builder WHERE uuid = \(Self.key(id)) AND person = \(tx.person))
                    """)
            }
        }

        public func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError) {
            try await write("discarding route builder \(id)") { tx in
                let owner = try await Self.builderRow(tx, id)?.source
                try await Self.apply(StoreRules.discardBuilder(id, as: source, owner: owner), tx)
            }
        }

        // MARK: Saving routes

        @_spi(RouteKitBackend) public func saveRoute(
            _ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?
        )
            async throws(RouteKitError) -> SaveOutcome
        {
            let body = try StoredRecord.body(of: route)
            try StoreRules.checkRouteChunks(chunks)
            return try await write("saving route \(route.id)") { tx in
                let workoutSource = try await Self.workoutSource(tx, route.workoutID)
                let current = try await Self.currentVersion(tx, of: route)
                let plan = try StoreRules.saveRoute(
                    route, chunks: chunks, body: body, releasing: claim, workoutSource: workoutSource, current: current)
                try await Self.apply(plan.writes, tx)
                return plan.outcome
            }
        }

        @_spi(RouteKitBackend) public func finishBuilder(
            id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?
        )
            async throws(RouteKitError) -> SaveOutcome
        {
            let body = try StoredRecord.body(of: route)
            let workoutBody = try creating.map { w throws(RouteKitError) in try StoredRecord.body(of: w) }
            return try await write("finishing route builder \(id)") { tx in
                // Locks in this order: the builder's row, the workout's (or the new workout's identity), the
                // route identity's.
                let builder = try await Self.builderRow(tx, id)
                var new: NewWorkoutRow?
                if let creating {
                    let (taken, current) = try await Self.workoutIdentity(tx, of: creating)
                    new = NewWorkoutRow(workout: creating, body: workoutBody ?? "", uuidTaken: taken, current: current)
                }
                let workoutSource = try await Self.workoutSource(tx, route.workoutID)
                let current = try await Self.currentVersion(tx, of: route)
                let plan = try StoreRules.finishBuilder(
                    id, claim: claim, route: route, body: body, sequenceOrder: sequenceOrder, builder: builder,
                    workoutSource: workoutSource, current: current, creating: new)
                try await Self.apply(plan.writes, tx)
                return plan.outcome
            }
        }

        // MARK: Work claims

        @_spi(RouteKitBackend) public func claimWork(key: String, holder: UUID, seconds: Double)
            async throws(RouteKitError) -> Bool
        {
            try await claimWork(keys: [key], holder: holder, seconds: seconds).contains(key)
        }

        /// One statement, so one short transaction: a key is taken when it is free or its claim expired, renewed when
        /// the holder already has it, and left alone when another holder's claim is live. No lock outlives the
        /// statement, and keys are taken in sorted order, so workers claiming overlapping batches never deadlock.
        /// Expiry is measured on the database server's clock, the one clock every worker shares.
        @_spi(RouteKitBackend) public func claimWork(keys: [String], holder: UUID, seconds: Double)
            async throws(RouteKitError) -> Set<String>
        {
            try StoreRules.checkClaimSeconds(seconds)
            let sorted = Set(keys).sorted()
            if sorted.isEmpty { return [] }
            let me = Self.key(holder)
            return try await write("claiming \(sorted.count == 1 ? "work \(sorted[0])" : "\(sorted.count) work keys")")
            { tx in
                Set(
                    try await tx.rows(
                        """
                        INSERT INTO lease(key, holder, expires)
                        SELECT k, \(me), extract(epoch FROM clock_timestamp())::float8 + \(seconds)
                        FROM unnest(\(sorted)::text[]) AS k ORDER BY k
                        ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                        WHERE lease.expires < extract(epoch FROM clock_timestamp())::float8 OR lease.holder = excluded.holder
                        RETURNING key
                        """
                    ).map { try $0.get("key") as String })
            }
        }

        @_spi(RouteKitBackend) public func releaseWork(key: String, holder: UUID) async throws(RouteKitError) {
            try await write("releasing work \(key)") { tx in
                try await tx.run("DELETE FROM lease WHERE key = \(key) AND holder = \(Self.key(holder))")
            }
        }

        public func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError)
            -> RouteSample?
        {
            try await read("reading the raw version of \(syncIdentifier)") { tx in
                try await tx.first(
                    """
                    SELECT * FROM route
                    WHERE person = \(tx.person) AND source = \(source.name) AND sync_id = \(syncIdentifier) AND raw
                    ORDER BY sync_version DESC LIMIT 1
                    """
                ).map(Self.route)
            }
        }

        // MARK: Privacy zones

        public func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone] {
            let rows = try await read("reading the privacy zones of \(source)") { tx in
                try await tx.rows(
                    """
                    SELECT latitude, longitude, radius FROM privacy_zone
                    WHERE person = \(tx.person) AND source = \(source.name) ORDER BY id
                    """
                ).map { row -> [Double] in [try row.get("latitude"), try row.get("longitude"), try row.get("radius")] }
            }
            var zones: [PrivacyZone] = []
            for r in rows {
                do {
                    zones.append(try PrivacyZone(latitude: r[0], longitude: r[1], radiusMetres: r[2]))
                } catch {
                    throw RouteKitError(.storage, "a stored privacy zone of \(source) is invalid: \(error.message)")
                }
            }
            return zones
        }

        public func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError) {
            try await write("setting the privacy zones of \(source)") { tx in
                try await Self.lock(tx, "privacy\n\(tx.person)\n\(source.name)")
                try await tx.run("DELETE FROM privacy_zone WHERE person = \(tx.person) AND source = \(source.name)")
                for z in zones {
                    try await tx.run(
                        """
                        INSERT INTO privacy_zone(person, source, latitude, longitude, radius)
                        VALUES (\(tx.person), \(source.name), \(z.latitude), \(z.longitude), \(z.radiusMetres))
                        """)
                }
            }
        }

        // MARK: Zones

        public func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings {
            let body = try await read("reading the zone settings of \(source)") { tx in
                try await tx.value(
                    "SELECT body FROM zone_settings WHERE person = \(tx.person) AND source = \(source.name)",
                    as: String.self)
            }
            return try body.map(StoredRecord.zoneSettings) ?? ZoneSettings()
        }

        public func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError) {
            try settings.validate()
            let body = try StoredRecord.body(of: settings)
            try await write("setting the zone settings of \(source)") { tx in
                if settings.isEmpty {
                    try await tx.run(
                        "DELETE FROM zone_settings WHERE person = \(tx.person) AND source = \(source.name)")
                } else {
                    try await tx.run(
                        """
                        INSERT INTO zone_settings(person, source, body) VALUES (\(tx.person), \(source.name), \(body))
                        ON CONFLICT (person, source) DO UPDATE SET body = excluded.body
                        """)
                }
            }
        }

        public func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings {
            let body = try await read("reading the zone settings of workout \(id)") { tx in
                try await tx.value(
                    "SELECT body FROM workout_zone_settings WHERE workout_uuid = \(Self.key(id)) AND person = \(tx.person)",
                    as: String.self)
            }
            return try body.map(StoredRecord.zoneSettings) ?? ZoneSettings()
        }

        public func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source)
            async throws(RouteKitError)
        {
            try settings.validate()
            let body = try StoredRecord.body(of: settings)
            try await write("setting the zone settings of workout \(id)") { tx in
                guard let owner = try await Self.workoutSource(tx, id) else {
                    throw RouteKitError(.notFound, "no workout \(id)")
                }
                try StoreRules.checkOwner(owner, of: "workout \(id)", is: source)
                if settings.isEmpty {
                    try await tx.run(
                        "DELETE FROM workout_zone_settings WHERE workout_uuid = \(Self.key(id)) AND person = \(tx.person)"
                    )
                } else {
                    try await tx.run(
                        """
                        INSERT INTO workout_zone_settings(workout_uuid, person, body)
                        VALUES (\(Self.key(id)), \(tx.person), \(body))
                        ON CONFLICT (workout_uuid) DO UPDATE SET body = excluded.body
                        """)
                }
            }
        }

        // MARK: Effort

        public func relateEffort(_ score: EffortScore) async throws(RouteKitError) {
            try await write("relating an effort score to workout \(score.workoutID)") { tx in
                guard try await Self.workoutSource(tx, score.workoutID) != nil else {
                    throw RouteKitError(.notFound, "workout \(score.workoutID) is not saved")
                }
                try await tx.run(
                    """
                    INSERT INTO effort(uuid, person, workout_uuid, source, score, manual, created)
                    VALUES (\(Self.key(score.id)), \(tx.person), \(Self.key(score.workoutID)), \(score.source.name),
                        \(score.score), \(score.isManual), \(score.created.timeIntervalSince1970))
                    """)
                try await Self.recordAddition(
                    tx, .effort(id: score.id, workout: score.workoutID, source: score.source.name))
            }
        }

        public func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError) {
            try await write("unrelating effort score \(id)") { tx in
                guard
                    let row = try await tx.first(
                        "SELECT source, workout_uuid FROM effort WHERE uuid = \(Self.key(id)) AND person = \(tx.person)"
                    )
                else { throw RouteKitError(.notFound, "no effort score \(id)") }
                let owner: String = try row.get("source")
                try StoreRules.checkOwner(owner, of: "effort score \(id)", is: source)
                let workout: String = try row.get("workout_uuid")
                try await Self.recordDeletion(
                    tx, .effort(id: id, workout: try StoredRecord.uuid(workout), source: owner))
                try await tx.run("DELETE FROM effort WHERE uuid = \(Self.key(id)) AND person = \(tx.person)")
            }
        }

        public func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore] {
            try await read("reading effort scores of workout \(id)") { tx in
                try await tx.rows(
                    """
                    SELECT * FROM effort WHERE workout_uuid = \(Self.key(id)) AND person = \(tx.person)
                    ORDER BY created, id
                    """
                ).map { r in try Self.effort(r) }
            }
        }

        static func effort(_ r: Row) throws -> EffortScore {
            try EffortScore(
                id: try StoredRecord.uuid(r.get("uuid")), workoutID: try StoredRecord.uuid(r.get("workout_uuid")),
                source: try StoredRecord.source(r.get("source")), score: try r.get("score"),
                isManual: try r.get("manual"), created: Date(timeIntervalSince1970: try r.get("created")))
        }
    }

    // MARK: - Statements

    /// One connection's statements, inside a transaction or not, and the changes a write transaction recorded.
    final class Transaction: @unchecked Sendable {
        let connection: PostgresConnection
        let logger: Logger
        /// The person whose objects the statements read and write (lowercase uuid text): every object a transaction
        /// writes, and every change it records, is theirs.
        let person: String
        /// Changes recorded so far, in order (appended to the log when the transaction seals).
        var changes: [PostgresStore.Change] = []

        init(_ connection: PostgresConnection, logger: Logger, person: String) {
            self.connection = connection
            self.logger = logger
            self.person = person
        }

        /// Runs a statement, discarding its rows.
        func run(_ query: PostgresQuery) async throws {
            _ = try await connection.query(query, logger: logger).collect()
        }

        /// Every row of a statement.
        func rows(_ query: PostgresQuery) async throws -> [Row] {
            try await connection.query(query, logger: logger).collect().map { Row($0.makeRandomAccess()) }
        }

        /// The first row, if any.
        func first(_ query: PostgresQuery) async throws -> Row? { try await rows(query).first }

        /// The first column of the first row; `nil` when there is no row or the value is NULL.
        func value<T: PostgresDecodable>(_ query: PostgresQuery, as: T.Type) async throws -> T? {
            guard let row = try await connection.query(query, logger: logger).collect().first else {
                return nil
            }
            let cells = row.makeRandomAccess()
            guard !cells.isEmpty, cells[0].bytes != nil else { return nil }
            return try cells[0].decode(T.self)
        }
    }

    /// A row whose columns are read by name.
    struct Row: @unchecked Sendable {
        let cells: PostgresRandomAccessRow
        init(_ cells: PostgresRandomAccessRow) { self.cells = cells }

        func get<T: PostgresDecodable>(_ column: String) throws -> T {
            guard cells.contains(column) else {
                throw RouteKitError(
                    .incompatibleStore, "the database has no column '\(column)' where RouteKit expects one")
            }
            return try cells[column].decode(T.self)
        }
    }

    /// A statement built piece by piece, with numbered parameters.
    struct SQL {
        private var text: String
        private var binds = PostgresBindings()

        init(_ text: String) { self.text = text }

        mutating func append(_ more: String) { text += more }

        /// Adds a parameter and returns its placeholder (`$3`).
        mutating func bind<T: PostgresDynamicTypeEncodable>(_ value: T?) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }

        var query: PostgresQuery { PostgresQuery(unsafeSQL: text, binds: binds) }
    }

    /// Reads a long route's chunks a few at a time through a connection of its own, inside a read-only REPEATABLE
    /// READ transaction opened when the query started: a route replaced meanwhile is still read whole.
    final class SnapshotCursor: ChunkCursor {
        static let group = 8
        private var connection: PostgresConnection?
        private let logger: Logger
        private let person: String
        private let ids: [Int64]
        private var position = 0
        private var ready: [StoredChunk] = []
        private var readyIndex = 0

        private init(connection: PostgresConnection, ids: [Int64], logger: Logger, person: String) {
            self.connection = connection
            self.logger = logger
            self.person = person
            self.ids = ids
        }

        /// Opens the snapshot and reads the chunks' row ids with `ids`, as `person` (whose lookup `ids` makes).
        static func open(
            _ endpoint: Endpoint, _ what: String, person: String, ids: @Sendable (Transaction) async throws -> [Int64]
        ) async throws(RouteKitError) -> SnapshotCursor {
            let connection: PostgresConnection
            do { connection = try await endpoint.connect() } catch { throw PostgresStore.mapError(error, what) }
            do {
                let tx = Transaction(connection, logger: endpoint.logger, person: person)
                try await tx.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                return SnapshotCursor(
                    connection: connection, ids: try await ids(tx), logger: endpoint.logger, person: person)
            } catch {
                try? await connection.close()
                throw PostgresStore.mapError(error, what)
            }
        }

        deinit { close() }

        func next() async throws(RouteKitError) -> StoredChunk? {
            if readyIndex < ready.count {
                defer { readyIndex += 1 }
                return ready[readyIndex]
            }
            guard let connection, position < ids.count else {
                close()
                return nil
            }
            let wanted = Array(ids[position..<min(position + Self.group, ids.count)])
            position += wanted.count
            do {
                ready = try await PostgresStore.chunks(
                    Transaction(connection, logger: logger, person: person), wanted)
            } catch {
                close()
                throw PostgresStore.mapError(error, "reading a chunk")
            }
            readyIndex = 1
            return ready[0]
        }

        func close() {
            guard let connection else { return }
            self.connection = nil
            ready = []
            // Closing the connection ends its transaction. The future holds the connection until it is closed
            // (postgres-nio asserts that a connection is closed before it is released).
            connection.close().whenComplete { _ in _ = connection }
        }
    }
#endif
