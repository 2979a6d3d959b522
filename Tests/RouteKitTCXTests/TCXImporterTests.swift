import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
import RouteKitSQLite
@_spi(RouteKitInternals) import RouteKitTCX
import RouteKitTesting
import Testing

/// Small TCX documents written inline.
enum TCX {
    static let ns = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"
    static let ax = "http://www.garmin.com/xmlschemas/ActivityExtension/v2"

    /// A trackpoint; `second` is the seconds past 06:00:00Z.
    static func point(
        _ second: Int, lat: String? = nil, lon: String? = nil, hr: Int? = nil, extensions: String = "",
        prefix p: String = ""
    ) -> String {
        var s = "<\(p)Trackpoint><\(p)Time>2024-05-01T06:00:\(String(format: "%02d", second))Z</\(p)Time>"
        if let lat, let lon {
            s +=
                "<\(p)Position><\(p)LatitudeDegrees>\(lat)</\(p)LatitudeDegrees>"
                + "<\(p)LongitudeDegrees>\(lon)</\(p)LongitudeDegrees></\(p)Position>"
                + "<\(p)AltitudeMeters>41\(second)</\(p)AltitudeMeters>"
        }
        if let hr { s += "<\(p)HeartRateBpm><\(p)Value>\(hr)</\(p)Value></\(p)HeartRateBpm>" }
        if !extensions.isEmpty { s += "<\(p)Extensions>\(extensions)</\(p)Extensions>" }
        return s + "</\(p)Trackpoint>\n"
    }

    static func positioned(_ second: Int, hr: Int? = nil, extensions: String = "", prefix: String = "") -> String {
        point(second, lat: "47.\(second + 10)", lon: "8.\(second + 10)", hr: hr, extensions: extensions, prefix: prefix)
    }

