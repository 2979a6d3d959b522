// Quality and speed of the processing pipeline on a generated track with its ground truth (issue 5):
//
//     make_gpx.py 1000000 42 track_1m.gpx --truth         # writes track_1m.gpx.truth.csv beside it
//     cd Benchmarks && swift run -c release PipelineQuality track_1m.gpx [q]
//
// Scores like ../shared/peers/quality.py: RMS / p95 of the position error (m) over non-spike points,
// spikes still present (> 50 m off), non-spike points dropped; simplification's points kept, points beyond
// tolerance + 1 mm (measured here, independently of the stage's own metric) and the chunking cost against
// one whole-route GEOS call.

import Foundation
import RouteKit
import RouteKitGEOS
import RouteKitGPX
import RouteKitIngest
import RouteKitProcessing

let args = CommandLine.arguments
guard args.count > 1 else {
    print("usage: PipelineQuality FILE.gpx [horizontal-acceleration [default-accuracy [speed-acceleration]]]")
    exit(2)
}
let path = args[1]
if path == "zigzag" {
    // The adversarial case: 1,000,000 points zig-zagging 20 m either side, so DP keeps every one.
    let n = 1_000_000
    let zig = (0..<n).map { i in
        Location(latitude: 47 + Double(i) * 1e-6, longitude: 8 + (i % 2 == 0 ? 0 : 0.0003))
    }
    let context = try GEOSContext()
    let chunk = args.count > 2 ? Int(args[2]) ?? 10_000 : 10_000
    let t0 = ContinuousClock.now
    let r = try simplifyIndices(
        zig, options: SimplificationOptions(toleranceMetres: 5, chunkSize: chunk), context: context)
    let (kept, deviation) = (r.keep, r.maxDeviation)
    let (s, a) = (ContinuousClock.now - t0).components
    print(String(format: "zig-zag 1M, chunks of %d: %.2f s, %d kept, max deviation %.4f m", chunk,
        Double(s) + Double(a) * 1e-18, kept.count, deviation))
    exit(0)
}
var smoothing = SmoothingOptions()
if args.count > 2, let q = Double(args[2]) { smoothing.horizontalAcceleration = q }
if args.count > 3, let r = Double(args[3]) { smoothing.defaultHorizontalAccuracy = r }
if args.count > 4, let v = Double(args[4]) { smoothing.speedAcceleration = v }
if let turn = ProcessInfo.processInfo.environment["TURN_Q"].flatMap(Double.init) { smoothing.turnAcceleration = turn }
if let t = ProcessInfo.processInfo.environment["TURN_T"].flatMap(Double.init) { smoothing.turnThreshold = t }
var chunkSize = SimplificationOptions().chunkSize
if args.count > 5, let c = Int(args[5]) { chunkSize = c }


func seconds(_ d: Duration) -> Double {
    let (s, a) = d.components
    return Double(s) + Double(a) * 1e-18
}

// Load.
var t0 = ContinuousClock.now
var input: [Location] = []
var activity = ActivityType.other
let reader = try GPXReader(path: path)
while let e = try reader.next() {
    switch e {
    case .trackPoints(let p): input += p.map(\.location)
    case .trackEnd(let info): activity = ActivityType(guessingFrom: info.type)
    default: break
    }
}
print(String(format: "parsed %d points in %.3f s (%@)", input.count, seconds(ContinuousClock.now - t0), activity.rawValue))

// Truth.
struct Truth {
    var lat: Double
    var lon: Double
    var spike: Bool
}
var truth: [Truth] = []
if let text = try? String(contentsOfFile: path + ".truth.csv", encoding: .utf8) {
    for line in text.split(separator: "\n").dropFirst() {
        let f = line.split(separator: ",")
        if f.count >= 4, let la = Double(f[1]), let lo = Double(f[2]) {
            truth.append(Truth(lat: la, lon: lo, spike: f[3] == "1"))
        }
    }
}
let lat0 = truth.first?.lat ?? input[0].latitude
let lon0 = truth.first?.lon ?? input[0].longitude
let earth = 6_371_000.0
@MainActor func xy(_ lat: Double, _ lon: Double) -> (Double, Double) {
    ((lon - lon0) * .pi / 180 * earth * cos(lat0 * .pi / 180), (lat - lat0) * .pi / 180 * earth)
}

@MainActor func score(_ name: String, _ out: [Location], _ kept: [Int]) {
    guard truth.count == input.count else { return print("\(name): no truth file") }
    var errors: [Double] = []
    var spikesLeft = 0
    for (l, i) in zip(out, kept) {
        let a = xy(l.latitude, l.longitude)
        let b = xy(truth[i].lat, truth[i].lon)
        let e = ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1)).squareRoot()
        if truth[i].spike {
            if e > 50 { spikesLeft += 1 }
        } else {
            errors.append(e)
        }
    }
    let keptSet = Set(kept)
    let droppedNonSpike = truth.indices.filter { !keptSet.contains($0) && !truth[$0].spike }.count
    let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(max(errors.count, 1))).squareRoot()
    errors.sort()
    let p95 = errors.isEmpty ? 0 : errors[Int(Double(errors.count - 1) * 0.95)]
    print(
        String(
            format: "%@: RMS %.3f m, p95 %.3f m, spikes left %d of %d, non-spike points dropped %d (%.3f %%)", name, rms,
            p95, spikesLeft, truth.filter(\.spike).count, droppedNonSpike,
            Double(droppedNonSpike) / Double(truth.count) * 100))
}

