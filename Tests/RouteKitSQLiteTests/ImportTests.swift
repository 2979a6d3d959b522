import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// The shared GPX corpus beside the repository (`../shared/gpx-corpus`), if present.
enum SharedCorpus {
    static let root: String? = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = repo.deletingLastPathComponent().appendingPathComponent("shared/gpx-corpus").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    static func files(_ folder: String) -> [String] {
        guard let root else { return [] }
        let dir = root + "/" + folder
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasSuffix(".gpx") }.sorted().map { dir + "/" + $0 }
    }
}

/// Every track point of a file, in order, through the plain reader.
func trackPoints(_ path: String) throws -> [[GPXPoint]] {
    let reader = try GPXReader(path: path)
    var tracks: [[GPXPoint]] = []
    while let e = try reader.next() {
        switch e {
        case .trackStart: tracks.append([])
        case .trackPoints(let p): tracks[tracks.count - 1] += p
        default: break
        }
    }
    return tracks
}

func readRoute(_ store: any RouteStore, _ id: UUID) async throws -> [Location] {
    var out: [Location] = []
    for try await batch in store.locations(of: id, batchSize: 4096) { out += batch.locations }
    return out
}

func temporaryDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-import-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// A synthetic GPX 1.1 file with one track of `count` points (heart rate on every point), in `segments`.
func syntheticGPX(count: Int, segments: Int = 1, name: String = "synthetic") -> String {
    var s = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
        <trk><name>\(name)</name><type>running</type>

        """
    let perSegment = max(1, count / segments)
    for i in 0..<count {
        if i % perSegment == 0 && i / perSegment < segments {
            if i > 0 { s += "</trkseg>\n" }
            s += "<trkseg>\n"
        }
        let lat = String(format: "%.7f", 47.0 + Double(i) * 1e-5)
        let lon = String(format: "%.7f", 8.0 + Double(i % 977) * 1e-5)
        let t = Date(timeIntervalSince1970: 1_714_543_200 + Double(i))
        let time = ISO8601DateFormatter().string(from: t)
        s += "<trkpt lat=\"\(lat)\" lon=\"\(lon)\"><ele>\(400 + i % 50).5</ele><time>\(time)</time>"
        s += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(100 + i % 60)</gpxtpx:hr>"
        s += "</gpxtpx:TrackPointExtension></extensions></trkpt>\n"
    }
    s += "</trkseg></trk></gpx>\n"
    return s
}

@Suite("GPX import into the SQLite store")
struct ImportTests {
    /// Corpus files whose export cannot be identical, and why (README, "Known limits").
    static let notWrittenBack = [
        "opentracks-lat-100-200-pause-markers-1.gpx": "pause markers are written as segment breaks",
        "holux-gm130-bom-crlf-speed-1.gpx": "GPX-namespace elements inside <trk><extensions> are not valid GPX 1.1",
        "runkeeper-time-backwards-hr-1.gpx": "<time> inside <trk> is not valid GPX 1.1",
    ]

    @Test(
        "every valid and quirky corpus file imports losslessly: export and re-import is unchanged",
        .enabled(if: SharedCorpus.root != nil, "../shared/gpx-corpus is not present"))
    func corpusRoundTrip() async throws {
        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        let dir = try temporaryDirectory()
        var tracks = 0
        for file in SharedCorpus.files("valid") + SharedCorpus.files("quirks") {
            let result = await importer.importFile(file)
            #expect(result.error == nil, "\(file): \(String(describing: result.error))")
            #expect(result.status == .imported || result.tracks.isEmpty, "\(file): \(result.status)")
            let expected = try trackPoints(file)
            let other = try fileAttachments(file)
            let attachmentsOnly = expected.isEmpty && !(other.waypoints.isEmpty && other.routes.isEmpty)
            #expect(
                result.tracks.count == expected.count + (attachmentsOnly ? 1 : 0),
                "\(file): one workout per <trk> (or one for a file of waypoints and routes only)")
            for (track, points) in zip(result.tracks, expected) {
                tracks += 1
                #expect(track.locations == points.count, "\(file): every <trkpt> is a location")
                guard let route = track.route else {
                    #expect(points.isEmpty, "\(file): only an empty track has no route")
                    continue
                }
                let back = try await readRoute(store, route)
                #expect(back == points.map(\.location), "\(file): the locations come back in file order")
                #expect(
                    zip(back, points).allSatisfy {
                        $0.timestamp?.utcOffsetSeconds == $1.location.timestamp?.utcOffsetSeconds
                    }, "\(file): with their written UTC offsets")
                // Export from the store, then import the export: the same content, so unchanged.
                guard let sample = try await store.route(id: route) else { continue }
                let out = dir + "/\(route).gpx"
                let sink = try OutputSink(path: out)
                var writer = GPXWriter(to: sink)
                try writer.write(.document(GPXDocumentInfo(version: "1.1", creator: "test")))
                try await StoredRouteEvents.writeTrack(route: sample, store: store, to: &writer)
                try writer.finish()
                try sink.close()
                let again = await importer.importFile(out)
                if let reason = Self.notWrittenBack.first(where: { file.hasSuffix($0.key) })?.value {
                    // What GPX 1.1 cannot hold changes the content; the locations still come back whole.
                    let other = try #require(again.tracks.first?.route, "\(file): \(reason)")
                    #expect(try await readRoute(store, other) == back, "\(file): \(reason); the locations are kept")
                } else {
                    #expect(again.status == .unchanged, "\(file): re-importing its export is unchanged")
                    #expect(again.tracks.first?.route == route, "\(file): and names the same route")
                }
            }
        }
        #expect(tracks > 40)
        #expect(try await store.pendingBuilders().isEmpty)
    }

    @Test(
        "malformed corpus files fail with file, line and column, and leave nothing behind",
        .enabled(if: SharedCorpus.root != nil, "../shared/gpx-corpus is not present"))
    func malformedCorpus() async throws {
        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        for file in SharedCorpus.files("malformed") {
            let result = await importer.importFile(file)
            #expect(result.status == .failed || result.status == .partial, "\(file): \(result.status)")
            #expect(result.error?.file == file, "\(file): the error names the file")
            if let e = result.error, e.code != .io { #expect(e.line != nil, "\(file): and the line") }
        }
        #expect(try await store.pendingBuilders().isEmpty, "no builder is left pending by a broken file")
        // Each of these files breaks before its first track ends: nothing at all is stored.
        #expect(try await store.routes(matching: RouteFilter()).isEmpty)
        #expect(try await store.workouts(matching: WorkoutFilter()).isEmpty)
    }

    @Test(
        "files longer than the reader's queue, each read ahead while the one before is stored, all import",
        .timeLimit(.minutes(10)))  // a guard against a hang (the reader's wake-up went to the wrong thread), not speed
    func readAheadOfLongFiles() async throws {
        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        let dir = try temporaryDirectory()
        // 12,000 points: 12 batches of 1,024, more than the 8 events a reader queues, so that each reader waits on
        // its full queue while the next one waits for it to end.
        let paths = try (0..<4).map { n in
            let path = dir + "/\(n).gpx"
            try syntheticGPX(count: 12_000, name: "long \(n)").write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        for (n, path) in paths.enumerated() {
            let result = await importer.importFile(path, readingAhead: n + 1 < paths.count ? paths[n + 1] : nil)
            #expect(result.status == .imported && result.tracks.map(\.locations) == [12_000], "\(path): \(result)")
        }
        #expect(try await store.routes(matching: RouteFilter()).count == 4)
    }

    @Test("a fault mid-import keeps what was acknowledged; importing again resumes and completes exactly one route")
    func resumeAfterFault() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/big.gpx"
        // Longer than what is held in memory (TrackImport.deferredLimit), so that batches are written as they come.
        let count = TrackImport.deferredLimit + 5000
        try syntheticGPX(count: count, segments: 2).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        // The third batch fails: batches 1 and 2 (2,048 locations) are acknowledged.
        let faulty = FaultInjectingStore(store, failingAppend: 3)
        let first = await GPXImporter(store: faulty).importFile(path)
        #expect(first.status == .failed)
        #expect(first.error?.code == .storage)
        let pending = try await store.pendingBuilders()
        #expect(pending.count == 1)
        #expect(pending.first?.progress.locationCount == 2048)
        #expect(pending.first?.origin?.label == path)
        #expect(try await store.routes(matching: RouteFilter()).isEmpty)

        let second = await GPXImporter(store: store).importFile(path)
        #expect(second.status == .imported)
        #expect(second.tracks.first?.resumedFrom == 2048)
        let routes = try await store.routes(matching: RouteFilter())
        try #require(routes.count == 1)
        #expect(routes[0].locationCount == count)
        #expect(routes[0].metadata["gpxSegmentStarts"] == .string("0,\(count / 2)"))
        let expected = try trackPoints(path)[0]
        #expect(try await readRoute(store, routes[0].id) == expected.map(\.location), "nothing lost or duplicated")
        var hr: [QuantitySample] = []
        for try await b in store.samples(of: .heartRate, workout: routes[0].workoutID) { hr += b.samples }
        #expect(hr.map(\.value) == expected.compactMap { $0.values[.heartRate] }, "the series is whole too")
        #expect(try await store.pendingBuilders().isEmpty)
        let third = await GPXImporter(store: store).importFile(path)
        #expect(third.status == .unchanged)
    }

    @Test("a short track already stored costs no write to import again; a long one writes from the deferred limit")
    func unchangedWritesNothing() async throws {
        let dir = try temporaryDirectory()
        let short = dir + "/short.gpx"
        let long = dir + "/long.gpx"
        try syntheticGPX(count: TrackImport.deferredLimit - 1).write(toFile: short, atomically: true, encoding: .utf8)
        try syntheticGPX(count: TrackImport.deferredLimit + 2000, name: "long").write(
            toFile: long, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        #expect(await GPXImporter(store: store).importFile(short).status == .imported)
        #expect(await GPXImporter(store: store).importFile(long).status == .imported)
        // A store whose every write to a builder fails: the short track is found stored before anything is written.
        let noWrites = FaultInjectingStore(store, failingAppend: 1)
        let again = await GPXImporter(store: noWrites).importFile(short)
        #expect(again.status == .unchanged)
        #expect(again.error == nil)
        // The long track writes its batches (durable, resumable) before its end says it is stored.
        let longAgain = await GPXImporter(store: noWrites).importFile(long)
        #expect(longAgain.status == .failed)
        #expect(longAgain.error?.code == .storage)
    }

    @Test("a pending builder whose content differs is left alone, and the track is built anew")
    func resumeMismatch() async throws {
        let dir = try temporaryDirectory()
        let a = dir + "/a.gpx"
        // Same first 1,024 points (same head), different later points.
        let count = TrackImport.deferredLimit + 3000
        var textA = syntheticGPX(count: count)
        try textA.write(toFile: a, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        _ = await GPXImporter(store: FaultInjectingStore(store, failingAppend: 3)).importFile(a)
        #expect(try await store.pendingBuilders().first?.progress.locationCount == 2048)
        textA = textA.replacingOccurrences(of: "<ele>401.5</ele>", with: "<ele>401.75</ele>")
        let b = dir + "/b.gpx"
        try textA.write(toFile: b, atomically: true, encoding: .utf8)
        let result = await GPXImporter(store: store).importFile(b)
        #expect(result.status == .imported)
        #expect(result.tracks.first?.resumedFrom == nil)
        #expect(try await store.pendingBuilders().count == 1, "the other track's builder stays pending")
        let routes = try await store.routes(matching: RouteFilter())
        #expect(routes.map(\.locationCount) == [count])
    }

    @Test("an empty <trk> becomes a workout without a route, with a warning; segments become workout segments")
    func emptyTrackAndSegments() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/t.gpx"
        let text = syntheticGPX(count: 30, segments: 3).replacingOccurrences(
            of: "</trk></gpx>", with: "</trk><trk><name>empty</name></trk></gpx>")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let result = await GPXImporter(store: store).importFile(path)
        #expect(result.status == .imported)
        try #require(result.tracks.count == 2)
        #expect(result.tracks[1].route == nil)
        #expect(result.warnings.contains { $0.contains("no points") })
        let w = try #require(try await store.workout(id: result.tracks[0].workout))
        #expect(w.events.filter { $0.kind == .segment }.count == 3)
        // Each gap between segments is a pause and a resume, at the last and first times around it.
        #expect(w.events.filter { $0.kind == .pause }.count == 2 && w.events.filter { $0.kind == .resume }.count == 2)
        let pauses = w.events.filter { $0.kind == .pause }.compactMap { $0.start?.instant }
        let resumes = w.events.filter { $0.kind == .resume }.compactMap { $0.start?.instant }
        #expect(zip(pauses, resumes).allSatisfy { $0 < $1 })
        #expect(w.activityType == .running)
        #expect(w.metadata["name"] == .string("synthetic"))
        let empty = try #require(try await store.workout(id: result.tracks[1].workout))
        #expect(empty.metadata["name"] == .string("empty"))
        #expect(try await store.routes(matching: RouteFilter(workout: empty.id)).isEmpty)
        let again = await GPXImporter(store: store).importFile(path)
        #expect(again.status == .unchanged)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 2)
    }

    @Test("another source importing the same file gets its own workouts and routes")
    func sourcesAreSeparate() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/t.gpx"
        try syntheticGPX(count: 10).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let a = await GPXImporter(store: store).importFile(path)
        let b = await GPXImporter(store: store, source: try Source(name: "other")).importFile(path)
        #expect(a.status == .imported && b.status == .imported)
        #expect(a.tracks.first?.route != b.tracks.first?.route)
        let routes = try await store.routes(matching: RouteFilter())
        #expect(Set(routes.map(\.sync.identifier)).count == 1, "same content, same identifier, two sources")
    }
}

/// Every waypoint and every `<rte>` of a file, through the plain reader.
func fileAttachments(_ path: String) throws -> (waypoints: [GPXPoint], routes: [[GPXPoint]]) {
    let reader = try GPXReader(path: path)
    var waypoints: [GPXPoint] = []
    var routes: [[GPXPoint]] = []
    while let e = try reader.next() {
        switch e {
        case .waypoint(let p): waypoints.append(p)
        case .routeStart: routes.append([])
        case .routePoints(let p): routes[routes.count - 1] += p
        default: break
        }
    }
    return (waypoints, routes)
}

@Suite("GPX waypoints and routes in the store")
struct AttachmentTests {
    static let planned = """
        <?xml version="1.0"?><gpx version="1.1" creator="planner" xmlns="http://www.topografix.com/GPX/1/1">
        <wpt lat="46.5" lon="7.5"><ele>1200</ele><name>Hut</name><sym>Lodge</sym></wpt>
        <wpt lat="46.51" lon="7.52"><name>Summit</name><desc>the top</desc></wpt>
        <rte><name>Ascent</name><rtept lat="46.5" lon="7.5"/><rtept lat="46.505" lon="7.51"><name>turn</name></rtept>
        <rtept lat="46.51" lon="7.52"/></rte>
        </gpx>
        """

    @Test("a file with only waypoints and routes becomes a workout holding them; export and re-import is unchanged")
    func plannedRoute() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/plan.gpx"
        try Self.planned.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        let result = await importer.importFile(path)
        #expect(result.status == .imported)
        #expect(result.waypoints == 2)
        let track = try #require(result.tracks.first)
        #expect(track.route == nil)
        let workout = try #require(try await store.workout(id: track.workout))
        #expect(workout.metadata["name"] == .string("Ascent"))
        let stored = try await GPXAttachments.read(workout: workout.id, from: store)
        let expected = try fileAttachments(path)
        #expect(stored.waypoints == expected.waypoints)
        #expect(stored.routes.map(\.points) == expected.routes)
        #expect(stored.routes.first?.info.name == "Ascent")
        #expect(await importer.importFile(path).status == .unchanged)
        // Export the workout: waypoints and the planned route come back; importing that is unchanged.
        let out = dir + "/out.gpx"
        let sink = try OutputSink(path: out)
        var writer = GPXWriter(to: sink)
        try writer.write(.document(GPXDocumentInfo(version: "1.1", creator: "test")))
        try await StoredRouteEvents.writeAttachments(workout: workout.id, store: store, to: &writer)
        try writer.finish()
        try sink.close()
        let exported = try fileAttachments(out)
        #expect(exported.waypoints == expected.waypoints)
        #expect(exported.routes == expected.routes)
        #expect(await importer.importFile(out).status == .unchanged)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 1)
    }

    @Test(
        "corpus waypoints and routes are stored with the first track's workout, point for point",
        .enabled(if: SharedCorpus.root != nil, "../shared/gpx-corpus is not present"))
    func corpusAttachments() async throws {
        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        var checked = 0
        for file in SharedCorpus.files("valid") + SharedCorpus.files("quirks") {
            let expected = try fileAttachments(file)
            guard !expected.waypoints.isEmpty || !expected.routes.isEmpty else { continue }
            let result = await importer.importFile(file)
            guard let first = result.tracks.first, !first.unchanged else { continue }
            let stored = try await GPXAttachments.read(workout: first.workout, from: store)
            #expect(stored.waypoints == expected.waypoints, "\(file): waypoints")
            #expect(stored.routes.map(\.points) == expected.routes, "\(file): routes")
            checked += 1
        }
        #expect(checked >= 5, "corpus files with waypoints or routes: \(checked)")
    }
}
