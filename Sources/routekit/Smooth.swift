import ArgumentParser
import Foundation
import RouteKit
import RouteKitGEOS
import RouteKitGPX
import RouteKitProcessing

struct Smooth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the processing pipeline (outliers, smoothing, simplification) on a GPX file.",
        discussion: """
            Stages, in this order, each optional (--stages): outlier removal (a speed gate for the activity \
            that never moves its reference past a rejected fix, poor horizontal accuracy, duplicate times and \
            points; a (0,0) fix only when it is also a speed outlier), Kalman + RTS smoothing with each fix's \
            reported accuracy (altitude separately), and Douglas–Peucker simplification on GEOS with a \
            tolerance in metres, in a local metric projection, in bounded chunks. The output is a subsequence \
            of each track's points: every field but the coordinates (and the smoothed altitude) is the \
            original's; heart rate, cadence, power, names and extensions stay on the points that remain. \
            Waypoints and routes are written back unchanged. The input is read twice (processing one track at a \
            time, then writing), so memory holds one track's locations, not the document: it must be a \
            regular file.

            This version works file to file; running the pipeline as a batch job over the store (new \
            versions of stored routes) comes with the rest of issue 5.

            JSON (--json), one object per track:
              {"route": "FILE#N", "newRoute": "OUT", "syncVersion": null, "pointsIn": N, "pointsOut": N,
               "maxDeviationMetres": x, "smoothingRmsMetres": x, "lengthInMetres": x, "lengthOutMetres": x}
            or {"route": "FILE#N", "skipped": "reason"}.

            Examples:
              routekit smooth ride.gpx -o ride-clean.gpx
              routekit smooth ride.gpx -o simplified.gpx --stages simplification --tolerance 10
            """)

    @Argument(help: "The GPX file to process.", completion: .file(extensions: ["gpx", "gz"]))
    var input: String

    @Option(name: .shortAndLong, help: "The GPX file to write.") var output: String

    @Option(help: "Simplification tolerance, metres.") var tolerance: Double = 5

    @Option(
        help: ArgumentHelp(
            "Stages to run, comma-separated: outliers, smoothing, simplification.", valueName: "LIST"))
    var stages: String = "outliers,smoothing,simplification"

    @Flag(help: "Topology-preserving simplification (slower, keeps more points).") var preserveTopology = false

    @Flag(help: "One JSON object per track, one per line.") var json = false

    func validate() throws {
        guard tolerance.isFinite, tolerance >= 0 else { throw ValidationError("--tolerance must be 0 or more metres.") }
        _ = try parsedStages()
    }

    func parsedStages() throws -> [PipelineStage] {
        try stages.split(separator: ",").map { name in
            guard let stage = PipelineStage(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("Unknown stage '\(name)': use outliers, smoothing, simplification.")
            }
            return stage
        }
    }

    struct TrackJSON: Encodable {
        var route: String
        var newRoute: String?
        var syncVersion: Int?
        var pointsIn: Int?
        var pointsOut: Int?
        var maxDeviationMetres: Double?
        var smoothingRmsMetres: Double?
        var lengthInMetres: Double?
        var lengthOutMetres: Double?
        var skipped: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(route, forKey: .route)
            if let skipped {
                try c.encode(skipped, forKey: .skipped)
                return
            }
            try c.encode(newRoute, forKey: .newRoute)
            try c.encode(syncVersion, forKey: .syncVersion)
            try c.encode(pointsIn, forKey: .pointsIn)
            try c.encode(pointsOut, forKey: .pointsOut)
            try c.encode(maxDeviationMetres, forKey: .maxDeviationMetres)
            try c.encode(smoothingRmsMetres, forKey: .smoothingRmsMetres)
            try c.encode(lengthInMetres, forKey: .lengthInMetres)
            try c.encode(lengthOutMetres, forKey: .lengthOutMetres)
        }
        enum CodingKeys: String, CodingKey {
            case route, newRoute, syncVersion, pointsIn, pointsOut, maxDeviationMetres, smoothingRmsMetres
            case lengthInMetres, lengthOutMetres, skipped
        }
    }

    /// A processed track: which of its points stay, with their new locations.
    struct Processed {
        var kept: [Int]
        var locations: [Location]
    }

    func run() async throws {
        let dir = (output as NSString).deletingLastPathComponent
        let temporary =
            (dir.isEmpty ? "" : dir + "/") + ".\((output as NSString).lastPathComponent).routekit-\(getpid()).tmp"
        do {
            var st = stat()
            guard stat(input, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                throw RouteKitError(
                    .io, "smooth reads its input twice (to process, then to write): give a regular file", file: input)
            }
            var configuration = PipelineConfiguration(stages: try parsedStages())
            configuration.simplification.toleranceMetres = tolerance
            configuration.simplification.preserveTopology = preserveTopology
            let pipeline = RoutePipeline(configuration: configuration)
            let context = try GEOSContext()
            // Pass 1: each track's locations (one track in memory at a time) through the pipeline.
            var processed: [Processed?] = []
            var locations: [Location] = []
            let reader = try GPXReader(path: input)
            while let event = try reader.next() {
                switch event {
                case .trackStart: locations.removeAll()
                case .trackPoints(let points): locations += points.map(\.location)
                case .trackEnd(let info):
                    let label = "\(input)#\(processed.count + 1)"
                    guard locations.count >= 2 else {
                        if json { printJSONLine(TrackJSON(route: label, skipped: "fewer than 2 points")) }
                        processed.append(nil)
                        continue
                    }
                    let result = try pipeline.run(
                        locations, activity: ActivityType(guessingFrom: info.type), context: context)
                    locations = []
                    processed.append(Processed(kept: result.keptIndices, locations: result.locations))
                    report(label, result.metrics)
                default: break
                }
            }
            // Pass 2: the file again, every event written back, track points replaced by the kept ones.
            let sink = try OutputSink(path: temporary)
            var writer = GPXWriter(to: sink)
            let second = try GPXReader(path: input)
            var track = -1
            var index = 0
            var position = 0
            while let event = try second.next() {
                switch event {
                case .trackStart:
                    track += 1
                    index = 0
                    position = 0
                    try writer.write(event)
                case .trackPoints(let points):
                    guard track >= 0, track < processed.count, let p = processed[track] else {
                        try writer.write(event)
                        continue
                    }
                    var out: [GPXPoint] = []
                    for var point in points {
                        if position < p.kept.count && p.kept[position] == index {
                            point.location = p.locations[position]
                            out.append(point)
                            position += 1
                        }
                        index += 1
                    }
                    if !out.isEmpty { try writer.write(.trackPoints(out)) }
                default:
                    try writer.write(event)
                }
            }
            try writer.finish()
            try sink.close()
            guard rename(temporary, output) == 0 else {
                throw RouteKitError(
                    .io, "cannot move the result into place: \(String(cString: strerror(errno)))", file: output)
            }
        } catch {
            unlink(temporary)
            printError("error: \(error)")
            throw exitInputFailed
        }
    }

    func report(_ label: String, _ m: PipelineMetrics) {
        if json {
            printJSONLine(
                TrackJSON(
                    route: label, newRoute: output, syncVersion: nil, pointsIn: m.pointsIn, pointsOut: m.pointsOut,
                    maxDeviationMetres: m.maxDeviationMetres, smoothingRmsMetres: m.smoothingRmsMetres,
                    lengthInMetres: m.lengthInMetres, lengthOutMetres: m.lengthOutMetres))
            return
        }
        var line = "\(label): \(m.pointsIn) → \(m.pointsOut) points"
        line += String(
            format: ", %d outliers, smoothing RMS %.2f m, max deviation %.3f m, length %.0f → %.0f m", m.outliers.total,
            m.smoothingRmsMetres, m.maxDeviationMetres, m.lengthInMetres, m.lengthOutMetres)
        for (stage, reason) in m.skipped.sorted(by: { $0.key < $1.key }) { line += " (\(stage) skipped: \(reason))" }
        printError(line)
    }
}
