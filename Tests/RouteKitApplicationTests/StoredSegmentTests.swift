import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitIngest
import RouteKitTesting
import Testing

/// Export writes a segment per stored segment start and per pause of the workout, once: a GPX file's segments (whose
/// gaps the import made pauses) come back as they were, and its pause markers as `convert` writes them.
@Suite("Export segments: stored starts and pauses")
struct StoredSegmentTests {
    static func point(_ second: Int, time: Bool = true) -> String {
        "<trkpt lat=\"47.\(second + 10)\" lon=\"8.\(second + 10)\">"
            + (time ? "<time>2024-05-01T06:00:\(String(format: "%02d", second))Z</time>" : "") + "</trkpt>"
    }

    static func gpx(_ body: String) -> String {
        "<?xml version=\"1.0\"?><gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
            + "<trk><name>T</name>\(body)</trk></gpx>"
    }

    /// The segments' point counts of the file imported and its route exported as GPX.
    static func exportedSegments(_ text: String) async throws -> [Int] {
        let store = InMemoryStore()
        let result = await GPXImporter(store: store).importBytes(Array(text.utf8), name: "t.gpx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        let routeID = try #require(result.tracks.first?.route)
        let route = try #require(try await store.route(id: routeID))
        let sink = OutputSink()
        try await StoreExport.write([route], from: store, as: .gpx, to: sink)
        try sink.close()
        let document = try GPXDocument(bytes: sink.bytes, name: "exported.gpx")
        return try #require(document.tracks.first?.segments.map(\.points.count))
    }

    /// The segments' point counts of the file through the GPX writer (what `convert` does).
    static func convertedSegments(_ text: String) throws -> [Int] {
        let document = try GPXDocument(bytes: try GPXWriter.data(for: GPXDocument(bytes: Array(text.utf8))))
        return try #require(document.tracks.first?.segments.map(\.points.count))
    }

    @Test("segments with a gap between them: as many segments again, no extra one at the pause")
    func gpxSegments() async throws {
        let text = Self.gpx(
            "<trkseg>\(Self.point(1))\(Self.point(2))</trkseg><trkseg>\(Self.point(10))\(Self.point(11))</trkseg>"
                + "<trkseg>\(Self.point(20))</trkseg>")
        #expect(try await Self.exportedSegments(text) == [2, 2, 1])
    }

    @Test("a segment starting or ending with a point without a time: still no extra segment")
    func untimedEdges() async throws {
        let text = Self.gpx(
            "<trkseg>\(Self.point(1))\(Self.point(2))\(Self.point(3, time: false))</trkseg>"
                + "<trkseg>\(Self.point(9, time: false))\(Self.point(10))\(Self.point(11))</trkseg>")
        #expect(try await Self.exportedSegments(text) == [3, 3])
    }

    @Test("OpenTracks' pause markers inside a segment: split where convert splits")
    func pauseMarkers() async throws {
        let text = Self.gpx(
            "<trkseg>\(Self.point(1))\(Self.point(2))"
                + "<trkpt lat=\"100\" lon=\"0\"><time>2024-05-01T06:00:03Z</time></trkpt>"
                + "<trkpt lat=\"200\" lon=\"0\"><time>2024-05-01T06:00:07Z</time></trkpt>"
                + "\(Self.point(8))\(Self.point(9))\(Self.point(10))</trkseg>")
        let converted = try Self.convertedSegments(text)
        #expect(converted == [2, 3])
        #expect(try await Self.exportedSegments(text) == converted)
    }
}
