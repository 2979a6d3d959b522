import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitTesting
import Testing

#if Postgres
    @testable import RouteKitPostgres

    @Suite("PostgreSQL people", .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresPeopleTests {
        @Test(
            "people: isolation, per-person sync identities and feeds, compaction, tokens, people, builders, erasure",
            .timeLimit(.minutes(5)))
        func conformance() async throws {
            var fixtures: [PostgresFixture] = []
            defer { for fixture in fixtures { fixture.done() } }
            try await PeopleConformance.run { () async throws -> PostgresStore in
                let fixture = try await PostgresFixture()
                fixtures.append(fixture)
                return fixture.store
            }
        }

        @Test(
            "webhook subscriptions: per person, rotation, deliveries from a cursor, due work, erasure, admin-wide ones",
            .timeLimit(.minutes(3)))
        func webhooks() async throws {
            var fixtures: [PostgresFixture] = []
            defer { for fixture in fixtures { fixture.done() } }
            try await WebhookConformance.run { () async throws -> PostgresStore in
                let fixture = try await PostgresFixture()
                fixtures.append(fixture)
                return fixture.store
            }
        }

        // Every store check, run as a person of a store where someone else already has objects of every kind.
        @Test(.timeLimit(.minutes(2)), arguments: StoreConformance.checks)
        func crowded(_ check: ConformanceCheck) async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            try await check.run(try await PeopleConformance.crowdedView(of: fixture.store))
        }

        @Test(
            "two stores writing for one person while two write for another: no gap, nothing of the other's",
            .timeLimit(.minutes(3)))
        func twoStoresOnePerson() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let ana = PersonID(UUID())
            let ben = PersonID(UUID())
            try await fixture.store.addPerson(Person(id: ana, name: "Ana"))
            try await fixture.store.addPerson(Person(id: ben, name: "Ben"))
            // Both write as the same source, with the same sync identifiers.
            let source = try Source(name: "shared")
            let workoutAna = Workout(activityType: .running, start: nil, end: nil, source: source)
            let workoutBen = Workout(activityType: .running, start: nil, end: nil, source: source)
            let view = fixture.store.forPerson(ana)
            _ = try await view.saveWorkout(workoutAna)
            _ = try await fixture.store.forPerson(ben).saveWorkout(workoutBen)
            let follower = PostgresStoreTests.Follower()
            let followed = Task {
                for try await set in view.changeUpdates(since: nil, limit: 7) { await follower.apply(set) }
            }
            defer { followed.cancel() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<4 {
                    let store = try await fixture.another()
                    let person = w % 2 == 0 ? ana : ben
                    let workout = w % 2 == 0 ? workoutAna : workoutBen
                    group.addTask {
                        defer { store.close() }
                        let mine = store.forPerson(person)
                        var random = SplitMix64(seed: UInt64(w + 1))
                        for op in 0..<40 {
                            let id = "route-\(random.next() % 8)"
                            if random.next() % 6 == 0 {
                                for r in try await mine.routes(
                                    matching: RouteFilter(source: source, syncIdentifier: id))
                                {
                                    do {
                                        try await mine.deleteRoute(id: r.id, as: source)
                                    } catch let e as RouteKitError {
                                        guard e.code == .notFound else { throw e }
                                    }
                                }
                            } else {
                                _ = try await PostgresStoreTests.save(
                                    mine, workout: workout, id: id, version: Int64(1 + random.next() % 20),
                                    seed: UInt64(w * 1000 + op))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await view.routes(matching: RouteFilter())
            let head = try await view.currentAnchor()
            let deadline = ContinuousClock.now + .seconds(30)
            while await follower.anchor != head, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let reached = await follower.anchor
            #expect(reached == head, "Ana's follower caught up with Ana's newest change")
            let problems = await follower.problems
            #expect(problems.isEmpty, "\(problems.count) problem(s): \(problems.prefix(5))")
            let current = await follower.current
            #expect(Set(current.keys) == Set(stored.map(\.id)), "the follower holds Ana's current routes")
            let foreign = current.values.filter { $0.workoutID != workoutAna.id }
            #expect(foreign.isEmpty, "and none of Ben's")

            // The head is the end of Ana's newest transaction, and Ben's commits do not move it.
            let headRow = try PostgresTestServer.sql(
                fixture.url, "SELECT head FROM person_feed WHERE person = '\(ana)'")
            let newest = try PostgresTestServer.sql(
                fixture.url, "SELECT max(txn_end) FROM change WHERE person = '\(ana)'")
            #expect(headRow == newest)
            _ = try await PostgresStoreTests.save(
                fixture.store.forPerson(ben), workout: workoutBen, id: "late", version: 1, seed: 7)
            let after = try await view.currentAnchor()
            #expect(after == head, "Ben's commit leaves Ana's anchor")
            let owed = try await view.changes(since: head, matching: .all, limit: 10)
            #expect(owed.count == 0 && owed.anchor == head)
        }

        /// Gives `view`'s person objects of every kind: a workout with a route (and its heart rate), power, an effort
        /// score, zone settings of the workout and the source, privacy zones, a pending builder, a summary, a job and
        /// a token.
        static func populate(_ view: PostgresStore, source: Source) async throws {
            let w = Workout(
                activityType: .running, start: nil, end: nil, source: source,
                sync: SyncIdentity(identifier: "w", version: 1))
            _ = try await view.saveWorkout(w)
            let heartRate = (0..<50).map {
                QuantitySample(timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64($0))), value: 120.5)
            }
            let built = try await RouteBuilder(store: view, source: source, order: .insertion)
            try await built.insert(StoreConformance.locations(count: 50), related: [.heartRate: heartRate])
            _ = try await built.finish(workout: w, metadata: StoreConformance.sync("r", 1))
            try await view.saveSeries(
                QuantitySeries(type: .power, samples: Array(heartRate.prefix(10))), workout: w.id, as: source)
            try await view.relateEffort(try EffortScore(workoutID: w.id, source: source, score: 7, isManual: true))
            try await view.setZoneSettings(ZoneSettings(maximumHeartRate: 190.5), of: source)
            try await view.setZoneSettings(ZoneSettings(ftp: 250.5), ofWorkout: w.id, as: source)
            try await view.setPrivacyZones(
                [try PrivacyZone(latitude: 47.37, longitude: 8.54, radiusMetres: 250)], of: source)
            let left = try await RouteBuilder(store: view, source: source, order: .insertion)
            try await left.insert(StoreConformance.locations(count: 30, start: 1_700_100_000))
            try await view.saveSummary(StoredSummary(basis: "b", document: "{}"), ofWorkout: w.id)
            let now = Date()
            _ = try await view.saveJob(
                StoredJob(id: UUID(), state: .finished, document: "{}", created: now, updated: now))
            try await view.saveToken(
                APIToken(
                    id: UUID(), name: "phone", person: view.person, source: source, scopes: [.read, .write],
                    secretHash: String(repeating: "ab", count: 32), created: now))
            let hook = WebhookSubscription(
                id: UUID(), person: view.person, url: "https://hooks.example/a", types: [.route],
                secret: "whsec_" + String(repeating: "A", count: 44), created: now)
            _ = try await view.addWebhook(hook, limit: 20)
        }

        @Test("erasing a person deletes every row of theirs in every table and their chunks; the others' stay")
        func erasureLeavesNoRows() async throws {
            let fixture = try await PostgresFixture()
            defer { fixture.done() }
            let gone = PersonID(UUID())
            let kept = PersonID(UUID())
            try await fixture.store.addPerson(Person(id: gone, name: "gone"))
            try await fixture.store.addPerson(Person(id: kept, name: "kept"))
            let source = try Source(name: "watch")
            try await Self.populate(fixture.store.forPerson(gone), source: source)
            try await Self.populate(fixture.store.forPerson(kept), source: source)
            func count(_ statement: String) throws -> Int {
                Int(try PostgresTestServer.sql(fixture.url, statement)) ?? -1
            }
            let containers = """
                SELECT container FROM route WHERE person = '\(gone)'
                UNION SELECT container FROM series WHERE person = '\(gone)'
                UNION SELECT uuid FROM builder WHERE person = '\(gone)'
                """
            let theirs = try PostgresTestServer.sql(
                fixture.url, "SELECT string_agg(quote_literal(c), ',') FROM (\(containers)) AS x(c)")
            let theirChunks = try count("SELECT count(*) FROM chunk WHERE container IN (\(theirs))")
            #expect(theirChunks > 0, "the person has chunks (routes, series, a builder)")
            let allChunks = try count("SELECT count(*) FROM chunk")

            let erased = try await fixture.store.erasePerson(id: gone)
            #expect(erased)
            for table in PostgresStore.personTables {
                #expect(try count("SELECT count(*) FROM \(table) WHERE person = '\(gone)'") == 0, "\(table)")
                #expect(try count("SELECT count(*) FROM \(table) WHERE person = '\(kept)'") > 0, "\(table) of another")
            }
            #expect(try count("SELECT count(*) FROM person WHERE id = '\(gone)'") == 0)
            #expect(try count("SELECT count(*) FROM chunk WHERE container IN (\(theirs))") == 0, "their chunks")
            #expect(try count("SELECT count(*) FROM chunk") == allChunks - theirChunks, "the others' chunks stay")
            let again = try await fixture.store.erasePerson(id: gone)
            #expect(!again)
        }

        /// A new database whose schema is the one before migration `id`, as a release of then left it.
        static func databaseBefore(_ id: String) throws -> String {
            let url = try PostgresTestServer.freshDatabase()
            do {
                try PostgresTestServer.sql(
                    url,
                    "CREATE TABLE routekit_migration(id TEXT PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now())")
                for m in Schema.migrations.prefix(while: { $0.id != id }) {
                    try PostgresTestServer.sql(url, m.sql)
                    try PostgresTestServer.sql(url, "INSERT INTO routekit_migration(id) VALUES ('\(m.id)')")
                }
            } catch {
                PostgresTestServer.drop(url)
                throw error
            }
            return url
        }

        @Test(
            "a store written before people: everything is the default person's, and an old anchor stays valid")
        func migrationToPeople() async throws {
            // The schema as the release before people left it (the migrations after it, such as v10-webhooks, come
            // when the store opens), and objects written by it.
            let url = try Self.databaseBefore("v9-people")
            defer { PostgresTestServer.drop(url) }
            let storeID = UUID()
            let workoutID = "11111111-1111-1111-1111-111111111111"
            let routeID = "22222222-2222-2222-2222-222222222222"
            let tokenID = "33333333-3333-3333-3333-333333333333"
            let jobID = "44444444-4444-4444-4444-444444444444"
            let settings = try StoredRecord.body(of: ZoneSettings(maximumHeartRate: 190.5))
            let secret = String(repeating: "ab", count: 32)
            try PostgresTestServer.sql(
                url,
                """
                INSERT INTO store_info(key, value) VALUES ('store_id', '\(storeID.uuidString.lowercased())');
                INSERT INTO workout(uuid, source, sync_id, sync_version, body)
                VALUES ('\(workoutID)', 'old', 'w1', 1, '{"activity":"running","events":[],"metadata":{}}');
                INSERT INTO route(uuid, workout_uuid, source, sync_id, sync_version, current, raw, location_count,
                    container, body)
                VALUES ('\(routeID)', '\(workoutID)', 'old', 'r1', 3, TRUE, TRUE, 0, 'none', '{"metadata":{}}');
                UPDATE feed_counter SET position = 2;
                INSERT INTO change(position, txn, txn_end, token, added, kind, route_uuid, detail, workout_uuid,
                    source, sync_id, sync_version, committed)
                VALUES (1, 1, 2, 77, TRUE, 'workout', '\(workoutID)', '', '\(workoutID)', 'old', 'w1', 1, 0),
                    (2, 1, 2, 77, TRUE, 'route', '\(routeID)', '', '\(workoutID)', 'old', 'r1', 3, 0);
                INSERT INTO change_txn(txn_end, token, committed) VALUES (2, 77, 0);
                INSERT INTO api_token(id, name, source, scopes, secret_hash, created)
                VALUES ('\(tokenID)', 'phone', 'old', 'read,write', '\(secret)', 1700000000);
                INSERT INTO job(id, state, document, created, updated) VALUES ('\(jobID)', 'finished', '{}', 0, 0);
                INSERT INTO privacy_zone(source, latitude, longitude, radius) VALUES ('old', 47.37, 8.54, 250);
                INSERT INTO zone_settings(source, body) VALUES ('old', '\(settings)');
                """)
            let handedOut = ChangeLogState(storeID: storeID, epoch: 1, floor: 0, head: 2, headToken: 77).headAnchor

            let store = try await PostgresStore(url: url, options: PostgresStore.Options(maximumConnections: 2))
            defer { store.close() }
            #expect(store.person == .default)
            #expect(store.storeID == storeID)
            let old = try Source(name: "old")
            let everything = ChangePredicate(types: Set(ChangeObjectType.allCases))
            let workoutUUID = try #require(UUID(uuidString: workoutID))
            let routeUUID = try #require(UUID(uuidString: routeID))
            let jobUUID = try #require(UUID(uuidString: jobID))
            let w = try #require(try await store.workout(id: workoutUUID))
            let route = try await store.route(id: routeUUID)
            #expect(route != nil)
            let current = try await store.currentAnchor()
            #expect(current == handedOut, "the default person's head is the log's head")
            let nothing = try await store.changes(since: handedOut, matching: everything, limit: 10)
            #expect(nothing.count == 0 && nothing.anchor == handedOut, "the anchor handed out before is still valid")
            let first = try await store.changes(since: nil, matching: everything, limit: 10)
            #expect(first.added.map(\.id.uuidString) == [routeID.uppercased()])
            #expect(first.addedObjects.map(\.key.id) == [w.id])
            let tokens = try await store.tokens(of: .default)
            #expect(tokens.map(\.id.uuidString) == [tokenID.uppercased()], "tokens are the default person's")
            let admins = try await store.tokens(of: nil)
            #expect(admins.isEmpty, "none is an admin token")
            let job = try await store.job(id: jobUUID)
            #expect(job != nil)
            let zones = try await store.privacyZones(of: old)
            #expect(zones.count == 1)
            let settingsBack = try await store.zoneSettings(of: old)
            #expect(settingsBack.maximumHeartRate == 190.5)
            let people = try await store.people()
            #expect(people.map(\.id) == [.default] && people.first?.name == "default")

            // Another person sees none of it, and has an identity of their own.
            let ben = store.forPerson(PersonID(UUID()))
            let benWorkouts = try await ben.workouts(matching: WorkoutFilter())
            #expect(benWorkouts.isEmpty)
            let benRoute = try await ben.route(id: routeUUID)
            #expect(benRoute == nil)
            let benJob = try await ben.job(id: jobUUID)
            #expect(benJob == nil)
            let benZones = try await ben.privacyZones(of: old)
            #expect(benZones.isEmpty)
            let benFirst = try await ben.changes(since: nil, matching: everything, limit: 10)
            #expect(benFirst.count == 0)
            #expect(benFirst.anchor.position == 0, "Ben has no head of his own yet")
            let same = Workout(
                activityType: .running, start: nil, end: nil, source: old,
                sync: SyncIdentity(identifier: "w1", version: 1))
            let savedByBen = try await ben.saveWorkout(same)
            #expect(savedByBen == .inserted(same.id), "the same sync identity is Ben's own")
            let benMid = try await ben.currentAnchor()

            // The default person writes on, and the anchor handed out before sees it.
            let replaced = try await PostgresStoreTests.save(store, workout: w, id: "r1", version: 4, seed: 1)
            let newRoute = try #require(replaced.savedID)
            let next = try await store.changes(since: handedOut, matching: .all, limit: 10)
            #expect(next.deleted.map(\.id.uuidString) == [routeID.uppercased()])
            #expect(next.added.map(\.id) == [newRoute])
            let benAfter = try await ben.currentAnchor()
            #expect(benAfter == benMid, "the default person's commit leaves Ben's anchor")
        }

        @Test("a store of schema v11 shows its admin-wide subscriptions' attempts made before (v12)")
        func migrationFromV11() async throws {
            let url = try Self.databaseBefore("v12-admin-webhook-attempts")
            defer { PostgresTestServer.drop(url) }
            let ana = PersonID(UUID())
            let ben = PersonID(UUID())
            let everyone = UUID()
            let made = (1...3).map { WebhookConformance.attempt($0) }
            let key = everyone.uuidString.lowercased()
            // Ana's cursor has failed twice (attempts 1 and 3, still pending); Ben's attempt 2 was acknowledged.
            try PostgresTestServer.sql(
                url,
                """
                INSERT INTO webhook(id, url, types, secret, cursor, created)
                VALUES ('\(key)', 'https://hooks.example/all', 'route', 'whsec_a', 'c0', 1700000000);
                INSERT INTO webhook(id, person, parent, url, types, secret, cursor, attempts, recent, created)
                VALUES ('\(UUID().uuidString.lowercased())', '\(ana)', '\(key)', 'https://hooks.example/all', 'route',
                        'whsec_a', 'c0', 2, '\(WebhookAttemptRecord.text(of: [made[0], made[2]]))', 1700000000),
                    ('\(UUID().uuidString.lowercased())', '\(ben)', '\(key)', 'https://hooks.example/all', 'route',
                        'whsec_a', 'c0', 0, '\(WebhookAttemptRecord.text(of: [made[1]]))', 1700000000);
                """)
            let store = try await PostgresStore(url: url, options: PostgresStore.Options(maximumConnections: 2))
            defer { store.close() }
            try await WebhookConformance.expectMigratedAttempts(store, id: everyone, ana: ana, ben: ben)
        }
    }
#endif