    /// An activity document: laps of tracks of trackpoint strings.
    static func activity(sport: String = "Running", _ laps: [[[String]]]) -> String {
        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="\(ns)">
            <Activities><Activity Sport="\(sport)"><Id>2024-05-01T06:00:00Z</Id>

            """
        for (n, lap) in laps.enumerated() {
            s += "<Lap StartTime=\"2024-05-01T06:00:\(String(format: "%02d", n * 10))Z\">"
            s += "<TotalTimeSeconds>10</TotalTimeSeconds><DistanceMeters>25.5</DistanceMeters><Calories>3</Calories>"
            for track in lap { s += "<Track>\n" + track.joined() + "</Track>\n" }
            s += "</Lap>\n"
        }
        return s + "<Creator><Name>Forerunner 235</Name></Creator></Activity></Activities></TrainingCenterDatabase>\n"
    }
}

/// A throwaway SQLite store with a folder for files.
struct Scratch {
    let folder: URL
    let store: SQLiteStore

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-tcx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
    }

    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func samples(_ type: QuantityType, _ workout: UUID) async throws -> [QuantitySample] {
        var out: [QuantitySample] = []
        for try await batch in store.samples(of: type, workout: workout) { out += batch.samples }
        return out
    }

    func locations(_ route: UUID) async throws -> [Location] {
        var out: [Location] = []
        for try await batch in store.locations(of: route) { out += batch.locations }
        return out
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

@Suite("TCX import")
struct TCXImporterTests {
    @Test("elements match by namespace whatever the prefix; Watts without a namespace is read")
    func namespacesAndPrefixes() throws {
        let xml = """
            <?xml version="1.0"?>
            <q:TrainingCenterDatabase xmlns:q="\(TCX.ns)" xmlns:zz="\(TCX.ax)">
            <q:Activities><q:Activity Sport="Biking"><q:Id>2024-05-01T08:00:00+02:00</q:Id>
            <q:Lap StartTime="2024-05-01T08:00:00+02:00"><q:Track>
            \(TCX.positioned(1, hr: 120, extensions: "<zz:TPX><zz:Speed>4.5</zz:Speed><zz:Watts>210</zz:Watts></zz:TPX>", prefix: "q:"))
            \(TCX.positioned(2, extensions: "<TPX><Watts>230</Watts></TPX>", prefix: "q:"))
            \(TCX.positioned(3, extensions: "<o:TPX xmlns:o=\"urn:other\"><o:Watts>999</o:Watts></o:TPX>", prefix: "q:"))
            </q:Track></q:Lap></q:Activity></q:Activities></q:TrainingCenterDatabase>
            """
        let doc = try TCXDocument.parse(Array(xml.utf8))
        try #require(doc.activities.count == 1)
        let a = doc.activities[0]
        #expect(a.sport == "Biking")
        #expect(a.id?.utcOffsetSeconds == 7200)
        let points = Array(a.trackpoints)
        try #require(points.count == 3)
        #expect(points[0].heartRate == 120)
        #expect(points[0].speed == 4.5)
        #expect(points[0].power == 210)
        #expect(points[1].power == 230)
        // Another namespace's Watts is not power.
        #expect(points[2].power == nil)
        #expect(points[2].latitude == 47.13)
    }

    @Test("leading whitespace and a byte order mark before <?xml are skipped with warnings")
    func leadingWhitespaceAndBOM() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let body = TCX.activity([[[TCX.positioned(1, hr: 100), TCX.positioned(2, hr: 101)]]])
        let file = try s.write("strava.tcx", [0xEF, 0xBB, 0xBF] + Array("   \n  ".utf8) + Array(body.utf8))
        #expect(try InputFile.format(of: file) == .tcx)
        let result = await TCXImporter(store: s.store).importFile(file)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        #expect(result.tracks.first?.locations == 2)
        #expect(result.warnings.contains { $0.contains("byte order mark") })
        #expect(result.warnings.contains { $0.contains("6 whitespace character(s) before the XML declaration") })
        // The same content without the quirks is the same activity.
        let clean = try s.write("clean.tcx", body)
        #expect(await TCXImporter(store: s.store).importFile(clean).status == .unchanged)
    }

    @Test("several tracks in a lap become pauses; laps become lap events; totals summed; re-import unchanged")
    func tracksArePauses() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let file = try s.write(
            "laps.tcx",
            TCX.activity(
                sport: "running",
                [
                    [[TCX.positioned(1), TCX.positioned(2)], [TCX.positioned(6), TCX.positioned(7)]],
                    [[TCX.positioned(12), TCX.positioned(14)]],
                ]))
        let importer = TCXImporter(store: s.store)
        let result = await importer.importFile(file)
        #expect(result.status == .imported)
        let t = try #require(result.tracks.first)
        #expect(t.locations == 6)
        let workout = try #require(try await s.store.workout(id: t.workout))
        #expect(workout.activityType == .running)
        #expect(workout.sync?.identifier.hasPrefix("tcx-") == true)
        #expect(workout.sync?.version == 1)
        #expect(workout.start?.iso8601.hasPrefix("2024-05-01T06:00:00") == true)
        // The store keeps a whole double as an integer.
        func number(_ key: String) -> Double? {
            switch workout.metadata[key] {
            case .double(let d)?: return d
            case .integer(let i)?: return Double(i)
            default: return nil
            }
        }
        #expect(number("totalTimerTime") == 20)
        #expect(number("totalDistance") == 51)
        #expect(number("totalCalories") == 6)
        #expect(workout.metadata["tcxCreator"] == .string("Forerunner 235"))
        let pauses = workout.events.filter { $0.kind == .pause }
        let resumes = workout.events.filter { $0.kind == .resume }
        try #require(pauses.count == 1 && resumes.count == 1)
        #expect(pauses[0].start?.instant.seconds == resumes[0].start.map { $0.instant.seconds - 4 })
        #expect(workout.events.filter { $0.kind == .lap }.count == 2)
        let again = await importer.importFile(file)
        #expect(again.status == .unchanged)
        #expect(again.tracks.first?.workout == t.workout)
    }

    @Test("trackpoints without a position feed the series only; untimed ones are counted")
    func seriesOnly() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let untimed = "<Trackpoint><HeartRateBpm><Value>77</Value></HeartRateBpm></Trackpoint>\n"
        let file = try s.write(
            "indoor.tcx",
            TCX.activity([
                [
                    [
                        TCX.point(1, hr: 90, extensions: "<TPX xmlns=\"\(TCX.ax)\"><RunCadence>80</RunCadence></TPX>"),
                        TCX.positioned(2, hr: 91), TCX.point(3, hr: 92), untimed, "<Trackpoint/>",
                    ]
                ]
            ]))
        let result = await TCXImporter(store: s.store).importFile(file)
        #expect(result.status == .imported)
        let t = try #require(result.tracks.first)
        #expect(t.locations == 1)
        let hr = try await s.samples(.heartRate, t.workout)
        #expect(hr.map(\.value) == [90, 91, 92])
        #expect(try await s.samples(.cadence, t.workout).map(\.value) == [80])
        #expect(result.warnings.contains { $0.hasPrefix("1 trackpoint(s) without a position or a time") })
    }

    @Test("an indoor activity without any position is a workout with series and no route")
    func indoorOnly() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let file = try s.write("treadmill.tcx", TCX.activity([[[TCX.point(1, hr: 90), TCX.point(2, hr: 95)]]]))
        let importer = TCXImporter(store: s.store)
        let result = await importer.importFile(file)
        #expect(result.status == .imported)
        let t = try #require(result.tracks.first)
        #expect(t.route == nil)
        #expect(try await s.samples(.heartRate, t.workout).count == 2)
        #expect(await importer.importFile(file).status == .unchanged)
    }

    // A course used to be a planned route (a GPX <rte> attachment, no locations counted, its heart rate dropped);
    // it is now a workout with a route and series, as an activity is.
    @Test("a course becomes a workout with a route and series, its course points waypoints; again, unchanged")
    func course() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let cadence = "<TPX xmlns=\"\(TCX.ax)\"><RunCadence>80</RunCadence></TPX>"
        let xml = """
            <?xml version="1.0"?>
            <TrainingCenterDatabase xmlns="\(TCX.ns)"><Courses><Course><Name>Loop</Name>
            <Lap><TotalTimeSeconds>60</TotalTimeSeconds></Lap>
            <Track>\(TCX.positioned(1, hr: 120, extensions: cadence))\(TCX.positioned(2, hr: 125))\(TCX.positioned(3, hr: 130))</Track>
            <CoursePoint><Name>Summit</Name><Time>2024-05-01T06:00:02Z</Time>
            <Position><LatitudeDegrees>47.12</LatitudeDegrees><LongitudeDegrees>8.12</LongitudeDegrees></Position>
            <PointType>Summit</PointType></CoursePoint>
            </Course></Courses></TrainingCenterDatabase>
            """
        let file = try s.write("course.tcx", xml)
        let importer = TCXImporter(store: s.store)
        let result = await importer.importFile(file)
        #expect(result.error == nil)
        #expect(result.status == .imported)
        #expect(result.waypoints == 1)
        try #require(result.tracks.count == 1)
        let t = result.tracks[0]
        // Counted as a route with its locations (`routekit import` says "1 route(s), 3 location(s)").
        #expect(t.locations == 3)
        let route = try #require(t.route)
        #expect(try await s.locations(route).map(\.altitude) == [411, 412, 413])
        let workout = try #require(try await s.store.workout(id: t.workout))
        #expect(workout.sync?.identifier.hasPrefix("tcx-course-") == true)
        #expect(workout.metadata[MetadataKey.course] == .bool(true))
        #expect(workout.metadata["name"] == .string("Loop"))
        #expect(workout.metadata["tcxContent"] == .string("course"))
        #expect(workout.activityType == .other)
        #expect(workout.start?.iso8601 == "2024-05-01T06:00:01Z")
        #expect(workout.end?.iso8601 == "2024-05-01T06:00:03Z")
        // The trackpoints' values are series, as an activity's are.
        #expect(try await s.samples(.heartRate, t.workout).map(\.value) == [120, 125, 130])
        #expect(try await s.samples(.cadence, t.workout).map(\.value) == [80])
        // The course points are the workout's waypoints; the course is no <rte> attachment any more.
        let attachments = try await GPXAttachments.read(workout: t.workout, from: s.store)
        #expect(attachments.routes.isEmpty)
        #expect(attachments.waypoints.count == 1)
        #expect(attachments.waypoints.first?.extras?.name == "Summit")
        #expect(attachments.waypoints.first?.extras?.type == "Summit")
        let again = await importer.importFile(file)
        #expect(again.status == .unchanged)
        #expect(again.tracks.first?.workout == t.workout)
        #expect(try await s.store.workouts(matching: WorkoutFilter()).count == 1)
        #expect(try await GPXAttachments.read(workout: t.workout, from: s.store).waypoints.count == 1)
        // Another course point is another course.
        let moved = try s.write(
            "moved.tcx",
            xml.replacingOccurrences(of: "<Name>Summit</Name>", with: "<Name>Top</Name>")
                .replacingOccurrences(of: "47.12</LatitudeDegrees>", with: "47.13</LatitudeDegrees>"))
        #expect(await importer.importFile(moved).status == .imported)
    }

    @Test("malformed XML fails with the line and column, naming the file, without coordinates")
    func malformed() async throws {
        let s = try Scratch()
        defer { s.remove() }
        let text = TCX.activity([[[TCX.positioned(1), TCX.positioned(2)]]]).replacingOccurrences(
            of: "</Track>", with: "</Trak>")
        let file = try s.write("broken.tcx", "  " + text)
        let result = await TCXImporter(store: s.store).importFile(file)
        #expect(result.status == .failed)
        let e = try #require(result.error)
        #expect(e.code == .malformedXML)
        #expect(e.file == file)
        let brokenLine = text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
            $0.contains("</Trak>")
        }
        #expect(e.line == brokenLine.map { $0 + 1 })
        #expect(e.column != nil)
        #expect(!e.description.contains("47.1"))
        // Not XML at all.
        let garbage = try s.write("garbage.tcx", "<TrainingCenterDatabase xmlns=\"\(TCX.ns)\"><Activities>&bogus;")
        let g = await TCXImporter(store: s.store).importFile(garbage)
        #expect(g.error?.code == .malformedXML)
        #expect(g.error?.line == 1)
        // An unbound prefix is a namespace well-formedness error.
        let unbound = try s.write("unbound.tcx", "<TrainingCenterDatabase xmlns=\"\(TCX.ns)\">\n<x:Activities/>\n</TrainingCenterDatabase>")
        let u = await TCXImporter(store: s.store).importFile(unbound)
        #expect(u.error?.code == .malformedXML)
        #expect(u.error?.line == 2)
    }

    @Test("external entities are not loaded")
    func externalEntities() throws {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE TrainingCenterDatabase [<!ENTITY e SYSTEM "file:///etc/hostname">]>
            <TrainingCenterDatabase xmlns="\(TCX.ns)"><Activities><Activity Sport="Other"><Id>2024-05-01T06:00:00Z</Id>
            <Notes>x&e;y</Notes></Activity></Activities></TrainingCenterDatabase>
            """
        let doc = try TCXDocument.parse(Array(xml.utf8))
        let notes = try #require(doc.activities.first?.notes)
        #expect(notes.hasPrefix("x"))
        let hostname = (try? String(contentsOfFile: "/etc/hostname", encoding: .utf8)) ?? ""
        #expect(hostname.isEmpty || !notes.contains(hostname.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(notes.count <= 2)
    }

