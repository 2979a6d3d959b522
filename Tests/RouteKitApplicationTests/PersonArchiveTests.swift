import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitApplication
import RouteKitTesting
import Testing
import ZIPFoundation

/// A person's archive (`routekit export --archive`, `GET /v1/export`), written from an in-memory store and read back
/// with ZIPFoundation, which checks each entry's CRC-32 as it extracts it.
@Suite("A person's archive")
struct PersonArchiveTests {
    /// A workout of `source` named `name` with one route of `points` fixes a second apart from `start` and a
    /// heart-rate series of `samples` samples two seconds apart.
    static func saved(
        _ name: String, source: Source, in store: any RouteStore, start: Int64, points: Int, samples: Int
    ) async throws -> (workout: Workout, route: RouteSample) {
        let workout = Workout(
            activityType: .running, start: Timestamp(Instant(seconds: start)),
            end: Timestamp(Instant(seconds: start + Int64(points))), source: source,
            sync: SyncIdentity(identifier: name, version: 1), metadata: ["name": .string(name)])
        _ = try await store.saveWorkout(workout)
        let locations = (0..<points).map { i in
            Location(
                latitude: 47 + Double(i) * 0.0001, longitude: 8 + Double(i) * 0.0001,
                timestamp: Timestamp(Instant(seconds: start + Int64(i))))
        }
        let route = RouteSample(
            workoutID: workout.id, source: source, sync: SyncIdentity(identifier: name, version: 1),
            start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: locations.count)
        _ = try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
        let heartRate = (0..<samples).map { i in
            QuantitySample(timestamp: Timestamp(Instant(seconds: start + Int64(2 * i))), value: 120 + Double(i % 40))
        }
        try await store.saveSeries(
            QuantitySeries(type: .heartRate, samples: heartRate), workout: workout.id, as: source)
        return (workout, route)
    }

    /// A new folder for an archive.
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "routekit-archive-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// An entry's bytes (ZIPFoundation checks its CRC-32 while it extracts).
    static func contents(_ archive: Archive, _ path: String) throws -> Data {
        let entry = try #require(archive[path], "no entry \(path)")
        var data = Data()
        _ = try archive.extract(entry, skipCRC32: false) { chunk in data.append(chunk) }
        return data
    }

    /// An entry's JSON object.
    static func object(_ archive: Archive, _ path: String) throws -> [String: Any] {
        let data = try contents(archive, path)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(path) is no object")
    }

