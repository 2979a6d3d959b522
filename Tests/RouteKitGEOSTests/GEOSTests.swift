import Foundation
import RouteKit
import RouteKitGEOS
import Testing

@Suite("GEOS binding")
struct GEOSTests {
    @Test("Douglas–Peucker keeps a bit-identical subsequence, Z included")
    func simplify() throws {
        let context = try GEOSContext()
        // A straight line with a 10 m bump at index 5; Z carries the index.
        var coordinates: [Double] = []
        for i in 0..<11 {
            coordinates += [Double(i) * 10, i == 5 ? 10 : 0.001 * Double(i % 2), Double(i)]
        }
        let line = try GEOSLineString(context: context, coordinates: coordinates, dimensions: 3)
        #expect(line.count == 11)
        let simplified = try line.simplified(tolerance: 1)
        let out = try simplified.coordinates(dimensions: 3)
        let indices = stride(from: 2, to: out.count, by: 3).map { Int(out[$0]) }
        #expect(indices == [0, 4, 5, 6, 10])
        for (k, i) in indices.enumerated() {
            #expect(out[3 * k] == coordinates[3 * i] && out[3 * k + 1] == coordinates[3 * i + 1])
        }
        #expect(try simplified.length() > 100)
    }

    @Test("one point, non-finite values and bad arguments are typed errors, not crashes")
    func invalid() throws {
        let context = try GEOSContext()
        #expect(throws: RouteKitError.self) { try GEOSLineString(context: context, coordinates: [1, 2]) }
        do {
            _ = try GEOSLineString(context: context, coordinates: [0, 0, 1, .nan, 2, 2])
            Issue.record("NaN accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.index == 1)
        }
        #expect(throws: RouteKitError.self) { try GEOSLineString(context: context, coordinates: [0, 0, 1], dimensions: 2) }
        let line = try GEOSLineString(context: context, coordinates: [0, 0, 1, 1])
        #expect(throws: RouteKitError.self) { try line.simplified(tolerance: .infinity) }
        #expect(throws: RouteKitError.self) { try line.simplified(tolerance: -1) }
    }

    @Test("an empty line string simplifies to an empty one")
    func empty() throws {
        let context = try GEOSContext()
        let line = try GEOSLineString(context: context, coordinates: [])
        #expect(line.count == 0)
        #expect(try line.simplified(tolerance: 5).coordinates().isEmpty)
        #expect(try line.length() == 0)
    }

    @Test("one context serves many geometries; topology-preserving works too")
    func reuse() throws {
        try withGEOSContext { context throws(RouteKitError) in
            #expect(context.libraryVersion.hasPrefix("3."))
            for n in [2, 10, 1000] {
                let coordinates = (0..<n).flatMap { [Double($0), Double($0 % 7)] }
                let line = try GEOSLineString(context: context, coordinates: coordinates)
                let kept = try line.simplified(tolerance: 2, preservingTopology: true).count
                #expect(kept >= 2 && kept <= n)
            }
        }
    }
}

@Suite("GEOS thread")
struct GEOSThreadTests {
    @Test("work handed to a GEOS thread runs there, with its context, and comes back with its value or its error")
    func perform() async throws {
        let thread = try GEOSThread(name: "geos-test")
        let (length, onThread) = try await thread.perform { context throws(RouteKitError) in
            let line = try GEOSLineString(context: context, coordinates: [0, 0, 3, 4])
            return (try line.length(), thread.isCurrentThread)
        }
        #expect(length == 5)
        #expect(onThread, "it ran on the GEOS thread")
        #expect(!thread.isCurrentThread, "and the caller is not on it")
        await #expect(throws: RouteKitError.self) {
            _ = try await thread.perform { context throws(RouteKitError) in
                try GEOSLineString(context: context, coordinates: [0, 0, .nan, 1]).length()
            }
        }
        // Calls from several tasks run one at a time, each answered.
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<20 { group.addTask { try await thread.perform { _ in i } } }
            return try await group.reduce(0, +)
        }
        #expect(sums == (0..<20).reduce(0, +))
        thread.close()
        await #expect(throws: RouteKitError.self, "closed: work is refused") {
            _ = try await thread.perform { _ in 1 }
        }
    }
}
