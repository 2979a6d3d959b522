import Foundation
import RouteKit
import RouteKitIngest
import Testing

@testable import RouteKitGPX

/// Behaviour fixed after a review of issue 2's first version; each test failed (or would have) before.
@Suite("GPX reader and writer edge cases")
struct ReaderEdgeCaseTests {
    static let head = "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"

    static func document(_ body: String, chunk: Int? = nil) throws(RouteKitError) -> GPXDocument {
        try GPXDocument(bytes: Array((head + body + "</gpx>").utf8), chunkSize: chunk)
    }

    @Test("negative speed, course and accuracies (Core Location's -1) are read as missing, with a warning")
    func negativeValues() throws {
        let d = try Self.document(
            "<trk><trkseg><trkpt lat=\"1\" lon=\"2\"><extensions><speed>-1</speed><course>-1</course>"
                + "<hAcc>-1</hAcc><vAcc>3</vAcc></extensions></trkpt></trkseg></trk>")
        let l = try #require(d.tracks.first?.segments.first?.points.first?.location)
        #expect(l.speed == nil && l.course == nil && l.horizontalAccuracy == nil && l.verticalAccuracy == 3)
        #expect(d.warnings.contains { $0.kind == "negativeValue" })
        _ = try GPXWriter.data(for: d)  // and the writer accepts what the reader produced
    }

    @Test("the token limit applies to one token, not to what is buffered while a retry waits", arguments: [1, 50, 4096])
    func tokenLimit(chunk: Int) throws {
        var options = GPXReadOptions()
        options.maxTokenSize = 1000
        let comment = "<!--" + String(repeating: "c", count: 600) + "-->"
        let points = String(repeating: "<wpt lat=\"1\" lon=\"2\"><name>a point</name></wpt>\n", count: 60)
        let bytes = Array((Self.head + comment + points + "</gpx>").utf8)
        options.chunkSize = chunk
        let d = try GPXDocument(reader: GPXReader(bytes: bytes, options: options))
        #expect(d.waypoints.count == 60)
        let big = Array((Self.head + "<!--" + String(repeating: "c", count: 3000) + "--></gpx>").utf8)
        if chunk < 3000 {
            // Held across reads, a token over the limit is refused (a token complete within one read is not buffered).
            #expect(throws: RouteKitError.self) { try GPXDocument(reader: GPXReader(bytes: big, options: options)) }
        }
    }

    @Test("a foreign extension declared with spaces around '=' is written back")
    func foreignFragmentWithSpaces() {
        #expect(GPXWriter.isForeignFragment("<a:pt xmlns:a = \"urn:a\">x</a:pt>"))
        #expect(GPXWriter.isForeignFragment("<pt xmlns='urn:a'/>"))
        #expect(!GPXWriter.isForeignFragment("<pt xmlns=\"http://www.topografix.com/GPX/1/1\"/>"))
        #expect(!GPXWriter.isForeignFragment("<a:pt b=\"1\"/>"))
    }

    @Test("GPX 1.0 metadata after the first waypoint is kept, with a warning")
    func lateMetadata() throws {
        let d = try GPXDocument(
            bytes: Array(
                "<gpx version=\"1.0\" xmlns=\"http://www.topografix.com/GPX/1/0\"><wpt lat=\"1\" lon=\"2\"/><name>late</name><time>2024-05-01T00:00:00Z</time></gpx>"
                    .utf8))
        #expect(d.metadata.name == "late")
        #expect(d.metadata.time != nil)
        #expect(d.warnings.contains { $0.kind == "lateMetadata" })
    }

    @Test("character references are decoded in coordinates and may have many leading zeros")
    func references() throws {
        let d = try Self.document("<wpt lat=\"&#52;7.1\" lon=\"8\"><name>&#00000000065;</name></wpt>")
        #expect(d.waypoints.first?.location.latitude == 47.1)
        #expect(d.waypoints.first?.extras?.name == "A")
        #expect(throws: RouteKitError.self) { try Self.document("<metadata><name>&#xFFFE;</name></metadata>") }
    }

    @Test("an unknown extension over 1 MiB is skipped with a warning, not held in memory")
    func largeExtension() throws {
        let big = String(repeating: "<x:i>data</x:i>", count: 80_000)
        let d = try Self.document(
            "<wpt lat=\"1\" lon=\"2\"><extensions><x:big xmlns:x=\"urn:x\">\(big)</x:big><x:small xmlns:x=\"urn:x\"/></extensions></wpt>"
        )
        #expect(d.waypoints.first?.extras?.extensions == ["<x:small xmlns:x=\"urn:x\"/>"])
        #expect(d.warnings.contains { $0.kind == "largeExtension" })
    }

