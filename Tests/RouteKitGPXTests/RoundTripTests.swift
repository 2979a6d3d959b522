import Foundation
import RouteKit
import RouteKitIngest
import RouteKitTesting
import Testing

@testable import RouteKitGPX

/// read → write → read gives the same document, and what RouteKit writes validates against the GPX 1.1 schema.
@Suite("Round trip")
struct RoundTripTests {
    /// What the writer documents it cannot carry into GPX 1.1, removed from the first reading so the two
    /// readings can be compared exactly: the input's version/creator, warnings, pause markers (written as
    /// segment breaks), unknown extension elements in the GPX namespace, and values outside the schema.
    static func normalized(_ d: GPXDocument) -> GPXDocument {
        var d = d
        d.info = GPXDocumentInfo()
        d.warnings = []
        func ext(_ e: [String]) -> [String] { e.filter(GPXWriter.isForeignFragment) }
        func point(_ p: GPXPoint) -> GPXPoint {
            var p = p
            if p.location.longitude == 180 { p.location.longitude = -180 }
            if var e = p.extras {
                e.extensions = ext(e.extensions)
                if let f = e.fix, !["none", "2d", "3d", "dgps", "pps"].contains(f) { e.fix = nil }
                if let s = e.satellites, s < 0 { e.satellites = nil }
                if let m = e.magneticVariation, !(0...360).contains(m) { e.magneticVariation = nil }
                if let g = e.dgpsID, !(0...1023).contains(g) { e.dgpsID = nil }
                p.extras = e == GPXPointExtras() ? nil : e
            }
            return p
        }
        func path(_ i: GPXPathInfo) -> GPXPathInfo {
            var i = i
            i.extensions = ext(i.extensions)
            if let n = i.number, n < 0 { i.number = nil }
            return i
        }
        d.metadata.extensions = ext(d.metadata.extensions)
        if let a = d.metadata.author {
            if let email = a.email, email.split(separator: "@").count != 2 { d.metadata.author?.email = nil }
            if d.metadata.author == GPXPerson() { d.metadata.author = nil }
        }
        if let y = d.metadata.copyright?.year, !GPXWriter.isGYear(y) { d.metadata.copyright?.year = nil }
        d.extensions = ext(d.extensions)
        d.waypoints = d.waypoints.map(point)
        d.routes = d.routes.map { GPXRoute(info: path($0.info), points: $0.points.map(point)) }
        d.tracks = d.tracks.map { t in
            GPXTrack(
                info: path(t.info),
                segments: t.segments.filter { !$0.points.isEmpty || t.events.isEmpty }.map {
                    GPXSegment(points: $0.points.map(point), extensions: ext($0.extensions))
                })
        }
        return d
    }

    static func roundTrip(_ document: GPXDocument) throws -> (GPXDocument, [UInt8]) {
        let bytes = try GPXWriter.data(for: document)
        return (try GPXDocument(bytes: bytes, name: "written.gpx"), bytes)
    }

    @Test(
        "every corpus file survives read → write → read, and the written file validates",
        .enabled(if: Corpus.available, "../shared/gpx-corpus not found"),
        arguments: Corpus.files("valid") + Corpus.files("quirks"))
    func corpus(_ path: String) throws {
        let first = try GPXDocument(path: path)
        let (second, bytes) = try Self.roundTrip(first)
        let expected = Self.normalized(first)
        #expect(second.metadata == expected.metadata)
        #expect(second.waypoints == expected.waypoints)
        #expect(second.routes == expected.routes)
        #expect(second.tracks.count == expected.tracks.count)
        for (a, b) in zip(second.tracks, expected.tracks) {
            #expect(a.info == b.info)
            #expect(a.segments.count == b.segments.count)
            for (s, t) in zip(a.segments, b.segments) {
                #expect(s.points.count == t.points.count)
                if let i = s.points.indices.first(where: { i in i < t.points.count && s.points[i] != t.points[i] }) {
                    Issue.record(
                        "point \(i) differs: \(String(reflecting: s.points[i])) \(String(reflecting: s.points[i].extras)) vs \(String(reflecting: t.points[i])) \(String(reflecting: t.points[i].extras))"
                    )
                }
                #expect(s.extensions == t.extensions)
            }
        }
        #expect(second.extensions == expected.extensions)
        try SchemaValidator.validate(bytes, name: Corpus.name(path))
        // Writing the second reading again gives the same bytes: the writer is deterministic.
        #expect(try GPXWriter.data(for: second) == bytes)
    }

