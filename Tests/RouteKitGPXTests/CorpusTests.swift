import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
import Testing

@Suite("GPX corpus", .enabled(if: Corpus.available, "../shared/gpx-corpus not found: corpus tests skipped"))
struct CorpusTests {
    @Test("every valid file parses with the MANIFEST's point counts", arguments: Corpus.files("valid"))
    func validFile(_ path: String) throws {
        let expected = try #require(Corpus.manifest[Corpus.name(path)], "\(Corpus.name(path)) is not in MANIFEST.md")
        let summary = try GPXSummary.read(path: path)
        #expect(summary.trackPoints + summary.pauses == expected.trkpt)
        #expect(summary.routePoints == expected.rtept)
        #expect(summary.waypoints == expected.wpt)
    }

    @Test("every malformed file fails with a typed error naming file, line and column", arguments: Corpus.files("malformed"))
    func malformedFile(_ path: String) throws {
        do {
            _ = try GPXSummary.read(path: path)
            Issue.record("\(Corpus.name(path)) was accepted")
        } catch {
            #expect(error.file == path)
            #expect(error.line != nil && error.line! >= 1)
            #expect(error.column != nil && error.column! >= 1)
            let codes: [RouteKitError.Code] = [.malformedXML, .invalidGPX, .invalidValue, .unsupportedFormat]
            #expect(codes.contains(error.code))
            // The description never carries coordinates.
            #expect(!error.description.contains("91.5"))
        }
    }

    static let quirkWarnings: [String: String] = [
        "opentracks-lat-100-200-pause-markers-1.gpx": "pauseMarkers",
        "testsuite-gzip-compressed-1.gpx": "gzip",
        "testsuite-missing-root-attributes-1.gpx": "rootWithoutAttributes",
    ]

    @Test("every quirk file imports with its warning", arguments: Corpus.files("quirks"))
    func quirkFile(_ path: String) throws {
        let kind = try #require(Self.quirkWarnings[Corpus.name(path)], "no expected warning for \(Corpus.name(path))")
        let document = try GPXDocument(path: path)
        #expect(document.warnings.contains { $0.kind == kind }, "warnings: \(document.warnings)")
        // MANIFEST counts tags in the file's bytes; a gzip file's are compressed.
        if kind != "gzip", let expected = Corpus.manifest[Corpus.name(path)] {
            let markers = document.tracks.reduce(0) { $0 + $1.events.count }
            #expect(document.tracks.reduce(0) { $0 + $1.pointCount } + markers == expected.trkpt)
        }
    }

    @Test("OpenTracks pause markers become a pause between two segments, not locations")
    func openTracksPause() throws {
        let path = try #require(Corpus.files("quirks").first { $0.contains("opentracks") })
        let document = try GPXDocument(path: path)
        let track = try #require(document.tracks.first)
        #expect(track.events.map(\.kind) == [.pause, .resume])
        #expect(track.segments.map { $0.points.count } == [3, 1])
        #expect(track.segments.allSatisfy { $0.points.allSatisfy { abs($0.location.latitude) <= 90 } })
    }

    @Test("the gzip quirk decompresses to a GPX document")
    func gzip() throws {
        let path = try #require(Corpus.files("quirks").first { $0.contains("gzip") })
        let document = try GPXDocument(path: path)
        #expect(document.info.version == "1.0")
        #expect(document.tracks.count == 1)
        #expect(document.tracks.first?.pointCount == 1)
        #expect(document.metadata.bounds != nil)
    }
}