    @Test("a bad time's text is in debugDescription only")
    func timePrivacy() {
        do {
            _ = try Self.document("<wpt lat=\"1\" lon=\"2\"><time>47.3769 8.5417</time></wpt>")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("47.3769"))
            #expect(String(reflecting: error).contains("47.3769"))
        }
    }

    @Test("zero padding after a gzip stream is ignored, as gzip does")
    func gzipPadding() {
        let padded = CorruptGzipTests.gzip + [UInt8](repeating: 0, count: 512)
        #expect(CorruptGzipTests.outcome(padded, chunk: nil) == CorruptGzipTests.outcome(CorruptGzipTests.gzip, chunk: nil))
        #expect(CorruptGzipTests.outcome(padded, chunk: 7) == CorruptGzipTests.outcome(CorruptGzipTests.gzip, chunk: nil))
    }

    @Test("non-XML bytes fail at once, not after buffering up to the token limit")
    func nonXML() {
        var options = GPXReadOptions()
        options.maxTokenSize = 100
        let reader = GPXReader(bytes: [UInt8](repeating: 0, count: 10_000), options: options)
        do {
            _ = try GPXDocument(reader: reader)
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("not XML"))
            #expect(error.line == 1 && error.column == 1)
        }
    }

    @Test("the writer keeps its output schema-valid: offsets beyond ±14:00, magvar 360, year 0000")
    func writerSchema() throws {
        var d = try Self.document(
            "<metadata><copyright author=\"me\"><year>0000</year></copyright></metadata>"
                + "<wpt lat=\"1\" lon=\"2\"><time>2024-05-01T00:00:00+14:30</time><magvar>360</magvar></wpt>")
        d.info = GPXDocumentInfo()
        let text = String(decoding: try GPXWriter.data(for: d), as: UTF8.self)
        #expect(text.contains("<time>2024-04-30T09:30:00Z</time>"))
        #expect(!text.contains("<magvar>"))
        #expect(!text.contains("<year>"))
        try SchemaValidator.validate(Array(text.utf8), name: "writer-schema")
    }
}

@Suite("Character references")
struct CharacterReferenceTests {
    @Test(
        "huge numeric references are refused without arithmetic overflow",
        arguments: [
            "&#xFFFFFFFFFFFFFFFFFFFF;", "&#99999999999999999999999;", "&#x110000;", "&#1114112;", "&#x0000000000000041;",
        ])
    func huge(_ reference: String) {
        let xml = "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><metadata><name>\(reference)</name></metadata></gpx>"
        let result = Result { try GPXDocument(bytes: Array(xml.utf8)) }
        if reference.hasSuffix("41;") {
            #expect((try? result.get())?.metadata.name == "A")
        } else {
            #expect(throws: RouteKitError.self) { try result.get() }
        }
    }
}

@Suite("Control characters")
struct ControlCharacterTests {
    static let places: [(String, String)] = [
        ("value", "<wpt lat=\"1\" lon=\"2\"><ele>1\u{02}2</ele></wpt>"),
        ("value via fast path", "<wpt lat=\"1\" lon=\"2\"><name>abc\u{01}defghijk</name></wpt>"),
        ("attribute", "<wpt lat=\"1\" lon=\"2\" x:a=\"a\u{07}b\"/>"),
        ("extension text", "<wpt lat=\"1\" lon=\"2\"><extensions><x:n>a\u{02}b</x:n></extensions></wpt>"),
        ("comment", "<!-- a\u{0B}b -->"),
        ("CDATA", "<metadata><name><![CDATA[a\u{1F}b]]></name></metadata>"),
        ("text between elements", "<metadata>\u{00}</metadata>"),
    ]

    @Test("control characters other than tab, LF and CR are refused everywhere", arguments: places.indices)
    func refused(_ i: Int) {
        let (place, body) = Self.places[i]
        let xml = "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\" xmlns:x=\"urn:x\">\(body)</gpx>"
        for chunk in [1, 7, 4096] {
            do {
                _ = try GPXDocument(bytes: Array(xml.utf8), chunkSize: chunk)
                Issue.record("\(place): accepted")
            } catch {
                #expect(error.code == .malformedXML, "\(place)")
            }
        }
    }

    @Test("tab, LF and CR inside values are fine")
    func allowed() throws {
        let xml = "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><wpt lat=\"1\" lon=\"2\"><name>a\tb\r\nc</name></wpt></gpx>"
        #expect(try GPXDocument(bytes: Array(xml.utf8)).waypoints.first?.extras?.name == "a\tb\r\nc")
    }
}

@Suite("Single-byte encodings")
struct SingleByteEncodingTests {
    static func name(_ encoding: String, _ bytes: [UInt8], chunk: Int) throws -> String? {
        let head = Array(
            "<?xml version=\"1.0\" encoding=\"\(encoding)\"?><gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><wpt lat=\"1\" lon=\"2\"><name>"
                .utf8)
        let tail = Array("</name></wpt></gpx>".utf8)
        return try GPXDocument(bytes: head + bytes + tail, chunkSize: chunk).waypoints.first?.extras?.name
    }

    @Test("windows-1252, ISO-8859-15 and ISO-8859-1 each decode their own upper half", arguments: [1, 5, 4096])
    func encodings(chunk: Int) throws {
        // 0x80 0x96 0xE9 0xA4: € – é in windows-1252; in ISO-8859-15 0xA4 is €; in ISO-8859-1 it is ¤.
        #expect(try Self.name("windows-1252", [0x80, 0x20, 0x96, 0x20, 0xE9], chunk: chunk) == "€ – é")
        #expect(try Self.name("ISO-8859-15", [0xA4, 0x20, 0xE9], chunk: chunk) == "€ é")
        #expect(try Self.name("ISO-8859-1", [0xA4, 0x20, 0xE9], chunk: chunk) == "¤ é")
    }
}
