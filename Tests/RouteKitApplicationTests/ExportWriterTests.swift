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

    @Test("GeoJSON: each point's time goes in its feature's coordTimes, parallel to the coordinates")
    func geoJSONTimes() throws {
        let text =
            Self.head
            + "<rte><rtept lat=\"1\" lon=\"2\"><time>2024-05-01T06:00:00Z</time></rtept><rtept lat=\"3\" lon=\"4\"/></rte>"
            + "<trk><trkseg><trkpt lat=\"1\" lon=\"1\"><time>2024-05-01T06:00:00.5+02:00</time></trkpt></trkseg>"
            + "<trkseg><trkpt lat=\"2\" lon=\"2\"><time>2024-05-01T06:00:01Z</time></trkpt>"
            + "<trkpt lat=\"3\" lon=\"3\"><time>2024-05-01T06:00:02</time></trkpt></trkseg>"
            + "<trkseg><trkpt lat=\"4\" lon=\"4\"/><trkpt lat=\"5\" lon=\"5\"><time>2024-05-01T06:00:04Z</time></trkpt>"
            + "</trkseg></trk><trk><trkseg><trkpt lat=\"1\" lon=\"1\"/><trkpt lat=\"2\" lon=\"2\"/></trkseg></trk></gpx>"
        let sink = OutputSink()
        var writer = GeoJSONWriter(to: sink)
        for event in try Self.eventsInFileOrder(Array(text.utf8)) { try writer.write(event) }
        try writer.finish()
        try sink.close()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(sink.bytes)) as? [String: Any])
        let features = try #require(json["features"] as? [[String: Any]])
        try #require(features.count == 3)
        // A route: one array, parallel to its LineString; null for a point without a time.
        let routeTimes = try #require((features[0]["properties"] as? [String: Any])?["coordTimes"] as? [Any])
        #expect(routeTimes.count == 2)
        #expect(routeTimes.first as? String == "2024-05-01T06:00:00Z")
        #expect(routeTimes.last is NSNull)
        // A track: an array per line; the one-point segment is in neither the geometry nor the times.
        let trackTimes = try #require((features[1]["properties"] as? [String: Any])?["coordTimes"] as? [[Any]])
        #expect(trackTimes.count == 2)
        #expect(trackTimes.first as? [String] == ["2024-05-01T06:00:01Z", "2024-05-01T06:00:02"])
        #expect(trackTimes.last?.first is NSNull)
        #expect(trackTimes.last?.last as? String == "2024-05-01T06:00:04Z")
        let lines = try #require((features[1]["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])
        #expect(lines.map(\.count) == trackTimes.map(\.count))
        #expect((features[1]["properties"] as? [String: Any])?["pointsNotInGeometry"] as? Int == 1)
        // A path none of whose points has a time has no coordTimes.
        #expect((features[2]["properties"] as? [String: Any])?["coordTimes"] == nil)
    }

    @Test("GeoJSON: a long track's coordTimes go through a temporary file and come out whole, in order")
    func geoJSONTimesSpill() throws {
        let sink = OutputSink()
        var writer = GeoJSONWriter(to: sink)
        let count = 120_000  // about 2.8 MB of times: more than the 1 MiB held in memory
        func time(_ i: Int) -> Timestamp { Timestamp(Date(timeIntervalSince1970: 1_714_543_200 + Double(i))) }
        func track(_ n: Int) throws {
            try writer.write(.trackStart(GPXPathInfo()))
            try writer.write(.segmentStart)
            var batch: [GPXPoint] = []
            for i in 0..<n {
                batch.append(GPXPoint(location: Location(latitude: 47 + Double(i) * 1e-6, longitude: 8, timestamp: time(i))))
                if batch.count == 1024 || i == n - 1 {
                    try writer.write(.trackPoints(batch))
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try writer.write(.segmentEnd(extensions: []))
            try writer.write(.trackEnd(GPXPathInfo()))
        }
        try writer.write(.document(GPXDocumentInfo()))
        try track(count)
        try track(3)
        try writer.finish()
        try sink.close()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(sink.bytes)) as? [String: Any])
        let features = try #require(json["features"] as? [[String: Any]])
        try #require(features.count == 2)
        let long = try #require((features[0]["properties"] as? [String: Any])?["coordTimes"] as? [[String]])
        #expect(long.count == 1)
        #expect(long.first?.count == count)
        #expect(long.first?.first == "2024-05-01T06:00:00Z")
        #expect(long.first?.last == time(count - 1).iso8601)
        #expect(long.first == (0..<count).map { time($0).iso8601 })
        // The next feature starts afresh.
        let short = try #require((features[1]["properties"] as? [String: Any])?["coordTimes"] as? [[String]])
        #expect(short == [(0..<3).map { time($0).iso8601 }])
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
