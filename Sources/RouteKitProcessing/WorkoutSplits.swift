import Foundation
import RouteKit

/// How a workout is cut into splits: by its recorded laps, or every so many metres.
package enum SplitRule: Sendable, Hashable {
    /// One split per lap event (``WorkoutEvent/Kind/lap``), with the lap's recorded totals beside the computed ones.
    case laps
    /// One split per activity (``Workout/allActivities``: the recorded ones, else the workout as one), with the
    /// activity's recorded metadata beside the computed numbers.
    case activities
    /// One split per `metres` of the workout's distance (the last one shorter).
    case distance(metres: Double)

    /// A kilometre.
    package static let kilometre = SplitRule.distance(metres: 1_000)
    /// An international mile.
    package static let mile = SplitRule.distance(metres: 1_609.344)

    /// The rule written as `lap`, `activity`, `km`, `mile` or a number of metres (`400`, at least 10).
    /// - Parameter name: how the text is called in an error (`--by`, `'by'`).
    package init(parsing text: String, name: String) throws(RouteKitError) {
        switch text.lowercased() {
        case "lap", "laps": self = .laps
        case "activity", "activities": self = .activities
        case "km", "kilometre", "kilometer": self = .kilometre
        case "mile", "mi": self = .mile
        default:
            guard let metres = Double(text), metres.isFinite, metres >= 10, metres <= 1_000_000 else {
                throw RouteKitError(
                    .invalidArgument,
                    "\(name) takes lap, activity, km, mile or a number of metres from 10 to 1000000, not '\(text)'")
            }
            self = .distance(metres: metres)
        }
    }

    /// `lap`, `activity`, or `distance`.
    package var name: String {
        switch self {
        case .laps: "lap"
        case .activities: "activity"
        case .distance: "distance"
        }
    }
}

/// One split: a lap, or a stretch of the split distance.
package struct WorkoutSplit: Sendable {
    /// Its number, from 1: the lap's place among the laps, or which stretch of the distance it is (a stretch the
    /// recording jumps over, after a gap in the fixes, has no split).
    package var number: Int
    /// The lap's start, or the time of the split's first fix.
    package var start: Timestamp?
    /// The lap's end, or the time of the split's last fix.
    package var end: Timestamp?
    /// The numbers measured over the split's fixes and series, with the rules of the whole workout's statistics.
    package var statistics: RouteStatistics
    /// A lap's totals (or an activity's metadata) as the file recorded them; `nil` for distance splits.
    package var recorded: [String: MetadataValue]?
}

/// A workout's splits with what they were computed from.
package struct WorkoutSplitsReport: Sendable {
    /// The workout.
    package var workout: Workout
    /// The route version the numbers come from (the workout's recording), if any; `nil` for a reader that may not
    /// read routes (an API token without `read:routes`).
    package var route: RouteSample?
    /// How the workout was cut.
    package var rule: SplitRule
    /// The splits, in order.
    package var splits: [WorkoutSplit]
    /// What the caller should know: laps that overlap or lie outside the workout, a workout without laps.
    package var warnings: [String]
}

extension WorkoutStatistics {
    /// A workout's splits (or a route version's workout's, measured over that version): per lap, or per distance.
    /// Each split is measured as ``compute(store:id:request:)`` measures the whole (the same odometer, moving time,
    /// climb, time-weighted averages); the fix where one split ends is the first of the next, so the steps of
    /// consecutive splits add up to the whole.
    ///
    /// - Throws: `RouteKitError.Code.notFound` when `id` is neither a route nor a workout.
    package static func splits(
        store: any RouteStore, id: UUID, rule: SplitRule, request: WorkoutStatisticsRequest = WorkoutStatisticsRequest()
    ) async throws -> WorkoutSplitsReport {
        try await BlockingExecutor.shared.withPreference { () async throws -> WorkoutSplitsReport in
            let (workout, route) = try await recording(store: store, id: id)
            let options = statisticsOptions(workout, request)
            // The series first (the whole workout's statistics hold them too): each split is measured as it closes,
            // so one accumulator is held at a time, whatever the number of splits.
            let series = SplitSeries(
                heartRate: try await store.allSamples(of: .heartRate, workout: workout.id),
                cadence: try await store.allSamples(of: .cadence, workout: workout.id),
                power: try await store.allSamples(of: .power, workout: workout.id))
            var cutter = SplitCutter(
                rule: rule, workout: workout, options: options, segmentStarts: route?.segmentStarts ?? [],
                series: series)
            if let route {
                for try await batch in store.locations(of: route.id, batchSize: 16_384) { cutter.add(batch.locations) }
            }
            let splits = cutter.finish()
            // The splits are the workout's; which route they come from is for a reader of routes.
            return WorkoutSplitsReport(
                workout: workout, route: store.readGrant.mayRead(.routes) ? route : nil, rule: rule, splits: splits,
                warnings: cutter.warnings)
        }
    }
}

