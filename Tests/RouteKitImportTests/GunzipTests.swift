import Foundation
import RouteKit
import Testing

@testable import RouteKitGPX

@Suite("gzip held in memory")
struct GunzipTests {
    @Test("gunzip reserves what the trailer announces, never more than the data could fill, and keeps its limit")
    func sizeHint() throws {
        let text = String(repeating: "<trkpt lat=\"47.1\" lon=\"8.2\"/>\n", count: 20_000)
        let gz = try Zip.gzip(text)
        #expect(InputFile.gzipSizeHint(gz, limit: 1 << 30) == text.utf8.count)
        #expect(try InputFile.gunzip(gz, name: "a.gz") == Array(text.utf8))
        #expect(InputFile.gzipSizeHint(gz, limit: 1000) == 1000, "the limit bounds it")
        // A forged trailer claiming 4 GiB: bounded by deflate's largest ratio, and the data is refused (zlib checks
        // the length).
        var forged = gz
        forged.replaceSubrange((forged.count - 4)..., with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(InputFile.gzipSizeHint(forged, limit: .max) == forged.count * 1032)
        #expect(throws: RouteKitError.self) { try InputFile.gunzip(forged, name: "f.gz") }
        #expect(InputFile.gzipSizeHint([0x1F, 0x8B], limit: .max) == 0, "too short for a trailer")
        let e = #expect(throws: RouteKitError.self) { try InputFile.gunzip(gz, name: "b.gz", limit: 4096) }
        #expect(e?.code == .compression && e?.file == "b.gz")
    }
}
