import Foundation
import GRDB
@_spi(RouteKitBackend) import RouteKit
import RouteKitTesting
import Testing

@testable import RouteKitSQLite

@Suite("SQLite people")
struct SQLitePeopleTests {
    static func temporaryFolder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The conformance suite's checks of people on one store (another person's objects, feed and tokens).
    @Test("two people on one store see only their own objects, feeds and tokens; erasure", .timeLimit(.minutes(10)))
    func conformance() async throws {
        try await PeopleConformance.run(makeStore: { try makeTemporaryStore() })
    }

    /// The conformance suite's checks of webhook subscriptions (the `webhook` table of migrations v15-webhooks and
    /// v16-admin-webhooks).
    @Test("webhook subscriptions: per person, rotation, deliveries from a cursor, due work, erasure, admin-wide ones")
    func webhooks() async throws {
        try await WebhookConformance.run(makeStore: { try makeTemporaryStore() })
    }

    @Test("a store of schema v15 keeps its people's webhook subscriptions, and takes admin-wide ones (v16)")
    func migrationFromV15() async throws {
        let folder = try Self.temporaryFolder("v15")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let person = PersonID(UUID())
        let id = UUID()
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v15-webhooks")
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO person(id, name, created) VALUES (?, 'Ana', 0)", arguments: [person.description])
                try db.execute(
                    sql: """
                        INSERT INTO webhook(id, person, url, types, secret, paused_reason, cursor, attempts, recent,
                            created)
                        VALUES (?, ?, 'https://hooks.example/a', 'route', 'whsec_a', 'why', 'c0', 2, '[]', 1700000000)
                        """, arguments: [id.uuidString.lowercased(), person.description])
            }
        }
        let store = try SQLiteStore(path: path)
        let view = store.forPerson(person)
        let read = try await view.webhook(id: id)
        #expect(read?.person == person)
        #expect(read?.parent == nil)
        #expect(read?.url == "https://hooks.example/a")
        #expect(read?.cursor == "c0")
        #expect(read?.attempts == 2)
        #expect(read?.state == .paused(reason: "why"))
        #expect(read?.created == Date(timeIntervalSince1970: 1_700_000_000))
        let everyone = WebhookSubscription(
            person: nil, url: "https://hooks.example/all", types: [.route], secret: "whsec_b")
        let added = try await store.addAdminWebhook(everyone, limit: 20)
        #expect(added)
        let admins = try await store.adminWebhooks()
        #expect(admins.map(\.id) == [everyone.id])
        let own = try await view.webhooks()
        #expect(own.map(\.id) == [id])
    }

    @Test("a store of schema v16 shows its admin-wide subscriptions' attempts made before (v17)")
    func migrationFromV16() async throws {
        let folder = try Self.temporaryFolder("v16")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let ana = PersonID(UUID())
        let ben = PersonID(UUID())
        let everyone = UUID().uuidString.lowercased()
        let made = (1...3).map { WebhookConformance.attempt($0) }
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v16-admin-webhooks")
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO webhook(id, url, types, secret, cursor, created)
                        VALUES (?, 'https://hooks.example/all', 'route', 'whsec_a', 'c0', 1700000000)
                        """, arguments: [everyone])
                // Ana's cursor has failed twice (attempts 1 and 3, still pending); Ben's attempt 2 was acknowledged.
                for (person, attempts, failed) in [(ana, [made[0], made[2]], 2), (ben, [made[1]], 0)] {
                    try db.execute(
                        sql: """
                            INSERT INTO webhook(id, person, parent, url, types, secret, cursor, attempts, recent,
                                created)
                            VALUES (?, ?, ?, 'https://hooks.example/all', 'route', 'whsec_a', 'c0', ?, ?, 1700000000)
                            """,
                        arguments: [
                            UUID().uuidString.lowercased(), person.description, everyone, failed,
                            WebhookAttemptRecord.text(of: attempts),
                        ])
                }
            }
        }
        let store = try SQLiteStore(path: path)
        let id = try #require(UUID(uuidString: everyone))
        try await WebhookConformance.expectMigratedAttempts(store, id: id, ana: ana, ben: ben)
    }

    @Test("a store written before people (schema v13) opens with everything the default person's; its anchors hold")
    func migrationFromV13() async throws {
        let folder = try Self.temporaryFolder("v13")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let storeID = UUID()
        let workout = "11111111-1111-1111-1111-111111111111"
        let route = "22222222-2222-2222-2222-222222222222"
        let gone = "44444444-4444-4444-4444-444444444444"
        let tokenID = UUID()
        let jobID = UUID()
        let settings = ZoneSettings(maximumHeartRate: 190, restingHeartRate: 50)
        let settingsBody = try StoredRecord.body(of: settings)
        var transactions: [(end: Int64, token: Int64)] = []
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v13-workout-zone-settings")
            transactions = try await pool.write { db -> [(end: Int64, token: Int64)] in
                try db.execute(
                    sql: "INSERT INTO store_info(key, value) VALUES ('store_id', ?)",
                    arguments: [storeID.uuidString.lowercased()])
                try db.execute(
                    sql: "INSERT INTO workout(uuid, source, sync_id, sync_version, body) VALUES (?, 'old', 'w', 1, ?)",
                    arguments: [workout, #"{"activity":"running","events":[],"metadata":{}}"#])
                try db.execute(
                    sql: """
                        INSERT INTO route(uuid, workout_uuid, source, sync_id, sync_version, current, raw,
                            location_count, container, body)
                        VALUES (?, ?, 'old', 'r', 1, 1, 1, 0, 'c', '{"metadata":{}}')
                        """, arguments: [route, workout])
                try db.execute(
                    sql: """
                        INSERT INTO api_token(id, name, source, scopes, secret_hash, created)
                        VALUES (?, 'phone', 'old', 'read,write', ?, 1700000000)
                        """, arguments: [tokenID.uuidString.lowercased(), String(repeating: "ab", count: 32)])
                try db.execute(
                    sql: "INSERT INTO zone_settings(source, body) VALUES ('old', ?)", arguments: [settingsBody])
                try db.execute(
                    sql: "INSERT INTO privacy_zone(source, latitude, longitude, radius) VALUES ('old', 10, 20, 300)")
                try db.execute(
                    sql: "INSERT INTO job(id, state, document, created, updated) VALUES (?, 'finished', '{}', 0, 0)",
                    arguments: [jobID.uuidString.lowercased()])
                // The history as RouteKit of schema v13 wrote it: the workout and the route added in one
                // transaction, then another route's deletion in a second.
                try Schema.Legacy.recordAddition(
                    db,
                    FeedRecord(
                        type: .workout, key: workout, workout: workout, source: "old", syncIdentifier: "w", version: 1))
                try Schema.Legacy.recordAddition(
                    db,
                    FeedRecord(
                        type: .route, key: route, workout: workout, source: "old", syncIdentifier: "r", version: 1))
                try Schema.Legacy.sealChanges(db, token: 111)
                try db.execute(
                    sql: """
                        INSERT INTO change(txn, txn_end, token, added, kind, route_uuid, detail, workout_uuid, source,
                            sync_id, sync_version, committed)
                        VALUES (0, 0, 0, 0, 'route', ?, '', ?, 'old', 'gone', 1, 0)
                        """, arguments: [gone, workout])
                try Schema.Legacy.sealChanges(db, token: 222)
                return try Row.fetchAll(db, sql: "SELECT txn_end, token FROM change_txn ORDER BY txn_end").map {
                    row -> (end: Int64, token: Int64) in (end: row["txn_end"], token: row["token"])
                }
            }
        }
        try #require(transactions.count == 2)
        // The anchors RouteKit of schema v13 handed out: its head, and the end of the first transaction.
        let oldHead = ChangeAnchor(
            storeID: storeID, epoch: 1, position: transactions[1].end, token: UInt64(transactions[1].token))
        let older = ChangeAnchor(
            storeID: storeID, epoch: 1, position: transactions[0].end, token: UInt64(transactions[0].token))

        let store = try SQLiteStore(path: path)
        #expect(store.person == .default)
        #expect(store.storeID == storeID)
        let workouts = try await store.workouts(matching: WorkoutFilter())
        #expect(workouts.map(\.id.lowercaseText) == [workout])
        let routes = try await store.routes(matching: RouteFilter())
        #expect(routes.map(\.id.lowercaseText) == [route])

        // The old head is still the default person's head, and sees nothing new; the older anchor gets the deletion.
        let head = try await store.currentAnchor()
        #expect(head == oldHead)
        let unchanged = try await store.changes(since: oldHead, matching: .all, limit: 10)
        #expect(unchanged.count == 0)
        #expect(unchanged.anchor == oldHead)
        let fromOlder = try await store.changes(since: older, matching: .all, limit: 10)
        #expect(fromOlder.deleted.map(\.id.lowercaseText) == [gone])
        #expect(fromOlder.anchor == oldHead)
        let everything = try await store.changes(since: nil, matching: .all, limit: 10)
        #expect(everything.added.map(\.id.lowercaseText) == [route])

        // Tokens, settings, zones and jobs are the default person's.
        let tokens = try await store.tokens()
        #expect(tokens.map(\.id) == [tokenID])
        #expect(tokens.first?.person == .default)
        let defaultTokens = try await store.tokens(of: .default)
        #expect(defaultTokens.map(\.id) == [tokenID])
        let adminTokens = try await store.tokens(of: nil)
        #expect(adminTokens.isEmpty)
        let people = try await store.people()
        #expect(people.map(\.id) == [.default])
        #expect(people.first?.name == "default")
        let old = try Source(name: "old")
        let storedSettings = try await store.zoneSettings(of: old)
        #expect(storedSettings == settings)
        let zones = try await store.privacyZones(of: old)
        #expect(zones.count == 1)
        let job = try await store.job(id: jobID)
        #expect(job?.state == .finished)

        // Another person sees none of it.
        let other = store.forPerson(PersonID(UUID()))
        let theirWorkouts = try await other.workouts(matching: WorkoutFilter())
        #expect(theirWorkouts.isEmpty)
        let routeID = try #require(UUID(uuidString: route))
        let theirRoute = try await other.route(id: routeID)
        #expect(theirRoute == nil)
        let theirFeed = try await other.changes(since: nil, matching: .all, limit: 10)
        #expect(theirFeed.count == 0)
        let theirSettings = try await other.zoneSettings(of: old)
        #expect(theirSettings.isEmpty)
        let theirZones = try await other.privacyZones(of: old)
        #expect(theirZones.isEmpty)
        let theirJob = try await other.job(id: jobID)
        #expect(theirJob == nil)

        // Their commits leave the default person's anchor where it was; the default person's own commit moves it.
        _ = try await SQLiteFeedTests.addRoute(other, "theirs", 1)
        let stillHead = try await store.currentAnchor()
        #expect(stillHead == oldHead)
        let stillNothing = try await store.changes(since: oldHead, matching: .all, limit: 10)
        #expect(stillNothing.count == 0)
        #expect(stillNothing.anchor == oldHead)
        _ = try await SQLiteFeedTests.addRoute(store, "mine", 1)
        let mine = try await store.changes(since: oldHead, matching: .all, limit: 10)
        #expect(mine.added.map(\.sync.identifier) == ["mine"])
        #expect(mine.deleted.isEmpty)
    }

    @Test("after a compaction, a quiet person's head is raised to the floor: their anchors then stay valid")
    func compactionAndQuietPeople() async throws {
        let store = try makeTemporaryStore()
        let a = store.forPerson(PersonID(UUID()))
        let b = store.forPerson(PersonID(UUID()))
        let never = store.forPerson(PersonID(UUID()))
        let first = try await SQLiteFeedTests.addRoute(a, "a", 1)
        let anchorA = try await a.currentAnchor()
        _ = try await SQLiteFeedTests.addRoute(b, "b", 1)
        let anchorB = try await b.currentAnchor()
        _ = try await SQLiteFeedTests.addRoute(b, "b", 2)  // its v1's deletion is logged
        let dropped = try await store.compactChanges(before: Date().addingTimeInterval(60))
        #expect(dropped >= 1)
        // Anchors from before the compacted deletion expire, A's too (the floor is the store's).
        let expiredB = await #expect(throws: RouteKitError.self) {
            try await b.changes(since: anchorB, matching: .all, limit: 10)
        }
        #expect(expiredB?.code == .anchorExpired)
        let expiredA = await #expect(throws: RouteKitError.self) {
            try await a.changes(since: anchorA, matching: .all, limit: 10)
        }
        #expect(expiredA?.code == .anchorExpired)
        // A's head now is the floor (A's own transaction's change_txn row was compacted away): valid, owing nothing.
        let headA = try await a.currentAnchor()
        #expect(headA != anchorA)
        let sinceHead = try await a.changes(since: headA, matching: .all, limit: 10)
        #expect(sinceHead.count == 0)
        #expect(sinceHead.anchor == headA)
        // B's next commit leaves it; A's next commit reaches A from it.
        _ = try await SQLiteFeedTests.addRoute(b, "b", 3)
        let stillA = try await a.currentAnchor()
        #expect(stillA == headA)
        let second = try await SQLiteFeedTests.addRoute(a, "a", 2)
        let next = try await a.changes(since: headA, matching: .all, limit: 10)
        #expect(next.added.map(\.id) == [second.id])
        #expect(next.deleted.map(\.id) == [first.id])
        // A person who never wrote gets a valid anchor too.
        let fresh = try await never.currentAnchor()
        let sinceFresh = try await never.changes(since: fresh, matching: .all, limit: 10)
        #expect(sinceFresh.count == 0)
        #expect(sinceFresh.anchor == fresh)
    }

    @Test("erasure leaves nothing of a person (webhooks too) in the database file; another person's data stays")
    func erasureLeavesNothingInTheFile() async throws {
        let folder = try Self.temporaryFolder("erase")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let store = try SQLiteStore(path: path)
        let erased = PersonID(UUID())
        let kept = PersonID(UUID())
        let markA = "erase-me-\(UUID().uuidString)"
        let markB = "keep-me-\(UUID().uuidString)"
        try await store.addPerson(Person(id: erased, name: markA))
        try await store.addPerson(Person(id: kept, name: markB))
        for (person, mark) in [(erased, markA), (kept, markB)] {
            let view = store.forPerson(person)
            let route = try await SQLiteFeedTests.addRoute(view, mark, 1)
            _ = try await SQLiteFeedTests.addRoute(view, mark, 2)
            try await view.saveSummary(StoredSummary(basis: mark, document: mark), ofWorkout: route.workoutID)
            try await view.saveToken(
                APIToken(
                    id: UUID(), name: mark, person: person, source: try Source(name: "feed"), scopes: [.read],
                    secretHash: String(repeating: "ab", count: 32), created: Date()))
            let subscription = WebhookSubscription(
                person: person, url: "https://hooks.example/\(mark)", types: [.route], secret: "whsec_\(mark)")
            let added = try await view.addWebhook(subscription, limit: 20)
            #expect(added)
        }
        let first = try await store.erasePerson(id: erased)
        #expect(first)
        let second = try await store.erasePerson(id: erased)
        #expect(second == false, "a second erasure finds no one")
        let gone = try await store.person(id: erased)
        #expect(gone == nil)
        let erasedTokens = try await store.tokens(of: erased)
        #expect(erasedTokens.isEmpty)
        let erasedHooks = try await store.forPerson(erased).webhooks()
        #expect(erasedHooks.isEmpty)
        let keptRoutes = try await store.forPerson(kept).routes(matching: RouteFilter())
        #expect(keptRoutes.map(\.sync.identifier) == [markB])
        let file = try #require(FileManager.default.contents(atPath: path))
        let wal = FileManager.default.contents(atPath: path + "-wal") ?? Data()
        #expect(file.range(of: Data(markA.utf8)) == nil, "the erased person's text is not in the database file")
        #expect(wal.range(of: Data(markA.utf8)) == nil, "nor in the write-ahead log")
        let keptInFile = file.range(of: Data(markB.utf8)) != nil || wal.range(of: Data(markB.utf8)) != nil
        #expect(keptInFile, "the other person's text is there (the check can see text)")
    }

    @Test("the article's example: a person's view saves a workout the default person does not see")
    func articleExample() async throws {
        let store = try makeTemporaryStore()
        let workout = Workout(activityType: .running, start: nil, end: nil, source: try Source(name: "phone"))
        // snippet.people-view
        let ana = store.forPerson(PersonID(UUID()))  // cheap: nothing is opened or checked
        _ = try await ana.saveWorkout(workout)  // Ana's: the default person does not see it
        // snippet.end
        let seenByDefault = try await store.workout(id: workout.id)
        #expect(seenByDefault == nil)
        let seenByAna = try await ana.workout(id: workout.id)
        #expect(seenByAna == workout)
    }

    @Test("the default person cannot be erased, and a view's person is the one it was made for")
    func defaultPersonAndViews() async throws {
        let store = try makeTemporaryStore()
        let refused = await #expect(throws: RouteKitError.self) { try await store.erasePerson(id: .default) }
        #expect(refused?.code == .invalidArgument)
        let p = PersonID(UUID())
        #expect(store.forPerson(p).person == p)
        #expect(store.forPerson(p).forPerson(.default).person == .default)
        #expect(store.forPerson(p).storeID == store.storeID)
        // A view of the default person sees what the store opened by path wrote.
        let route = try await SQLiteFeedTests.addRoute(store, "d", 1)
        let again = try await store.forPerson(p).forPerson(.default).route(id: route.id)
        #expect(again?.id == route.id)
    }
}