    @Test("a document whose root is not TrainingCenterDatabase is refused; detection is by content")
    func notTCX() throws {
        #expect(throws: RouteKitError.self) {
            try TCXDocument.parse(Array("<?xml version=\"1.0\"?><gpx version=\"1.1\"/>".utf8))
        }
        #expect(InputFile.format(ofHead: Array("<?xml version=\"1.0\"?>\n<!-- x --><gpx>".utf8)) == .gpx)
        #expect(InputFile.format(ofHead: Array("  <?xml version=\"1.0\"?><x:TrainingCenterDatabase>".utf8)) == .tcx)
        #expect(InputFile.format(ofHead: Array("<gpx><!-- <TrainingCenterDatabase> --></gpx>".utf8)) == .gpx)
    }

    @Test("conversion to GPX events: one trk per activity, a trkseg per Track, courses as rte")
    func conversion() throws {
        let doc = try TCXDocument.parse(
            Array(
                TCX.activity([[[TCX.positioned(1, hr: 100), TCX.point(2, hr: 101)], [TCX.positioned(5)]]]).utf8))
        var tracks = 0
        var segments = 0
        var points: [GPXPoint] = []
        var warnings: [String] = []
        try doc.gpxEvents { (e: GPXEvent) throws(RouteKitError) in
            switch e {
            case .trackStart: tracks += 1
            case .segmentStart: segments += 1
            case .trackPoints(let p): points += p
            case .warning(let w): warnings.append(w.message)
            default: break
            }
        }
        #expect(tracks == 1)
        #expect(segments == 2)
        #expect(points.count == 2)
        #expect(points.first?.values[.heartRate] == 100)
        #expect(warnings.contains { $0.hasPrefix("1 trackpoint(s) without a position") })
    }
}