/// A workout's series, sorted by time, sliced per split.
struct SplitSeries {
    var heartRate: [QuantitySample]
    var cadence: [QuantitySample]
    var power: [QuantitySample]

    init(heartRate: [QuantitySample], cadence: [QuantitySample], power: [QuantitySample]) {
        func sorted(_ s: [QuantitySample]) -> [QuantitySample] {
            zip(s, s.dropFirst()).allSatisfy { $0.timestamp.instant <= $1.timestamp.instant }
                ? s : s.sorted { $0.timestamp.instant < $1.timestamp.instant }
        }
        self.heartRate = sorted(heartRate)
        self.cadence = sorted(cadence)
        self.power = sorted(power)
    }

    /// The samples from `a` to `b` (both included).
    static func slice(_ s: [QuantitySample], _ a: Instant, _ b: Instant) -> [QuantitySample] {
        let lo = s.partitioningIndex { $0.timestamp.instant >= a }
        let hi = s.partitioningIndex { $0.timestamp.instant > b }
        return lo < hi ? Array(s[lo..<hi]) : []
    }
}

/// Cuts a recording's fixes into splits as they stream past, one accumulator per split.
struct SplitCutter {
    /// A lap's window: from its start to its end or the next lap's start, whichever comes first.
    struct Window {
        var number: Int
        var from: Instant
        var to: Instant?
        var event: WorkoutEvent
    }

    /// The split being measured.
    struct Open {
        var number: Int
        var accumulator: StatisticsAccumulator
        var firstIndex: Int
        var count = 0
        var first: Timestamp?
        var last: Timestamp?
        var window: Window?
    }

    let rule: SplitRule
    let options: StatisticsOptions
    let pauses: [ClosedRange<Instant>]
    let segmentStarts: [Int]
    var windows: [Window] = []
    var warnings: [String] = []
    var odometer: RouteOdometer
    var index = 0
    var open: Open?
    /// The splits measured so far, in the order they closed.
    var done: [WorkoutSplit] = []
    let series: SplitSeries

    init(rule: SplitRule, workout: Workout, options: StatisticsOptions, segmentStarts: [Int], series: SplitSeries) {
        self.series = series
        self.rule = rule
        self.options = options
        self.pauses = workout.pauseIntervals
        self.segmentStarts = segmentStarts.sorted()
        self.odometer = RouteOdometer(maxSpeed: options.maxSpeed)
        let laps: [WorkoutEvent]
        switch rule {
        case .distance: return
        case .laps: laps = workout.laps
        case .activities:
            laps = workout.allActivities.map {
                WorkoutEvent(kind: .lap, start: $0.start, end: $0.end, metadata: $0.metadata)
            }
        }
        let noun = rule == .laps ? "lap" : "activity"
        if laps.isEmpty { warnings.append("the workout has no laps: ask for splits by distance (km, mile)") }
        var untimed = 0
        let timed = laps.enumerated().compactMap { n, lap in lap.start.map { (n + 1, $0.instant, lap) } }
        untimed = laps.count - timed.count
        for (k, (number, from, lap)) in timed.enumerated() {
            var to = lap.end?.instant
            if k + 1 < timed.count {
                let next = timed[k + 1].1
                if let t = to, t > next {
                    warnings.append(
                        "\(noun) \(number) overlaps \(noun) \(timed[k + 1].0) by \(Self.seconds(next.seconds(to: t))): "
                            + "the fixes after \(noun) \(timed[k + 1].0) starts count in \(noun) \(timed[k + 1].0)")
                }
                to = min(to ?? next, next)
            }
            if let s = workout.start?.instant, s.seconds(to: from) < -1 {
                warnings.append("\(noun) \(number) starts before its workout")
            }
            if let e = workout.end?.instant, let t = lap.end?.instant, e.seconds(to: t) > 1 {
                warnings.append("\(noun) \(number) ends after its workout")
            }
            windows.append(Window(number: number, from: from, to: to, event: lap))
        }
        if untimed > 0 { warnings.append("\(untimed) \(noun)(s) without a start time: their totals only") }
    }

