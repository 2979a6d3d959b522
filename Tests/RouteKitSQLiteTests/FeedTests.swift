import Foundation
import GRDB
import RouteKit
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