@Suite("TCX laps keep what they recorded")
struct TCXLapTotalsTests {
    @Test("a lap's totals, heart rates, intensity, trigger and LX averages are the lap event's metadata")
    func lapTotals() async throws {
        var xml = TCX.activity([[[TCX.positioned(1, hr: 120), TCX.positioned(2, hr: 130)]], [[TCX.positioned(12)]]])
        let fields = """
            <MaximumSpeed>4.5</MaximumSpeed><Calories>3</Calories>\
            <AverageHeartRateBpm><Value>125</Value></AverageHeartRateBpm>\
            <MaximumHeartRateBpm><Value>131</Value></MaximumHeartRateBpm>\
            <Intensity>Active</Intensity><Cadence>88</Cadence><TriggerMethod>Distance</TriggerMethod>
            """
        let first = try #require(xml.range(of: "<Calories>3</Calories>"))
        xml.replaceSubrange(first, with: fields)
        let lapEnd = try #require(xml.range(of: "</Lap>"))
        xml.replaceSubrange(
            lapEnd,
            with: "<Extensions><LX xmlns=\"\(TCX.ax)\"><AvgSpeed>2.75</AvgSpeed><AvgWatts>180</AvgWatts>"
                + "<MaxWatts>400</MaxWatts></LX></Extensions></Lap>")
        let store = InMemoryStore()
        let result = await TCXImporter(store: store).importBytes(Array(xml.utf8), name: "laps.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let laps = workout.laps
        try #require(laps.count == 2)
        let m = laps[0].metadata
        #expect(m[MetadataKey.totalTimerTime] == .double(10))
        #expect(m[MetadataKey.totalDistance] == .double(25.5))
        #expect(m[MetadataKey.totalCalories] == .double(3))
        #expect(m[MetadataKey.maximumSpeed] == .double(4.5))
        #expect(m[MetadataKey.averageHeartRate] == .double(125))
        #expect(m[MetadataKey.maximumHeartRate] == .double(131))
        #expect(m[MetadataKey.averageCadence] == .double(88))
        #expect(m[MetadataKey.intensity] == .string("Active"))
        #expect(m[MetadataKey.lapTrigger] == .string("Distance"))
        #expect(m[MetadataKey.averageSpeed] == .double(2.75))
        #expect(m[MetadataKey.averagePower] == .double(180))
        #expect(m[MetadataKey.maximumPower] == .double(400))
        // The trackpoints' heart rates stay the series', not the lap's.
        #expect(laps[1].metadata[MetadataKey.averageHeartRate] == nil)
        #expect(laps[1].metadata[MetadataKey.totalDistance] == .double(25.5))
    }
}
