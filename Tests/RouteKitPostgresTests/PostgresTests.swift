import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitTesting
import Testing

#if Postgres
    import Logging
    import RouteKitPostgres
    import ServiceLifecycle

    /// A store in a database of its own on the test server; dropped by `done()`.
    struct PostgresFixture {
        let url: String
        let store: PostgresStore

        init(connections: Int = 2) async throws {
            url = try PostgresTestServer.freshDatabase()
            store = try await PostgresStore(url: url, options: PostgresStore.Options(maximumConnections: connections))
        }

        /// Another store on the same database: what another process or host would open.
        func another(connections: Int = 2) async throws -> PostgresStore {
            try await PostgresStore(url: url, options: PostgresStore.Options(maximumConnections: connections))
        }

        func done() {
            store.close()
            PostgresTestServer.drop(url)
        }
    }

    @Suite("PostgreSQL store conformance", .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresConformanceTests {
        // The time limit only guards against a hang; speeds are benchmarks.
        @Test(.timeLimit(.minutes(2)), arguments: StoreConformance.checks)
        func conformance(_ check: ConformanceCheck) async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try await check.run(fixture.store)
        }
    }

    @Suite("PostgreSQL token store", .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresTokenStoreTests {
        @Test("tokens save, read back, list, touch and revoke; only a hash is kept")
        func tokens() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try await TokenStoreConformance.run(fixture.store)
        }

        @Test("jobs save, update, keep a request to stop, and old ended ones are deleted")
        func jobs() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try await JobStoreConformance.run(fixture.store)
        }

        @Test("workouts' summaries save, replace, and go with their workout")
        func summaries() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try await SummaryStoreConformance.run(fixture.store)
        }
    }

    @Suite("PostgreSQL store", .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresStoreTests {
        /// What a follower has seen, checked as it goes: no repeats (a route added twice, or deleted twice) and, at
        /// the end, no gaps (the same current routes as the store). A deletion of a route it never received is
        /// allowed: a route's "added" row lives only while the route is current, so a route added and replaced
        /// between two reads is seen only as deleted (consumers apply deletions idempotently: TailingChanges.md). It
        /// happened in about 1 run in 8.
        actor Follower {
            var current: [UUID: RouteSample] = [:]
            var added: Set<UUID> = []
            var deleted: Set<UUID> = []
            var anchor: ChangeAnchor?
            var sets = 0
            var problems: [String] = []

            func apply(_ set: ChangeSet) {
                sets += 1
                for d in set.deleted {
                    if !deleted.insert(d.id).inserted { problems.append("deleted \(d.id) twice") }
                    current.removeValue(forKey: d.id)
                }
                for r in set.added {
                    if !added.insert(r.id).inserted { problems.append("added \(r.id) twice") }
                    if deleted.contains(r.id) { problems.append("added \(r.id) after its deletion") }
                    current[r.id] = r
                }
                let identities = current.values.map { "\($0.source.name)/\($0.sync.identifier)" }
                if Set(identities).count != identities.count { problems.append("two current versions of one identity") }
                anchor = set.anchor
            }
        }

        static func save(
            _ store: any RouteStore, workout: Workout, id: String, version: Int64, seed: UInt64
        ) async throws -> SaveOutcome {
            let locations = StoreConformance.locations(count: 50, seed: seed)
            var metadata = StoreConformance.sync(id, version)
            metadata["writer"] = .string("seed \(seed)")
            let route = RouteSample(
                workoutID: workout.id, source: workout.source, sync: SyncIdentity(identifier: id, version: version),
                start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: locations.count,
                metadata: metadata)
            return try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
        }

        @Test(
            "concurrent writers on their own pools and a follower: no gap, no repeat, never two current versions",
            .timeLimit(.minutes(3)))
        func concurrentWritersAndFollower() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let source = try Source(name: "shared")
            let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
            _ = try await fixture.store.saveWorkout(workout)
            let follower = Follower()
            let followed = Task {
                for try await set in fixture.store.changeUpdates(since: nil, limit: 7) { await follower.apply(set) }
            }
            defer { followed.cancel() }
            let writers = 4
            let operations = 60
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    let store = try await fixture.another()
                    group.addTask {
                        defer { store.close() }
                        var random = SplitMix64(seed: UInt64(w + 1))
                        for op in 0..<operations {
                            let id = "route-\(random.next() % 12)"
                            if random.next() % 6 == 0 {
                                // Delete whatever is current for the identity (another writer may get there first).
                                for r in try await store.routes(matching: RouteFilter(source: source, syncIdentifier: id)) {
                                    do { try await store.deleteRoute(id: r.id, as: source) } catch let e as RouteKitError {
                                        guard e.code == .notFound else { throw e }
                                    }
                                }
                            } else {
                                _ = try await Self.save(
                                    store, workout: workout, id: id, version: Int64(1 + random.next() % 20),
                                    seed: UInt64(w * 1000 + op))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await fixture.store.routes(matching: RouteFilter())
            let head = try await fixture.store.currentAnchor()
            let deadline = ContinuousClock.now + .seconds(30)
            while await follower.anchor != head, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(await follower.anchor == head, "the follower caught up with the store's newest change")
            let problems = await follower.problems
            #expect(problems.isEmpty, "\(problems.count) problem(s): \(problems.prefix(5))")
            #expect(Set(await follower.current.keys) == Set(stored.map(\.id)), "the follower holds the current routes")
            let identities = stored.map(\.sync.identifier)
            #expect(Set(identities).count == identities.count, "one current version per identity")
            #expect(await follower.sets > 1)
        }

        @Test("a workout deleted while its routes are deleted on another connection: each deletion is logged once")
        func concurrentDeletes() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let other = try await fixture.another()
            defer { other.close() }
            let source = try Source(name: "deleter")
            let start = try await fixture.store.currentAnchor()
            var saved: [UUID] = []
            for round in 0..<8 {
                let w = Workout(activityType: .running, start: nil, end: nil, source: source)
                _ = try await fixture.store.saveWorkout(w)
                var routes: [UUID] = []
                for k in 0..<5 {
                    let r = try await Self.save(fixture.store, workout: w, id: "r\(round)-\(k)", version: 1, seed: 1)
                    routes.append(try #require(r.savedID))
                }
                saved += routes
                async let byWorkout: Void = fixture.store.deleteWorkout(id: w.id, as: source)
                async let byRoute: Int = {
                    var deleted = 0
                    for id in routes.reversed() {
                        do {
                            try await other.deleteRoute(id: id, as: source)
                            deleted += 1
                        } catch let e as RouteKitError {
                            guard e.code == .notFound else { throw e }
                        }
                    }
                    return deleted
                }()
                _ = try await (byWorkout, byRoute)
            }
            var deletions: [UUID: Int] = [:]
            var anchor = start
            while true {
                let set = try await fixture.store.changes(since: anchor, matching: .all, limit: 100)
                for d in set.deleted { deletions[d.id, default: 0] += 1 }
                anchor = set.anchor
                if !set.hasMore { break }
            }
            #expect(Set(deletions.keys) == Set(saved), "every route's deletion is in the feed")
            #expect(deletions.values.allSatisfy { $0 == 1 }, "and only once")
            #expect(try await fixture.store.routes(matching: RouteFilter()).isEmpty)
        }

        @Test("leases across stores: one holder at a time, expiry on the server's clock, batch claims never overlap")
        func leasesAcrossStores() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let other = try await fixture.another()
            defer { other.close() }
            let a = UUID()
            let b = UUID()
            let keys = (0..<40).map { "route-\($0)" }
            async let first = fixture.store.claimWork(keys: keys, holder: a, seconds: 30)
            async let second = other.claimWork(keys: keys.reversed(), holder: b, seconds: 30)
            let (ha, hb) = try await (first, second)
            #expect(ha.isDisjoint(with: hb), "no key held twice")
            #expect(ha.union(hb) == Set(keys), "every key taken by one of them")
            #expect(try await other.claimWork(key: "short", holder: b, seconds: 5))
            #expect(try await !fixture.store.claimWork(key: "short", holder: a, seconds: 10), "live claim")
            try await Task.sleep(for: .milliseconds(6000))
            #expect(try await fixture.store.claimWork(key: "short", holder: a, seconds: 10), "expired claim taken over")
        }

        @Test("a long route is read whole from its snapshot while it is replaced, and the snapshot's connection closes")
        func longRouteSnapshot() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let store = fixture.store
            let source = try Source(name: "long")
            let w = Workout(activityType: .running, start: nil, end: nil, source: source)
            _ = try await store.saveWorkout(w)
            // More than 64 chunks: read through a connection of its own holding a REPEATABLE READ snapshot.
            let points = StoreConformance.locations(count: 70 * 1024, seed: 5)
            let b = try await RouteBuilder(store: store, source: source, order: .insertion)
            try await b.insert(points)
            let v1 = try await b.finish(workout: w, metadata: StoreConformance.sync("long", 1)).route
            func snapshotConnections() throws -> Int {
                let name = URLComponents(string: fixture.url)?.path.dropFirst() ?? ""
                return Int(
                    try PostgresTestServer.sql(
                        fixture.url,
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND state = 'idle in transaction'"
                    )) ?? -1
            }
            var seen: [Location] = []
            for try await batch in store.locations(of: v1.id, batchSize: 5000) {
                if seen.isEmpty {
                    #expect(try snapshotConnections() == 1, "the query holds one snapshot")
                    let r = try await Self.save(store, workout: w, id: "long", version: 2, seed: 9)
                    #expect(r.savedID != nil, "replaced (and v1 deleted) mid-read")
                }
                seen += batch.locations
            }
            #expect(seen.count == points.count)
            #expect(zip(seen, points).allSatisfy { $0.latitude == $1.latitude && $0.timestamp == $1.timestamp })
            var closed = false
            for _ in 0..<100 where !closed {
                closed = try snapshotConnections() == 0
                if !closed { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(closed, "the snapshot's connection is closed at the end")
        }

        @Test("a bad URL and an unreachable server are typed errors that never print the password")
        func openErrors() async throws {
            do {
                _ = try await PostgresStore(url: "postgres://u:secret@127.0.0.1:5432/db?sslmode=sometimes")
                Issue.record("a bad sslmode was accepted")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(!error.description.contains("secret"))
            }
            do {
                // Port 1 on loopback: nothing listens there.
                _ = try await PostgresStore(
                    url: "postgres://u:secret@127.0.0.1:1/db?sslmode=disable",
                    options: PostgresStore.Options(connectTimeout: .seconds(2)))
                Issue.record("opening an unreachable server succeeded")
            } catch {
                #expect(error.code == .unavailable, "\(error)")
                #expect(!error.description.contains("secret"))
            }
        }

        @Test(
            "TLS: sslmode=require talks TLS; verify-full refuses a certificate it cannot verify",
            .enabled(if: PostgresTestServer.speaksTLS, "the test server does not speak TLS (ssl = off)"))
        func tls() async throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let store = try await PostgresStore(url: PostgresTestServer.url(url, parameter: "sslmode", "require"))
            defer { store.close() }
            let source = try Source(name: "tls")
            _ = try await store.saveWorkout(Workout(activityType: .running, start: nil, end: nil, source: source))
            let mine = "FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE datname = current_database() AND pid <> pg_backend_pid()"
            #expect(try PostgresTestServer.sql(url, "SELECT count(*) \(mine) AND ssl") != "0", "connections use TLS")
            #expect(try PostgresTestServer.sql(url, "SELECT count(*) \(mine) AND NOT ssl") == "0", "and none without")
            do {
                _ = try await PostgresStore(url: PostgresTestServer.url(url, parameter: "sslmode", "verify-full"))
                Issue.record("verify-full accepted a self-signed certificate")
            } catch {
                #expect(error.code == .storage && error.message.contains("TLS"), "\(error)")
            }
        }

        @Test("a store written by a newer RouteKit is refused")
        func newerSchemaRefused() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try PostgresTestServer.sql(fixture.url, "INSERT INTO routekit_migration(id) VALUES ('v99-future')")
            do {
                _ = try await fixture.another()
                Issue.record("a newer schema was accepted")
            } catch {
                #expect((error as? RouteKitError)?.code == .incompatibleStore, "\(error)")
            }
        }
    }
    /// Collects log messages (their labels and levels), for tests of where a component logs.
    final class CollectingLogHandler: LogHandler, @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [(label: String, level: Logger.Level)] = []
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        let label: String

        init(label: String) { self.label = label }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { lock.withLock { lines.append((label, event.level)) } }

        var count: Int { lock.withLock { lines.count } }
    }

    @Suite(
        "PostgreSQL store: logger and lifetime", .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresLoggerAndServiceTests {
        @Test("the driver logs to the logger the options give, at its level")
        func driverLogsToGivenLogger() async throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let handler = CollectingLogHandler(label: "test.postgres")
            var logger = Logger(label: "test.postgres") { _ in handler }
            logger.logLevel = .trace
            let store = try await PostgresStore(
                url: url, options: PostgresStore.Options(maximumConnections: 2, logger: logger))
            defer { store.close() }
            _ = try await store.workouts(matching: WorkoutFilter())
            #expect(handler.count > 0, "the driver logged to the given logger")

            let quiet = CollectingLogHandler(label: "test.quiet")
            var quietLogger = Logger(label: "test.quiet") { _ in quiet }
            quietLogger.logLevel = .critical
            let other = try await PostgresStore(
                url: url, options: PostgresStore.Options(maximumConnections: 2, logger: quietLogger))
            defer { other.close() }
            _ = try await other.workouts(matching: WorkoutFilter())
            #expect(quiet.count == 0, "and nothing below its level")
        }

        @Test("as a service it runs until its group shuts down, then its pool is closed", .timeLimit(.minutes(1)))
        func runsAsService() async throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let store = try await PostgresStore(url: url, options: PostgresStore.Options(maximumConnections: 2))
            let group = ServiceGroup(services: [store], logger: Logger(label: "test.group"))
            let running = Task { try await group.run() }
            _ = try await store.workouts(matching: WorkoutFilter())
            await group.triggerGracefulShutdown()
            try await running.value
            await #expect(throws: RouteKitError.self, "a closed pool answers no more") {
                _ = try await store.workouts(matching: WorkoutFilter())
            }
        }
    }
#else
    @Suite("PostgreSQL store")
    struct PostgresStoreTests {
        @Test("PostgreSQL tests", .disabled("this build has no PostgreSQL store: build and test with --traits Postgres"))
        func needsTrait() {}
    }

#endif
