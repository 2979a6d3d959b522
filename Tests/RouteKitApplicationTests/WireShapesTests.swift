import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitProcessing
import RouteKitTesting
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
        let workoutText = String(decoding: try encoder.encode(WorkoutJSON(workout, routes: [], figures: nil)), as: UTF8.self)
        #expect(workoutText.contains(#""syncIdentifier":null"#) && workoutText.contains(#""syncVersion":null"#))
        #expect(workoutText.contains(#""distanceMetres":null"#) && workoutText.contains(#""movingSeconds":null"#))
        let error = String(
            decoding: try encoder.encode(ErrorJSON(RouteKitError(.invalidArgument, "bad"))), as: UTF8.self)
        #expect(error.contains(#""column":null"#) && error.contains(#""line":null"#), "\(error)")
        #expect(!error.contains("byteOffset"), "a byte offset is left out when there is none: \(error)")
        let decoded = try JSONDecoder().decode(ErrorJSON.self, from: Data(#"{"code":"io","message":"m"}"#.utf8))
        #expect(decoded.line == nil && decoded.column == nil)
        let back = try JSONDecoder().decode(RouteJSON.self, from: Data(routeText.utf8))
        #expect(back.start == nil && back.end == nil && back.syncIdentifier == "r")
    }

    @Test("a location's JSON: keys sorted, absent values left out, every number and time read back exactly")
    func locationJSON() throws {
        let t = try #require(Timestamp(iso8601: "2024-05-01T06:00:00.125-07:30"))
        let full = Location(
            latitude: 47.000000001, longitude: -122.5, timestamp: t, altitude: -12.75, horizontalAccuracy: 3.5,
            verticalAccuracy: 8, speed: 4.1, speedAccuracy: 0.25, course: 359.9, courseAccuracy: 10)
        let text = LocationWire.json(full)
        let keys = [
            "altitude", "course", "courseAccuracy", "horizontalAccuracy", "latitude", "longitude", "speed",
            "speedAccuracy", "time", "verticalAccuracy",
        ]
        // Sorted keys, in that order in the text.
        let positions = keys.map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "\(text)")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "\(text)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["latitude"] as? Double == 47.000000001)
        #expect(object["altitude"] as? Double == -12.75)
        #expect(object["courseAccuracy"] as? Double == 10)
        #expect(object["time"] as? String == "2024-05-01T06:00:00.125-07:30")
        let bare = LocationWire.json(Location(latitude: 1, longitude: 2))
        #expect(bare == #"{"latitude":1,"longitude":2}"#)
    }

    @Test("a location's CSV row has a cell per column of the header, which are the export's location columns")
    func locationCSV() {
        let header = LocationWire.csvHeader.split(separator: ",").map(String.init)
        #expect(header == CSVWriter.locationColumns)
        #expect(CSVWriter.header.contains(LocationWire.csvHeader))
        let row = LocationWire.csvRow(Location(latitude: 1.5, longitude: 2, speedAccuracy: 0.5))
        let cells = row.split(separator: ",", omittingEmptySubsequences: false)
        #expect(cells.count == header.count)
        #expect(cells[0] == "" && cells[1] == "1.5" && cells[7] == "0.5", "\(row)")
    }

    @Test("a workout's statistics: every key, null where there is no value, a zone's upper left out when it has none")
    func statisticsJSON() async throws {
        let store = InMemoryStore()
        let source = try Source(name: "watch")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let report = try await WorkoutStatistics.compute(store: store, id: workout.id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(WorkoutStatisticsJSON(report))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keys: Set<String> = [
            "workout", "route", "distanceMetres", "elapsedSeconds", "movingSeconds", "elevationGainMetres",
            "elevationLossMetres", "minElevationMetres", "maxElevationMetres", "averageSpeed", "maxSpeed", "heartRate",
            "cadenceAverage", "zones", "power", "powerZones", "zoneConfiguration", "powerZoneConfiguration",
        ]
        #expect(Set(object.keys) == keys, "\(String(decoding: data, as: UTF8.self))")
        #expect(object["workout"] as? String == workout.id.lowercaseText)
        for key in [
            "route", "elapsedSeconds", "heartRate", "cadenceAverage", "zones", "power", "powerZones", "zoneConfiguration",
            "powerZoneConfiguration",
        ] {
            #expect(object[key] is NSNull, "\(key)")
        }
        let zones = [
            ZoneTime(zone: 1, lower: 0, upper: 120, seconds: 30), ZoneTime(zone: 2, lower: 120, upper: nil, seconds: 5),
        ]
        let text = String(decoding: try encoder.encode(zones.map(WorkoutStatisticsJSON.Zone.init)), as: UTF8.self)
        #expect(text == #"[{"lower":0,"seconds":30,"upper":120,"zone":1},{"lower":120,"seconds":5,"zone":2}]"#)
    }
}
