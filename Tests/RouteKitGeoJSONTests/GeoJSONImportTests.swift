import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitGeoJSON
import RouteKitImport
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// A fresh SQLite store in a folder of its own.
func makeStore() throws -> SQLiteStore {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-geojson-\(UUID().uuidString)")
    return try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
}

/// A fresh folder for a test's files.
func makeFolder() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-geojson-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// Every location of a route, in order.
func locations(_ store: any RouteStore, _ route: UUID) async throws -> [Location] {
    var out: [Location] = []
    for try await batch in store.locations(of: route, batchSize: 4096) { out += batch.locations }
    return out
}

/// A GPX track with three segments of 300, 2 and 700 points: times in UTC, with an offset and fractions, and without
/// a zone; elevations on most points; heart rate (which GeoJSON cannot hold).
func roundTripGPX() -> String {
    var s = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
        <wpt lat="47.5" lon="8.5"><ele>400</ele><time>2024-05-01T05:59:00Z</time><name>Start</name><desc>Gate</desc>\
        <sym>Flag</sym></wpt>
        <trk><name>Lake loop</name><desc>Clockwise</desc><type>cycling</type>

        """
    var i = 0
    for count in [300, 2, 700] {
        s += "<trkseg>\n"
        for _ in 0..<count {
            let lat = String(format: "%.7f", 47.0 + Double(i) * 1e-5)
            let lon = String(format: "%.7f", 8.0 + Double(i % 977) * 1e-5)
            let seconds = 1_714_543_200 + i
            var time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(seconds)))
            if i % 3 == 1 { time = time.replacingOccurrences(of: "Z", with: ".25Z") }
            if i % 7 == 2 {
                // The same instant written at +02:00.
                let local = ISO8601DateFormatter()
                local.timeZone = TimeZone(secondsFromGMT: 7200)
                time = local.string(from: Date(timeIntervalSince1970: Double(seconds)))
            }
            if i % 11 == 5 && time.hasSuffix("Z") { time = String(time.dropLast()) }  // no zone
            let ele = i % 13 == 0 ? "" : "<ele>\(400 + i % 50).5</ele>"
            s += "<trkpt lat=\"\(lat)\" lon=\"\(lon)\">\(ele)<time>\(time)</time>"
            s += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(100 + i % 60)</gpxtpx:hr>"
            s += "</gpxtpx:TrackPointExtension></extensions></trkpt>\n"
            i += 1
        }
        s += "</trkseg>\n"
    }
    s += "</trk></gpx>\n"
    return s
}

@Suite("GeoJSON import")
struct GeoJSONImportTests {
    @Test("GPX -> store -> GeoJSON export -> import: the same points (latitude, longitude, altitude, time) and segments")
    func roundTrip() async throws {
        let dir = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gpx = dir + "/ride.gpx"
        try roundTripGPX().write(toFile: gpx, atomically: true, encoding: .utf8)
        let store = try makeStore()
        let imported = await GPXImporter(store: store).importFile(gpx)
        let track = try #require(imported.tracks.first)
        let routeID = try #require(track.route)
        let route = try #require(try await store.route(id: routeID))
        let original = try await locations(store, route.id)
        #expect(original.count == 1002)
        #expect(original.contains { $0.timestamp?.utcOffsetSeconds == 7200 })
        #expect(original.contains { $0.timestamp?.utcOffsetSeconds == nil })
        #expect(original.contains { $0.altitude == nil })

        // Exported as the workout: its waypoint, then the track.
        let sink = OutputSink()
        try await StoreExport.write([route], attachmentsOf: track.workout, from: store, as: .geojson, to: sink)
        try sink.close()
        let geojson = dir + "/ride.geojson"
        try Data(sink.bytes).write(to: URL(fileURLWithPath: geojson))
        #expect(String(decoding: sink.bytes, as: UTF8.self).contains("\"coordTimes\":[[\""))

        // Imported through the one way in (the format told by content), into another store.
        let other = try makeStore()
        var results: [ImportResult] = []
        await RouteImporter(store: other).importPath(geojson) { results.append($0) }
        let result = try #require(results.first)
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        #expect(result.waypoints == 1)
        let again = try #require(result.tracks.first)
        #expect(again.locations == original.count)
        let back = try await locations(other, try #require(again.route))
        #expect(back.count == original.count)
        if let i = back.indices.first(where: { back[$0] != original[$0] }) {
            Issue.record("location \(i) differs: \(String(reflecting: back[i])) vs \(String(reflecting: original[i]))")
        }
        #expect(
            zip(back, original).allSatisfy { $0.timestamp?.utcOffsetSeconds == $1.timestamp?.utcOffsetSeconds },
            "the UTC offsets as written")
        let backRouteID = try #require(again.route)
        let backRoute = try #require(try await other.route(id: backRouteID))
        #expect(backRoute.segmentStarts == [0, 300, 302])
        let workout = try #require(try await other.workout(id: again.workout))
        #expect(workout.metadata["name"] == .string("Lake loop"))
        #expect(workout.metadata["description"] == .string("Clockwise"))
        #expect(workout.activityType == .cycling)
        #expect(workout.events.filter { $0.kind == .segment }.count == 3)
        #expect(workout.sync?.identifier.hasPrefix("geojson-") == true)
        let waypoints = try await GPXAttachments.read(workout: again.workout, from: other).waypoints
        #expect(waypoints.count == 1)
        #expect(waypoints.first?.extras?.name == "Start")
        #expect(waypoints.first?.extras?.symbol == "Flag")
        #expect(waypoints.first?.location.timestamp?.iso8601 == "2024-05-01T05:59:00Z")

        // The same file again, under another name: unchanged.
        let copy = dir + "/copy.json"
        try FileManager.default.copyItem(atPath: geojson, toPath: copy)
        var second: [ImportResult] = []
        await RouteImporter(store: other).importPath(copy) { second.append($0) }
        #expect(second.first?.status == .unchanged)

        // GeoJSON -> GPX (convert's path): the same points, in a document GPX readers take.
        let bytes = try GeoJSONFile.contents(of: geojson).bytes
        let gpxSink = OutputSink()
        var writer = GPXWriter(to: gpxSink)
        try GeoJSONFile.events(of: bytes, name: geojson, inGPXOrder: true) { (e: GPXEvent) throws(RouteKitError) in
            try writer.write(e)
        }
        try writer.finish()
        try gpxSink.close()
        let document = try GPXDocument(bytes: gpxSink.bytes, name: "converted.gpx")
        #expect(document.waypoints.count == 1)
        #expect(document.tracks.first?.segments.map(\.points.count) == [300, 2, 700])
        #expect(document.tracks.first?.segments.flatMap(\.points).map(\.location) == original)
        #expect(document.tracks.first?.info.name == "Lake loop")
    }

    /// A FeatureCollection as Mapbox's togeojson writes a GPX track: properties (with `coordTimes`) before the
    /// geometry, `[longitude, latitude, elevation]` positions.
    static let togeojson = """
        {"type":"FeatureCollection","features":[{"type":"Feature","properties":{"_gpxType":"trk","name":"Morning Run",\
        "type":"running","time":"2024-05-01T06:00:00Z","coordTimes":["2024-05-01T06:00:00Z","2024-05-01T06:00:05.5Z",\
        "2024-05-01T08:00:10+02:00"],"links":[{"href":"https://example.org"}],"heartRates":[120,121,122]},\
        "geometry":{"type":"LineString","coordinates":[[8.5,47.3,410],[8.5001,47.3001,411.5],[8.5002,47.3002]]}}]}
        """

    @Test("a togeojson FeatureCollection: coordTimes become the points' times, elevations their altitudes")
    func togeojsonFile() async throws {
        let store = try makeStore()
        let result = await GeoJSONImporter(store: store).importBytes(Array(Self.togeojson.utf8), name: "run.geojson")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let track = try #require(result.tracks.first)
        let points = try await locations(store, try #require(track.route))
        #expect(points.count == 3)
        #expect(points.map(\.longitude) == [8.5, 8.5001, 8.5002])
        #expect(points.map(\.latitude) == [47.3, 47.3001, 47.3002])
        #expect(points.map(\.altitude) == [410, 411.5, nil])
        #expect(
            points.map { $0.timestamp?.iso8601 }
                == ["2024-05-01T06:00:00Z", "2024-05-01T06:00:05.5Z", "2024-05-01T08:00:10+02:00"])
        let workout = try #require(try await store.workout(id: track.workout))
        #expect(workout.metadata["name"] == .string("Morning Run"))
        #expect(workout.activityType == .running)

        // Newer togeojson: coordinateProperties.times, geometry first, keys in any order.
        let newer = """
            {"features":[{"geometry":{"coordinates":[[8.5,47.3],[8.6,47.4]],"type":"LineString"},\
            "properties":{"coordinateProperties":{"heart":[1,2],"times":["2024-05-01T06:00:00Z",null]}},\
            "type":"Feature"}],"type":"FeatureCollection"}
            """
        let second = await GeoJSONImporter(store: store).importBytes(Array(newer.utf8), name: "newer.geojson")
        #expect(second.error == nil, "\(String(describing: second.error))")
        let points2 = try await locations(store, try #require(second.tracks.first?.route))
        #expect(points2.map { $0.timestamp?.iso8601 } == ["2024-05-01T06:00:00Z", nil])
    }

    @Test("a MultiLineString's lines become segments; nested coordTimes match them line by line")
    func multiLineString() async throws {
        let json = """
            {"type":"Feature","properties":{"name":"Three parts","coordTimes":[
              ["2024-05-01T06:00:00Z","2024-05-01T06:00:01Z"],
              ["2024-05-01T06:10:00Z","2024-05-01T06:10:01Z","2024-05-01T06:10:02Z"],
              ["2024-05-01T06:20:00Z","2024-05-01T06:20:01Z"]]},
             "geometry":{"type":"MultiLineString","coordinates":[
              [[8.5,47.3],[8.51,47.31]],
              [[8.52,47.32],[8.53,47.33],[8.54,47.34]],
              [[8.55,47.35],[8.56,47.36]]]}}
            """
        let store = try makeStore()
        let result = await GeoJSONImporter(store: store).importBytes(Array(json.utf8), name: "parts.geojson")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let track = try #require(result.tracks.first)
        #expect(track.locations == 7)
        let routeID = try #require(track.route)
        let route = try #require(try await store.route(id: routeID))
        #expect(route.segmentStarts == [0, 2, 5])
        let workout = try #require(try await store.workout(id: track.workout))
        #expect(workout.events.filter { $0.kind == .segment }.count == 3)
        // The gaps between the lines are pauses.
        #expect(
            workout.events.filter { $0.kind == .pause }.map { $0.start?.iso8601 } == [
                "2024-05-01T06:00:01Z", "2024-05-01T06:10:02Z",
            ])
        #expect(workout.metadata["name"] == .string("Three parts"))
    }

    @Test("points become waypoints and a route-kind line a planned route; a file of them only gets a workout")
    func waypointsAndRoutes() async throws {
        let json = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","geometry":{"type":"Point","coordinates":[7.5,46.5,1200]},
              "properties":{"kind":"waypoint","name":"Hut","desc":"Water","sym":"Lodge","time":"2024-05-01T06:00:00Z"}},
             {"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[7.6,46.6],[7.7,46.7]]},"properties":null},
             {"type":"Feature","geometry":{"type":"LineString","coordinates":[[7.5,46.5],[7.51,46.51],[7.52,46.52]]},
              "properties":{"kind":"route","name":"Ascent"}},
             {"type":"Feature","geometry":null,"properties":{"kind":"waypoint"}}]}
            """
        let store = try makeStore()
        let result = await GeoJSONImporter(store: store).importBytes(Array(json.utf8), name: "plan.geojson")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.waypoints == 3)
        let holder = try #require(result.tracks.first)
        #expect(holder.route == nil)
        let stored = try await GPXAttachments.read(workout: holder.workout, from: store)
        #expect(stored.waypoints.count == 3)
        #expect(stored.waypoints.first?.extras?.name == "Hut")
        #expect(stored.waypoints.first?.extras?.description == "Water")
        #expect(stored.waypoints.first?.location.altitude == 1200)
        #expect(stored.routes.count == 1)
        #expect(stored.routes.first?.info.name == "Ascent")
        #expect(stored.routes.first?.points.count == 3)
        let again = await GeoJSONImporter(store: store).importBytes(Array(json.utf8), name: "plan again.geojson")
        #expect(again.status == .unchanged)
    }

    @Test("a lone Feature and a lone geometry are read; lines shorter than two positions are reported")
    func loneObjects() async throws {
        let store = try makeStore()
        let feature = #"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]},"properties":{}}"#
        let a = await GeoJSONImporter(store: store).importBytes(Array(feature.utf8), name: "feature.geojson")
        #expect(a.tracks.first?.locations == 2, "\(String(describing: a.error))")
        let geometry = #"{"coordinates":[[5,6],[7,8],[9,10]],"type":"LineString"}"#
        let b = await GeoJSONImporter(store: store).importBytes(Array(geometry.utf8), name: "geometry.geojson")
        #expect(b.tracks.first?.locations == 3, "\(String(describing: b.error))")
        let short = """
            {"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"MultiLineString",
            "coordinates":[[[1,2],[3,4]]]},"properties":{"kind":"track","points":3,"pointsNotInGeometry":1}}]}
            """
        let c = await GeoJSONImporter(store: store).importBytes(Array(short.utf8), name: "short.geojson")
        #expect(c.tracks.first?.locations == 2)
        #expect(c.warnings.contains { $0.contains("pointsNotInGeometry") })
    }

    @Test("GeoJSON is told by its content: a JSON object, after a byte order mark and whitespace")
    func sniffing() {
        #expect(InputFile.format(ofHead: Array("{\"type\":\"FeatureCollection\"".utf8)) == .geojson)
        #expect(InputFile.format(ofHead: [0xEF, 0xBB, 0xBF] + Array(" \r\n\t{".utf8)) == .geojson)
        #expect(InputFile.format(ofHead: Array("<?xml version=\"1.0\"?><gpx>".utf8)) == .gpx)
        #expect(InputFile.format(ofHead: Array("[1,2]".utf8)) == .gpx)
    }
}

