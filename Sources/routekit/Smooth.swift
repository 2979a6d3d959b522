import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGEOS
import RouteKitGPX
import RouteKitIngest
@_spi(RouteKitInternals) import RouteKitProcessing

struct Smooth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smooth",
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

            With -o it works file to file. Without, it is a batch job over the store: each route given (or \
            every current route with --all) is processed from its raw version (the original import) and saved \
            as a new version of the same route (same sync identifier, version + 1, on behalf of its source), \
            with `derivedFrom`, `pipeline` and the metrics in its metadata; followers of the change feed see \
            the old version deleted and the new one added. Routes already processed with the same parameters \
            are skipped, so running it again does nothing, and a killed job resumes where it stopped. \
            --jobs runs that many workers; each route is claimed for the time it is processed, so several \
            processes can share the work.

            The routes are --person's (the default person's without it). --all-people smooths every current \
            route of every person in turn, the default person first, then the others as `routekit people list` \
            lists them: each person's part begins with a line naming them (person ID (NAME): N route(s)) and ends \
            with their summary, and a total for everyone comes last.

            JSON (--json), one object per track:
              {"route": "FILE#N", "newRoute": "OUT", "syncVersion": null, "pointsIn": N, "pointsOut": N,
               "maxDeviationMetres": x, "smoothingRmsMetres": x, "lengthInMetres": x, "lengthOutMetres": x}
            or {"route": "FILE#N", "skipped": "reason"}; with --all-people each object also has "person": "ID".

            Examples:
              routekit smooth --all --jobs 2
              routekit smooth --all-people --jobs 2
              routekit smooth --all --person 3f2a9c1e
              routekit smooth 0C1D… --tolerance 10 --json
              routekit smooth ride.gpx -o ride-clean.gpx
              routekit smooth ride.gpx -o simplified.gpx --stages simplification --tolerance 10
            """)

    @Argument(
        help: "With -o: the GPX file to process. Without: route uuids in the store (or their first 8+ hex digits).")
    var targets: [String] = []

    @Option(name: .shortAndLong, help: "Process a GPX file into this one instead of the store's routes.")
    var output: String?

    @Flag(help: "Every current route of the person (--person; the default person without it).") var all = false

    @Option(help: "Workers processing routes in parallel (each with its own GEOS context).") var jobs: Int = 1

    @Option(help: "How long a worker's claim on a route lasts before another may take it, seconds.")
    var leaseSeconds: Double = 300

    @OptionGroup var storeOptions: StoreOptions

    @OptionGroup var people: PeopleSelection

    @Option(help: "Simplification tolerance, metres.") var tolerance: Double = 5

    @Option(
        help: ArgumentHelp(
            "Stages to run, comma-separated: outliers, smoothing, simplification.", valueName: "LIST"))
    var stages: String = "outliers,smoothing,simplification"

    @Flag(help: "Topology-preserving simplification (slower, keeps more points).") var preserveTopology = false

    @Option(
        name: .customLong("privacy-zone"),
        help: ArgumentHelp(
            "Remove every point within RADIUS metres of LAT,LON (repeatable); adds the privacy stage.",
            valueName: "LAT,LON,RADIUS"))
    var privacyZones: [String] = []

    @Flag(help: "One JSON object per track, one per line.") var json = false

    func validate() throws {
        guard tolerance.isFinite, tolerance >= 0 else { throw ValidationError("--tolerance must be 0 or more metres.") }
        _ = try parsedStages()
        _ = try parsedZones()
        if output != nil {
            if targets.count != 1 || all { throw ValidationError("With -o, give exactly one GPX file (and no --all).") }
            if people.allPeople || people.person.person != nil {
                throw ValidationError("--person and --all-people choose routes of the store: not with -o.")
            }
        } else if people.allPeople {
            if !targets.isEmpty {
                throw ValidationError("--all-people smooths every person's current routes: give no route uuids.")
            }
        } else if all == !targets.isEmpty {
            throw ValidationError("Give route uuids, --all or --all-people (or a GPX file with -o).")
        }
        if jobs < 1 || jobs > 64 { throw ValidationError("--jobs must be 1 to 64.") }
        if !(leaseSeconds > 0 && leaseSeconds.isFinite) { throw ValidationError("--lease-seconds must be positive.") }
    }

    func parsedZones() throws -> [PrivacyZone] {
        try privacyZones.map { try parsePrivacyZone($0, option: "--privacy-zone") }
    }

    var configuration: PipelineConfiguration {
        get throws {
            let zones = try parsedZones()
            var configuration = PipelineConfiguration(
                stages: try parsedStages() + (zones.isEmpty ? [] : [.privacy]), privacyZones: zones)
            configuration.simplification.toleranceMetres = tolerance
            configuration.simplification.preserveTopology = preserveTopology
            return configuration
        }
    }

    func parsedStages() throws -> [PipelineStage] {
        try stages.split(separator: ",").map { name in
            guard let stage = PipelineStage(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("Unknown stage '\(name)': use outliers, smoothing, simplification, privacy.")
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
        /// The route's person, with `--all-people`.
        var person: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(route, forKey: .route)
            try c.encodeIfPresent(person, forKey: .person)
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
            case lengthInMetres, lengthOutMetres, skipped, person
        }
    }

    /// A processed track: which of its points stay, with their new locations.
    struct Processed {
        var kept: [Int]
        var locations: [Location]
    }

    func run() async throws {
        if let output, let input = targets.first {
            try runFile(input: input, output: output)
        } else {
            try await runStore()
        }
    }

    func runFile(input: String, output: String) throws {
        let temporary = temporarySibling(of: output)
        do {
            guard InputFile.status(of: input)?.isRegularFile == true else {
                throw RouteKitError(
                    .io, "smooth reads its input twice (to process, then to write): give a regular file", file: input)
            }
            let pipeline = RoutePipeline(configuration: try configuration)
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
                    report(label, output, result.metrics)
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

    func report(
        _ label: String, _ newRoute: String?, _ m: PipelineMetrics, version: Int64? = nil, person: String? = nil
    ) {
        if json {
            printJSONLine(
                TrackJSON(
                    route: label, newRoute: newRoute, syncVersion: version.map { Int($0) }, pointsIn: m.pointsIn,
                    pointsOut: m.pointsOut,
                    maxDeviationMetres: m.maxDeviationMetres, smoothingRmsMetres: m.smoothingRmsMetres,
                    lengthInMetres: m.lengthInMetres, lengthOutMetres: m.lengthOutMetres, person: person))
            return
        }
        var line = "\(label)\(newRoute.map { " → \($0)" } ?? ""): \(m.pointsIn) → \(m.pointsOut) points"
        line += String(
            format: ", %d outliers, smoothing RMS %.2f m, max deviation %.3f m, length %.0f → %.0f m", m.outliers.total,
            m.smoothingRmsMetres, m.maxDeviationMetres, m.lengthInMetres, m.lengthOutMetres)
        if m.privacyRemoved > 0 { line += ", \(m.privacyRemoved) in privacy zones" }
        for (stage, reason) in m.skipped.sorted(by: { $0.key < $1.key }) { line += " (\(stage) skipped: \(reason))" }
        printError(line)
    }

    func runStore() async throws {
        let workers = jobs
        let (turns, pipeline) = try await runReportingErrors {
            () async throws -> ([PersonTurn], RoutePipeline) in
            // A batch job: reads and writes on the workers' own threads (see SQLiteStore.Options).
            let store = try await storeOptions.open(onCallingThread: true, connections: workers + 1)
            return (try await people.turns(of: store), RoutePipeline(configuration: try configuration))
        }
        let started = Date()
        BatchAllocator.tuneForBatchProcessing()
        var total = SmoothingJob.Tally(total: 0)
        // Each person in turn (one turn without --all-people), the routes of each listed when their turn comes.
        for turn in turns {
            let personStarted = Date()
            let ids = try await runReportingErrors { try await routeIDs(in: turn.store) }
            if let label = turn.label { printError("\(label): \(ids.count) route(s)") }
            let tally = try await smooth(ids, of: turn, pipeline: pipeline)
            if let label = turn.label {
                printError("\(label): \(Self.counts(tally, since: personStarted))")
            }
            total.add(tally)
        }
        let everyone = people.allPeople ? "every person (\(turns.count)): " : ""
        printError(
            "\(everyone)\(Self.counts(total, since: started)) with \(jobs) worker(s) → \(storeOptions.label)")
        if total.failed > 0 { throw exitInputFailed }
    }

    /// The routes to smooth in `store` (a person's view): the ones given, or every current route (--all,
    /// --all-people).
    func routeIDs(in store: any RouteStore) async throws -> [UUID] {
        guard targets.isEmpty else {
            var ids: [UUID] = []
            for target in targets { ids.append(try await resolveID(target, argument: "ROUTE", .routes, in: store)) }
            return ids
        }
        return try await store.routes(matching: RouteFilter()).map(\.id)
    }

    /// Smooths `ids` in `turn`'s store: a line per route (with the person's id in JSON with --all-people), a progress
    /// bar on a terminal (naming the person with --all-people); returns the counts.
    func smooth(_ ids: [UUID], of turn: PersonTurn, pipeline: RoutePipeline) async throws -> SmoothingJob.Tally {
        let progress = ProgressBar(enabled: stderrIsTerminal && !json, total: max(1, ids.count), unit: .items("routes"))
        let started = Date()
        let json = json
        let total = ids.count
        let whose = turn.person.map { "\($0.name): " } ?? ""
        let person = turn.person?.id.description
        let job = SmoothingJob(
            store: turn.store, pipeline: pipeline, routes: ids, workers: jobs, leaseSeconds: leaseSeconds)
        let tally = try await runReportingErrors {
            try await job.run { id, result, tally in
                let label = id.uuidString.lowercased()
                switch result {
                case .success(let outcome):
                    if let reason = outcome.skipped {
                        if json {
                            printJSONLine(TrackJSON(route: label, skipped: reason, person: person))
                        } else {
                            printError("\(label): skipped: \(reason)")
                        }
                    } else if let m = outcome.metrics {
                        report(
                            label, outcome.newRoute?.uuidString.lowercased(), m, version: outcome.syncVersion,
                            person: person)
                    }
                case .failure(let error):
                    printError("\(label): error: \(error)")
                }
                let elapsed = Date().timeIntervalSince(started)
                let done = tally.done
                let eta = done > 0 ? elapsed / Double(done) * Double(total - done) : 0
                progress.update(done, label: "\(whose)\(done)/\(total) routes, ETA \(Int(eta.rounded())) s")
            }
        }
        progress.clear()
        return tally
    }

    /// A summary's counts: `N route(s): S new version(s), K skipped, F failed; P → Q points in T s`.
    static func counts(_ tally: SmoothingJob.Tally, since started: Date) -> String {
        "\(tally.total) route(s): \(tally.saved) new version(s), \(tally.skipped) skipped, \(tally.failed) failed; "
            + "\(tally.pointsIn) → \(tally.pointsOut) points in "
            + "\(String(format: "%.2f", Date().timeIntervalSince(started))) s"
    }
}

/// `LAT,LON,RADIUS` (degrees, degrees, metres) as a privacy zone.
func parsePrivacyZone(_ text: String, option: String) throws -> PrivacyZone {
    let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 3, let lat = parts[0], let lon = parts[1], let radius = parts[2] else {
        throw ValidationError("\(option) takes LAT,LON,RADIUS (degrees, degrees, metres), not '\(text)'.")
    }
    do { return try PrivacyZone(latitude: lat, longitude: lon, radiusMetres: radius) } catch {
        throw ValidationError("\(option) '\(text)': \(error.message)")
    }
}
