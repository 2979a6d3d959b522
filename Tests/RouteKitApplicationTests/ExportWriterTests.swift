import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitIngest
import Testing

/// The GeoJSON and CSV writers (RouteKitApplication's, for `routekit convert` and `routekit export`).
@Suite("Export writers")
struct ExportWriterTests {
    static let head = "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"

    /// The reader's events in file order (what `convert` streams).
    static func eventsInFileOrder(_ bytes: [UInt8]) throws -> [GPXEvent] {
        let reader = GPXReader(bytes: bytes)
        var events: [GPXEvent] = []
        while let e = try reader.next() { events.append(e) }
        return events
    }

    @Test("GeoJSON: waypoints inside a path come after it, short paths get null geometry, output is JSON")
    func geoJSON() throws {
        let sink = OutputSink()
        var writer = GeoJSONWriter(to: sink)
        for event in try Self.eventsInFileOrder(
            Array(
                (Self.head
                    + "<rte><rtept lat=\"1\" lon=\"2\"/><wpt lat=\"3\" lon=\"4\"/><rtept lat=\"5\" lon=\"6\"/></rte>"
                    + "<rte><rtept lat=\"1\" lon=\"2\"/></rte><trk><trkseg/></trk>"
                    + "<trk><trkseg><trkpt lat=\"1\" lon=\"1\"/></trkseg><trkseg><trkpt lat=\"2\" lon=\"2\"/><trkpt lat=\"3\" lon=\"3\"/></trkseg></trk></gpx>")
                    .utf8))
        {
            try writer.write(event)
        }
        try writer.finish()
        try sink.close()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(sink.bytes)) as? [String: Any])
        let features = try #require(json["features"] as? [[String: Any]])
        let kinds = features.compactMap { ($0["properties"] as? [String: Any])?["kind"] as? String }
        #expect(kinds == ["route", "waypoint", "route", "track", "track"])
        #expect(features[2]["geometry"] is NSNull)
        #expect(features[3]["geometry"] is NSNull)
        let lines = (features[4]["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]]
        #expect(lines == [[[2, 2], [3, 3]]])
        #expect((features[4]["properties"] as? [String: Any])?["pointsNotInGeometry"] as? Int == 1)
    }

    @Test("each format's writer comes from one mapping: only GPX needs GPX 1.1's order; each says what it wrote")
    func formatsAndSummaries() throws {
        let track = "<trk><trkseg><trkpt lat=\"1\" lon=\"1\"/><trkpt lat=\"2\" lon=\"2\"/></trkseg></trk></gpx>"
        let events = try Self.eventsInFileOrder(Array((Self.head + track).utf8))
        var summaries: [ExportFormat: String] = [:]
        for format in ExportFormat.allCases {
            let sink = OutputSink()
            var writer = format.makeWriter(to: sink)
            for event in events { try writer.write(event) }
            try writer.finish()
            try sink.close()
            #expect(!sink.bytes.isEmpty, "\(format)")
            summaries[format] = writer.summary(warnings: format == .gpx ? 1 : 2)
        }
        #expect(summaries[.gpx] == "2 points written; 1 input warning (see routekit inspect)")
        #expect(summaries[.geojson] == "GeoJSON written; 2 input warning(s) (see routekit inspect)")
        #expect(summaries[.csv] == "CSV written; 2 input warning(s) (see routekit inspect)")
        #expect(ExportFormat.allCases.filter(\.needsGPXOrder) == [.gpx])
    }
}
