import Foundation
import RouteKit
import RouteKitIngest
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

extension GunzipTests {
    @Test("one gzip member goes through libdeflate; several members, forged trailers and corrupt data fall back to zlib")
    func wholeMemberAndFallback() throws {
        let first = String(repeating: "<trkpt lat=\"47.1\" lon=\"8.2\"><ele>412.5</ele></trkpt>\n", count: 5_000)
        let second = String(repeating: "<trkpt lat=\"46.9\" lon=\"7.4\"/>\n", count: 3_000)
        let gz = try Zip.gzip(first)
        #expect(InputFile.wholeMember(gz, limit: 1 << 30) == Array(first.utf8), "one member: libdeflate")
        #expect(try InputFile.gunzip(gz, name: "a.gz") == Array(first.utf8))
        // Exactly at the limit is allowed; a byte less is refused, naming the entry.
        #expect(try InputFile.gunzip(gz, name: "a.gz", limit: first.utf8.count) == Array(first.utf8))
        let over = #expect(throws: RouteKitError.self) {
            try InputFile.gunzip(gz, name: "over.gz", limit: first.utf8.count - 1)
        }
        #expect(over?.code == .compression && over?.file == "over.gz")

        // Two members (gzip files concatenated): not one member, so zlib reads both.
        let both = gz + (try Zip.gzip(second))
        #expect(InputFile.wholeMember(both, limit: 1 << 30) == nil)
        #expect(try InputFile.gunzip(both, name: "both.gz") == Array((first + second).utf8))

        // A trailer announcing one byte less (or more) than the data holds: refused as before.
        for delta in [-1, 1] {
            var forged = gz
            let size = first.utf8.count + delta
            forged.replaceSubrange(
                (forged.count - 4)..., with: [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), 0])
            #expect(InputFile.wholeMember(forged, limit: 1 << 30) == nil, "trailer off by \(delta)")
            let e = #expect(throws: RouteKitError.self) { try InputFile.gunzip(forged, name: "forged.gz") }
            #expect(e?.code == .compression && e?.file == "forged.gz")
        }

        // A flipped byte in the deflate data, and garbage after the member: refused with zlib's error, naming the entry.
        var corrupt = gz
        corrupt[corrupt.count / 2] ^= 0x55
        #expect(InputFile.wholeMember(corrupt, limit: 1 << 30) == nil)
        let bad = #expect(throws: RouteKitError.self) { try InputFile.gunzip(corrupt, name: "bad.gz") }
        #expect(bad?.code == .compression && bad?.file == "bad.gz")
        let trailing = gz + Array("not gzip".utf8)
        #expect(InputFile.wholeMember(trailing, limit: 1 << 30) == nil)
        #expect(throws: RouteKitError.self) { try InputFile.gunzip(trailing, name: "trailing.gz") }
    }
}
