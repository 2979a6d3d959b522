import RouteKit
import RouteKitIngest
import RouteKitTesting
import Testing

@testable import RouteKitGPX

@Suite("Series written back by timestamp")
struct SeriesMergeTests {
    static func time(_ s: Int64) -> Timestamp { Timestamp(Instant(seconds: 1_700_000_000 + s), utcOffsetSeconds: 0) }

    static func point(_ s: Int64?) -> GPXPoint {
        GPXPoint(location: Location(latitude: 47, longitude: 8, timestamp: s.map(time)))
    }

    @Test("each point gets the sample taken at its time; points without a sample or a time get none")
    func merge() {
        var points = [0, 1, 2, 5, nil, 6].map { Self.point($0) }
        let hr = QuantitySeries(
            type: .heartRate, samples: [0, 2, 3, 6].map { QuantitySample(timestamp: Self.time($0), value: Double(100 + $0)) })
        let power = QuantitySeries(type: .power, samples: [QuantitySample(timestamp: Self.time(5), value: 250)])
        var merger = SeriesMerger([hr, power])
        merger.apply(to: &points)
        #expect(points.map { $0.values[.heartRate] } == [100, nil, 102, nil, nil, 106])
        #expect(points.map { $0.values[.power] } == [nil, nil, nil, 250, nil, nil])
    }

    @Test("time going backwards still finds its sample")
    func backwards() {
        var points = [0, 10, 3, 11, 2].map { Self.point($0) }
        let series = QuantitySeries(
            type: .cadence, samples: [0, 2, 3, 10, 11].map { QuantitySample(timestamp: Self.time($0), value: Double($0)) })
        var merger = SeriesMerger([series])
        merger.apply(to: &points)
        #expect(points.map { $0.values[.cadence] } == [0, 10, 3, 11, 2])
    }

    @Test("points sharing a time take that time's samples in order")
    func duplicates() {
        var points = [1, 1, 2].map { Self.point($0) }
        let series = QuantitySeries(
            type: .heartRate,
            samples: [
                QuantitySample(timestamp: Self.time(1), value: 90), QuantitySample(timestamp: Self.time(1), value: 91),
                QuantitySample(timestamp: Self.time(2), value: 92),
            ])
        var merger = SeriesMerger([series])
        merger.apply(to: &points)
        #expect(points.map { $0.values[.heartRate] } == [90, 91, 92])
    }

    @Test("series taken from a track, stripped, merged back and written give the original file's values")
    func roundTripThroughSeries() throws {
        var rng = SplitMix64(seed: 7)
        var track = (0..<500).map { i -> GPXPoint in
            var p = Self.point(Int64(i))
            p.values[.heartRate] = Double(Int.random(in: 60...190, using: &rng))
            if i % 3 == 0 { p.values[.power] = Double(Int.random(in: 0...900, using: &rng)) }
            return p
        }
        let original = track
        let series = GPXDocument.series(of: track)
        #expect(series.map(\.type) == [.heartRate, .power])
        for i in track.indices { track[i].values = GPXPointValues() }
        var merger = SeriesMerger(series)
        merger.apply(to: &track)
        #expect(track == original)
        var document = GPXDocument()
        document.tracks = [GPXTrack(segments: [GPXSegment(points: track)])]
        let reread = try GPXDocument(bytes: GPXWriter.data(for: document))
        #expect(reread.tracks.first?.segments.first?.points == original)
    }
}
