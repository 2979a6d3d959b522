import Foundation
import RouteKit
import RouteKitIngest
import RouteKitTesting
import Testing

@testable import RouteKitGPX

@Suite("Numbers and times")
struct ValueParsingTests {
    func decimal(_ s: String) -> Double? {
        var s = s
        return s.withUTF8 { u in parseDecimal(u.baseAddress!, u.count) }
    }

    func time(_ s: String) -> Timestamp? { Timestamp(iso8601: s) }

    @Test("decimals parse to exactly the Double strtod gives", arguments: 0..<2000)
    func decimalMatchesStrtod(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let intDigits = Int.random(in: 0...5, using: &rng)
        let fracDigits = Int.random(in: 0...30, using: &rng)
        var text = Bool.random(using: &rng) ? "-" : ""
        text += intDigits == 0 ? "0" : String((0..<intDigits).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
        if fracDigits > 0 {
            text += "." + String((0..<fracDigits).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
        }
        let expected = strtod(text, nil)
        let parsed = decimal(text)
        #expect(parsed?.bitPattern == expected.bitPattern, "\(text)")
    }

    @Test("decimal edge cases")
    func decimalEdges() {
        #expect(decimal("47.3769123") == 47.3769123)
        #expect(decimal(" 12.5\n") == 12.5)
        #expect(decimal("-0.000000")?.sign == .minus)
        #expect(decimal("+3") == 3)
        #expect(decimal("1e3") == 1000)
        #expect(decimal("14.689492225646973000000000000001") == strtod("14.689492225646973000000000000001", nil))
        for bad in ["", " ", "abc", "undefined", "1.2.3", "--1", "1e", "nan", "inf", "1,5", ".", "-", "1e999999"] {
            #expect(decimal(bad) == nil, "\(bad)")
        }
    }

    @Test("shortest decimal text round-trips and never uses an exponent", arguments: 0..<1000)
    func decimalTextRoundTrips(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let value = Double(bitPattern: rng.next())
        guard value.isFinite else { return }
        let text = decimalText(value)
        #expect(!text.contains("e") && !text.contains("E"), "\(text)")
        #expect(decimal(text)?.bitPattern == value.bitPattern || (value == 0 && decimal(text) == 0), "\(value) → \(text)")
    }

    @Test("decimal text examples")
    func decimalTextExamples() {
        #expect(decimalText(47.3769123) == "47.3769123")
        #expect(decimalText(1e-7) == "0.0000001")
        #expect(decimalText(1.5e20) == "150000000000000000000")
        #expect(decimalText(-0.0) == "-0")
        #expect(decimalText(110) == "110")
    }

    @Test("the output buffer writes numbers as decimalText does (short decimals formatted without Swift's)", arguments: 0..<50)
    func bufferDecimalsMatchDecimalText(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var values: [Double] = [
            0, -0.0, 0.1, -0.05, 0.0001, -0.0001, 0.00015, 0.1 + 0.2, 1.005, 2.675, 999_999_999.9999, 1e9, 1e-7, 1.5e20, .infinity,
            -.infinity, .nan,
        ]
        for _ in 0..<2000 {
            let raw = Int64(truncatingIfNeeded: rng.next()) >> 32
            values += [
                Double(raw) / 5 - 500, Double(raw) / 1000, Double(raw) / 100, Double(raw) / 10000, Double(raw) / 128,
                Double(Int32(truncatingIfNeeded: raw)) * (180.0 / 2_147_483_648.0), Double(raw % 100_000) * 0.001,
                Double(bitPattern: rng.next()),
            ]
        }
        var buffer = RawBytes(capacity: 64)
        for v in values {
            buffer.count = 0
            buffer.appendDecimal(v)
            #expect(buffer.string == decimalText(v), "\(v)")
        }
        for v: Int64 in [0, 7, -7, 10, -10, 1_234_567_890_123, .max, .min + 1] {
            buffer.count = 0
            buffer.appendInteger(v)
            #expect(buffer.string == String(v))
        }
    }

    @Test("times keep every digit and the offset as written")
    func times() throws {
        let t = try #require(time("2021-01-07T21:51:59.179+01:15"))
        #expect(t.utcOffsetSeconds == 4500)
        #expect(t.instant.nanoseconds == 179_000_000)
        #expect(t.iso8601 == "2021-01-07T21:51:59.179+01:15")
        let old = try #require(time("1901-12-13T20:45:52.2073437Z"))
        #expect(old.iso8601 == "1901-12-13T20:45:52.2073437Z")
        #expect(old.instant.seconds == -2_147_483_648)
        let naive = try #require(time("2024-05-01T06:00:05"))
        #expect(naive.utcOffsetSeconds == nil)
        #expect(naive.iso8601 == "2024-05-01T06:00:05")
        #expect(time("2024-05-01T06:00:00.123456789Z")?.instant.nanoseconds == 123_456_789)
        #expect(time("2024-05-01T06:00:00.1234567891Z")?.instant.nanoseconds == 123_456_789)
        #expect(time("2024-05-01T08:00:00+0200")?.instant == time("2024-05-01T06:00:00Z")?.instant)
        #expect(time("2024-05-01T00:00:00-07:00")?.instant.seconds == 1_714_546_800)
        #expect(time("2000-02-29T00:00:00Z") != nil)
        for bad in [
            "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-05-01T25:00:00Z", "2024-05-01", "yesterday",
            "2024-05-01T06:00:00.Z", "2024-05-01T06:00:00+25:00", "2024-05-01T06:00:00Zjunk",
        ] {
            #expect(time(bad) == nil, "\(bad)")
        }
    }

    @Test("times round-trip through text", arguments: 0..<500)
    func timeRoundTrip(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let t = Generator.timestamp(&rng)
        #expect(time(t.iso8601) == t, "\(t.iso8601)")
    }
}

@Suite("Malformed input")
struct MalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var xml: String
        var code: RouteKitError.Code
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { name }
    }

