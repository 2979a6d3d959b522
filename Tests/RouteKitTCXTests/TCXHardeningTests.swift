import Foundation
import RouteKit
import RouteKitGPX
import RouteKitTCX
import RouteKitTesting
import Testing

@Suite("TCX: hostile numbers")
struct TCXHardeningTests {
    @Test(
        "a lap's TotalTimeSeconds of 1e300 (or the largest double) gives a lap without an end, never a trap",
        arguments: ["1e300", "1.7976931348623157e308", "9223372036854775807"])
    func hugeLapTime(total: String) async throws {
        var xml = TCX.activity([[[TCX.positioned(1), TCX.positioned(2)]], []])
        // The second lap has no trackpoints: its end comes from its total time alone.
        let last = try #require(xml.range(of: "<TotalTimeSeconds>10</TotalTimeSeconds>", options: .backwards))
        xml.replaceSubrange(last, with: "<TotalTimeSeconds>\(total)</TotalTimeSeconds>")
        let store = InMemoryStore()
        let result = await TCXImporter(store: store).importBytes(Array(xml.utf8), name: "hostile.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let segments = workout.events.filter { $0.kind == .segment }
        #expect(segments.count == 2)
        #expect(segments.last?.start != nil)
        #expect(segments.last?.end == nil)
    }
}
