import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// Validates written GPX with `xmllint --schema` against `../shared/schemas/gpx-1.1.xsd` when both exist (in CI they
/// must): RouteKitTesting's `GPXSchema`.
enum GPXSchemaCheck {
    static func validate(_ bytes: [UInt8], name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if let problem = try GPXSchema.problem(bytes, name: name) { Issue.record("\(problem)", sourceLocation: sourceLocation) }
    }
}

/// A GPX file's `<metadata>` goes into the store with the workouts its import makes, and `export` writes it back.
@Suite("GPX metadata through the store")
struct GPXMetadataRoundTripTests {
    /// Every field `<metadata>` can have, a waypoint, and a track with every field a `<trk>` can have.
    static let file = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Metadata test" xmlns="http://www.topografix.com/GPX/1/1">
        \(GPXFixtures.everyMetadataElement)
          <wpt lat="47.305" lon="8.505"><name>Café</name></wpt>
          <trk>
            <name>Lake loop</name><cmt>windy</cmt><desc>Clockwise</desc><src>Edge 530</src>
            <link href="https://example.org/trk"><text>track</text></link><number>3</number><type>cycling</type>
            <trkseg>
              <trkpt lat="47.3" lon="8.5"><ele>410</ele><time>2024-05-01T06:00:00Z</time></trkpt>
              <trkpt lat="47.305" lon="8.505"><ele>412.5</ele><time>2024-05-01T06:00:10Z</time></trkpt>
              <trkpt lat="47.31" lon="8.51"><ele>415</ele><time>2024-05-01T06:00:20Z</time></trkpt>
            </trkseg>
          </trk>
        </gpx>
        """

    @Test("import keeps <metadata> with the workout; exporting its route or the workout writes it back, schema-valid")
    func throughTheStore() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/lunch.gpx"
        try Self.file.write(toFile: path, atomically: true, encoding: .utf8)
        let original = try GPXDocument(path: path)
        #expect(original.metadata.keywords == "lake, lunch")
        #expect(original.metadata.extensions.count == 1)

        let store = try makeTemporaryStore()
        let importer = GPXImporter(store: store)
        let result = await importer.importFile(path)
        #expect(result.status == .imported, "\(String(describing: result.error))")
        let track = try #require(result.tracks.first)
        let routeID = try #require(track.route)
        let route = try #require(try await store.route(id: routeID))
        let workout = try #require(try await store.workout(id: track.workout))
        guard case .string(let json)? = workout.metadata[GPXMetadataStorage.key] else {
            Issue.record("the workout has no \(GPXMetadataStorage.key) entry: \(workout.metadata.keys.sorted())")
            return
        }
        #expect(json.contains("\"keywords\":\"lake, lunch\""))
        #expect(GPXMetadataStorage.metadata(workout.metadata[GPXMetadataStorage.key]) == original.metadata)
        // The track's own fields are kept as before, beside it.
        #expect(workout.metadata["name"] == .string("Lake loop"))

        // A route's export (its workout's metadata) and the workout's (with its waypoint).
        for (n, owner) in [nil, track.workout].enumerated() {
            let sink = OutputSink()
            try await StoreExport.write([route], attachmentsOf: owner, from: store, as: .gpx, to: sink)
            try sink.close()
            let exported = try GPXDocument(bytes: sink.bytes, name: "exported.gpx")
            #expect(exported.metadata == original.metadata, "export \(n)")
            #expect(exported.tracks.first?.info == original.tracks.first?.info, "export \(n): the <trk> fields")
            #expect(exported.waypoints.count == (owner == nil ? 0 : 1), "export \(n)")
            try GPXSchemaCheck.validate(sink.bytes, name: "metadata-export-\(n).gpx")
            // The export is the same track: importing it is unchanged.
            let out = dir + "/export-\(n).gpx"
            try Data(sink.bytes).write(to: URL(fileURLWithPath: out))
            let again = await importer.importFile(out)
            #expect(again.status == .unchanged, "export \(n): \(again)")
        }
        // GeoJSON and CSV have no place for it: their writers take the event and leave it out.
        for format in [ExportFormat.geojson, .csv] {
            let sink = OutputSink()
            try await StoreExport.write([route], from: store, as: format, to: sink)
            try sink.close()
            #expect(!String(decoding: sink.bytes, as: UTF8.self).contains("Lunch ride"), "\(format)")
        }
    }

    @Test("a file of waypoints and routes only keeps its <metadata> in the workout that holds them")
    func attachmentsOnly() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/plan.gpx"
        let text = """
            <gpx version="1.1" creator="planner" xmlns="http://www.topografix.com/GPX/1/1">
            <metadata><name>Plan</name><keywords>alps</keywords></metadata>
            <rte><name>Ascent</name><rtept lat="46.5" lon="7.5"/><rtept lat="46.51" lon="7.52"/></rte>
            </gpx>
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let result = await GPXImporter(store: store).importFile(path)
        let workout = try #require(result.tracks.first?.workout)
        let expected = try GPXDocument(path: path).metadata
        #expect(expected.name == "Plan")
        #expect(try await StoredRouteEvents.documentMetadata(workout: workout, store: store) == expected)
        let sink = OutputSink()
        try await StoreExport.write([], attachmentsOf: workout, from: store, as: .gpx, to: sink)
        try sink.close()
        #expect(try GPXDocument(bytes: sink.bytes).metadata == expected)
        try GPXSchemaCheck.validate(sink.bytes, name: "metadata-plan.gpx")
    }

    @Test("a file without <metadata> stores no entry and exports none; a foreign value under the key is ignored")
    func noMetadata() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/bare.gpx"
        try syntheticGPX(count: 3).write(toFile: path, atomically: true, encoding: .utf8)
        let store = try makeTemporaryStore()
        let result = await GPXImporter(store: store).importFile(path)
        let track = try #require(result.tracks.first)
        let workout = try #require(try await store.workout(id: track.workout))
        #expect(workout.metadata[GPXMetadataStorage.key] == nil)
        let routeID = try #require(track.route)
        let route = try #require(try await store.route(id: routeID))
        let sink = OutputSink()
        try await StoreExport.write([route], from: store, as: .gpx, to: sink)
        try sink.close()
        #expect(!String(decoding: sink.bytes, as: UTF8.self).contains("<metadata>"))
        #expect(GPXMetadataStorage.metadata(.string("not json")) == nil)
        #expect(GPXMetadataStorage.metadata(.integer(1)) == nil)
        #expect(GPXMetadataStorage.metadata(.string("{}")) == nil)
        #expect(GPXMetadataStorage.value(GPXMetadata()) == nil)
    }
}
