import Foundation
import RouteKit
import RouteKitApplication
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitGPX
import RouteKitIngest
import RouteKitTesting
import Testing

/// A FIT file's timer pauses become segments the same way whether it is converted (`routekit convert`) or imported
/// and exported (`routekit export`), in every export format.
@Suite("FIT pauses as segments: convert and import + export agree")
struct FITSegmentTests {
    /// `activityFIT`'s 20 records (one a second) with the timer started at +0, stopped by hand at +5 and started
    /// again at +12: the records after +5 are a segment of their own.
    static func file(start: UInt32 = 1_000_000_000) -> [UInt8] {
        var w = activityFIT(records: 20, start: start)
        // event: timestamp, event (0 timer), event_type (0 start, 4 stop_all), data.
        w.define(local: 2, global: 21, fields: [(253, 4, 0x86), (0, 1, 0x00), (1, 1, 0x00), (3, 4, 0x86)])
        w.message(local: 2, w.u32(start) + [0, 0] + w.u32(0))
        w.message(local: 2, w.u32(start + 5) + [0, 4] + w.u32(0))
        w.message(local: 2, w.u32(start + 12) + [0, 0] + w.u32(0))
        return w.file()
    }

    /// The FIT file through `format`'s writer as `convert` writes it.
    static func converted(_ bytes: [UInt8], as format: ExportFormat) throws -> [UInt8] {
        let sink = OutputSink()
        var writer = format.makeWriter(to: sink)
        try FITFile.gpxEvents(bytes) { (e: GPXEvent) throws(RouteKitError) in try writer.write(e) }
        try writer.finish()
        try sink.close()
        return sink.bytes
    }

    /// The stored route through `format`'s writer as `export` writes it.
    static func exported(_ route: RouteSample, from store: any RouteStore, as format: ExportFormat) async throws
        -> [UInt8]
    {
        let sink = OutputSink()
        try await StoreExport.write([route], from: store, as: format, to: sink)
        try sink.close()
        return sink.bytes
    }

    /// The track's lines of a GeoJSON output (its first track feature's MultiLineString).
    static func geoJSONLines(_ bytes: [UInt8]) throws -> [[[Double]]] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let features = try #require(json["features"] as? [[String: Any]])
        let track = try #require(
            features.first(where: { ($0["properties"] as? [String: Any])?["kind"] as? String == "track" }))
        let geometry = try #require(track["geometry"] as? [String: Any])
        return try #require(geometry["coordinates"] as? [[[Double]]])
    }

    /// The `segment` column of a CSV output's `trkpt` rows.
    static func csvSegments(_ bytes: [UInt8]) throws -> [String] {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let header = try #require(lines.first)
        let kind = try #require(header.firstIndex(of: "kind"))
        let segment = try #require(header.firstIndex(of: "segment"))
        return lines.dropFirst().filter { $0.count > segment && $0[kind] == "trkpt" }.map { $0[segment] }
    }

    @Test("a timer pause: two <trkseg> with the same points, converted or imported and exported")
    func gpx() async throws {
        let bytes = Self.file()
        let converted = try GPXDocument(bytes: Self.converted(bytes, as: .gpx), name: "converted.gpx")
        let convertedSegments = try #require(converted.tracks.first?.segments)
        #expect(convertedSegments.map(\.points.count) == [6, 14])

        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(bytes, name: "pause.fit")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let routeID = try #require(result.tracks.first?.route)
        let route = try #require(try await store.route(id: routeID))
        // The import records the pause as an event, not as a segment start: the export makes the segment of it.
        #expect(route.segmentStarts.isEmpty)
        let workout = try #require(try await store.workout(id: route.workoutID))
        let pauses: [WorkoutEvent.Kind] = workout.events.map(\.kind).filter { $0 == .pause || $0 == .resume }
        #expect(pauses == [.pause, .resume])

        let exported = try GPXDocument(
            bytes: try await Self.exported(route, from: store, as: .gpx), name: "exported.gpx")
        let exportedSegments = try #require(exported.tracks.first?.segments)
        #expect(exportedSegments.map(\.points.count) == [6, 14])
        #expect(exportedSegments.map(\.points) == convertedSegments.map(\.points))
        #expect(exportedSegments.first?.points.first?.values[.heartRate] == 100)
    }

    @Test("GeoJSON and CSV follow the same segments, converted or exported")
    func geoJSONAndCSV() async throws {
        let bytes = Self.file()
        let store = InMemoryStore()
        let result = await FITImporter(store: store).importBytes(bytes, name: "pause.fit")
        let routeID = try #require(result.tracks.first?.route)
        let route = try #require(try await store.route(id: routeID))

        let convertedLines = try Self.geoJSONLines(Self.converted(bytes, as: .geojson))
        let exportedLines = try Self.geoJSONLines(try await Self.exported(route, from: store, as: .geojson))
        #expect(convertedLines.map(\.count) == [6, 14])
        #expect(exportedLines == convertedLines)

        let convertedRows = try Self.csvSegments(Self.converted(bytes, as: .csv))
        let exportedRows = try Self.csvSegments(try await Self.exported(route, from: store, as: .csv))
        #expect(convertedRows == Array(repeating: "0", count: 6) + Array(repeating: "1", count: 14))
        #expect(exportedRows == convertedRows)
    }
}