/// Each kind of bad input gives its typed error, naming the member by its path, the line and the column, and never
/// the coordinates or times.
@Suite("GeoJSON refused")
struct GeoJSONRefusedTests {
    /// The error importing `json` gives.
    static func error(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RouteKitError {
        let store = try makeStore()
        let result = await GeoJSONImporter(store: store).importBytes(Array(json.utf8), name: "bad.geojson")
        #expect(result.status == .failed, sourceLocation: sourceLocation)
        #expect(result.tracks.isEmpty, sourceLocation: sourceLocation)
        let e = try #require(result.error, sourceLocation: sourceLocation)
        #expect(e.file == "bad.geojson", sourceLocation: sourceLocation)
        #expect(e.line != nil && e.column != nil, "\(e)", sourceLocation: sourceLocation)
        return e
    }

    static func line(_ coordinates: String, properties: String = "{}", type: String = "LineString") -> String {
        #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":\#(properties),"geometry":{"type":"\#(type)","coordinates":\#(coordinates)}}]}"#
    }

    @Test(
        "invalid JSON",
        arguments: [
            #"{"type":"FeatureCollection","features":[}"#,
            #"{"type":"FeatureCollection","features":[],}"#,
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{'a':1}}]}"#,
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,NaN]}}]}"#,
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[01,2]}}]}"#,
            #"{"type":"FeatureCollection","features":[]"#,
            #"{"type":"FeatureCollection","features":[]} {}"#,
            "{\"type\":\"FeatureCollection\",\"features\":[],\"name\":\"a\u{01}b\"}",
            #"{"type":"FeatureCollection","features":[],"name":"\x"}"#,
            "",
        ])
    func invalidJSON(_ json: String) async throws {
        let e = try await Self.error(json)
        #expect(e.code == .invalidGeoJSON, "\(e)")
    }

    @Test("not GeoJSON: an object without a type, a type that is not GeoJSON's, a feature that is not one")
    func notGeoJSON() async throws {
        let untyped = try await Self.error(#"{"name":"x"}"#)
        #expect(untyped.code == .invalidGeoJSON)
        #expect(untyped.message.contains("no type"))
        let foreign = try await Self.error(#"{"type":"Topology","objects":{}}"#)
        #expect(foreign.message.contains("\"Topology\""))
        let notFeature = try await Self.error(#"{"type":"FeatureCollection","features":[{"type":"Point"}]}"#)
        #expect(notFeature.message.contains("features[0].type"), "\(notFeature)")
        let array = try await Self.error("[1,2]")
        #expect(array.code == .invalidGeoJSON)
    }

    @Test("a geometry that is not a point or a line names its type and path")
    func wrongGeometry() async throws {
        let polygon = try await Self.error(Self.line("[[[1,2],[3,4],[5,6],[1,2]]]", type: "Polygon"))
        #expect(polygon.code == .invalidGeoJSON)
        #expect(polygon.message.contains("features[0].geometry.type"), "\(polygon)")
        #expect(polygon.message.contains("Polygon"))
        let collection = try await Self.error(
            #"{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}"#)
        #expect(collection.message.contains("GeometryCollection"), "\(collection)")
        let shape = try await Self.error(Self.line("[1,2]"))
        #expect(shape.message.contains("features[0].geometry.coordinates of a LineString"), "\(shape)")
        let position = try await Self.error(Self.line("[[1,2],[3]]"))
        #expect(position.message.contains("features[0].geometry.coordinates[1]"), "\(position)")
        let text = try await Self.error(Self.line(#"[[1,2],["3",4]]"#))
        #expect(text.message.contains("features[0].geometry.coordinates[1][0] is not a number"), "\(text)")
    }

    @Test("coordinates out of range are invalid values, named by path and never printed")
    func outOfRange() async throws {
        let longitude = try await Self.error(Self.line("[[8.5,47.3],[200.123456,47.4]]"))
        #expect(longitude.code == .invalidValue)
        #expect(longitude.message.contains("features[0].geometry.coordinates[1][0]"), "\(longitude)")
        #expect(!longitude.description.contains("200.123456"))
        #expect(!longitude.description.contains("47.4"))
        let latitude = try await Self.error(Self.line("[[[8.5,47.3],[8.6,47.4]],[[8.7,-91.5]]]", type: "MultiLineString"))
        #expect(latitude.code == .invalidValue)
        #expect(latitude.message.contains("features[0].geometry.coordinates[1][0][1]"), "\(latitude)")
        #expect(!latitude.description.contains("91.5"))
        let infinite = try await Self.error(Self.line("[[8.5,47.3],[8.6,1e999]]"))
        #expect(infinite.code == .invalidValue)
        #expect(infinite.message.contains("features[0].geometry.coordinates[1][1]"), "\(infinite)")
    }

    @Test("coordTimes that do not match the coordinates, or are not times")
    func badTimes() async throws {
        let count = try await Self.error(
            Self.line("[[1,2],[3,4],[5,6]]", properties: #"{"coordTimes":["2024-05-01T06:00:00Z",null]}"#))
        #expect(count.code == .invalidGeoJSON)
        #expect(count.message.contains("features[0].properties.coordTimes has 2 times for 3 positions"), "\(count)")
        let perLine = try await Self.error(
            Self.line(
                "[[[1,2],[3,4]],[[5,6],[7,8]]]",
                properties: #"{"coordTimes":[["2024-05-01T06:00:00Z",null],["2024-05-01T06:00:02Z"]]}"#,
                type: "MultiLineString"))
        #expect(perLine.message.contains("features[0].properties.coordTimes[1] has 1 times for 2 positions"), "\(perLine)")
        let lines = try await Self.error(
            Self.line(
                "[[[1,2],[3,4]],[[5,6],[7,8]]]", properties: #"{"coordTimes":[[null,null]]}"#, type: "MultiLineString"))
        #expect(lines.message.contains("1 arrays of times for 2 lines"), "\(lines)")
        let notTime = try await Self.error(
            Self.line("[[1,2],[3,4]]", properties: #"{"coordTimes":["2024-05-01T06:00:00Z","yesterday at 6"]}"#))
        #expect(notTime.code == .invalidValue)
        #expect(notTime.message.contains("features[0].properties.coordTimes[1] is not an ISO 8601 time"), "\(notTime)")
        #expect(!notTime.description.contains("yesterday"))
        let number = try await Self.error(Self.line("[[1,2],[3,4]]", properties: #"{"coordTimes":[1714543200,1]}"#))
        #expect(number.message.contains("features[0].properties.coordTimes[0] is not a time"), "\(number)")
    }

    @Test("nesting deeper than 512 levels is refused, not a stack overflow")
    func deepNesting() async throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let e = try await Self.error(#"{"type":"FeatureCollection","features":[],"x":"# + deep + "}")
        #expect(e.code == .invalidGeoJSON)
        #expect(e.message.contains("512"), "\(e)")
    }

    @Test("a document larger than the limit is refused before it is parsed")
    func tooLarge() throws {
        #expect(throws: RouteKitError.self) { try GeoJSONReader.checkSize(GeoJSONReader.maxBytes + 1, name: "big.geojson") }
        do {
            try GeoJSONReader.checkSize(GeoJSONReader.maxBytes + 1, name: "big.geojson")
        } catch {
            #expect(error.code == .invalidGeoJSON)
            #expect(error.file == "big.geojson")
            #expect(error.message.contains("128 MiB"))
        }
        #expect((try? GeoJSONReader.checkSize(GeoJSONReader.maxBytes, name: "ok.geojson")) != nil)
    }
}
