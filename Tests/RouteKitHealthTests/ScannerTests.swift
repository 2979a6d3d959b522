import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitHealth
import RouteKitIngest
import RouteKitTesting
import Testing

/// The scanner's events as text: `+Name a=v b=w` for a start tag, `-Name` for an end tag.
func scan(_ text: String, readSize: Int = .max, chunkSize: Int = 1 << 20) throws(RouteKitError) -> [String] {
    let scanner = HealthXMLScanner(
        stream: MemoryByteSource(Array(text.utf8), readSize: readSize), fileName: "test.xml", chunkSize: chunkSize)
    var out: [String] = []
    while let event = try scanner.next() {
        switch event {
        case .start:
            out.append(
                "+" + scanner.name + scanner.allAttributes.map { " \($0.name)=\($0.value)" }.joined()
                    + " @\(scanner.depth)")
        case .end:
            out.append("-" + scanner.name)
        }
    }
    return out
}

/// The error scanning `text` gives, or `nil`.
func scanError(_ text: String, readSize: Int = .max) -> RouteKitError? {
    do {
        _ = try scan(text, readSize: readSize)
        return nil
    } catch {
        return error
    }
}

@Suite("export.xml scanner")
struct ScannerTests {
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 14 -- it's a comment with a quote -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Workout)*)>
        <!ATTLIST Record
          type CDATA #REQUIRED
          note CDATA "default with ] and > inside"
        >
        <!ENTITY tricky 'single ] quoted > too'>
        <?pi inside the subset ] > ?>
        ]>
        <HealthData locale="en_US">
         <!-- a comment with <Record type="fake"/> inside -->
         <ExportDate value='2019-07-19 10:36:11 -0700'/>
         <Record type="HKQuantityTypeIdentifierHeartRate" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch&gt;" \
        note="a &amp; b &quot;c&quot; &apos;d&apos; &#65;&#x42;&#x1F600;" value="72">
          <MetadataEntry key="k" value="v"/>
         </Record>
         <Workout a = "1"  b='2'>text &undefinedInText; <![CDATA[ <Record> ]]> more</Workout>
        </HealthData>

        """

    static let expected = [
        "+HealthData locale=en_US @1",
        "+ExportDate value=2019-07-19 10:36:11 -0700 @2", "-ExportDate",
        "+Record type=HKQuantityTypeIdentifierHeartRate device=<<HKDevice: 0x1>, name:Apple Watch> "
            + "note=a & b \"c\" 'd' AB😀 value=72 @2",
        "+MetadataEntry key=k value=v @3", "-MetadataEntry",
        "-Record",
        "+Workout a=1 b=2 @2", "-Workout",
        "-HealthData",
    ]

    @Test("elements and attributes: entities and character references decoded, both quotes, comments, PIs, CDATA and the DTD skipped")
    func elements() throws {
        #expect(try scan(Self.document) == Self.expected)
    }

    @Test("chunk boundaries anywhere: 1-byte and 7-byte reads and a tiny buffer give the same elements")
    func chunkBoundaries() throws {
        let whole = try scan(Self.document)
        #expect(try scan(Self.document, readSize: 1, chunkSize: 1) == whole)
        #expect(try scan(Self.document, readSize: 7, chunkSize: 7) == whole)
        #expect(try scan(Self.document, readSize: 3, chunkSize: 5) == whole)
        // And a document longer than the buffer, read in odd pieces.
        let records = (0..<2000).map { #"<Record type="t\#($0)" v="&amp;\#($0)"/>"# }.joined(separator: "\n")
        let long = "<HealthData>\n" + records + "\n</HealthData>"
        let reference = try scan(long)
        #expect(reference.count == 4002)
        #expect(try scan(long, readSize: 7, chunkSize: 7) == reference)
        #expect(try scan(long, readSize: 4093, chunkSize: 4093) == reference)
    }

    @Test("a billion-laughs DTD is inert: nothing is expanded, memory and time stay small")
    func billionLaughs() throws {
        var dtd = "<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
        dtd += "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
        for n in 2...9 {
            dtd += "<!ENTITY lol\(n) \"" + String(repeating: "&lol\(n - 1);", count: 10) + "\">\n"
        }
        dtd += "]>\n"
        // In text the reference is never looked at; the document reads as its elements.
        #expect(
            try scan(dtd + "<HealthData><Record type=\"x\"/>&lol9;</HealthData>") == [
                "+HealthData @1", "+Record type=x @2", "-Record", "-HealthData",
            ])
        // In an attribute it is an error, not an expansion.
        let e = scanError(dtd + "<HealthData a=\"&lol9;\"/>")
        #expect(e?.code == .malformedXML)
        #expect(e?.line == 13)
        #expect(e?.message.contains("never expanded") == true)
    }

    @Test("an external-entity DTD is inert: no file is read")
    func externalEntity() throws {
        let dtd = "<!DOCTYPE HealthData [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n"
        #expect(try scan(dtd + "<HealthData>&xxe;<Me/></HealthData>") == ["+HealthData @1", "+Me @2", "-Me", "-HealthData"])
        let e = scanError(dtd + "<HealthData>\n <Me name=\"&xxe;\"/></HealthData>")
        #expect(e?.code == .malformedXML)
        #expect(e?.line == 3 && e?.column == 12)
        #expect(!(e?.description.contains("root:") ?? true))
    }

    @Test("Apple's malformed iOS 16 DTD (an unclosed ATTLIST, a vertical tab) does not matter")
    func ios16DTD() throws {
        let dtd = """
            <!DOCTYPE HealthData [
            <!ELEMENT VisionPrescription ((RightEye|LeftEye)*)>
            <!ATTLIST VisionPrescription
              type CDATA #REQUIRED
            \u{0B}
            ]>
            <HealthData locale="en_US"><Workout workoutActivityType="HKWorkoutActivityTypeRunning"/></HealthData>
            """
        #expect(try scan(dtd, readSize: 1, chunkSize: 1).count == 4)
    }

    @Test(
        "malformed input fails with file, line and column, never quoting values",
        arguments: [
            ("<a>\n<b></a>", 2, 4),
            ("<a>\n  <b x=\"1\" x2></b></a>", 2, 14),
            ("<a>\n<b x=1/></a>", 2, 6),
            ("<a x=\"1<2\"/>", 1, 8),
            ("<a>\n<b x=\"&nope;\"/></a>", 2, 7),
            ("<a x=\"&#0;\"/>", 1, 7),
            ("<a x=\"&amp\"/>", 1, 7),
            ("<a>\n<b>", 2, 4),
            ("</a>", 1, 1),
            ("<a><!DOCTYPE a></a>", 1, 4),
            ("<a>\n <b x=\"unclosed></a>", 2, 2),
            ("<!-- never closed", 1, 18),
        ])
    func malformed(_ input: (String, Int, Int)) {
        for readSize in [Int.max, 1, 7] {
            let e = scanError(input.0, readSize: readSize)
            #expect(e?.code == .malformedXML, "\(input.0)")
            #expect(e?.file == "test.xml")
            #expect(e?.line == input.1 && e?.column == input.2, "\(input.0) (\(readSize)): \(String(describing: e))")
            #expect(!(e?.message.contains("1<2") ?? false))
        }
    }

    @Test("2015 exports: attribute names with spaces are read as one name, and counted")
    func namesWithSpaces() throws {
        let scanner = HealthXMLScanner(
            stream: MemoryByteSource(Array(#"<Me HK Date Of Birth="1990-01-01" b="2"/>"#.utf8)), fileName: "t")
        #expect(try scanner.next() == .start)
        #expect(scanner.allAttributes.map(\.name) == ["HK Date Of Birth", "b"])
        #expect(scanner.namesWithSpaces == 3)
    }

    @Test("a tag longer than the limit is an error, not unbounded memory; a long comment or DTD is not kept")
    func bounded() throws {
        let long = "<HealthData><Record v=\"" + String(repeating: "x", count: 20_000) + "\"/></HealthData>"
        let scanner = HealthXMLScanner(
            stream: MemoryByteSource(Array(long.utf8), readSize: 512), fileName: "t", chunkSize: 512, maxMarkup: 4096)
        #expect(try scanner.next() == .start)
        #expect(throws: RouteKitError.self) { try scanner.next() }
        // Comments and a DTD far longer than the limit are skipped, never held.
        let comment = "<!--" + String(repeating: "c", count: 50_000) + "-->"
        let dtd = "<!DOCTYPE a [" + String(repeating: "<!ELEMENT x EMPTY>\n", count: 3000) + "]>"
        let skipped = HealthXMLScanner(
            stream: MemoryByteSource(Array((dtd + comment + "<a/>").utf8), readSize: 512), fileName: "t",
            chunkSize: 512, maxMarkup: 4096)
        #expect(try skipped.next() == .start)
        #expect(skipped.name == "a")
    }

    @Test("mutated documents: 1-byte and 7-byte reads give the same elements or the same error as whole reads")
    func mutations() {
        var random = SplitMix64(seed: 14)
        let original = Array(Self.document.utf8)
        let alphabet = Array("<>/!?-[]\"'&;=# \nax0".utf8)
        func outcome(_ bytes: [UInt8], _ readSize: Int) -> String {
            let scanner = HealthXMLScanner(
                stream: MemoryByteSource(bytes, readSize: readSize), fileName: "m", chunkSize: readSize)
            var out: [String] = []
            do {
                while let e = try scanner.next() {
                    out.append("\(e) \(scanner.name) \(scanner.allAttributes.map { "\($0.name)=\($0.value)" })")
                }
            } catch {
                out.append("error \(error.line ?? 0):\(error.column ?? 0) \(error.message)")
            }
            return out.joined(separator: "\n")
        }
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let i = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[i] = alphabet.randomElement(using: &random) ?? 0x20
                case 1: bytes.remove(at: i)
                default: bytes.insert(alphabet.randomElement(using: &random) ?? 0x20, at: i)
                }
            }
            let whole = outcome(bytes, 1 << 20)
            #expect(outcome(bytes, 1) == whole)
            #expect(outcome(bytes, 7) == whole)
        }
    }

    @Test("dates keep their offsets; malformed dates are nil")
    func dates() {
        let t = HealthDate.parse("2019-06-11 15:00:00 -0700")
        #expect(t?.utcOffsetSeconds == Int32(-25_200))
        #expect(t?.instant == HealthDate.parse("2019-06-11 22:00:00 +0000")?.instant)
        #expect(HealthDate.parse("2019-06-11T15:00:00Z") == nil)
        #expect(HealthDate.parse("2019-13-11 15:00:00 -0700") == nil)
    }
}
