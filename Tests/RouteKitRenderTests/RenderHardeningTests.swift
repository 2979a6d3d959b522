import Foundation
import RouteKit
import RouteKitProcessing
import Testing

@testable import RouteKitRender

/// Numbers anyone can put in a route (metadata at a builder's finish, an elevation in a file) drawn without a trap.
@Suite("render: hostile numbers")
struct RenderHardeningTests {
    @Test("pointsIn of 1e300 is no count; Int64.min is written with its sign")
    func hostileMetadata() throws {
        #expect(ProcessingNumbers(metadata: ["pointsIn": .double(1e300), "pointsOut": .integer(5)]) == nil)
        #expect(ProcessingNumbers(metadata: ["pointsIn": .double(.nan), "pointsOut": .integer(5)]) == nil)
        let numbers = try #require(
            ProcessingNumbers(metadata: ["pointsIn": .integer(.min), "pointsOut": .double(1234)]))
        #expect(numbers.caption.hasPrefix("-9,223,372,036,854,775,808 → 1,234 points"))
    }

    @Test("axis labels of 1e300 or -1e300 are written in exponent form")
    func hugeLabels() {
        #expect(RoutePicture.formatNumber(1e300) == "1e+300")
        #expect(RoutePicture.formatNumber(-1e300) == "-1e+300")
        #expect(RoutePicture.formatNumber(120) == "120")
        #expect(RoutePicture.formatNumber(2.5) == "2.5")
    }

    @Test("a route whose every elevation is 1e300 draws its profile")
    func hugeElevations() throws {
        // 1e300 plus the helper's few metres is 1e300.
        let locations = track([(0, 0), (100, 0), (200, 50), (300, 100)], altitude: 1e300)
        let input = RoutePictureInput(current: renderTrack(locations), title: "Hostile")
        let scene = RoutePicture.scene(input, size: try PictureSize(parsing: "600x600"))
        #expect(SVGWriter.svg(scene).count > 0)
    }
}
