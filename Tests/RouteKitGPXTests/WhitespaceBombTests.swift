import Foundation
import RouteKit
import RouteKitIngest
import Testing

@testable import RouteKitGPX

/// Whitespace is dropped as it is read where no text is kept: a file padded with gigabytes of it is read in the
/// reader's window, not buffered up to the next tag (which held 2 GB of a 2 MB gzip file in memory).
@Suite("GPX reader: whitespace padding")
struct WhitespaceBombTests {
    static let head = #"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">"#

    @Test(
        "whitespace runs longer than the token limit between elements read, with the lines counted",
        arguments: [1, 7, 4096, 1 << 20])
    func paddingBetweenElements(chunk: Int) throws {
        var options = GPXReadOptions()
        options.maxTokenSize = 1000
        options.chunkSize = chunk
        let pad = String(repeating: " \n\t", count: 10_000)
        let text =
            Self.head + pad + "<trk><trkseg>" + pad
            + #"<trkpt lat="1" lon="2"><time>2024-05-01T06:00:00Z</time></trkpt>"# + pad
            + #"<trkpt lat="1.1" lon="2"><time>2024-05-01T06:00:01Z</time></trkpt>"# + pad + "</trkseg></trk>" + pad
            + "</gpx>" + pad
        let d = try GPXDocument(reader: GPXReader(bytes: Array(text.utf8), options: options))
        #expect(d.tracks.first?.segments.first?.points.count == 2)
        // Lines are still counted through what was dropped: an error after the padding names its true line.
        let broken = Self.head + pad + "<trk><trkseg>" + pad + "<trkpt lat=\"1\" lon=\"2\"></wrong></trkseg></trk></gpx>"
        do {
            _ = try GPXDocument(reader: GPXReader(bytes: Array(broken.utf8), options: options))
            Issue.record("accepted a mismatched end tag")
        } catch {
            #expect(error.line == 20_001, "\(error)")
        }
    }

    @Test("text after whitespace split across reads is warned about from the line the whitespace began on")
    func splitTextWarning() throws {
        let text =
            Self.head + "<trk>\n   \n\n      stray text\n<trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>"
        let whole = try GPXDocument(bytes: Array(text.utf8), chunkSize: text.utf8.count)
        let expected = whole.warnings.map { "\($0.kind)@\($0.line ?? -1)" }
        #expect(expected.contains("ignoredText@1"), "\(expected)")
        for chunk in 1...64 {
            let d = try GPXDocument(bytes: Array(text.utf8), chunkSize: chunk)
            #expect(d.warnings.map { "\($0.kind)@\($0.line ?? -1)" } == expected, "chunk \(chunk)")
        }
    }

    @Test("a value (a leaf's text) longer than the token limit is still refused")
    func longValueRefused() {
        var options = GPXReadOptions()
        options.maxTokenSize = 1000
        options.chunkSize = 100
        let text = Self.head + "<metadata><desc>" + String(repeating: " ", count: 5000) + "x</desc></metadata></gpx>"
        #expect(throws: RouteKitError.self) {
            try GPXDocument(reader: GPXReader(bytes: Array(text.utf8), options: options))
        }
    }
}
