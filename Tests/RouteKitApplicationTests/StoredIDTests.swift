import Foundation
import RouteKit
import RouteKitApplication
import RouteKitTesting
import Testing

@Suite("A route's or workout's id as a person types it: whole, or its first 8 or more hex digits")
struct StoredIDTests {
    static let a = UUID(uuidString: "f22ec33c-0000-4000-8000-000000000001")
    static let b = UUID(uuidString: "f22ec33c-0000-4000-8000-000000000002")
    static let c = UUID(uuidString: "0badc0de-0000-4000-8000-000000000003")

    /// A store with three workouts: two whose uuids begin alike (a, b), one apart (c).
    static func store() async throws -> InMemoryStore {
        let store = InMemoryStore()
        let source = try Source(name: "phone")
        for id in [a, b, c] {
            let workout = Workout(id: try #require(id), activityType: .running, start: nil, end: nil, source: source)
            _ = try await store.saveWorkout(workout)
        }
        return store
    }

    /// The error resolving `text` throws, `nil` when it resolves.
    static func failure(_ text: String, kinds: StoredID.Kinds = .either, in store: InMemoryStore) async -> RouteKitError? {
        do throws(RouteKitError) {
            _ = try await StoredID.resolve(text, argument: "ID", kinds: kinds, in: store)
            return nil
        } catch {
            return error
        }
    }

    @Test("a unique prefix resolves, in either case and with a uuid's dashes; a whole uuid is taken as it is")
    func resolves() async throws {
        let store = try await Self.store()
        let c = try #require(Self.c)
        let short = try await StoredID.resolve("0badc0de", argument: "ID", in: store)
        #expect(short == c)
        let longer = try await StoredID.resolve("0BADC0DE-0000-40", argument: "ID", in: store)
        #expect(longer == c)
        let workoutsOnly = try await StoredID.resolve("0badc0de", argument: "ID", kinds: .workouts, in: store)
        #expect(workoutsOnly == c)
        // A whole uuid is not looked up: the caller says what is missing.
        let unknown = try #require(UUID(uuidString: "aaaaaaaa-0000-4000-8000-000000000000"))
        let whole = try await StoredID.resolve(unknown.uuidString, argument: "ID", in: store)
        #expect(whole == unknown)
    }

    @Test("a prefix of several is refused saying how many, of none is not found, and text that is no prefix names its argument")
    func refuses() async throws {
        let store = try await Self.store()
        let ambiguous = await Self.failure("f22ec33c", in: store)
        #expect(ambiguous?.code == .invalidArgument)
        let message = ambiguous?.message ?? ""
        #expect(message.contains("2 routes and workouts"), "\(message)")
        let none = await Self.failure("12345678", in: store)
        #expect(none?.code == .notFound)
        let routesOnly = await Self.failure("0badc0de", kinds: .routes, in: store)
        #expect(routesOnly?.code == .notFound)
        for bad in ["f22ec33", "f22ec33g", "f22ec33c0", "f22ec33c-0000-4000-8000-0000000000011", "", "my-route"] {
            let e = await Self.failure(bad, in: store)
            #expect(e?.code == .invalidArgument, "\(bad)")
            let named = e?.message.hasPrefix("ID '\(bad)'") ?? false
            #expect(named, "\(bad): \(e?.message ?? "resolved")")
        }
    }
}
