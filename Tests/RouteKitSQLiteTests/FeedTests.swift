import Foundation
import GRDB
@_spi(RouteKitBackend) import RouteKit
import RouteKitTesting
import Testing

@testable import RouteKitSQLite

@Suite("SQLite change feed")
struct SQLiteFeedTests {
    static func sqlite3(_ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["sqlite3"] + args
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    static func addRoute(_ store: SQLiteStore, _ id: String, _ version: Int64) async throws -> RouteSample {
        let source = try Source(name: "feed")
        let w = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(w)
        let b = try await RouteBuilder(store: store, source: source)
        try await b.insert(StoreConformance.locations(count: 3))
        return try await b.finish(workout: w, metadata: StoreConformance.sync(id, version)).route
    }

    @Test(
        "waiters share one thread that notices another handle's commits; it ends when the last waiter closes",
        .timeLimit(.minutes(10)))  // a hang guard, not a speed check
    func commitPollerThread() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-poll-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteStore(path: path)
        let other = try SQLiteStore(path: path)  // another handle: its commits do not fire `store`'s signal directly
        #expect(store.commitPoller.state == (false, 0), "no thread before a follower")
        let waiters = [
            try await store.makeCommitWaiter(), try await store.makeCommitWaiter(), try await store.makeCommitWaiter(),
        ]
        #expect(store.commitPoller.state == (true, 1), "three waiters, one thread")
        // A commit through the other handle wakes a waiter long before its 300 s timeout. The timeout is far off
        // because under the thread sanitizer, beside every other suite on 2 cores, the writer alone has taken 32 s
        // (CI, 2026-11-24): the check tells a wake by the commit from a timeout, not how fast the wake is.
        let writer = Task { _ = try await Self.addRoute(other, "poll", 1) }
        let start = ContinuousClock.now
        await waiters[0].wait(timeout: 300)
        let waited = ContinuousClock.now - start
        try await writer.value
        #expect(waited < .seconds(200), "woken by the other handle's commit (\(waited))")
        waiters[0].close()
        waiters[1].close()
        try await Task.sleep(for: .milliseconds(200))
        #expect(store.commitPoller.state == (true, 1), "polling while a waiter is open")
        waiters[2].close()
        let deadline = ContinuousClock.now + .seconds(60)
        while store.commitPoller.state.polling && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(store.commitPoller.state == (false, 1), "the thread ended with the last waiter")
        // A new waiter starts another.
        let again = try await store.makeCommitWaiter()
        #expect(store.commitPoller.state == (true, 2))
        again.close()
    }

