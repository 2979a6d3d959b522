import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitProcessing

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Distance, durations, moving time, elevation, speeds, heart rate and time in zones.",
        discussion: """
            For a route version, or a workout: its current route's raw version (the recording as imported), so \
            that smoothing, simplification and privacy zones never change a workout's numbers. Distance is ellipsoidal (WGS 84), segment gaps \\
            excluded. Moving time leaves out pauses, the gaps between segments, and stretches slower than the \\
            activity's threshold (running 1.0 m/s, cycling 1.5, others 0.5) for more than 10 s. Elevation gain \\
            and loss count changes beyond a 3 m hysteresis band (missing elevations are skipped, not zero). Max \\
            speed is the fastest 5-second stretch, so one bad fix cannot make it. Heart rate and cadence are \\
            time-weighted while moving (each sample holds until the next, at most 10 s); time in zones adds up \\
            to the moving time that has heart rate. Zones: five, from --max-hr (or --age: 208 − 0.7 × age), or \\
            --zones with explicit lower bounds; without any, the workout's source's zones (routekit zones: the \
            person's own, or Karvonen from a maximum and resting heart rate, …), and only when nothing is known \
            the workout's own highest heart rate (the JSON's zoneConfiguration says which). Power \
            (when the workout has a power series): time-weighted average, maximum, and seven power zones from \
            --ftp, --power-zones, the source's zones (routekit zones), or else an FTP estimated as 95 % of the best \
            20-minute power. --min-speed, \
            --grace and --hysteresis override the activity's defaults.

            JSON (--json):
              {"workout": "…", "route": "…"|null, "distanceMetres": x, "elapsedSeconds": x|null,
               "movingSeconds": x|null, "elevationGainMetres": x|null, "elevationLossMetres": x|null,
               "minElevationMetres": x|null, "maxElevationMetres": x|null, "averageSpeed": x|null,
               "maxSpeed": x|null, "heartRate": {"average": x, "max": x}|null, "cadenceAverage": x|null,
               "zones": [{"zone": 1, "lower": x, "upper": x, "seconds": x}]|null,
               "power": {"average": x, "max": x, "ftp": x}|null, "powerZones": [{…}]|null,
               "zoneConfiguration": {"quantity": "heartRate", "origin": "system"|"user"|"app", "unit": "bpm",
                 "boundaries": [x, …], "basis": "…"|null}|null, "powerZoneConfiguration": {…}|null}
            The last zone has no "upper" (it has no upper bound).
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Argument(help: "A route's or a workout's uuid (or its first 8+ hex digits).") var id: String
    @Option(help: "Maximum heart rate, for the default zones.") var maxHr: Double?
    @Option(help: "Age, for the default zones (maximum heart rate 208 − 0.7 × age).") var age: Double?
    @Option(
        help: ArgumentHelp("Explicit zones: their lower bounds, comma-separated, starting at 0.", valueName: "LIST"))
    var zones: String?
    @Option(help: ArgumentHelp("Functional threshold power, watts, for the power zones.", valueName: "WATTS"))
    var ftp: Double?
    @Option(
        help: ArgumentHelp(
            "Explicit power zones: their lower bounds in watts, comma-separated, starting at 0.", valueName: "LIST"))
    var powerZones: String?
    @Option(
        help: ArgumentHelp(
            "Slower than this (m/s) for longer than the grace period is not moving (default: the activity's).",
            valueName: "M/S"))
    var minSpeed: Double?
    @Option(help: ArgumentHelp("Seconds a slow stretch may last and still count as moving (10).", valueName: "S"))
    var grace: Double?
    @Option(help: ArgumentHelp("Elevation changes within this band are noise (3 m).", valueName: "METRES"))
    var hysteresis: Double?
    @Flag(help: "One JSON object.") var json = false

    func validate() throws {
        for (name, value) in [("--min-speed", minSpeed), ("--grace", grace), ("--hysteresis", hysteresis)] {
            if let value, !(value.isFinite && value >= 0) {
                throw ValidationError("\(name) must be a number ≥ 0, not \(value).")
            }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            var request = WorkoutStatisticsRequest()
            request.maximumHeartRate = maxHr
            request.age = age
            request.zones = try zones.map { text throws(RouteKitError) in try Zones(parsing: text, name: "--zones") }
            request.ftp = ftp
            request.powerZones = try powerZones.map { text throws(RouteKitError) in
                try Zones(parsing: text, name: "--power-zones")
            }
            request.minimumSpeed = minSpeed
            request.grace = grace
            request.elevationHysteresis = hysteresis
            let target = try await resolveID(id, argument: "ID", in: store)
            let report = try await WorkoutStatistics.compute(store: store, id: target, request: request)
            if json {
                printJSONLine(WorkoutStatisticsJSON(report))
                return
            }
            let s = report.statistics
            let workout = report.workout
            let route = report.route
            let usedFTP = report.ftp
            func f(_ v: Double?, _ format: String, _ unit: String) -> String {
                v.map { String(format: format, $0) + unit } ?? "—"
            }
            func duration(_ v: Double?) -> String {
                guard let v else { return "—" }
                let t = Int(v.rounded())
                return String(format: "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
            }
            print("workout   \(workout.id.uuidString.lowercased()) (\(workout.activityType))")
            print("route     \(route?.id.uuidString.lowercased() ?? "—")")
            print("distance  \(f(s.distanceMetres / 1000, "%.3f", " km"))")
            print("elapsed   \(duration(s.elapsedSeconds))    moving \(duration(s.movingSeconds))")
            print(
                "elevation +\(f(s.elevationGainMetres, "%.0f", " m")) −\(f(s.elevationLossMetres, "%.0f", " m"))"
                    + "    min \(f(s.minElevation, "%.0f", " m"))  max \(f(s.maxElevation, "%.0f", " m"))")
            print(
                "speed     average \(f(s.averageSpeed.map { $0 * 3.6 }, "%.1f", " km/h"))"
                    + "    max \(f(s.maxSpeed.map { $0 * 3.6 }, "%.1f", " km/h"))")
            print(
                "heart     average \(f(s.heartRateAverage, "%.0f", " bpm"))    max \(f(s.heartRateMax, "%.0f", " bpm"))"
                    + "    cadence \(f(s.cadenceAverage, "%.0f", "/min"))")
            for z in s.zones ?? [] {
                let range = z.upper.map { String(format: "%.0f–%.0f", z.lower, $0) } ?? String(format: "%.0f+", z.lower)
                print("zone \(z.zone)    \(column(range, 10)) \(duration(z.seconds))")
            }
            if s.powerAverage != nil || s.powerMax != nil {
                let ftpText =
                    usedFTP.map { String(format: "    FTP %.0f W", $0) + (ftp == nil ? " (estimated)" : "") } ?? ""
                print(
                    "power     average \(f(s.powerAverage, "%.0f", " W"))    max \(f(s.powerMax, "%.0f", " W"))\(ftpText)"
                )
            }
            for z in s.powerZones ?? [] {
                let range =
                    z.upper.map { String(format: "%.0f–%.0f W", z.lower, $0) } ?? String(format: "%.0f+ W", z.lower)
                print("power \(z.zone)   \(column(range, 12)) \(duration(z.seconds))")
            }
        }
    }
}

struct Splits: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "splits",
        abstract: "A workout's splits: per lap (with what the file recorded) or per kilometre, mile or distance.",
        discussion: """
            Each split is measured as `stats` measures the whole workout (from its recording as imported, the same \
            distance, moving time, climb and time-weighted heart rate, cadence and power), so the splits' \
            distances add up to the workout's. --by lap (the default) gives one split per lap the file recorded, \
            with the lap's own totals beside the measured ones; --by activity one per activity (a multi-activity \
            workout's, else the workout as one); --by km, --by mile or --by METRES cuts the \
            distance instead (the last split is shorter). The fix where one split ends is the first of the next. \
            Laps that overlap, or lie outside their workout, are measured all the same and named in a warning.

            JSON (--json):
              {"workout": "…", "route": "…"|null, "by": "lap"|"distance", "metres": x|null,
               "splits": [{"number": 1, "start": "…"|null, "end": "…"|null, "distanceMetres": x,
                 "elapsedSeconds": x|null, "movingSeconds": x|null, "elevationGainMetres": x|null,
                 "elevationLossMetres": x|null, "averageSpeed": x|null, "maxSpeed": x|null,
                 "heartRate": {"average": x, "max": x}|null, "cadenceAverage": x|null,
                 "power": {"average": x, "max": x, "ftp": null}|null, "recorded": {…}|null}],
               "warnings": ["…"]}

            Examples:
              routekit splits 6F1C…
              routekit splits 6F1C… --by km --json
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Argument(help: "A route's or a workout's uuid (or its first 8+ hex digits).") var id: String
    @Option(
        help: ArgumentHelp(
            "lap, activity, km, mile, or a distance in metres (10 to 1000000).",
            valueName: "lap|activity|km|mile|METRES"))
    var by = "lap"
    @Flag(help: "One JSON object.") var json = false

    func validate() throws {
        do { _ = try SplitRule(parsing: by, name: "--by") } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let rule = try SplitRule(parsing: by, name: "--by")
            let target = try await resolveID(id, argument: "ID", in: store)
            let report = try await WorkoutStatistics.splits(store: store, id: target, rule: rule)
            if json {
                printJSONLine(WorkoutSplitsJSON(report))
                return
            }
            for w in report.warnings { printError("warning: \(w)") }
            func f(_ v: Double?, _ format: String) -> String { v.map { String(format: format, $0) } ?? "—" }
            func duration(_ v: Double?) -> String {
                guard let v else { return "—" }
                let t = Int(v.rounded())
                return t >= 3600
                    ? String(format: "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
                    : String(format: "%d:%02d", t / 60, t % 60)
            }
            print(
                "\(column("split", 6)) \(column("km", 8)) \(column("moving", 8)) \(column("pace/km", 8)) "
                    + "\(column("km/h", 6)) \(column("+m", 5)) \(column("bpm", 4)) \(column("W", 4))")
            for split in report.splits {
                let s = split.statistics
                let pace = s.averageSpeed.flatMap { $0 > 0 ? 1000 / $0 : nil }
                print(
                    "\(column(String(split.number), 6)) \(column(f(s.distanceMetres / 1000, "%.3f"), 8)) "
                        + "\(column(duration(s.movingSeconds), 8)) \(column(duration(pace), 8)) "
                        + "\(column(f(s.averageSpeed.map { $0 * 3.6 }, "%.1f"), 6)) "
                        + "\(column(f(s.elevationGainMetres, "%.0f"), 5)) \(column(f(s.heartRateAverage, "%.0f"), 4)) "
                        + "\(column(f(s.powerAverage, "%.0f"), 4))")
            }
        }
    }
}

