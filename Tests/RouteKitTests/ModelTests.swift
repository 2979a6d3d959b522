import Foundation
import RouteKit
import Testing

@Suite("Model")
struct ModelTests {
    @Test("a builder's progress as JSON: without sample counts or an event count (an older record) it holds none")
    func builderProgressJSON() throws {
        let old = try JSONDecoder().decode(
            BuilderProgress.self, from: Data(#"{"locationCount": 12, "checkpoint": "c"}"#.utf8))
        #expect(old == BuilderProgress(locationCount: 12, checkpoint: "c"))
        #expect(old.sampleCounts.isEmpty)
        #expect(old.eventCount == 0)
        #expect(old.sampleCount(of: .heartRate) == 0)
        let progress = BuilderProgress(locationCount: 3, sampleCounts: [.heartRate: 7, .power: 2], eventCount: 4)
        let text = String(decoding: try JSONEncoder().encode(progress), as: UTF8.self)
        #expect(text.contains(#""heartRate":7"#))
        let back = try JSONDecoder().decode(BuilderProgress.self, from: Data(text.utf8))
        #expect(back == progress)
        #expect(back.sampleCount(of: .power) == 2)
        // A quantity type this version does not know is left out, not an error.
        let newer = try JSONDecoder().decode(
            BuilderProgress.self,
            from: Data(#"{"locationCount": 1, "sampleCounts": {"heartRate": 5, "glucose": 9}, "eventCount": 1}"#.utf8))
        #expect(newer.sampleCounts == [.heartRate: 5])
    }

    @Test("a location's missing fields are nil, never 0 or -1")
    func optionalFields() {
        var l = Location(latitude: 1, longitude: 2)
        #expect(l.altitude == nil && l.speed == nil && l.course == nil && l.horizontalAccuracy == nil)
        l.altitude = 0
        #expect(l.altitude == 0)
        l.altitude = nil
        #expect(l.altitude == nil)
        #expect(MemoryLayout<Location>.size <= 104)
    }

    @Test(
        "validation names the index and reason, never the coordinates",
        arguments: [
            (Location(latitude: 91, longitude: 0), "latitude"),
            (Location(latitude: 0, longitude: -180.5), "longitude"),
            (Location(latitude: .nan, longitude: 0), "latitude"),
            (Location(latitude: 0, longitude: 0, altitude: .infinity), "altitude"),
            (Location(latitude: 0, longitude: 0, horizontalAccuracy: -1), "horizontalAccuracy"),
        ])
    func invalid(_ location: Location, _ field: String) {
        var batch = [Location(latitude: 10, longitude: 20), Location(latitude: 11, longitude: 21)]
        batch.append(location)
        do {
            try batch.validateBatch()
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidLocation)
            #expect(error.index == 2)
            #expect(error.message.contains(field))
            #expect(!error.description.contains("91") && !error.description.contains("180.5"))
        }
    }

    @Test("the extremes are valid")
    func extremes() throws {
        try [Location(latitude: 90, longitude: 180), Location(latitude: -90, longitude: -180), Location(latitude: 0, longitude: 0)]
            .validateBatch()
    }

    @Test("a sync identifier without a version is an error")
    func syncIdentity() throws {
        #expect(throws: RouteKitError.self) { try SyncIdentity.from(identifier: "abc", version: nil) }
        do {
            _ = try SyncIdentity.from(identifier: "abc", version: nil)
        } catch {
            #expect(error.code == .missingSyncVersion)
        }
        #expect(try SyncIdentity.from(identifier: nil, version: nil) == nil)
        #expect(try SyncIdentity.from(identifier: "abc", version: 3) == SyncIdentity(identifier: "abc", version: 3))
        #expect(throws: RouteKitError.self) { try SyncIdentity.from(identifier: nil, version: 1) }
    }

    @Test("error codes match in catch patterns and print their names")
    func codes() {
        let e = RouteKitError(.notOwner, "not yours", file: "a.gpx", line: 3, column: 7)
        #expect(e.description == "a.gpx:3:7: not yours [notOwner]")
        var matched = false
        do { throw e } catch RouteKitError.Code.notOwner { matched = true } catch {}
        #expect(matched)
    }

    @Test("civil dates and day counts agree", arguments: [Int64(-800_000), -25_567, -1, 0, 1, 10_957, 19_844, 2_932_896])
    func civil(_ days: Int64) {
        let (y, m, d) = civilFromDays(days)
        #expect(daysFromCivil(year: y, month: m, day: d) == days)
    }

    @Test("timestamps order by instant, not by written offset")
    func ordering() throws {
        let a = try #require(Timestamp(iso8601: "2024-05-01T08:00:00+02:00"))
        let b = try #require(Timestamp(iso8601: "2024-05-01T06:00:01Z"))
        #expect(a.instant < b.instant)
        #expect(a != Timestamp(a.instant, utcOffsetSeconds: 0))
        #expect(abs(a.date.timeIntervalSince1970 - 1_714_543_200) < 1e-6)
    }

    @Test("activity types are guessed from GPX <type> text")
    func activities() {
        #expect(ActivityType(guessingFrom: "Outdoor run") == .running)
        #expect(ActivityType(guessingFrom: "Biking") == .cycling)
        #expect(ActivityType(guessingFrom: "9") == .other)
        #expect(ActivityType(guessingFrom: nil) == .other)
    }
}
