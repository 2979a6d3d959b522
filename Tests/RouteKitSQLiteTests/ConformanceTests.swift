import Foundation
import RouteKit
import RouteKitSQLite
import RouteKitTesting
import Testing

/// A fresh store in a temporary folder.
func makeTemporaryStore(_ options: SQLiteStore.Options = SQLiteStore.Options()) throws -> SQLiteStore {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-tests-\(UUID().uuidString)")
    return try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path, options: options)
}

@Suite("SQLite store conformance")
struct SQLiteConformanceTests {
    // The time limit only guards against a hang (a live update that never comes); speeds are benchmarks. A check takes
    // seconds, but under the thread sanitizer, with every suite of the stage running at once on 2 cores, two of them
    // took more than 2 minutes (CI, 2026-11-24): the limit is 10.
    @Test(.timeLimit(.minutes(10)), arguments: StoreConformance.checks)
    func conformance(_ check: ConformanceCheck) async throws {
        try await check.run(try makeTemporaryStore())
    }

    /// The same contract with reads and writes on the calling thread (what `routekit smooth` opens).
    @Test(.timeLimit(.minutes(10)), arguments: StoreConformance.checks)
    func conformanceOnCallingThread(_ check: ConformanceCheck) async throws {
        try await check.run(try makeTemporaryStore(SQLiteStore.Options(writesOnCallingThread: true, readsOnCallingThread: true)))
    }

    /// The same contract for a person's view of a store in which another person already has objects of every kind
    /// (with the same sources and sync identifiers): nothing of theirs shows in any check.
    @Test(.timeLimit(.minutes(10)), arguments: StoreConformance.checks)
    func conformanceInACrowdedStore(_ check: ConformanceCheck) async throws {
        try await check.run(try await PeopleConformance.crowdedView(of: try makeTemporaryStore()))
    }
}

@Suite("SQLite token store")
struct SQLiteTokenStoreTests {
    @Test("tokens save, read back, list, touch and revoke; only a hash is kept")
    func tokens() async throws {
        try await TokenStoreConformance.run(try makeTemporaryStore())
    }

    @Test("jobs save, update, keep a request to stop, and old ended ones are deleted")
    func jobs() async throws {
        try await JobStoreConformance.run(try makeTemporaryStore())
    }

    @Test("workouts' summaries save, replace, and go with their workout")
    func summaries() async throws {
        try await SummaryStoreConformance.run(try makeTemporaryStore())
    }
}
