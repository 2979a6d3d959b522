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

    @Test("absent values are written as null, never left out; a byte offset only when there is one; null and missing keys read back as nil")
    func explicitNulls() throws {
        let source = try Source(name: "phone")
        let route = RouteSample(
            workoutID: UUID(), source: source, sync: SyncIdentity(identifier: "r", version: 1), start: nil, end: nil,
            locationCount: 0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let routeText = String(decoding: try encoder.encode(RouteJSON(route)), as: UTF8.self)
        #expect(routeText.contains(#""end":null"#) && routeText.contains(#""start":null"#), "\(routeText)")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        let workoutText = String(decoding: try encoder.encode(WorkoutJSON(workout, routes: [])), as: UTF8.self)
        #expect(workoutText.contains(#""syncIdentifier":null"#) && workoutText.contains(#""syncVersion":null"#))
        let error = String(
            decoding: try encoder.encode(ErrorJSON(RouteKitError(.invalidArgument, "bad"))), as: UTF8.self)
        #expect(error.contains(#""column":null"#) && error.contains(#""line":null"#), "\(error)")
        #expect(!error.contains("byteOffset"), "a byte offset is left out when there is none: \(error)")
        let decoded = try JSONDecoder().decode(ErrorJSON.self, from: Data(#"{"code":"io","message":"m"}"#.utf8))
        #expect(decoded.line == nil && decoded.column == nil)
        let back = try JSONDecoder().decode(RouteJSON.self, from: Data(routeText.utf8))
        #expect(back.start == nil && back.end == nil && back.syncIdentifier == "r")
    }
}
