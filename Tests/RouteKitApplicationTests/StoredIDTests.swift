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
        // Both candidates are listed, with their kind, in uuid order.
        let lines = message.split(separator: "\n").map(String.init)
        let expected = [
            "  f22ec33c-0000-4000-8000-000000000001 workout  -, running",
            "  f22ec33c-0000-4000-8000-000000000002 workout  -, running",
        ]
        #expect(Array(lines.dropFirst()) == expected, "\(message)")
        #expect(!message.contains("0badc0de"), "\(message)")
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

    @Test("an ambiguous prefix lists at most 10 candidates, routes and workouts alike, in uuid order, and how many more")
    func listsCandidates() async throws {
        let store = InMemoryStore()
        let source = try Source(name: "phone")
        let start = Timestamp(Instant(seconds: 1_714_543_200))
        // Twelve workouts beginning abcdef01: ten are listed, two counted.
        let tails = ["00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "0a", "0b"]
        let texts = tails.map { "abcdef01-0000-4000-8000-0000000000" + $0 }
        for text in texts.reversed() {
            let id = try #require(UUID(uuidString: text))
            _ = try await store.saveWorkout(
                Workout(id: id, activityType: .cycling, start: start, end: nil, source: source))
        }
        let many = await Self.failure("abcdef01", in: store)
        #expect(many?.code == .invalidArgument)
        let message = many?.message ?? ""
        let lines = message.split(separator: "\n").map(String.init)
        try #require(lines.count == 12, "\(message)")
        #expect(lines[0].hasPrefix("ID 'abcdef01' is ambiguous: it begins the uuids of 12 routes and workouts"))
        for n in 0..<10 {
            let line = lines[n + 1]
            #expect(line == "  \(texts[n]) workout  2024-05-01T06:00:00Z, cycling", "\(line)")
        }
        #expect(lines[11] == "  … and 2 more")

        // A route, and a workout whose uuid begins with the route's first 8 hex digits: both listed, each as what
        // it is.
        let owner = Workout(activityType: .running, start: start, end: start, source: source)
        _ = try await store.saveWorkout(owner)
        let builder = try await RouteBuilder(store: store, source: source)
        try await builder.insert([Location(latitude: 47, longitude: 8, timestamp: start)])
        let finished = try await builder.finish(
            workout: owner, metadata: ["syncIdentifier": .string("twin"), "syncVersion": .integer(1)])
        let routeText = finished.route.id.uuidString.lowercased()
        let prefix = String(routeText.prefix(8))
        let twinText = prefix + "-0000-4000-8000-000000000000"
        let twin = try #require(UUID(uuidString: twinText))
        _ = try await store.saveWorkout(Workout(id: twin, activityType: .walking, start: nil, end: nil, source: source))
        let pair = await Self.failure(prefix, in: store)
        #expect(pair?.code == .invalidArgument)
        let pairMessage = pair?.message ?? ""
        let ownerPrefix = String(owner.id.uuidString.lowercased().prefix(8))
        let routeLine = "  \(routeText) route    2024-05-01T06:00:00Z, 1 location(s), workout \(ownerPrefix)"
        #expect(pairMessage.contains(routeLine), "\(pairMessage)")
        #expect(pairMessage.contains("  \(twinText) workout  -, walking"), "\(pairMessage)")
        // Routes only: the route alone, resolved.
        let routeOnly = try await StoredID.resolve(prefix, argument: "ROUTE", kinds: .routes, in: store)
        #expect(routeOnly == finished.route.id)
    }
}