let context = try GEOSContext()
score("raw", input, Array(input.indices))

// Outliers alone.
t0 = ContinuousClock.now
let (keep, counts) = findOutliers(input, activity: activity, options: OutlierOptions())
let outlierTime = seconds(ContinuousClock.now - t0)
print(String(format: "outliers: %.3f s, dropped %d (speed %d)", outlierTime, counts.total, counts.speed))
score("outliers", keep.map { input[$0] }, keep)

// Outliers + smoothing (simplification off): the smoothing score.
let smoothOnly = RoutePipeline(
    configuration: PipelineConfiguration(stages: [.outliers, .smoothing], smoothing: smoothing))
t0 = ContinuousClock.now
let smoothed = try smoothOnly.run(input, activity: activity, context: context)
let smoothTime = seconds(ContinuousClock.now - t0)
print(
    String(
        format: "outliers+smoothing: %.3f s (%.1f M points/s), smoothing RMS displacement %.3f m", smoothTime,
        Double(input.count) / smoothTime / 1e6, smoothed.metrics.smoothingRmsMetres))
score("outliers+smoothing", smoothed.locations, smoothed.keptIndices)

// The smoothing stage alone (the pipeline with only it, so validation and the two length sums included).
do {
    let filtered = keep.map { input[$0] }
    let only = RoutePipeline(configuration: PipelineConfiguration(stages: [.smoothing], smoothing: smoothing))
    var best = Double.infinity
    for _ in 0..<3 {
        let copy = filtered
        let t = ContinuousClock.now
        _ = try only.run(copy, activity: activity, context: context)
        best = min(best, seconds(ContinuousClock.now - t))
    }
    print(
        String(
            format: "smoothing stage alone (Kalman + RTS, two passes, best of 3): %.3f s = %.1f M points/s", best,
            Double(filtered.count) / best / 1e6))
}

// Simplification at 5 m on the raw track: chunked vs one whole-route GEOS call.
for preserve in [false] {
    let options = SimplificationOptions(toleranceMetres: 5, preserveTopology: preserve, chunkSize: chunkSize)
    t0 = ContinuousClock.now
    let simplified = try simplifyIndices(input, options: options, context: context)
    let (kept, deviation) = (simplified.keep, simplified.maxDeviation)
    let chunkTime = seconds(ContinuousClock.now - t0)
    var whole = options
    whole.chunkSize = input.count
    t0 = ContinuousClock.now
    let wholeKept = try simplifyIndices(input, options: whole, context: context).keep
    let wholeTime = seconds(ContinuousClock.now - t0)
    // Independent check: every input point within tolerance + 1 mm of the output line, in the same chunk
    // projections the stage used (recomputed here from scratch).
    var beyond = 0
    var worst = 0.0
    var worstLocal = 0.0
    var s = 0
    for c in 0..<(kept.count - 1) {
        let a = kept[c]
        let b = kept[c + 1]
        // Recomputed here, not taken from the stage: every dropped point against its output segment, in the
        // stage's projection (`worst`), and in a frame centred on the point itself (`worstLocal`).
        if b - a > 1 {
            let stageFrame = simplified.frame(at: a)
            for m in (a + 1)..<b {
                for (k, frame) in [stageFrame, LocalProjection(latitude: input[m].latitude, longitude: input[m].longitude)]
                    .enumerated()
                {
                    let pa = frame.project(latitude: input[a].latitude, longitude: input[a].longitude)
                    let pb = frame.project(latitude: input[b].latitude, longitude: input[b].longitude)
                    let p = frame.project(latitude: input[m].latitude, longitude: input[m].longitude)
                    let dx = pb.x - pa.x
                    let dy = pb.y - pa.y
                    let len2 = dx * dx + dy * dy
                    let t = len2 > 0 ? min(1, max(0, ((p.x - pa.x) * dx + (p.y - pa.y) * dy) / len2)) : 0
                    let ex = pa.x + t * dx - p.x
                    let ey = pa.y + t * dy - p.y
                    let d = (ex * ex + ey * ey).squareRoot()
                    if k == 0 {
                        worst = max(worst, d)
                        if d > 5.001 { beyond += 1 }
                    } else {
                        worstLocal = max(worstLocal, d)
                    }
                }
            }
        }
        s += 1
    }
    print(
        String(
            format:
                "simplify 5 m%@: chunked %.3f s, %d kept (%.2f %%), max deviation %.4f m (stage) / %.4f m (check, "
                + "same projection) / %.4f m (point-centred frames), beyond 5.001 m: %d; whole-route GEOS %.3f s, "
                + "%d kept; chunking adds %.3f %% points",
            preserve ? " (topology)" : "", chunkTime, kept.count, Double(kept.count) / Double(input.count) * 100,
            deviation, worst, worstLocal, beyond, wholeTime, wholeKept.count,
            Double(kept.count - wholeKept.count) / Double(wholeKept.count) * 100))
}

// The whole pipeline.
let full = RoutePipeline(configuration: PipelineConfiguration(smoothing: smoothing))
t0 = ContinuousClock.now
let result = try full.run(input, activity: activity, context: context)
print(
    String(
        format: "full pipeline: %.3f s, %d -> %d points, max deviation %.4f m, length %.0f -> %.0f m",
        seconds(ContinuousClock.now - t0), result.metrics.pointsIn, result.metrics.pointsOut,
        result.metrics.maxDeviationMetres, result.metrics.lengthInMetres, result.metrics.lengthOutMetres))