    static let head = "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"

    static let cases: [Case] = [
        Case(
            name: "undeclared prefix inside an extension",
            xml: head
                + "\n<trk><trkseg><trkpt lat=\"1\" lon=\"2\"><extensions>\n  <ns9:hr>1</ns9:hr></extensions></trkpt></trkseg></trk></gpx>",
            code: .malformedXML, line: 3, column: 4, message: "'ns9' is not declared"),
        Case(
            name: "undeclared attribute prefix", xml: head + "<wpt lat=\"1\" lon=\"2\" q:x=\"1\"/></gpx>", code: .malformedXML, line: 1,
            column: 83, message: "'q' is not declared"),
        Case(
            name: "mismatched end tag", xml: head + "\n<trk>\n</trkseg></gpx>", code: .malformedXML, line: 3, column: 1,
            message: "does not match"),
        Case(
            name: "unknown entity", xml: head + "<metadata><name>a &nbsp; b</name></metadata></gpx>", code: .malformedXML, line: 1,
            column: 80, message: "unknown entity"),
        Case(
            name: "bare ampersand", xml: head + "<metadata><name>a & b</name></metadata></gpx>", code: .malformedXML, line: 1, column: 80,
            message: "'&'"),
        Case(
            name: "duplicate attribute", xml: head + "<wpt lat=\"1\" lat=\"2\" lon=\"3\"/></gpx>", code: .malformedXML, line: 1, column: 75,
            message: "appears twice"),
        Case(
            name: "unquoted attribute", xml: head + "<wpt lat=1 lon=2/></gpx>", code: .malformedXML, line: 1, column: 71,
            message: "not in quotes"),
        Case(name: "two roots", xml: head + "</gpx><gpx/>", code: .malformedXML, line: 1, column: 68, message: "second root"),
        Case(name: "text after the root", xml: head + "</gpx>\nhello", code: .malformedXML, line: 2, column: 1, message: "after the root"),
        Case(
            name: "latitude out of range", xml: head + "\n<wpt lat=\"91.5\" lon=\"2\"/></gpx>", code: .invalidValue, line: 2, column: 11,
            message: "latitude"),
        Case(
            name: "longitude out of range", xml: head + "<wpt lat=\"1\" lon=\"-200\"/></gpx>", code: .invalidValue, line: 1, column: 80,
            message: "longitude"),
        // A point without lat or lon is skipped with a warning (RefusesLessTests); one without a value inside it is not.
        Case(
            name: "missing lon, bad value inside", xml: head + "<wpt lat=\"1\"><ele>x</ele></wpt></gpx>", code: .invalidValue,
            line: 1, column: 81, message: "<ele> is not a number"),
        Case(
            name: "bad elevation", xml: head + "<wpt lat=\"1\" lon=\"2\"><ele>oops</ele></wpt></gpx>", code: .invalidValue, line: 1,
            column: 92, message: "<ele> is not a number"),
        Case(
            name: "bad time", xml: head + "<wpt lat=\"1\" lon=\"2\"><time>noon</time></wpt></gpx>", code: .invalidValue, line: 1,
            column: 93, message: "not an ISO 8601 time"),
        Case(
            name: "trkpt directly in trk", xml: head + "<trk><trkpt lat=\"1\" lon=\"2\"/></trk></gpx>", code: .invalidGPX, line: 1,
            column: 67, message: "<trkpt> is not allowed inside <trk>"),
        Case(name: "wrong root", xml: "<kml/>", code: .invalidGPX, line: 1, column: 1, message: "not <gpx>"),
        Case(
            name: "root in a foreign namespace", xml: "<gpx xmlns=\"urn:other\"/>", code: .invalidGPX, line: 1, column: 1,
            message: "namespace"),
        Case(
            name: "internal DTD subset", xml: "<!DOCTYPE gpx [<!ENTITY a \"b\">]>" + head + "</gpx>", code: .malformedXML, line: 1,
            column: 1, message: "internal subset"),
        Case(
            name: "declaration not at the start", xml: " <?xml version=\"1.0\"?>" + head + "</gpx>", code: .malformedXML, line: 1,
            column: 2, message: "very start"),
        Case(
            name: "unsupported encoding", xml: "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>" + head + "</gpx>",
            code: .unsupportedEncoding, line: 1, column: 1, message: "Shift_JIS".lowercased()),
        Case(
            name: "truncated", xml: head + "\n<trk><trkseg><trkpt lat=\"1\"", code: .malformedXML, line: 2, column: 28,
            message: "unexpected end of file"),
        Case(name: "double colon name", xml: head + "<a:b:c/></gpx>", code: .malformedXML, line: 1, column: 63, message: "qualified name"),
        Case(
            name: "prefix bound to empty URI", xml: head + "<extensions xmlns:e=\"\"/></gpx>", code: .malformedXML, line: 1, column: 62,
            message: "empty URI"),
    ]

