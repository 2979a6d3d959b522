import Foundation
import RouteKit
import RouteKitIngest
import Testing

@testable import RouteKitGPX

/// The same bytes fed in 1-byte, 7-byte and 4 KiB chunks must give exactly the same document (and the same
/// errors) as the whole file at once.
@Suite("Chunk boundaries")
struct ChunkBoundaryTests {
    static let chunkSizes = [1, 7, 4096]

    static func corpusFiles(maxBytes: Int) -> [String] {
        (Corpus.files("valid") + Corpus.files("quirks")).filter {
            ((try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0) <= maxBytes
        }
    }

    @Test("a generated document with every feature", arguments: chunkSizes)
    func generated(chunkSize: Int) throws {
        let bytes = Array(Fixtures.everyFeature.utf8)
        let whole = try GPXDocument(bytes: bytes)
        let chunked = try GPXDocument(bytes: bytes, chunkSize: chunkSize)
        #expect(whole == chunked)
        #expect(whole.tracks.first?.pointCount == 3)
    }

    @Test("skipped points give the same document and warnings when a point spans read buffers", arguments: chunkSizes)
    func skippedPoints(chunkSize: Int) throws {
        // Points without coordinates and out of range, with children, extensions and a link, ~150 bytes each:
        // with 7-byte and 4 KiB chunks, points start, and are skipped, in the middle of a read buffer.
        var body = ""
        for i in 0..<60 {
            let attributes =
                i % 5 == 1 ? "" : i % 5 == 3 ? "lat=\"9\(i % 10).5\" lon=\"8\"" : "lat=\"47.\(i)\" lon=\"8.\(i)\""
            body +=
                "<trkpt \(attributes)><ele>\(i)</ele><time>2024-05-01T06:\(10 + i % 50):00Z</time><link href=\"h\"/>"
                + "<extensions><x:a xmlns:x=\"urn:x\">\(i)</x:a></extensions></trkpt>\n"
        }
        let bytes = Array(
            ("<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n" + body
                + "</trkseg></trk></gpx>").utf8)
        var options = GPXReadOptions()
        options.skipInvalidPoints = true
        let whole = try GPXDocument(reader: GPXReader(bytes: bytes, options: options))
        let chunked = try GPXDocument(reader: GPXReader(bytes: bytes, chunkSize: chunkSize, options: options))
        #expect(whole == chunked)
        #expect(whole.tracks.first?.pointCount == 36)
        #expect(whole.tracks.first?.segments.first?.points.allSatisfy { $0.extras?.extensions.count == 1 } == true)
        #expect(
            whole.warnings.map(\.description) == [
                "line 3: 12 <trkpt> without lat/lon (missing or not a number) were skipped, with their time and values",
                "line 5: 12 <trkpt> with a latitude or longitude out of range were skipped, with their time and values",
            ])
    }

    @Test(
        "corpus files give the same document in 1-byte chunks",
        .enabled(if: Corpus.available, "../shared/gpx-corpus not found"),
        arguments: corpusFiles(maxBytes: 60_000))
    func corpusOneByte(_ path: String) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try GPXDocument(bytes: bytes, chunkSize: 1) == GPXDocument(bytes: bytes))
    }

    @Test(
        "corpus files give the same document in 7-byte and 4 KiB chunks",
        .enabled(if: Corpus.available, "../shared/gpx-corpus not found"),
        arguments: corpusFiles(maxBytes: 3_000_000))
    func corpusChunks(_ path: String) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let whole = try GPXDocument(bytes: bytes)
        #expect(try GPXDocument(bytes: bytes, chunkSize: 7) == whole)
        #expect(try GPXDocument(bytes: bytes, chunkSize: 4096) == whole)
    }

    @Test(
        "malformed files fail at the same line and column whatever the chunk size",
        .enabled(if: Corpus.available, "../shared/gpx-corpus not found"),
        arguments: Corpus.files("malformed"))
    func malformed(_ path: String) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        var errors: [RouteKitError] = []
        for size in [1, 7, 4096, 1 << 20] {
            do {
                _ = try GPXDocument(bytes: bytes, name: "f.gpx", chunkSize: size)
                Issue.record("accepted with chunk size \(size)")
            } catch {
                errors.append(error)
            }
        }
        #expect(Set(errors.map { "\($0.code) \($0.line ?? 0):\($0.column ?? 0) \($0.message)" }).count == 1, "\(errors)")
    }
}

enum Fixtures {
    /// A GPX 1.1 file with metadata, a waypoint, a route, a track with two segments, an OpenTracks-style
    /// pause, several time zones and fraction lengths, every known extension, an unknown extension, CDATA,
    /// entities, comments and a processing instruction.
    static let everyFeature = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment before the root -->
        <gpx version="1.1" creator="RouteKit &amp; tests" xmlns="http://www.topografix.com/GPX/1/1"
             xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
             xmlns:pwr='http://www.garmin.com/xmlschemas/PowerExtension/v1' xmlns:x="urn:example:unknown">
          <metadata>
            <name><![CDATA[Morning <ride>]]></name>
            <desc>Caf&#233; stop &lt;here&gt;</desc>
            <author><name>Ann</name><email id="ann" domain="example.org"/></author>
            <link href="https://example.org/ride"><text>ride</text></link>
            <time>2024-05-01T06:00:00Z</time>
            <bounds minlat="47.1" minlon="8.1" maxlat="47.9" maxlon="8.9"/>
          </metadata>
          <wpt lat="47.5" lon="8.5"><ele>400</ele><name>Start</name><sym>Flag</sym></wpt>
          <rte><name>Plan</name><rtept lat="47.5" lon="8.5"/><rtept lat="47.6" lon="8.6"><ele>410.5</ele></rtept></rte>
          <?routekit ignore-me?>
          <trk>
            <name>Ride</name><type>cycling</type>
            <extensions><x:color>red</x:color></extensions>
            <trkseg>
              <trkpt lat="47.3769123" lon="8.5417"><ele>500.25</ele><time>2024-05-01T08:00:00.123+02:00</time>
                <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>120</gpxtpx:hr><gpxtpx:cad>80</gpxtpx:cad>
                <gpxtpx:atemp>21.5</gpxtpx:atemp></gpxtpx:TrackPointExtension><pwr:PowerInWatts>250</pwr:PowerInWatts>
                <x:note a="1">kept <x:b/> as is</x:note></extensions></trkpt>
              <trkpt lat="-0.000000" lon="-180"><time>2024-05-01T06:00:01.000000001Z</time><hdop>1.5</hdop><sat>7</sat></trkpt>
            </trkseg>
            <trkseg>
              <trkpt lat="90" lon="180"><ele>-10</ele><time>2024-05-01T06:00:05</time></trkpt>
            </trkseg>
          </trk>
        </gpx>
        """
}