    static func seconds(_ s: Double) -> String { String(format: "%.0f s", s) }

    /// The window holding `t`, as an index into `windows`.
    func window(of t: Instant) -> Int? {
        let k = windows.partitioningIndex { $0.from > t } - 1
        guard k >= 0 else { return nil }
        if let to = windows[k].to, t > to { return nil }
        if let to = windows[k].to, t == to, k + 1 < windows.count, windows[k + 1].from == t { return k + 1 }
        return k
    }

    mutating func start(number: Int, window: Window?) {
        let first = index
        let relative = segmentStarts.filter { $0 > first }.map { $0 - first }
        open = Open(
            number: number,
            accumulator: StatisticsAccumulator(options: options, segmentStarts: relative, pauses: pauses),
            firstIndex: first, window: window)
    }

    mutating func feed(_ l: Location) {
        guard var o = open else { return }
        o.accumulator.add([l])
        o.count += 1
        if let t = l.timestamp {
            if o.first == nil { o.first = t }
            o.last = t
        }
        open = o
    }

    /// Measures the open split with its slice of the series.
    mutating func close() {
        guard var o = open else { return }
        open = nil
        var heartRate: [QuantitySample] = []
        var cadence: [QuantitySample] = []
        var power: [QuantitySample] = []
        if let from = o.window?.from ?? o.first?.instant, let to = o.window?.to ?? o.last?.instant {
            heartRate = SplitSeries.slice(series.heartRate, from, to)
            cadence = SplitSeries.slice(series.cadence, from, to)
            power = SplitSeries.slice(series.power, from, to)
        }
        let statistics = o.accumulator.finish(heartRate: heartRate, cadence: cadence, zones: nil, power: power)
        done.append(
            WorkoutSplit(
                number: o.number, start: o.window?.event.start ?? o.first, end: o.window?.event.end ?? o.last,
                statistics: statistics, recorded: o.window?.event.metadata))
    }

    /// Adds the next batch of fixes, in route order.
    mutating func add(_ batch: [Location]) {
        for l in batch {
            defer { index += 1 }
            let newSegment = segmentStarts.contains(index)
            _ = odometer.add(l, newSegment: newSegment)
            switch rule {
            case .distance(let metres):
                let number = Int((odometer.metres / metres).rounded(.down)) + 1
                if let o = open, o.number != number {
                    // The fix that crosses the boundary ends this split and starts the next.
                    feed(l)
                    close()
                }
                if open == nil { start(number: number, window: nil) }
                feed(l)
            case .laps, .activities:
                // A fix without a time stays with the split it is in.
                guard let t = l.timestamp?.instant else {
                    feed(l)
                    continue
                }
                let k = window(of: t)
                let number = k.map { windows[$0].number }
                if let o = open, o.number != number {
                    // Consecutive laps share the fix where one ends and the next starts.
                    if let k, let w = o.window, w.to == windows[k].from { feed(l) }
                    close()
                }
                if open == nil, let k { start(number: windows[k].number, window: windows[k]) }
                feed(l)
            }
        }
    }

    /// The splits; laps without fixes are there too, with their recorded totals.
    mutating func finish() -> [WorkoutSplit] {
        close()
        var out = done
        if case .distance = rule { return out }
        // Every lap is a split, measured or not (an indoor lap has no fixes; its series still count).
        let measured = Set(out.map(\.number))
        for w in windows where !measured.contains(w.number) {
            var accumulator = StatisticsAccumulator(options: options, pauses: pauses)
            var heartRate: [QuantitySample] = []
            var cadence: [QuantitySample] = []
            var power: [QuantitySample] = []
            if let to = w.to, w.from < to {
                heartRate = SplitSeries.slice(series.heartRate, w.from, to)
                cadence = SplitSeries.slice(series.cadence, w.from, to)
                power = SplitSeries.slice(series.power, w.from, to)
                // A lap without fixes (indoors): its series count over its time, less the pauses.
                accumulator.weighSeriesWithoutFixes(over: w.from...to)
            }
            out.append(
                WorkoutSplit(
                    number: w.number, start: w.event.start, end: w.event.end,
                    statistics: accumulator.finish(heartRate: heartRate, cadence: cadence, zones: nil, power: power),
                    recorded: w.event.metadata))
        }
        return out.sorted { $0.number < $1.number }
    }
}
