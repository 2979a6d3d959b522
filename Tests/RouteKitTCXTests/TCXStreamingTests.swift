import Foundation
import RouteKit
import RouteKitGPX
import Testing

@testable @_spi(RouteKitInternals) import RouteKitTCX

/// TCX is parsed as a stream: the same document whatever the read sizes, megabytes of padding read past.
@Suite("TCX: parsed as a stream")
struct TCXStreamingTests {
    static func parse(_ bytes: [UInt8], readSize: Int) throws(RouteKitError) -> TCXDocument {
        var offset = 0
        return try TCXDocument.parse { (buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int in
            let n = min(buffer.count, readSize, bytes.count - offset)
            guard n > 0, let out = buffer.baseAddress else { return 0 }
            bytes.withUnsafeBytes { src in
                if let from = src.baseAddress { out.copyMemory(from: from + offset, byteCount: n) }
            }
            offset += n
            return n
        }
    }

    @Test("read 1, 3 or 4096 bytes at a time: the same document, BOM and leading spaces skipped with their warnings")
    func sameWhateverTheReads() throws {
        let text = "\u{FEFF}  \n  " + TCX.activity([[[TCX.positioned(1, hr: 120), TCX.positioned(2)]], [[TCX.positioned(3)]]])
        let whole = try TCXDocument.parse(Array(text.utf8))
        #expect(whole.activities.first.map { Array($0.trackpoints).count } == 3)
        #expect(whole.warnings.count == 2, "\(whole.warnings)")
        for size in [1, 3, 4096] {
            #expect(try Self.parse(Array(text.utf8), readSize: size) == whole, "read size \(size)")
        }
    }

    @Test("an error's line and column count the skipped leading lines, whatever the read size")
    func errorPositions() throws {
        let text = "\n\n   <?xml version=\"1.0\"?>\n<TrainingCenterDatabase xmlns=\"\(TCX.ns)\"><Activities></Broken>"
        for size in [1, 5, 4096] {
            do {
                _ = try Self.parse(Array(text.utf8), readSize: size)
                Issue.record("accepted malformed XML")
            } catch {
                #expect(error.code == .malformedXML)
                #expect(error.line == 4, "read size \(size): \(error)")
            }
        }
    }

    @Test("ten megabytes of whitespace between trackpoints and inside a value are read past; the values stay")
    func padding() throws {
        let pad = String(repeating: " ", count: 5 << 20)
        let text = TCX.activity([[[TCX.positioned(1, hr: 120) + pad, TCX.positioned(2)]]])
            .replacingOccurrences(of: "<DistanceMeters>25.5</DistanceMeters>", with: "<DistanceMeters>25.5\(pad)</DistanceMeters>")
        let doc = try Self.parse(Array(text.utf8), readSize: 64 << 10)
        let points = Array(try #require(doc.activities.first).trackpoints)
        #expect(points.count == 2)
        #expect(points.first?.heartRate == 120)
    }

    @Test("a read failure of the source is the parse's error")
    func sourceFailure() {
        var calls = 0
        do {
            _ = try TCXDocument.parse { (buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int in
                calls += 1
                if calls > 1 { throw RouteKitError(.compression, "the gzip data ends early", file: "x.tcx.gz") }
                let head = Array("<?xml version=\"1.0\"?><TrainingCenterDatabase xmlns=\"\(TCX.ns)\">".utf8)
                let n = min(buffer.count, head.count)
                head.withUnsafeBytes { src in
                    if let from = src.baseAddress { buffer.baseAddress?.copyMemory(from: from, byteCount: n) }
                }
                return n
            }
            Issue.record("no error")
        } catch {
            #expect(error.code == .compression)
        }
    }
}

@Suite("TCX: nesting")
struct TCXNestingTests {
    @Test("elements nested 300 deep are malformedXML (the bound is 256), not a deeper stack")
    func deepNesting() {
        let open = String(repeating: "<Extensions>", count: 300)
        let close = String(repeating: "</Extensions>", count: 300)
        let text = "<?xml version=\"1.0\"?><TrainingCenterDatabase xmlns=\"\(TCX.ns)\">\(open)\(close)</TrainingCenterDatabase>"
        do {
            _ = try TCXDocument.parse(Array(text.utf8))
            Issue.record("a document nested 300 deep was accepted")
        } catch {
            #expect(error.code == .malformedXML, "\(error)")
            #expect(error.message.contains("nested more than 256 deep"), "\(error)")
        }
    }
}