struct Series: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "series",
        abstract: "Stream a workout's quantity series (heart rate, cadence, temperature, power…) in batches.",
        discussion: """
            Text output is CSV (time, value). With --json, one object per batch: \\
            {"batch": N, "done": true|false, "type": "heartRate", "unit": "count/min", "samples": [{"time": …, "value": …}]}.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Argument(help: "The workout's uuid (or its first 8+ hex digits).") var workout: String
    @Option(help: "heartRate, cadence, temperature, waterTemperature, depth or power.") var type: String = "heartRate"
    @Option(help: "Samples per batch.") var batchSize: Int = 4096
    @Flag(help: "One JSON object per batch, one per line.") var json = false

    func validate() throws {
        if QuantityType(identifier: type) == nil {
            throw ValidationError(
                "Unknown type '\(type)': \(QuantityType.all.map(\.identifier).joined(separator: ", ")).")
        }
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1.") }
    }

    struct BatchJSON: Encodable {
        var batch: Int
        var done: Bool
        var type: String
        var unit: String
        var samples: [SampleJSON]
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let id = try await resolveID(workout, argument: "WORKOUT", .workouts, in: store)
            guard try await store.workout(id: id) != nil else { throw RouteKitError(.notFound, "no workout \(id)") }
            guard let quantity = QuantityType(identifier: type) else { return }
            if !json { print("time,\(quantity.identifier)") }
            var n = 0
            for try await batch in store.samples(of: quantity, workout: id, batchSize: batchSize) {
                if json {
                    printJSONLine(
                        BatchJSON(
                            batch: n, done: batch.isDone, type: quantity.identifier, unit: quantity.unit,
                            samples: batch.samples.map(SampleJSON.init)))
                } else {
                    for s in batch.samples { print("\(s.timestamp.iso8601),\(decimalText(s.value))") }
                }
                n += 1
            }
        }
    }
}

struct Effort: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "effort",
        abstract: "Relate an effort score (1–10) to a workout, unrelate one, or list them.",
        discussion: """
            A manual score (the default for --set) wins over any estimated one (--estimated); among several, \\
            the newest counts. Only the source that related a score may unrelate it.

            Examples:
              routekit effort 6F1C… --set 7
              routekit effort 6F1C… --set 5 --estimated --source my-model
              routekit effort 6F1C… --delete 0C1D…
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @OptionGroup var sourceOption: SourceOption
    @Argument(help: "The workout's uuid (or its first 8+ hex digits).") var workout: String
    @Option(help: "Relate this score (1–10).") var set: Double?
    @Flag(help: "The score is an estimate (a manual score wins over it).") var estimated = false
    @Option(help: "Unrelate the score with this uuid.") var delete: String?
    @Flag(help: "One JSON object per score, then the effective one.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let source = try sourceOption.resolved()
            let id = try await resolveID(workout, argument: "WORKOUT", .workouts, in: store)
            if let set {
                _ = try await WorkoutEffort.relate(
                    score: set, manual: !estimated, toWorkout: id, as: source, in: store)
            }
            if let delete {
                let scoreID = try parseUUID(delete)
                try await WorkoutEffort.unrelate(scoreID, fromWorkout: id, as: source, in: store)
            }
            let scores = try await store.efforts(ofWorkout: id)
            let effective = EffortScore.effective(scores)
            for s in scores {
                if json {
                    printJSONLine(EffortScoreJSON(s, effective: s == effective))
                } else {
                    print(
                        "\(s.id.uuidString.lowercased()) \(column(s.source.name, 16)) \(String(format: "%4.1f", s.score)) "
                            + "\(s.isManual ? "manual   " : "estimated")\(s == effective ? "  ← counts" : "")")
                }
            }
            if !json { print(effective.map { String(format: "effort %.1f", $0.score) } ?? "no effort score") }
        }
    }
}
