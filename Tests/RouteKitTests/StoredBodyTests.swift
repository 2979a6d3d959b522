import Foundation
import RouteKitTesting
import Testing

@testable import RouteKit

@Suite("Stored route bodies read without JSONDecoder")
struct StoredBodyTests {
    static func decoded(_ text: String) throws -> StoredRecord.RouteBody {
        try JSONDecoder().decode(StoredRecord.RouteBody.self, from: Data(text.utf8))
    }

    static func timestamp(_ rng: inout SplitMix64) -> Timestamp? {
        switch rng.next() % 4 {
        case 0: return nil
        case 1:
            return Timestamp(
                Instant(seconds: Int64(bitPattern: rng.next()) >> Int64(rng.next() % 40), nanoseconds: 0),
                utcOffsetSeconds: nil)
        default:
            let offsets: [Int32?] = [0, 3600, -12_600, 50_400, nil, Int32.min, Int32.max]
            return Timestamp(
                Instant(
                    seconds: [Int64.min, Int64.max, -1, 0, 1_704_067_200][Int(rng.next() % 5)],
                    nanoseconds: Int32(rng.next() % 1_000_000_000)),
                utcOffsetSeconds: offsets[Int(rng.next() % UInt64(offsets.count))])
        }
    }

    static func metadata(_ rng: inout SplitMix64) -> [String: MetadataValue] {
        let values: [MetadataValue] = [
            .string("}{\"]\\\\\"[,:"), .string("naïve 🚴 \u{0}\n"), .integer(.min), .integer(42), .double(-0.5),
            .double(1e300), .bool(true), .bool(false), .string(""),
        ]
        var m: [String: MetadataValue] = [:]
        for _ in 0..<Int(rng.next() % 4) {
            m["k\"{\(rng.next() % 100)}"] = values[Int(rng.next() % UInt64(values.count))]
        }
        return m
    }

    @Test("every body RouteKit writes is scanned to exactly what JSONDecoder reads")
    func sameAsDecoder() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let route = RouteSample(
                workoutID: UUID(), source: .defaultImport, sync: SyncIdentity(identifier: "s", version: 1),
                start: Self.timestamp(&rng), end: Self.timestamp(&rng), locationCount: 1,
                metadata: Self.metadata(&rng))
            let text = try StoredRecord.body(of: route)
            let scanned = try #require(StoredRecord.scanRouteBody(text), "\(text)")
            let reference = try Self.decoded(text)
            #expect(scanned.start == reference.start && scanned.end == reference.end, "\(text)")
            #expect(scanned.start?.utcOffsetSeconds == reference.start?.utcOffsetSeconds, "\(text)")
            #expect(scanned.end?.utcOffsetSeconds == reference.end?.utcOffsetSeconds, "\(text)")
            #expect(scanned.metadata == reference.metadata, "\(text)")
        }
    }

    @Test(
        "another shape is left to JSONDecoder, which reads it",
        arguments: [
            #"{ "metadata": {}, "start": {"instant": {"nanoseconds": 0, "seconds": 5}} }"#,
            #"{"start":{"instant":{"nanoseconds":0,"seconds":5}},"metadata":{}}"#,
            #"{"end":null,"metadata":{}}"#,
            #"{"metadata":{},"start":{"instant":{"nanoseconds":0,"seconds":5.0}}}"#,
            #"{"metadata":{},"start":{"instant":{"nanoseconds":0,"seconds":1e3}}}"#,
        ])
    func otherShapes(text: String) throws {
        #expect(StoredRecord.scanRouteBody(text) == nil)
        _ = try Self.decoded(text)
    }

    @Test(
        "what neither reads is refused by both",
        arguments: [
            #"{"metadata":{},"start":{"instant":{"nanoseconds":4294967296,"seconds":5}}}"#,
            #"{"metadata":{},"start":{"instant":{"nanoseconds":0,"seconds":99999999999999999999}}}"#,
            #"{"metadata":{},"start":{"instant":{"nanoseconds":0,"seconds":5},"utcOffsetSeconds":2147483648}}"#,
            #"{"metadata":{"a":{}},"start":{"instant":{"nanoseconds":0,"seconds":5}}}"#,
            #"{"metadata":{"a":"x"#,
            #"{"metadata":{}}trailing"#,
        ])
    func refused(text: String) {
        #expect(StoredRecord.scanRouteBody(text) == nil)
        #expect(throws: (any Error).self) { try Self.decoded(text) }
    }
}
