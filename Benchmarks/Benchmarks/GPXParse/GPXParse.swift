// GPX reading and writing benchmarks for package-benchmark (ordo-one/benchmark).
//
//     cd Benchmarks && swift package --disable-sandbox benchmark --target GPXParse
//
// See ../../BENCHMARKS-HOWTO.md for what each benchmark measures.

import Benchmark
import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitGPX
import RouteKitIngest

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    // package-benchmark's scaling factors are powers of 1000 only, so a 100,000-point iteration cannot be
    // scaled to "points" by `scalingFactor`: the speed in points is reported by this custom metric instead
    // (and `throughput` counts whole documents per second).
    let pointsPerSecond = BenchmarkMetric.custom("Points/s", polarity: .prefersLarger, useScalingFactor: false)

    Benchmark(
        "GPXReader parse (in memory, 100k points)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, pointsPerSecond],
            warmupIterations: 2,
            maxDuration: .seconds(5),
            maxIterations: 1_000
        )
    ) { benchmark in
        let start = ContinuousClock.now
        let points = try parseAll(GPXReader(bytes: inMemoryGPX, name: "generated.gpx"))
        let elapsed = start.duration(to: .now)
        precondition(points == inMemoryPointCount, "parsed \(points) points, expected \(inMemoryPointCount)")
        blackHole(points)
        benchmark.measurement(pointsPerSecond, rate(points, elapsed))
    } setup: {
        blackHole(inMemoryGPX.count)  // generate the document before the first iteration
    }

    // Route storage: the 100k generated points as 4096-point LocationChunks (what a store reads back).
    Benchmark(
        "LocationChunk decode (100k points, 4096 per chunk)",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal, pointsPerSecond], warmupIterations: 2, maxDuration: .seconds(5))
    ) { benchmark in
        let start = ContinuousClock.now
        var points = 0
        for chunk in encodedChunks { points += try LocationChunk.decode(chunk).count }
        let elapsed = start.duration(to: .now)
        blackHole(points)
        benchmark.measurement(pointsPerSecond, rate(points, elapsed))
    } setup: {
        blackHole(encodedChunks.count)
    }

    Benchmark(
        "LocationChunk encode (100k points, 4096 per chunk)",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal, pointsPerSecond], warmupIterations: 2, maxDuration: .seconds(5))
    ) { benchmark in
        let start = ContinuousClock.now
        var bytes = 0
        for chunk in locationChunks { bytes += LocationChunk.encode(chunk).count }
        let elapsed = start.duration(to: .now)
        blackHole(bytes)
        benchmark.measurement(pointsPerSecond, rate(inMemoryPointCount, elapsed))
    } setup: {
        blackHole(locationChunks.count)
    }

    let path = ProcessInfo.processInfo.environment["ROUTEKIT_BENCH_GPX"] ?? "/work/data/track_1m.gpx"
    if FileManager.default.isReadableFile(atPath: path) {
        Benchmark(
            "GPXReader parse file",
            configuration: .init(
                metrics: [.wallClock, .peakMemoryResident, .mallocCountTotal, pointsPerSecond],
                warmupIterations: 1,
                maxDuration: .seconds(20),
                maxIterations: 5
            )
        ) { benchmark in
            let start = ContinuousClock.now
            let points = try parseAll(GPXReader(path: path))
            let elapsed = start.duration(to: .now)
            blackHole(points)
            benchmark.measurement(pointsPerSecond, rate(points, elapsed))
        }
    } else {
        printToStandardError(
            "GPXParse: not registering \"GPXReader parse file\": \(path) does not exist or is not readable "
                + "(set ROUTEKIT_BENCH_GPX to a GPX file, e.g. one made by shared/peers/make_gpx.py)"
        )
    }

    Benchmark(
        "GPXWriter write (in memory, 100k points)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, pointsPerSecond],
            warmupIterations: 2,
            maxDuration: .seconds(5),
            maxIterations: 1_000
        )
    ) { benchmark, document in
        let start = ContinuousClock.now
        let output = try GPXWriter.data(for: document)
        let elapsed = start.duration(to: .now)
        blackHole(output.count)
        benchmark.measurement(pointsPerSecond, rate(inMemoryPointCount, elapsed))
    } setup: {
        let document = try GPXDocument(bytes: inMemoryGPX, name: "generated.gpx")
        precondition(document.tracks.first?.pointCount == inMemoryPointCount, "the generated document did not parse whole")
        return document
    }
}