    @Test("generated tracks survive read → write → read exactly", arguments: 0..<40)
    func generated(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let document = Self.normalized(Generator.document(&rng))
        let (second, bytes) = try Self.roundTrip(document)
        let written = document.waypoints + document.tracks.flatMap { $0.segments.flatMap(\.points) }
        let read = second.waypoints + second.tracks.flatMap { $0.segments.flatMap(\.points) }
        #expect(read.count == written.count)
        if let i = written.indices.first(where: { $0 < read.count && written[$0] != read[$0] }) {
            Issue.record("point \(i) differs:\n wrote \(String(reflecting: written[i]))\n read  \(String(reflecting: read[i]))")
        }
        #expect(second.tracks.map { $0.segments.count } == document.tracks.map { $0.segments.count })
        if seed < 5 { try SchemaValidator.validate(bytes, name: "generated-\(seed)") }
    }

    @Test("the every-feature fixture round-trips and validates")
    func everyFeature() throws {
        let first = try GPXDocument(bytes: Array(Fixtures.everyFeature.utf8))
        let (second, bytes) = try Self.roundTrip(first)
        #expect(second.tracks.first?.segments.first?.points == first.tracks.first?.segments.first?.points)
        #expect(second.metadata == first.metadata)
        #expect(second.tracks.first?.info.extensions.count == 1)
        try SchemaValidator.validate(bytes, name: "every-feature")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("<x:note xmlns:x=\"urn:example:unknown\" a=\"1\">kept <x:b/> as is</x:note>"))
        #expect(text.contains("lat=\"-0\""))
        #expect(text.contains("<time>2024-05-01T08:00:00.123+02:00</time>"))
        #expect(text.contains("<time>2024-05-01T06:00:05</time>"))
    }
}