    @Test("a store restored from an older copy refuses newer anchors as ahead, even once it has moved past them")
    func restoredStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-restore-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("s.sqlite").path
        let backup = folder.appendingPathComponent("backup.sqlite").path
        do {
            let store = try SQLiteStore(path: path)
            _ = try await Self.addRoute(store, "a", 1)
        }
        try #require(try Self.sqlite3([path, ".backup \(backup)"]) == 0, "sqlite3 is needed for this test")
        var anchor: ChangeAnchor
        do {
            let store = try SQLiteStore(path: path)
            _ = try await Self.addRoute(store, "b", 1)
            anchor = try await store.currentAnchor()
        }
        // Restore the backup over the store.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let restored = try SQLiteStore(path: path)
        let ahead = await #expect(throws: RouteKitError.self) {
            try await restored.changes(since: anchor, matching: .all, limit: 10)
        }
        #expect(ahead?.code == .anchorAhead)
        // New writes take the positions the lost history had: the token tells them apart.
        _ = try await Self.addRoute(restored, "c", 1)
        _ = try await Self.addRoute(restored, "d", 1)
        let stillAhead = await #expect(throws: RouteKitError.self) {
            try await restored.changes(since: anchor, matching: .all, limit: 10)
        }
        #expect(stillAhead?.code == .anchorAhead)
        #expect(stillAhead?.message.contains("restored") == true)
        anchor = try await restored.currentAnchor()
        #expect(try await restored.changes(since: anchor, matching: .all, limit: 10).added.isEmpty)
    }

    @Test("a store from before the change log opens, and its routes are the feed's first change set")
    func migrationFromV1() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-v1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("s.sqlite").path
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v1")
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO store_info(key, value) VALUES ('store_id', ?)",
                    arguments: [UUID().uuidString.lowercased()])
                try db.execute(
                    sql: """
                        INSERT INTO workout(uuid, source, body) VALUES ('11111111-1111-1111-1111-111111111111', 'old',
                            '{"activity":"running","events":[],"metadata":{}}')
                        """)
                try db.execute(
                    sql: """
                        INSERT INTO route(uuid, workout_uuid, source, sync_id, sync_version, current, raw,
                            location_count, container, body)
                        VALUES ('22222222-2222-2222-2222-222222222222', '11111111-1111-1111-1111-111111111111', 'old',
                            'r', 3, 1, 1, 0, 'none', '{"metadata":{}}')
                        """)
            }
        }
        let store = try SQLiteStore(path: path)
        let set = try await store.changes(since: nil, matching: .all, limit: 10)
        #expect(set.added.map(\.id.uuidString) == ["22222222-2222-2222-2222-222222222222"])
        #expect(set.added.first?.sync == SyncIdentity(identifier: "r", version: 3))
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 1)
    }

    @Test("a store from before the feed carried every object: its workouts, scores and series are current in the feed")
    func migrationToFeedObjects() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-v11-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let workout = "11111111-1111-1111-1111-111111111111"
        let effort = "33333333-3333-3333-3333-333333333333"
        do {
            let pool = try DatabasePool(path: path)
            try Schema.migrator.migrate(pool, upTo: "v11-zone-settings")
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO store_info(key, value) VALUES ('store_id', ?)",
                    arguments: [UUID().uuidString.lowercased()])
                try db.execute(
                    sql: "INSERT INTO workout(uuid, source, body) VALUES (?, 'old', ?)",
                    arguments: [workout, #"{"activity":"running","events":[],"metadata":{}}"#])
                try db.execute(
                    sql: "INSERT INTO effort(uuid, workout_uuid, source, score, manual, created) VALUES (?, ?, 'old', 4, 1, 0)",
                    arguments: [effort, workout])
                try db.execute(
                    sql: "INSERT INTO series(workout_uuid, source, kind, container) VALUES (?, 'old', 'heartRate', 'c')",
                    arguments: [workout])
                try db.execute(
                    sql: """
                        INSERT INTO chunk(container, kind, seq, count, min_s, min_ns, max_s, max_ns, data)
                        VALUES ('c', 'heartRate', 0, 7, 100, 0, 160, 500, x''), ('c', 'heartRate', 1, 5, 170, 0, 200, 0, x'')
                        """)
            }
        }
        let store = try SQLiteStore(path: path)
        let everything = ChangePredicate(types: Set(ChangeObjectType.allCases))
        let set = try await store.changes(since: nil, matching: everything, limit: 10)
        let keys = set.addedObjects.map { "\($0.type) \($0.key.id.lowercaseText)" }
        #expect(keys == ["workout \(workout)", "effort \(effort)", "series \(workout)"])
        guard case .series(let series)? = set.addedObjects.last else {
            Issue.record("no series")
            return
        }
        #expect(series.count == 12)
        #expect(series.start == Instant(seconds: 100))
        #expect(series.end == Instant(seconds: 200))
        let routes = try await store.changes(since: nil, matching: .all, limit: 10)
        #expect(routes.count == 0, "a route consumer sees none of them")
    }

    @Test("changes(since:) on a store of 1,000 routes returns the last 100 changes in one page, whole transactions")
    func lastChanges() async throws {
        let store = try makeTemporaryStore()
        var anchor: ChangeAnchor?
        for i in 0..<1000 {
            if i == 900 { anchor = try await store.currentAnchor() }
            _ = try await Self.addRoute(store, "r\(i)", 1)
        }
        let set = try await store.changes(since: anchor, matching: .all, limit: 100)
        #expect(set.added.count == 100)
        #expect(set.added.first?.sync.identifier == "r900")
        #expect(!set.hasMore)
    }
}

@Suite("SQLite route query resources")
struct QueryResourceTests {
    /// 1 while a reader still holds an old snapshot: a passive checkpoint then cannot copy every WAL frame
    /// back (a TRUNCATE checkpoint would wait for the reader, up to the busy timeout).
    static func checkpointBusy(_ store: SQLiteStore) throws -> Int {
        try store.pool.writeWithoutTransaction { db in
            guard let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") else { return -1 }
            let log: Int = row[1]
            let done: Int = row[2]
            return done < log ? 1 : 0
        }
    }

    @Test("a long route's query holds its snapshot while it is read, and releases it when the loop is left early")
    func releasesSnapshot() async throws {
        let store = try makeTemporaryStore()
        // Longer than SQLiteStore.wholeReadChunks chunks: read through a snapshot (shorter ones are read whole).
        let source = try Source(name: "feed")
        let w = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(w)
        let b = try await RouteBuilder(store: store, source: source, order: .insertion)
        try await b.insert(StoreConformance.locations(count: 70 * 1024))
        let route = try await b.finish(workout: w).route
        var iterator: RouteQuery.AsyncIterator? = store.locations(of: route.id, batchSize: 1).makeAsyncIterator()
        _ = try await iterator?.next()
        _ = try await SQLiteFeedTests.addRoute(store, "w", 1)  // a write after the snapshot
        #expect(try Self.checkpointBusy(store) == 1, "the open query pins its snapshot")
        iterator = nil
        #expect(try Self.checkpointBusy(store) == 0, "dropping the query releases it")
        for try await _ in store.locations(of: route.id, batchSize: 1) { break }
        _ = try await SQLiteFeedTests.addRoute(store, "x", 1)
        #expect(try Self.checkpointBusy(store) == 0, "leaving a loop early releases it")
        let task = Task {
            for try await _ in store.locations(of: route.id, batchSize: 1) {
                try await Task.sleep(for: .seconds(30))
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        _ = await task.result
        _ = try await SQLiteFeedTests.addRoute(store, "y", 1)
        #expect(try Self.checkpointBusy(store) == 0, "cancelling the consuming task releases it")
    }
}