/// Pulls every event of a reader; returns the number of track points.
func parseAll(_ reader: GPXReader) throws -> Int {
    var points = 0
    while let event = try reader.next() {
        if case .trackPoints(let batch) = event { points += batch.count }
    }
    return points
}

/// Items per second, rounded.
func rate(_ count: Int, _ elapsed: Duration) -> Int {
    let (seconds, attoseconds) = elapsed.components
    let s = Double(seconds) + Double(attoseconds) * 1e-18
    return s > 0 ? Int((Double(count) / s).rounded()) : 0
}

func printToStandardError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

// MARK: - The in-memory document

let inMemoryPointCount = 100_000

/// Generated once per process, on first use (~25 MB).
let inMemoryGPX: [UInt8] = SyntheticGPX.make(points: inMemoryPointCount, seed: 42)

/// The same points as locations in 4096-point runs, and those runs encoded (built once, on first use).
let locationChunks: [[Location]] = {
    var all: [Location] = []
    let reader = GPXReader(bytes: inMemoryGPX, name: "generated.gpx")
    while let event = try? reader.next() {
        if case .trackPoints(let batch) = event { all += batch.map(\.location) }
    }
    return stride(from: 0, to: all.count, by: 4096).map { Array(all[$0..<min($0 + 4096, all.count)]) }
}()

let encodedChunks: [[UInt8]] = locationChunks.map { LocationChunk.encode($0) }

/// A deterministic generator of realistic GPX 1.1 tracks, laid out like `shared/peers/make_gpx.py`'s files
/// (one `<trk>`, one `<trkseg>`, 1 Hz points with `<ele>`, `<time>` and a Garmin TrackPointExtension heart
/// rate, Garmin-style indentation, ~252 bytes per point), with a simplified version of its motion model: a
/// random walk near Zurich at 2–12 m/s with corner turns, a smooth elevation profile, GPS noise of 3–5 m
/// and rare 200 m spikes. Same arguments, same bytes (SplitMix64; no clock, no Foundation formatting).
enum SyntheticGPX {
    static func make(points n: Int, seed: UInt64) -> [UInt8] {
        var out = ByteWriter(capacity: n * 256 + 2_048)
        let startEpoch = 1_714_543_200  // 2024-05-01T06:00:00Z
        out.append(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<gpx creator=\"RouteKitBenchmarks\" version=\"1.1\" "
                + "xmlns=\"http://www.topografix.com/GPX/1/1\" "
                + "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                + "xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\" "
                + "xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 "
                + "http://www.topografix.com/GPX/1/1/gpx.xsd "
                + "http://www.garmin.com/xmlschemas/TrackPointExtension/v1 "
                + "http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd\">\n"
                + " <metadata>\n"
                + "  <time>"
        )
        out.appendTime(epochSeconds: startEpoch)
        out.append("</time>\n </metadata>\n <trk>\n  <name>synthetic \(n) points seed \(seed)</name>\n")
        out.append("  <type>cycling</type>\n  <trkseg>\n")

        var rng = SplitMix64(seed: seed)
        let earthRadius = 6_371_008.8
        let startLat = 47.3769
        let startLon = 8.5417
        let metresPerDegreeLat = Double.pi * earthRadius / 180
        let metresPerDegreeLon = metresPerDegreeLat * cos(startLat * .pi / 180)

        var x = 0.0  // metres east of the start
        var y = 0.0  // metres north of the start
        var heading = rng.uniform() * 2 * .pi
        var speed = 2 + 10 * rng.uniform()
        var target = speed
        var targetLeft = 60 + Int(rng.uniform() * 1_200)
        var turnLeft = 0
        var turnRate = 0.0
        var ele = 400 + 200 * rng.uniform()
        var grade = 0.0
        var heartRate = 110.0
        var eleNoise = 0.0
        let phase = rng.uniform() * 2 * .pi

        for i in 0..<n {
            if i > 0 {
                targetLeft -= 1
                if targetLeft <= 0 {
                    target = 2 + 10 * rng.uniform()
                    targetLeft = 60 + Int(rng.uniform() * 1_200)
                }
                speed = min(12, max(2, speed + (target - speed) / 20 + rng.gauss(0.15)))
                if turnLeft > 0 {
                    heading += turnRate
                    turnLeft -= 1
                } else if rng.uniform() < 1.0 / 120 {
                    let angle = (60 + 60 * rng.uniform()) * .pi / 180 * (rng.uniform() < 0.5 ? 1 : -1)
                    turnLeft = 4
                    turnRate = angle / 4
                }
                heading += rng.gauss(2 * .pi / 180)
                let r = (x * x + y * y).squareRoot()
                if r > 20_000 {  // softly steer back towards the start
                    let home = atan2(-x, -y)
                    heading += 0.02 * min(1, (r - 20_000) / 5_000 + 0.2) * wrap(home - heading)
                }
                heading = wrap(heading)
                x += speed * sin(heading)
                y += speed * cos(heading)
                grade = min(0.12, max(-0.12, grade - grade / 120 - (ele - 500) * 2e-7 + rng.gauss(0.004)))
                ele = max(0, ele + grade * speed)
                let effort = min(195, max(90, 70 + 9 * speed + 400 * max(grade, 0)))
                heartRate = min(195, max(90, heartRate + (effort - heartRate) / 30 + rng.gauss(0.7)))
            }
            let sigma = 4 + sin(2 * .pi * Double(i) / 3_600 + phase)  // 3…5 m
            var ex = sigma * rng.gauss(1)
            var ey = sigma * rng.gauss(1)
            if rng.uniform() < 1.0 / 2_000 {  // a single-point 200 m spike
                let bearing = rng.uniform() * 2 * .pi
                ex += 200 * sin(bearing)
                ey += 200 * cos(bearing)
            }
            eleNoise = 0.8 * eleNoise + 0.6 * rng.gauss(1.5)

            out.append("   <trkpt lat=\"")
            out.appendFixed(startLat + (y + ey) / metresPerDegreeLat, digits: 7)
            out.append("\" lon=\"")
            out.appendFixed(startLon + (x + ex) / metresPerDegreeLon, digits: 7)
            out.append("\">\n    <ele>")
            out.appendFixed(ele + eleNoise, digits: 1)
            out.append("</ele>\n    <time>")
            out.appendTime(epochSeconds: startEpoch + i)
            out.append("</time>\n    <extensions>\n     <gpxtpx:TrackPointExtension>\n      <gpxtpx:hr>")
            out.appendInt(Int(heartRate.rounded()))
            out.append("</gpxtpx:hr>\n     </gpxtpx:TrackPointExtension>\n    </extensions>\n   </trkpt>\n")
        }
        out.append("  </trkseg>\n </trk>\n</gpx>\n")
        return out.bytes
    }

