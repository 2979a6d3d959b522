import Foundation
import RouteKit
import RouteKitTesting
import Testing

@Suite("InMemory store conformance")
struct InMemoryConformanceTests {
    // The time limit only guards against a hang (a live update that never comes), as for the SQLite store.
    @Test(.timeLimit(.minutes(10)), arguments: StoreConformance.checks)
    func conformance(_ check: ConformanceCheck) async throws {
        try await check.run(InMemoryStore())
    }

    @Test("InMemory token store: tokens save, read back, list, touch and revoke")
    func tokens() async throws {
        try await TokenStoreConformance.run(InMemoryStore())
    }

    @Test("InMemory job store: jobs save, update, keep a request to stop, and old ended ones are deleted")
    func jobs() async throws {
        try await JobStoreConformance.run(InMemoryStore())
    }

    @Test("InMemory summary store: workouts' summaries save, replace, and go with their workout")
    func summaries() async throws {
        try await SummaryStoreConformance.run(InMemoryStore())
    }
}