    @Test(
        "two workouts with routes and heart rate: the manifest lists every entry with its size and CRC-32, the GPX validates, the NDJSON has a line per sample, workout.json names them; no other person's workout"
    )
    func archive() async throws {
        let store = InMemoryStore()
        let watch = try Source(name: "watch")
        let (first, firstRoute) = try await Self.saved(
            "morning", source: watch, in: store, start: 1_714_550_400, points: 50, samples: 30)
        let (second, secondRoute) = try await Self.saved(
            "evening", source: watch, in: store, start: 1_714_590_000, points: 80, samples: 45)
        try await store.relateEffort(try EffortScore(workoutID: first.id, source: watch, score: 7, isManual: true))
        try await store.setZoneSettings(ZoneSettings(maximumHeartRate: 190), ofWorkout: first.id, as: watch)
        // Another person's workout in the same store: not in the default person's archive.
        let someoneElse = store.forPerson(PersonID(UUID()))
        let (foreign, _) = try await Self.saved(
            "foreign", source: watch, in: someoneElse, start: 1_714_560_000, points: 20, samples: 10)

        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/archive.zip"
        let steps = Locked<[(done: Int, total: Int)]>([])
        let counts = try await PersonArchive.write(
            from: store, to: path, routekitVersion: "9.9.9",
            progress: { done, total in
                steps.withLock { $0.append((done, total)) }
            })
        #expect(counts.workouts == 2)
        #expect(counts.routes == 2)
        #expect(counts.series == 2)
        #expect(counts.samples == 75)
        #expect(counts.locations == 130)
        #expect(counts.efforts == 1)
        #expect(counts.skipped == 0)
        // workout.json, a route and a series for each workout, and the manifest.
        #expect(counts.entries == 7)

        // The scratch file is gone; the folder holds the archive alone.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(left == ["archive.zip"])

        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        let names = archive.map(\.path)
        #expect(names.last == "manifest.json", "the manifest is the last entry")
        #expect(names.count == counts.entries)

        let manifest = try Self.object(archive, "manifest.json")
        #expect(manifest["format"] as? String == "routekit-person-archive")
        #expect(manifest["formatVersion"] as? Int == PersonArchive.formatVersion)
        #expect(manifest["routekitVersion"] as? String == "9.9.9")
        #expect(manifest["store"] as? String == store.storeID.uuidString.lowercased())
        #expect(manifest["person"] as? String == PersonID.default.description)
        #expect(manifest["checksum"] as? String == "crc32")
        #expect(manifest["routeFormat"] as? String == "gpx-1.1")
        #expect(manifest["sources"] is NSNull)
        let manifestCounts = try #require(manifest["counts"] as? [String: Any])
        #expect(manifestCounts["entries"] as? Int == 7)
        #expect(manifestCounts["samples"] as? Int == 75)
        let entries = try #require(manifest["entries"] as? [[String: Any]])
        let listed = entries.compactMap { $0["path"] as? String }
        #expect(listed == Array(names.dropLast()), "the manifest lists every other entry, in order")

        // Each entry's size and CRC-32 as the zip has them, and as its bytes give them.
        for item in entries {
            let name = try #require(item["path"] as? String)
            let entry = try #require(archive[name])
            let data = try Self.contents(archive, name)
            let bytes = item["bytes"] as? Int
            #expect(bytes == data.count, "\(name)")
            #expect(bytes == Int(entry.uncompressedSize), "\(name)")
            let crc = data.crc32(checksum: 0)
            let text = String(format: "%08x", crc)
            #expect(item["crc32"] as? String == text, "\(name)")
            #expect(entry.checksum == crc, "\(name)")
            #expect(entry.isCompressed, "\(name) is deflated")
        }

        for (workout, route, points, samples) in [(first, firstRoute, 50, 30), (second, secondRoute, 80, 45)] {
            let dir = "workouts/\(workout.id.uuidString.lowercased())"
            let routeFile = "\(dir)/route-\(route.id.uuidString.lowercased()).gpx"
            let seriesFile = "\(dir)/series/heartRate.ndjson"

            // The route: GPX 1.1 that validates, a point per location, the heart rate merged into them.
            let gpx = try Self.contents(archive, routeFile)
            let problem = try GPXSchema.problem(Array(gpx), name: "route.gpx")
            #expect(problem == nil)
            let gpxText = String(decoding: gpx, as: UTF8.self)
            let trackPoints = gpxText.components(separatedBy: "<trkpt ").count - 1
            #expect(trackPoints == points)
            #expect(gpxText.contains("<gpxtpx:hr>"), "the heart rate is merged into the points")

            // The series: a {"time", "value"} line per sample.
            let ndjson = String(decoding: try Self.contents(archive, seriesFile), as: UTF8.self)
            let lines = ndjson.split(separator: "\n")
            #expect(lines.count == samples)
            let firstLine = try #require(lines.first)
            let sample = try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any]
            #expect(sample?["value"] as? Double == 120)
            let expectedTime = workout.start?.iso8601
            #expect(sample?["time"] as? String == expectedTime)

            // workout.json: the workout, its route and series with their entries.
            let document = try Self.object(archive, "\(dir)/workout.json")
            let shown = try #require(document["workout"] as? [String: Any])
            #expect(shown["uuid"] as? String == workout.id.uuidString.lowercased())
            #expect(shown["syncIdentifier"] as? String == workout.sync?.identifier)
            let routes = try #require(document["routes"] as? [[String: Any]])
            #expect(routes.count == 1)
            let routeShown = routes.first?["route"] as? [String: Any]
            #expect(routeShown?["uuid"] as? String == route.id.uuidString.lowercased())
            #expect(routeShown?["locations"] as? Int == points)
            #expect(routes.first?["file"] as? String == routeFile)
            let series = try #require(document["series"] as? [[String: Any]])
            #expect(series.count == 1)
            #expect(series.first?["type"] as? String == "heartRate")
            #expect(series.first?["samples"] as? Int == samples)
            #expect(series.first?["file"] as? String == seriesFile)
            #expect(document["attachments"] is NSNull)
        }

