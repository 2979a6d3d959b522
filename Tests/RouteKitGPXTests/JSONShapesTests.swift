import Foundation
import RouteKit
import RouteKitGPX
import Testing

@Suite("JSON shapes")
struct JSONShapesTests {
    @Test("a change set written by hand is the JSON JSONEncoder makes of it, escapes and all")
    func changeSetBytes() throws {
        let storeID = UUID()
        let source = try Source(name: "phone")
        let route = RouteSample(
            workoutID: UUID(), source: source, sync: SyncIdentity(identifier: "a\"b\\c/d\n\u{1}é", version: 3),
            start: Timestamp(iso8601: "2024-05-01T06:00:00Z"), end: nil, locationCount: 42,
            metadata: [
                "name": .string("Lunch \"run\"\t"), "zeta": .integer(-7), "alpha": .double(2.5), "whole": .double(3),
                "flag": .bool(true),
            ])
        let deleted = DeletedRoute(
            id: UUID(), source: source, workoutID: UUID(), sync: SyncIdentity(identifier: "old", version: 1))
        let anchor = ChangeAnchor(storeID: storeID, epoch: 1, position: 9, token: 77)
        for set in [
            ChangeSet(deleted: [deleted], added: [route, route], anchor: anchor, hasMore: true),
            ChangeSet(deleted: [], added: [], anchor: anchor, hasMore: false),
        ] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let expected = try encoder.encode(ChangeSetJSON(set))
            let written = Data(ChangeSetJSON.bytes(set))
            let a = try JSONSerialization.jsonObject(with: expected) as? NSDictionary
            let b = try JSONSerialization.jsonObject(with: written) as? NSDictionary
            #expect(a == b)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }
}
