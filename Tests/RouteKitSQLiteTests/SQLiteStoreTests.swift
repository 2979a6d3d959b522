import Foundation
import RouteKit
import RouteKitSQLite
import RouteKitTesting
import Testing

@Suite("SQLite store")
struct SQLiteStoreTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("routekit-tests-\(UUID().uuidString)")
            .appendingPathComponent("store.sqlite").path
    }

    @Test("reopening keeps the store id and every saved object")
    func reopen() async throws {
        let path = Self.temporaryPath()
        let source = try Source(name: "t")
        let first = try SQLiteStore(path: path)
        let w = Workout(activityType: .cycling, start: nil, end: nil, source: source)
        _ = try await first.saveWorkout(w)
        let second = try SQLiteStore(path: path, options: SQLiteStore.Options(durability: .powerLoss))
        #expect(second.storeID == first.storeID)
        #expect(try await second.workout(id: w.id) == w)
    }

    @Test("a store written by a newer RouteKit is refused, not misread")
    func newerSchemaRefused() async throws {
        let path = Self.temporaryPath()
        _ = try SQLiteStore(path: path)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["sqlite3", path, "INSERT INTO grdb_migrations(identifier) VALUES ('v999-from-the-future')"]
        try sqlite.run()
        sqlite.waitUntilExit()
        try #require(sqlite.terminationStatus == 0, "sqlite3 is needed for this test")
        let error = #expect(throws: RouteKitError.self) { try SQLiteStore(path: path) }
        #expect(error?.code == .incompatibleStore)
        #expect(error?.message.contains("v999-from-the-future") == true)
    }

    @Test("a file that is not SQLite gives a storage error naming it")
    func notSQLite() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RouteKitError.self) { try SQLiteStore(path: path) }
        #expect(error?.code == .storage)
        #expect(error?.message.contains(path) == true)
    }

    @Test("two store handles on one file write concurrently without losing anything")
    func concurrentWriters() async throws {
        let path = Self.temporaryPath()
        let a = try SQLiteStore(path: path)
        let b = try SQLiteStore(path: path)
        let source = try Source(name: "t")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, store) in [a, b, a, b].enumerated() {
                group.addTask {
                    let w = Workout(activityType: .running, start: nil, end: nil, source: source)
                    _ = try await store.saveWorkout(w)
                    let builder = try await RouteBuilder(store: store, source: source)
                    for k in 0..<5 {
                        try await builder.insert(
                            StoreConformance.locations(count: 500, start: Int64(1_700_000_000 + k * 500), seed: UInt64(n)))
                    }
                    _ = try await builder.finish(workout: w)
                }
            }
            try await group.waitForAll()
        }
        let routes = try await a.routes(matching: RouteFilter())
        #expect(routes.count == 4)
        #expect(routes.allSatisfy { $0.locationCount == 2500 })
        // The same sync identity saved from both handles at once: exactly one insert wins.
        let outcomes = try await withThrowingTaskGroup(of: SaveOutcome.self) { group in
            for store in [a, b, a, b] {
                group.addTask {
                    try await store.saveWorkout(
                        Workout(
                            activityType: .running, start: nil, end: nil, source: source,
                            sync: SyncIdentity(identifier: "race", version: 1)))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0.savedID != nil }.count == 1)
    }
}
