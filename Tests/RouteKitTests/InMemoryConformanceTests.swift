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

    // The whole suite again, as a person of a store where someone else has objects of every kind: nothing of theirs
    // may show in a list, a count, a feed or a sync decision.
    @Test(.timeLimit(.minutes(10)), arguments: StoreConformance.checks)
    func conformanceOfAPersonInACrowdedStore(_ check: ConformanceCheck) async throws {
        try await check.run(try await PeopleConformance.crowdedView(of: InMemoryStore()))
    }

    @Test("InMemory people: one store partitioned by person, as every backend")
    func people() async throws {
        try await PeopleConformance.run { InMemoryStore() }
    }

    @Test("InMemory webhook subscriptions: per person, rotation, deliveries, due work, erasure, admin-wide ones")
    func webhooks() async throws {
        try await WebhookConformance.run { InMemoryStore() }
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

    @Test("A person's view of the in-memory store shares the store: its identity, and what every view writes")
    func viewsShareTheStore() async throws {
        let store = InMemoryStore()
        let p = Person(name: "P")
        try await store.addPerson(p)
        let view = store.forPerson(p.id)
        #expect(store.person == PersonID.default)
        #expect(view.person == p.id)
        #expect(view.storeID == store.storeID)
        let source = try Source(name: "phone")
        let w = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await view.saveWorkout(w)
        let again = try await store.forPerson(p.id).workout(id: w.id)
        #expect(again == w)
        let asDefault = try await store.workout(id: w.id)
        #expect(asDefault == nil)
        let people = try await view.people().map(\.id)
        #expect(people == [PersonID.default, p.id])
    }

    @Test("A fault-injecting store is its base's person; its view of a person wraps the base's view and fails alike")
    func faultInjectingViews() async throws {
        let base = InMemoryStore()
        let p = Person(name: "P")
        try await base.addPerson(p)
        let faulty = FaultInjectingStore(base, failingAppend: 1)
        #expect(faulty.person == PersonID.default)
        let view = faulty.forPerson(p.id)
        #expect(view.person == p.id)
        #expect(view.base.person == p.id)
        let source = try Source(name: "phone")
        let w = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await view.saveWorkout(w)
        let seenByP = try await base.forPerson(p.id).workout(id: w.id)
        #expect(seenByP == w)
        let seenByDefault = try await faulty.workout(id: w.id)
        #expect(seenByDefault == nil)
        let token = APIToken(
            id: UUID(), name: "p", person: p.id, source: source, scopes: [.read],
            secretHash: String(repeating: "ab", count: 32), created: Date(timeIntervalSince1970: 1_700_000_000))
        try await base.saveToken(token)
        let tokens = try await view.tokens(of: p.id)
        #expect(tokens == [token])
        let builder = try await RouteBuilder(store: view, source: source)
        await #expect(throws: RouteKitError.self) {
            try await builder.insert(StoreConformance.locations(count: 3))
        }
    }
}