    private static func wrap(_ a: Double) -> Double {
        let twoPi = 2 * Double.pi
        var r = (a + .pi).truncatingRemainder(dividingBy: twoPi)
        if r < 0 { r += twoPi }
        return r - .pi
    }
}

/// SplitMix64: small, fast and the same on every platform.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Gaussian with mean 0 (Box–Muller).
    mutating func gauss(_ sigma: Double) -> Double {
        let u1 = max(uniform(), 0x1p-53)
        let u2 = uniform()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// Appends ASCII text and numbers to a byte array.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func append(_ s: String) { bytes.append(contentsOf: s.utf8) }

    mutating func appendInt(_ value: Int) {
        var v = value
        if v < 0 {
            bytes.append(UInt8(ascii: "-"))
            v = -v
        }
        var divisor = 1
        while divisor <= v / 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(v / divisor % 10))
            divisor /= 10
        }
    }

    /// `value` with exactly `digits` decimals (Python's `{:.Nf}`, rounding half away from zero).
    mutating func appendFixed(_ value: Double, digits: Int) {
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        var n = Int((value * Double(scale)).rounded())
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            n = -n
        }
        appendInt(n / scale)
        guard digits > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        let fraction = n % scale
        var d = scale / 10
        while d > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((fraction / d) % 10))
            d /= 10
        }
    }

    /// `YYYY-MM-DDThh:mm:ssZ` (UTC), as RouteKit's own ``Timestamp`` writes it.
    mutating func appendTime(epochSeconds: Int) {
        Timestamp(Instant(seconds: Int64(epochSeconds)), utcOffsetSeconds: 0).appendISO8601(to: &bytes)
    }

}
