import Foundation
import RouteKit
import RouteKitIngest
import Testing

@testable import RouteKitGPX

/// Issue 14, item 6: well-formed files from other libraries' test suites that the reader used to refuse. An
/// unreadable `<bounds>` is dropped with a warning; a point without lat/lon is skipped and counted; a coordinate
/// out of range stays an error unless ``GPXReadOptions/skipInvalidPoints`` is set.
@Suite("GPX refuses less")
struct RefusesLessTests {
    static let head = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"
          xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
        """

    static func read(_ xml: String, chunkSize: Int? = nil, skipInvalidPoints: Bool = false) throws(RouteKitError)
        -> GPXDocument
    {
        var options = GPXReadOptions()
        options.skipInvalidPoints = skipInvalidPoints
        return try GPXDocument(
            reader: GPXReader(bytes: Array(xml.utf8), name: "t.gpx", chunkSize: chunkSize, options: options))
    }

    static func track(_ points: String) -> String {
        head + "\n<trk><name>T</name><trkseg>\n" + points + "</trkseg></trk>\n</gpx>\n"
    }

    static func point(_ i: Int, _ attributes: String? = nil, hr: Int? = nil) -> String {
        let a = attributes ?? "lat=\"47.\(i)\" lon=\"8.\(i)\""
        let ext =
            hr.map {
                "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\($0)</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>"
            } ?? ""
        return "<trkpt \(a)><ele>4\(i)0</ele><time>2024-05-01T06:00:0\(i)Z</time>\(ext)</trkpt>\n"
    }

    // MARK: <bounds>

    /// Link2GPS writes `min_lat`-style names; other files miss an attribute or hold a non-number.
    static let badBounds = [
        "min_lat=\"47.1\" min_lon=\"8.1\" max_lat=\"47.9\" max_lon=\"8.9\"",
        "minlat=\"47.1\" minlon=\"8.1\" maxlat=\"47.9\"",
        "minlat=\"47.1\" minlon=\"8.1\" maxlat=\"north\" maxlon=\"8.9\"",
        "minlat=\"\" minlon=\"8.1\" maxlat=\"47.9\" maxlon=\"8.9\"",
    ]

    @Test("an unreadable <bounds> is dropped with a warning; the file reads", arguments: badBounds)
    func invalidBounds(_ attributes: String) throws {
        let xml =
            Self.head + "\n<metadata><name>M</name>\n<bounds \(attributes)/></metadata>\n<trk><trkseg>\n"
            + Self.point(1) + Self.point(2) + "</trkseg></trk></gpx>"
        let d = try Self.read(xml)
        #expect(d.metadata.bounds == nil)
        #expect(d.metadata.name == "M")
        #expect(d.tracks.first?.pointCount == 2)
        let warnings = d.warnings.filter { $0.kind == "invalidBounds" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.line == 5)
        #expect(warnings.first?.message.contains("<bounds>") == true)
        // No value of the bounds in the warning.
        #expect(!d.warnings.contains { $0.message.contains("47.") || $0.message.contains("8.9") })
    }

    @Test("a readable <bounds> is still read, without a warning")
    func validBounds() throws {
        let xml =
            Self.head
            + "<metadata><bounds minlat=\"47.1\" minlon=\"8.1\" maxlat=\"47.9\" maxlon=\"8.9\"/></metadata></gpx>"
        let d = try Self.read(xml)
        #expect(
            d.metadata.bounds == GPXBounds(minLatitude: 47.1, minLongitude: 8.1, maxLatitude: 47.9, maxLongitude: 8.9))
        #expect(d.warnings.isEmpty)
    }

    // MARK: Points without coordinates

    /// Garmin eTrex 30 style: a <trkpt> without lat/lon, with a time, an elevation and a heart rate.
    static let eTrex = track(
        point(1, hr: 101) + point(2, "", hr: 102) + point(3, hr: 103) + point(4, "lat=\"abc\" lon=\"8.4\"", hr: 104)
            + point(5, "lat=\"47.5\"") + point(6))

    @Test("a <trkpt> without lat/lon is skipped with its time and values; one warning counts them")
    func pointsWithoutCoordinates() throws {
        for chunk in [nil, 1, 7, 4096] {
            let d = try Self.read(Self.eTrex, chunkSize: chunk)
            let points = try #require(d.tracks.first?.segments.first?.points)
            #expect(points.map(\.location.latitude) == [47.1, 47.3, 47.6], "chunk \(chunk ?? 0)")
            #expect(points.map(\.location.altitude) == [410, 430, 460])
            #expect(
                points.map { $0.location.timestamp?.iso8601 } == [
                    "2024-05-01T06:00:01Z", "2024-05-01T06:00:03Z", "2024-05-01T06:00:06Z",
                ])
            // The skipped points' heart rates are not carried over to a neighbour.
            #expect(points.map { $0.values[.heartRate] } == [101, 103, nil])
            let warnings = d.warnings.filter { $0.kind == "pointsWithoutCoordinates" }
            #expect(warnings.count == 1)
            #expect(warnings.first?.message.hasPrefix("3 <trkpt> without lat/lon") == true, "\(warnings)")
            #expect(warnings.first?.line == 6, "the line of the first skipped point")
            #expect(!d.warnings.contains { $0.kind == "ignoredElement" || $0.kind == "ignoredText" })
        }
    }

    @Test("skipped points are counted per track")
    func countedPerTrack() throws {
        let xml =
            Self.head + "<trk><trkseg>" + Self.point(1) + Self.point(2, "") + "</trkseg></trk>\n<trk><trkseg>"
            + Self.point(3, "lon=\"1\"") + Self.point(4, "") + Self.point(5) + "</trkseg></trk></gpx>"
        let d = try Self.read(xml)
        #expect(d.tracks.map(\.pointCount) == [1, 1])
        let messages = d.warnings.filter { $0.kind == "pointsWithoutCoordinates" }.map(\.message)
        #expect(messages.count == 2)
        #expect(messages.first?.hasPrefix("1 <trkpt> without lat/lon (missing or not a number) was skipped, with its time") == true)
        #expect(messages.last?.hasPrefix("2 <trkpt> without lat/lon (missing or not a number) were skipped") == true)
    }

    @Test("<rtept> and <wpt> without lat/lon are skipped and counted the same way")
    func routeAndWaypoints() throws {
        let xml =
            Self.head + "\n<wpt lat=\"1\" lon=\"2\"><name>kept</name></wpt>\n<wpt lon=\"3\"><name>gone</name></wpt>\n"
            + "<rte><rtept lat=\"1\" lon=\"2\"/><rtept lat=\"x\" lon=\"2\"><name>gone</name></rtept><rtept lat=\"3\" lon=\"4\"/></rte>\n"
            + "<wpt lat=\"\" lon=\"\"/></gpx>"
        let d = try Self.read(xml)
        #expect(d.waypoints.map { $0.extras?.name } == ["kept"])
        #expect(d.routes.first?.points.map(\.location.latitude) == [1, 3])
        let messages = d.warnings.filter { $0.kind == "pointsWithoutCoordinates" }.map(\.description)
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("line 6: 1 <rtept> without lat/lon") })
        #expect(messages.contains { $0.hasPrefix("line 5: 2 <wpt> without lat/lon") })
    }

    @Test("a malformed value inside a skipped point still refuses the file, at its line and column")
    func skippedPointChildrenAreChecked() {
        let xml = Self.track("<trkpt><ele>oops</ele></trkpt>\n")
        for chunk in [1, 4096] {
            do {
                _ = try Self.read(xml, chunkSize: chunk)
                Issue.record("accepted")
            } catch {
                #expect(error.code == .invalidValue)
                #expect(error.line == 5 && error.column == 17, "\(error.line ?? 0):\(error.column ?? 0)")
                #expect(error.message.contains("<ele>"))
            }
        }
        // A misplaced GPX element too.
        #expect(throws: RouteKitError.self) { try Self.read(Self.track("<trkpt><trkseg/></trkpt>")) }
    }

    @Test("the pause markers of OpenTracks still read as pause and resume, with or without skipping")
    func pauseMarkers() throws {
        let xml = Self.track(
            Self.point(1) + Self.point(2, "lat=\"100\" lon=\"0\"") + Self.point(3, "lat=\"200\" lon=\"0\"") + Self.point(4))
        for skip in [false, true] {
            let d = try Self.read(xml, skipInvalidPoints: skip)
            #expect(d.tracks.first?.events.map(\.kind) == [.pause, .resume])
            #expect(d.tracks.first?.pointCount == 2)
            #expect(!d.warnings.contains { $0.kind == "pointsOutOfRange" })
        }
    }

    // MARK: Out of range

    static let outOfRange = track(
        point(1) + point(2, "lat=\"91.4\" lon=\"8.2\"", hr: 102) + point(3) + point(4, "lat=\"47.4\" lon=\"-180.5\"")
            + point(5))

    @Test("a latitude of 91.4 fails by default, naming line and column but not the coordinate")
    func outOfRangeRefused() {
        for chunk in [1, 7, 4096] {
            do {
                _ = try Self.read(Self.outOfRange, chunkSize: chunk)
                Issue.record("accepted")
            } catch {
                #expect(error.code == .invalidValue)
                #expect(error.file == "t.gpx")
                #expect(error.line == 6 && error.column == 13, "\(error.line ?? 0):\(error.column ?? 0)")
                #expect(error.message.contains("latitude"))
                #expect(!error.description.contains("91.4"))
            }
        }
    }

    @Test("with skipInvalidPoints, out-of-range points are skipped and counted, whatever the chunk size")
    func outOfRangeSkipped() throws {
        let whole = try Self.read(Self.outOfRange, skipInvalidPoints: true)
        let points = try #require(whole.tracks.first?.segments.first?.points)
        #expect(points.map(\.location.latitude) == [47.1, 47.3, 47.5])
        #expect(points.map { $0.values[.heartRate] } == [nil, nil, nil])
        let warnings = whole.warnings.filter { $0.kind == "pointsOutOfRange" }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.hasPrefix("2 <trkpt> with a latitude or longitude out of range") == true)
        #expect(warnings.first?.line == 6)
        #expect(!whole.warnings.contains { $0.message.contains("91.4") || $0.message.contains("180.5") })
        for chunk in [1, 7, 4096] {
            #expect(try Self.read(Self.outOfRange, chunkSize: chunk, skipInvalidPoints: true) == whole)
        }
    }

    @Test("with skipInvalidPoints, a malformed value inside a skipped point still refuses the file")
    func skipOptionKeepsOtherRefusals() {
        #expect(throws: RouteKitError.self) {
            try Self.read(Self.track("<trkpt lat=\"95\" lon=\"1\"><time>noon</time></trkpt>"), skipInvalidPoints: true)
        }
    }
}
