import ArgumentParser
import Foundation
import RouteKit
import RouteKitGPX
import RouteKitProcessing
import RouteKitSQLite

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
            --zones with explicit lower bounds; without any, from the workout's own highest heart rate. Power \
            (when the workout has a power series): time-weighted average, maximum, and seven power zones from \
            --ftp, --power-zones, or else an FTP estimated as 95 % of the best 20-minute power. --min-speed, \
            --grace and --hysteresis override the activity's defaults.

            JSON (--json):
              {"workout": "…", "route": "…"|null, "distanceMetres": x, "elapsedSeconds": x|null,
               "movingSeconds": x|null, "elevationGainMetres": x|null, "elevationLossMetres": x|null,
               "minElevationMetres": x|null, "maxElevationMetres": x|null, "averageSpeed": x|null,
               "maxSpeed": x|null, "heartRate": {"average": x, "max": x}|null, "cadenceAverage": x|null,
               "zones": [{"zone": 1, "lower": x, "upper": x|null, "seconds": x}]|null,
               "power": {"average": x, "max": x, "ftp": x}|null, "powerZones": [{…}]|null}
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "A route's or a workout's uuid.") var id: String
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

    struct HeartRateJSON: Encodable {
        var average: Double?
        var max: Double?
    }

    struct PowerJSON: Encodable {
        var average: Double?
        var max: Double?
        var ftp: Double?
    }

    struct StatsJSON: Encodable {
        var workout: String
        var route: String?
        var distanceMetres: Double
        var elapsedSeconds: Double?
        var movingSeconds: Double?
        var elevationGainMetres: Double?
        var elevationLossMetres: Double?
        var minElevationMetres: Double?
        var maxElevationMetres: Double?
        var averageSpeed: Double?
        var maxSpeed: Double?
        var heartRate: HeartRateJSON?
        var cadenceAverage: Double?
        var zones: [ZoneTime]?
        var power: PowerJSON?
        var powerZones: [ZoneTime]?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(workout, forKey: .workout)
            try c.encode(route, forKey: .route)
            try c.encode(distanceMetres, forKey: .distanceMetres)
            try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
            try c.encode(movingSeconds, forKey: .movingSeconds)
            try c.encode(elevationGainMetres, forKey: .elevationGainMetres)
            try c.encode(elevationLossMetres, forKey: .elevationLossMetres)
            try c.encode(minElevationMetres, forKey: .minElevationMetres)
            try c.encode(maxElevationMetres, forKey: .maxElevationMetres)
            try c.encode(averageSpeed, forKey: .averageSpeed)
            try c.encode(maxSpeed, forKey: .maxSpeed)
            try c.encode(heartRate, forKey: .heartRate)
            try c.encode(cadenceAverage, forKey: .cadenceAverage)
            try c.encode(zones, forKey: .zones)
            try c.encode(power, forKey: .power)
            try c.encode(powerZones, forKey: .powerZones)
        }
        enum CodingKeys: String, CodingKey {
            case workout, route, distanceMetres, elapsedSeconds, movingSeconds, elevationGainMetres
            case elevationLossMetres, minElevationMetres, maxElevationMetres, averageSpeed, maxSpeed, heartRate
            case cadenceAverage, zones, power, powerZones
        }
    }

    /// Zones from their lower bounds, comma-separated.
    static func parseZones(_ text: String, option: String) throws(RouteKitError) -> Zones {
        let bounds = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard bounds.allSatisfy({ $0 != nil }) else {
            throw RouteKitError(.invalidArgument, "\(option) takes numbers separated by commas, not '\(text)'")
        }
        return try Zones(lowerBounds: bounds.compactMap { $0 })
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await storeOptions.open()
            let uuid = try parseUUID(id)
            var route: RouteSample?
            let workout: Workout
            if let r = try await store.route(id: uuid) {
                route = r
                guard let w = try await store.workout(id: r.workoutID) else {
                    throw RouteKitError(.notFound, "the workout of route \(uuid) is gone")
                }
                workout = w
            } else if let w = try await store.workout(id: uuid) {
                workout = w
                // The recording as imported: processed versions (smoothed, simplified, privacy-trimmed) are for
                // display and must not change the workout's numbers.
                if let current = try await store.routes(matching: RouteFilter(workout: uuid)).first {
                    route =
                        try await store.rawRoute(source: current.source, syncIdentifier: current.sync.identifier)
                        ?? current
                }
            } else {
                throw RouteKitError(.notFound, "no route or workout \(uuid)")
            }
            // Pauses: each pause event to the resume that follows it.
            var pauses: [ClosedRange<Instant>] = []
            var pausedAt: Instant?
            for e in workout.events {
                switch e.kind {
                case .pause: pausedAt = e.start?.instant
                case .resume:
                    if let p = pausedAt, let r = e.start?.instant, p <= r { pauses.append(p...r) }
                    pausedAt = nil
                case .segment: break
                }
            }
            var segmentStarts: [Int] = []
            if case .string(let text)? = route?.metadata["gpxSegmentStarts"] {
                segmentStarts = text.split(separator: ",").compactMap { Int($0) }
            }
            var options = StatisticsOptions(activity: workout.activityType)
            if let minSpeed { options.minimumSpeed = minSpeed }
            if let grace { options.grace = grace }
            if let hysteresis { options.elevationHysteresis = hysteresis }
            var acc = StatisticsAccumulator(options: options, segmentStarts: segmentStarts, pauses: pauses)
            if let route {
                for try await batch in store.locations(of: route.id, batchSize: 16_384) { acc.add(batch.locations) }
            }
            func samples(_ type: QuantityType) async throws -> [QuantitySample] {
                var out: [QuantitySample] = []
                for try await b in store.samples(of: type, workout: workout.id, batchSize: 65_536) { out += b.samples }
                return out
            }
            // Values ≤ 0 (no sensor) are left out by the accumulator; they never make the observed maximum.
            let hr = try await samples(.heartRate)
            let cadence = try await samples(.cadence)
            let zoneConfiguration: Zones?
            if let zones {
                zoneConfiguration = try Self.parseZones(zones, option: "--zones")
            } else if let maxHr {
                zoneConfiguration = try Zones.heartRate(maximum: maxHr)
            } else if let age {
                zoneConfiguration = try Zones.heartRate(maximum: Zones.maximumHeartRate(age: age))
            } else if let observed = hr.map(\.value).max(), observed > 60 {
                zoneConfiguration = try Zones.heartRate(maximum: observed)
            } else {
                zoneConfiguration = nil
            }
            let power = try await samples(.power)
            var usedFTP: Double?
            var powerConfiguration: Zones?
            if let powerZones {
                powerConfiguration = try Self.parseZones(powerZones, option: "--power-zones")
            } else if let value = ftp ?? Zones.estimatedFTP(power, maxGap: options.maxSampleGap), !power.isEmpty {
                usedFTP = value
                powerConfiguration = try Zones.power(ftp: max(20, value))
            }
            let s = acc.finish(
                heartRate: hr, cadence: cadence, zones: zoneConfiguration, power: power,
                powerZones: powerConfiguration)
            if json {
                printJSONLine(
                    StatsJSON(
                        workout: workout.id.uuidString.lowercased(), route: route?.id.uuidString.lowercased(),
                        distanceMetres: s.distanceMetres, elapsedSeconds: s.elapsedSeconds,
                        movingSeconds: s.movingSeconds, elevationGainMetres: s.elevationGainMetres,
                        elevationLossMetres: s.elevationLossMetres, minElevationMetres: s.minElevation,
                        maxElevationMetres: s.maxElevation, averageSpeed: s.averageSpeed, maxSpeed: s.maxSpeed,
                        heartRate: s.heartRateAverage.map { HeartRateJSON(average: $0, max: s.heartRateMax) },
                        cadenceAverage: s.cadenceAverage, zones: s.zones,
                        power: s.powerAverage.map { PowerJSON(average: $0, max: s.powerMax, ftp: usedFTP) },
                        powerZones: s.powerZones))
                return
            }
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

struct Series: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream a workout's quantity series (heart rate, cadence, temperature, power…) in batches.",
        discussion: """
            Text output is CSV (time, value). With --json, one object per batch: \\
            {"batch": N, "done": true|false, "type": "heartRate", "unit": "count/min", "samples": [{"time": …, "value": …}]}.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The workout's uuid.") var workout: String
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

    struct SampleJSON: Encodable {
        var time: String
        var value: Double
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
            let store = try await storeOptions.open()
            let id = try parseUUID(workout)
            guard try await store.workout(id: id) != nil else { throw RouteKitError(.notFound, "no workout \(id)") }
            guard let quantity = QuantityType(identifier: type) else { return }
            if !json { print("time,\(quantity.identifier)") }
            var n = 0
            for try await batch in store.samples(of: quantity, workout: id, batchSize: batchSize) {
                if json {
                    printJSONLine(
                        BatchJSON(
                            batch: n, done: batch.isDone, type: quantity.identifier, unit: quantity.unit,
                            samples: batch.samples.map { SampleJSON(time: $0.timestamp.iso8601, value: $0.value) }))
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
    @OptionGroup var sourceOption: SourceOption
    @Argument(help: "The workout's uuid.") var workout: String
    @Option(help: "Relate this score (1–10).") var set: Double?
    @Flag(help: "The score is an estimate (a manual score wins over it).") var estimated = false
    @Option(help: "Unrelate the score with this uuid.") var delete: String?
    @Flag(help: "One JSON object per score, then the effective one.") var json = false

    struct ScoreJSON: Encodable {
        var uuid: String
        var source: String
        var score: Double
        var manual: Bool
        var created: String
        var effective: Bool
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await storeOptions.open()
            let source = try sourceOption.resolved()
            let id = try parseUUID(workout)
            if let set {
                let score = try EffortScore(workoutID: id, source: source, score: set, isManual: !estimated)
                try await store.relateEffort(score)
            }
            if let delete { try await store.unrelateEffort(id: try parseUUID(delete), as: source) }
            let scores = try await store.efforts(ofWorkout: id)
            let effective = EffortScore.effective(scores)
            for s in scores {
                if json {
                    printJSONLine(
                        ScoreJSON(
                            uuid: s.id.uuidString.lowercased(), source: s.source.name, score: s.score,
                            manual: s.isManual,
                            created: Timestamp(s.created).iso8601, effective: s == effective))
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