    @Test("typed errors with line and column", arguments: cases)
    func malformed(_ c: Case) {
        for chunk in [1, 3, 4096] {
            do {
                _ = try GPXDocument(bytes: Array(c.xml.utf8), name: "t.gpx", chunkSize: chunk)
                Issue.record("accepted")
            } catch {
                #expect(error.code == c.code)
                #expect(error.file == "t.gpx")
                #expect(
                    error.line == c.line && error.column == c.column,
                    "chunk \(chunk): got \(error.line ?? 0):\(error.column ?? 0) — \(error.message)")
                #expect(error.message.contains(c.message), "\(error.message)")
            }
        }
    }

    @Test(
        "end-of-input errors point at the end whatever the chunk size",
        arguments: [
            "<?pi data?>\n\n   <!-- only a comment -->",
            "<?pi data?>\n<!-- first\nsecond\nthird -->",
            "<?pi data?>\n\n   <!-- only a comment -->\n\t\n",
            "<?xml version=\"1.0\"?>\n<gpx xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk>\n  <name>open</name>\n",
            String(repeating: "<?p x?>\n", count: 300) + "<?p x?>",
        ])
    func endOfInput(_ xml: String) {
        var seen: Set<String> = []
        for chunk in [1, 3, 7, 61, 4096, 1 << 20] {
            do {
                _ = try GPXDocument(bytes: Array(xml.utf8), name: "e.gpx", chunkSize: chunk)
                Issue.record("accepted")
            } catch {
                seen.insert("\(error.line ?? 0):\(error.column ?? 0) \(error.message)")
            }
        }
        #expect(seen.count == 1, "\(seen)")
        let lines = xml.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(seen.first?.hasPrefix("\(lines.count):\((lines.last?.utf8.count ?? 0) + 1) ") == true, "\(seen)")
    }

    @Test("coordinates appear only in debugDescription")
    func privacy() throws {
        do {
            _ = try GPXDocument(bytes: Array((Self.head + "<wpt lat=\"47.123456\" lon=\"200.5\"/></gpx>").utf8))
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("200.5"))
            #expect(String(reflecting: error).contains("200.5"))
        }
    }

    @Test("ISO-8859-1 input is transcoded")
    func latin1() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\(Self.head)<wpt lat=\"1\" lon=\"2\"><name>Z".utf8)
        bytes.append(0xFC)  // ü in Latin-1
        bytes += Array("rich</name></wpt></gpx>".utf8)
        for chunk in [1, 5, 4096] {
            let d = try GPXDocument(bytes: bytes, chunkSize: chunk)
            #expect(d.waypoints.first?.extras?.name == "Zürich")
        }
    }

    @Test("a BOM and CRLF line ends are read, and lines still count")
    func bomCRLF() throws {
        let xml = "\u{FEFF}<?xml version=\"1.0\"?>\r\n" + Self.head + "\r\n<wpt lat=\"1\" lon=\"2\"><ele>x</ele></wpt></gpx>"
        do {
            _ = try GPXDocument(bytes: Array(xml.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3)
        }
    }
}

@Suite("Limits and writer input")
struct LimitsTests {
    @Test("over-long element names and namespace URIs are refused, not a trap")
    func longNames() {
        let name = String(repeating: "a", count: 70_000)
        for xml in [
            "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><\(name)/></gpx>",
            "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\" xmlns:x=\"urn:\(name)\"/>",
        ] {
            #expect(throws: RouteKitError.self) { try GPXDocument(bytes: Array(xml.utf8)) }
        }
    }

    @Test("absurd read options are clamped, not trusted")
    func options() throws {
        var options = GPXReadOptions()
        options.chunkSize = .max
        options.batchSize = 0
        let reader = GPXReader(bytes: Array(Fixtures.everyFeature.utf8), options: options)
        #expect(try GPXDocument(reader: reader).tracks.first?.pointCount == 3)
    }

    @Test("the writer refuses a point that is not a valid location, naming its index")
    func writerValidates() {
        var document = GPXDocument()
        document.tracks = [
            GPXTrack(segments: [
                GPXSegment(points: [
                    GPXPoint(location: Location(latitude: 1, longitude: 2)),
                    GPXPoint(location: Location(latitude: .nan, longitude: 2)),
                ])
            ])
        ]
        do {
            _ = try GPXWriter.data(for: document)
            Issue.record("written")
        } catch {
            #expect(error.code == .invalidLocation)
            #expect(error.index == 1)
        }
    }
}