        // What belongs to the first workout alone: its effort score and the zone settings saved with it.
        let firstDocument = try Self.object(archive, "workouts/\(first.id.uuidString.lowercased())/workout.json")
        let effort = try #require(firstDocument["effort"] as? [String: Any])
        let scores = try #require(effort["scores"] as? [[String: Any]])
        #expect(scores.count == 1)
        #expect((effort["effective"] as? [String: Any])?["score"] as? Double == 7)
        let zones = try #require(firstDocument["zoneSettings"] as? [String: Any])
        #expect(zones["maximumHeartRate"] as? Double == 190)
        let secondDocument = try Self.object(archive, "workouts/\(second.id.uuidString.lowercased())/workout.json")
        #expect(secondDocument["zoneSettings"] is NSNull)

        // Nothing of the other person.
        let foreignID = foreign.id.uuidString.lowercased()
        #expect(!names.contains { $0.contains(foreignID) })
        let manifestText = String(decoding: try Self.contents(archive, "manifest.json"), as: UTF8.self)
        #expect(!manifestText.contains(foreignID))

        // Progress from 0 to the total, one step an entry.
        let seen = steps.withLock { $0 }
        #expect(seen.first?.done == 0)
        #expect(seen.last?.done == counts.entries)
        #expect(seen.allSatisfy { $0.total == counts.entries })
        #expect(seen.count == counts.entries + 1)
    }

    @Test("limited to some sources: another source's workout is left out, and the manifest says which sources")
    func limitedToSources() async throws {
        let store = InMemoryStore()
        let watch = try Source(name: "watch")
        let phone = try Source(name: "phone")
        let (kept, _) = try await Self.saved(
            "kept", source: watch, in: store, start: 1_714_550_400, points: 10, samples: 5)
        let (left, _) = try await Self.saved(
            "left", source: phone, in: store, start: 1_714_560_000, points: 10, samples: 5)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/archive.zip"
        let counts = try await PersonArchive.write(from: store, to: path, readableSources: [watch])
        #expect(counts.workouts == 1)
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        let names = archive.map(\.path)
        let keptFolder = "workouts/\(kept.id.uuidString.lowercased())/"
        let leftFolder = "workouts/\(left.id.uuidString.lowercased())/"
        #expect(names.contains(keptFolder + "workout.json"))
        #expect(!names.contains { $0.hasPrefix(leftFolder) })
        let manifest = try Self.object(archive, "manifest.json")
        #expect(manifest["sources"] as? [String] == ["watch"])
    }

    @Test("an empty store: an archive with the manifest alone, its counts zero")
    func empty() async throws {
        let store = InMemoryStore()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/archive.zip"
        let counts = try await PersonArchive.write(from: store, to: path)
        #expect(counts.entries == 1)
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        let names = archive.map(\.path)
        #expect(names == ["manifest.json"])
        let manifest = try Self.object(archive, "manifest.json")
        #expect((manifest["entries"] as? [Any])?.isEmpty == true)
    }

    @Test("an existing file at the path is refused, and left as it was")
    func existingFile() async throws {
        let store = InMemoryStore()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/archive.zip"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: RouteKitError.self) { _ = try await PersonArchive.write(from: store, to: path) }
        let kept = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(kept == Data("keep".utf8))
    }
}