extension RoundTripTests {
    /// `<metadata>` with every element GPX 1.1 gives it (what `routekit export` writes back from the store).
    static let fullMetadata = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">
        \(GPXFixtures.everyMetadataElement)
          <trk><name>Lake loop</name><trkseg><trkpt lat="47.3" lon="8.5"/><trkpt lat="47.31" lon="8.51"/></trkseg></trk>
        </gpx>
        """

    @Test("<metadata> with every element round-trips and validates")
    func everyMetadataElement() throws {
        let first = try GPXDocument(bytes: Array(Self.fullMetadata.utf8))
        #expect(first.metadata.copyright?.license != nil)
        #expect(first.metadata.author?.link?.type == "text/html")
        #expect(first.metadata.links.count == 2)
        let (second, bytes) = try Self.roundTrip(first)
        #expect(second.metadata == first.metadata)
        try SchemaValidator.validate(bytes, name: "every-metadata-element")
    }
}

/// Validates with `xmllint --schema` against ../shared/schemas/gpx-1.1.xsd when both exist (RouteKitTesting's
/// `GPXSchema`); otherwise records nothing, except in CI, where the check must run.
enum SchemaValidator {
    static func validate(_ bytes: [UInt8], name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if let problem = try GPXSchema.problem(bytes, name: name) { Issue.record("\(problem)", sourceLocation: sourceLocation) }
    }
}

enum Generator {
    static func maybe<T>(_ rng: inout SplitMix64, _ p: Double = 0.5, _ make: (inout SplitMix64) -> T) -> T? {
        Double.random(in: 0..<1, using: &rng) < p ? make(&rng) : nil
    }

    /// A double with a random number of decimals, sometimes a full-precision random value.
    static func value(_ rng: inout SplitMix64, _ range: ClosedRange<Double>) -> Double {
        let v = Double.random(in: range, using: &rng)
        if Bool.random(using: &rng) { return v }
        let digits = Double(Int.random(in: 0...9, using: &rng))
        let scale = Foundation.pow(10, digits)
        return min(max((v * scale).rounded() / scale, range.lowerBound), range.upperBound)
    }

    static func timestamp(_ rng: inout SplitMix64) -> Timestamp {
        let seconds = Int64.random(in: -2_208_988_800...4_102_444_800, using: &rng)  // 1900…2100
        let fraction = Int.random(in: 0...3, using: &rng)
        let nanos: Int32 =
            fraction == 0
            ? 0 : fraction == 1 ? Int32.random(in: 0..<1000, using: &rng) * 1_000_000 : Int32.random(in: 0..<1_000_000_000, using: &rng)
        let offsets: [Int32?] = [0, nil, 3600, -25200, 4500, 19800, -34200]
        return Timestamp(Instant(seconds: seconds, nanoseconds: nanos), utcOffsetSeconds: offsets.randomElement(using: &rng) ?? 0)
    }

    static func point(_ rng: inout SplitMix64, extras: Bool) -> GPXPoint {
        var location = Location(
            latitude: value(&rng, -90...90), longitude: value(&rng, -180...180),
            timestamp: maybe(&rng, 0.9) { timestamp(&$0) })
        location.altitude = maybe(&rng, 0.7) { value(&$0, -400...8848) }
        location.horizontalAccuracy = maybe(&rng, 0.3) { value(&$0, 0...100) }
        location.verticalAccuracy = maybe(&rng, 0.3) { value(&$0, 0...100) }
        location.speed = maybe(&rng, 0.3) { value(&$0, 0...60) }
        location.speedAccuracy = maybe(&rng, 0.2) { value(&$0, 0...5) }
        location.course = maybe(&rng, 0.3) { value(&$0, 0...359.99) }
        location.courseAccuracy = maybe(&rng, 0.2) { value(&$0, 0...180) }
        var values = GPXPointValues()
        values[.heartRate] = maybe(&rng, 0.5) { Double(Int.random(in: 40...210, using: &$0)) }
        values[.cadence] = maybe(&rng, 0.4) { Double(Int.random(in: 0...200, using: &$0)) }
        values[.temperature] = maybe(&rng, 0.3) { value(&$0, -30...50) }
        values[.waterTemperature] = maybe(&rng, 0.1) { value(&$0, 0...30) }
        values[.depth] = maybe(&rng, 0.1) { value(&$0, 0...100) }
        values[.power] = maybe(&rng, 0.3) { Double(Int.random(in: 0...1500, using: &$0)) }
        var point = GPXPoint(location: location, values: values)
        if extras && Bool.random(using: &rng) {
            var e = GPXPointExtras()
            e.name = maybe(&rng) { _ in "Pt <&> \"é\" 🚲" }
            e.hdop = maybe(&rng) { value(&$0, 0...50) }
            e.satellites = maybe(&rng) { Int.random(in: 0...30, using: &$0) }
            e.fix = maybe(&rng) { ["2d", "3d", "dgps"].randomElement(using: &$0) ?? "3d" }
            e.extensions = maybe(&rng) { _ in ["<q:x xmlns:q=\"urn:q\">1</q:x>"] } ?? []
            point.extras = e == GPXPointExtras() ? nil : e
        }
        return point
    }

    static func document(_ rng: inout SplitMix64) -> GPXDocument {
        var d = GPXDocument()
        for _ in 0..<Int.random(in: 0...3, using: &rng) { d.waypoints.append(point(&rng, extras: true)) }
        for t in 0..<Int.random(in: 1...3, using: &rng) {
            var track = GPXTrack()
            track.info.name = "Track \(t)"
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let n = Int.random(in: 0...300, using: &rng)
                track.segments.append(GPXSegment(points: (0..<n).map { _ in point(&rng, extras: true) }))
            }
            d.tracks.append(track)
        }
        return d
    }
}
