import Foundation
public import RouteKit

/// Distance in metres between two nearby points on the WGS 84 ellipsoid: the arc from the meridian and
/// prime-vertical radii of curvature at their mean latitude. For the metres between consecutive GPS fixes it
/// agrees with the exact ellipsoidal geodesic to well under a millimetre, at the cost of one sine and one
/// cosine (the exact geodesic needs an iterative solution per fix). Along a route,
/// ``StepMeter`` gives the same result without the trigonometry at every step.
@inline(__always) package func ellipsoidalDistance(_ a: Location, _ b: Location) -> Double {
    StepMeter.Scale(latitude: (a.latitude + b.latitude) / 2).distance(a, b)
}

/// Measures the steps of a route: ``ellipsoidalDistance(_:_:)`` with the radii of curvature kept while the
/// latitude moves less than 0.001° (about 110 m), so most steps cost no trigonometry (the radii's relative
/// change over that band is below 2·10⁻⁵: 0.1 mm on a 5 m step).
package struct StepMeter: Sendable {
    struct Scale {
        static let semiMajor = 6_378_137.0
        static let e2 = 0.006_694_379_990_14  // first eccentricity squared (WGS 84)
        let latitude: Double
        let metresPerDegreeNorth: Double
        let metresPerDegreeEast: Double

        init(latitude: Double) {
            self.latitude = latitude
            let phi = latitude * .pi / 180
            let s = sin(phi)
            let w = (1 - Self.e2 * s * s).squareRoot()
            metresPerDegreeNorth = Self.semiMajor * (1 - Self.e2) / (w * w * w) * .pi / 180  // M
            metresPerDegreeEast = Self.semiMajor / w * cos(phi) * .pi / 180  // N cos φ
        }

        @inline(__always) func distance(_ a: Location, _ b: Location) -> Double {
            var dLon = b.longitude - a.longitude
            if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
            let dy = (b.latitude - a.latitude) * metresPerDegreeNorth
            let dx = dLon * metresPerDegreeEast
            return (dx * dx + dy * dy).squareRoot()
        }
    }

    private var scale = Scale(latitude: 0)

    /// A meter.
    package init() {}

    /// The distance from `a` to `b`, metres.
    @inline(__always) package mutating func distance(_ a: Location, _ b: Location) -> Double {
        let mid = (a.latitude + b.latitude) / 2
        if abs(mid - scale.latitude) > 0.001 { scale = Scale(latitude: mid) }
        return scale.distance(a, b)
    }
}

/// The distance along a route, as every door measures it (`StatisticsAccumulator`, pictures, the processing's
/// lengths): ellipsoidal steps (``StepMeter``) between consecutive fixes, with these rules:
/// - across a segment break (a pause in the recording) nothing is counted;
/// - a fix that would need more than `maxSpeed` from the last counted fix (a GPS spike) is left out, and the next one
///   is measured from the last counted fix;
/// - at the same time (or less than a second backwards: jitter in the fractions), a step counts when one second at
///   `maxSpeed` covers it;
/// - when time goes backwards by a second or more, nothing is counted and measuring goes on from that fix;
/// - steps between fixes without a time count.
package struct RouteOdometer: Sendable {
    /// What one fix did to the distance.
    package enum Step: Sendable, Hashable {
        /// The first fix, or the first after a segment break: nothing counted.
        case first
        /// A step from or to a fix without a time: counted.
        case untimed(metres: Double)
        /// Time went backwards by a second or more (from `from`): nothing counted.
        case backwards(from: Instant)
        /// The same time as the last counted fix: counted (`metres`), or left out as a spike (`nil`).
        case sameTime(metres: Double?)
        /// A spike: left out.
        case spike
        /// A counted step from the last counted fix's time to this fix's.
        case moved(metres: Double, from: Instant, to: Instant)
    }

    /// The fastest a step may be (m/s); faster ones are spikes.
    package let maxSpeed: Double
    /// Metres counted so far.
    package private(set) var metres = 0.0
    /// The last counted fix (steps are measured from it).
    package private(set) var last: Location?
    private var meter = StepMeter()

    /// An odometer with a speed gate (`StatisticsOptions(activity:).maxSpeed` for an activity's).
    package init(maxSpeed: Double) { self.maxSpeed = maxSpeed }

    /// Counts the next fix; `newSegment`: it begins a segment (nothing is counted across).
    package mutating func add(_ l: Location, newSegment: Bool = false) -> Step {
        guard let p = last, !newSegment else {
            last = l
            return .first
        }
        let d = meter.distance(p, l)
        guard let t0 = p.timestamp?.instant, let t1 = l.timestamp?.instant else {
            metres += d
            last = l
            return .untimed(metres: d)
        }
        // Less than a second backwards is jitter in the fractions (GPSBabel writes .2073437 and .207 alternately):
        // the same time.
        let sameTime = t1 <= t0 && t1.seconds(to: t0) < 1
        if t1 < t0 && !sameTime {
            last = l
            return .backwards(from: t0)
        }
        if sameTime {
            guard d <= maxSpeed else { return .sameTime(metres: nil) }
            metres += d
            last = l
            return .sameTime(metres: d)
        }
        guard d / t0.seconds(to: t1) <= maxSpeed else { return .spike }
        metres += d
        last = l
        return .moved(metres: d, from: t0, to: t1)
    }

    /// The length of `locations` (one segment) under the gate for `activity`.
    package static func length(of locations: [Location], activity: ActivityType) -> Double {
        var odometer = RouteOdometer(maxSpeed: StatisticsOptions(activity: activity).maxSpeed)
        for l in locations { _ = odometer.add(l) }
        return odometer.metres
    }
}

/// Speed as every door shows it (the statistics' max speed, the pictures' speed profile): the straight-line speed
/// from the latest fix at least `seconds` before, smoothed by a running median of three, so that one bad fix (which
/// affects only the speeds that start or end at it) cannot make it. Fed the fixes a `RouteOdometer` counted, with
/// their times; ``reset()`` at a segment break, a pause or a clock going backwards.
package struct WindowSpeed: Sendable {
    /// The shortest window, seconds.
    package let seconds: Double
    private var meter = StepMeter()
    private var recent: [(l: Location, t: Instant)] = []
    /// The first fix of `recent` still in use: fixes leave the window by moving this, not by removing each from the
    /// array's front (which was quadratic for a million fixes inside one window).
    private var recentHead = 0
    private var lastSpeeds: [Double] = []

    /// A window of `seconds` (`StatisticsOptions.speedWindowSeconds`).
    package init(seconds: Double) { self.seconds = seconds }

    /// Adds a counted fix at `t`; returns the speed there (m/s) once the window and the median have three values.
    package mutating func add(_ l: Location, _ t: Instant) -> Double? {
        recent.append((l, t))
        while recent.count - recentHead > 2 && recent[recentHead + 1].t.seconds(to: t) >= seconds {
            recentHead += 1
        }
        if recentHead >= 1024 && recentHead * 2 >= recent.count {
            // Amortized: what is dropped is at least what stays.
            recent.removeFirst(recentHead)
            recentHead = 0
        }
        guard recent.count - recentHead > 1, recent[recentHead].t.seconds(to: t) >= seconds else { return nil }
        let v = meter.distance(recent[recentHead].l, l) / recent[recentHead].t.seconds(to: t)
        lastSpeeds.append(v)
        if lastSpeeds.count > 3 { lastSpeeds.removeFirst() }
        guard lastSpeeds.count == 3 else { return nil }
        return lastSpeeds.sorted()[1]
    }

    /// Starts again (after a break in the route).
    package mutating func reset() {
        recent.removeAll(keepingCapacity: true)
        recentHead = 0
        lastSpeeds.removeAll(keepingCapacity: true)
    }
}

/// Heart-rate (or power) zones: 3 to 9 contiguous zones, the first starting at 0, the last unbounded.
public struct Zones: Sendable, Hashable, Codable {
    /// Each zone's lower bound; zone i covers `lowerBounds[i] ..< lowerBounds[i + 1]`.
    public let lowerBounds: [Double]

    /// Zones from their lower bounds.
    /// - Throws: `RouteKitError.Code.invalidArgument` unless there are 3 to 9, the first is 0, and they
    ///   increase strictly (the message names the bound at fault).
    public init(lowerBounds: [Double]) throws(RouteKitError) {
        guard (3...9).contains(lowerBounds.count) else {
            throw RouteKitError(.invalidArgument, "zones: give 3 to 9 zones, not \(lowerBounds.count)")
        }
        guard lowerBounds[0] == 0 else { throw RouteKitError(.invalidArgument, "zones: the first zone starts at 0") }
        for i in 1..<lowerBounds.count where !(lowerBounds[i].isFinite && lowerBounds[i] > lowerBounds[i - 1]) {
            throw RouteKitError(
                .invalidArgument,
                "zones: bound \(i + 1) (\(lowerBounds[i])) must be above bound \(i) (\(lowerBounds[i - 1]))",
                index: i)
        }
        self.lowerBounds = lowerBounds
    }

    /// Five heart-rate zones from a maximum heart rate: below 60 %, 60–70, 70–80, 80–90, from 90 %.
    public static func heartRate(maximum: Double) throws(RouteKitError) -> Zones {
        guard maximum.isFinite, maximum > 60, maximum < 260 else {
            throw RouteKitError(.invalidArgument, "zones: a maximum heart rate between 60 and 260, not \(maximum)")
        }
        return try Zones(lowerBounds: [0, 0.6, 0.7, 0.8, 0.9].map { $0 * maximum })
    }

    /// Seven cycling power zones from a functional threshold power (Coggan): below 56 %, 56–76, 76–91, 91–106,
    /// 106–121, 121–151, from 151 % of FTP.
    public static func power(ftp: Double) throws(RouteKitError) -> Zones {
        guard ftp.isFinite, ftp >= 20, ftp <= 2_000 else {
            throw RouteKitError(
                .invalidArgument, "power zones: a functional threshold power between 20 and 2000 W, not \(ftp)")
        }
        return try Zones(lowerBounds: [0, 0.56, 0.76, 0.91, 1.06, 1.21, 1.51].map { $0 * ftp })
    }

    /// An estimate of functional threshold power when none is given: 95 % of the best 20-minute average power
    /// (of the whole series' average when it is shorter), each sample holding until the next, at most
    /// `maxGap` seconds; `nil` without samples.
    public static func estimatedFTP(_ samples: [QuantitySample], maxGap: Double = 10) -> Double? {
        guard let first = samples.first?.timestamp.instant else { return nil }
        // Per second since the first sample (sample and hold, capped), then the best 1,200-second window.
        var perSecond: [Double] = []
        var covered: [Double] = []
        for (i, s) in samples.enumerated() {
            let t = Int(first.seconds(to: s.timestamp.instant).rounded(.down))
            guard t >= 0, t < 30 * 86_400 else { continue }
            var hold = Int(maxGap)
            if i + 1 < samples.count {
                hold = min(
                    hold, max(1, Int(s.timestamp.instant.seconds(to: samples[i + 1].timestamp.instant).rounded())))
            }
            if perSecond.count < t + hold {
                perSecond += repeatElement(0, count: t + hold - perSecond.count)
                covered += repeatElement(0, count: t + hold - covered.count)
            }
            for k in t..<(t + hold) {
                perSecond[k] = s.value
                covered[k] = 1
            }
        }
        let window = min(1_200, perSecond.count)
        guard window > 0 else { return nil }
        var sum = perSecond[0..<window].reduce(0, +)
        var count = covered[0..<window].reduce(0, +)
        var best = count > 0 ? sum / count : 0
        var k = window
        while k < perSecond.count {
            sum += perSecond[k] - perSecond[k - window]
            count += covered[k] - covered[k - window]
            if count >= Double(window) / 2 { best = max(best, sum / count) }
            k += 1
        }
        return best > 0 ? 0.95 * best : nil
    }

    /// Maximum heart rate from age (208 − 0.7 × age, Tanaka et al. 2001).
    public static func maximumHeartRate(age: Double) -> Double { 208 - 0.7 * age }

    /// The zone (0-based) a value falls in.
    public func zone(of value: Double) -> Int {
        var z = 0
        while z + 1 < lowerBounds.count && value >= lowerBounds[z + 1] { z += 1 }
        return z
    }
}

/// Time spent in one zone.
public struct ZoneTime: Sendable, Hashable, Codable {
    /// 1-based zone number.
    public var zone: Int
    /// Lower bound.
    public var lower: Double
    /// Upper bound, `nil` for the last zone.
    public var upper: Double?
    /// Seconds spent in it.
    public var seconds: Double

    /// The time spent in zone `zone` (1-based), from `lower` to `upper` (`nil`: unbounded).
    public init(zone: Int, lower: Double, upper: Double?, seconds: Double) {
        self.zone = zone
        self.lower = lower
        self.upper = upper
        self.seconds = seconds
    }
}

/// A workout's or route's statistics (the numbers of `routekit stats`, without the ids).
public struct RouteStatistics: Sendable, Hashable {
    /// Ellipsoidal distance along the route, metres (segment gaps and spikes excluded).
    public var distanceMetres = 0.0
    /// From the first to the last time, seconds; `nil` without times.
    public var elapsedSeconds: Double?
    /// Elapsed time minus pauses, segment gaps and stretches slower than the threshold for longer than the
    /// grace period.
    public var movingSeconds: Double?
    /// Gain and loss, metres, counted with a hysteresis band; `nil` without elevations.
    public var elevationGainMetres: Double?
    /// See ``elevationGainMetres``.
    public var elevationLossMetres: Double?
    /// Lowest and highest elevation, metres.
    public var minElevation: Double?
    /// See ``minElevation``.
    public var maxElevation: Double?
    /// Distance over moving time, m/s.
    public var averageSpeed: Double?
    /// The highest straight-line speed over ``StatisticsOptions/speedWindowSeconds``, after a running median of
    /// three, m/s (a single bad fix cannot make it).
    public var maxSpeed: Double?
    /// Heart rate while moving, time-weighted (sample and hold, capped), and its maximum.
    public var heartRateAverage: Double?
    /// See ``heartRateAverage``.
    public var heartRateMax: Double?
    /// Cadence while moving, time-weighted.
    public var cadenceAverage: Double?
    /// Time in each heart-rate zone while moving (sums to the moving time covered by heart rate).
    public var zones: [ZoneTime]?
    /// Power while moving, time-weighted (watts), and its maximum.
    public var powerAverage: Double?
    /// See ``powerAverage``.
    public var powerMax: Double?
    /// Time in each power zone while moving (sums to the moving time covered by power).
    public var powerZones: [ZoneTime]?
}

/// How statistics are counted.
public struct StatisticsOptions: Sendable, Hashable {
    /// Slower than this (m/s) for longer than ``grace`` is not moving.
    public var minimumSpeed: Double
    /// Seconds a slow stretch may last and still count as moving.
    public var grace: Double
    /// Elevation changes smaller than this band (metres) are noise.
    public var elevationHysteresis: Double
    /// The shortest window max speed is measured over, seconds.
    public var speedWindowSeconds: Double
    /// A sample's value holds at most this long (seconds) when the next is later.
    public var maxSampleGap: Double
    /// A fix that would need more speed than this (m/s) from the last good one is a spike, left out of
    /// distance, speeds and moving time (the outlier stage's gate for the activity).
    public var maxSpeed: Double

    /// Defaults for an activity: minimum speed running 1.0 m/s, cycling 1.5, walking/hiking 0.5, other 0.5;
    /// 10 s grace; 3 m hysteresis; 5 s speed window; 10 s sample hold.
    public init(activity: ActivityType = .other) {
        switch activity {
        case .running: minimumSpeed = 1.0
        case .cycling: minimumSpeed = 1.5
        default: minimumSpeed = 0.5
        }
        grace = 10
        elevationHysteresis = 3
        speedWindowSeconds = 5
        maxSampleGap = 10
        maxSpeed = OutlierOptions.maxSpeed(for: activity)
    }
}

/// Computes statistics from a route's locations (streamed in batches, in route order), its segment starts and
/// pauses, and the workout's heart-rate and cadence series. Memory: the moving intervals (a few per minute of
/// stops) and a short speed window, whatever the route's length.
///
/// Fixes that would need an impossible speed from the last good one (spikes) are left out of distance,
/// speeds and moving time; elevations come from every fix.
public struct StatisticsAccumulator {
    let options: StatisticsOptions
    let segmentStarts: Set<Int>
    let pauses: [ClosedRange<Instant>]
    /// The pauses' starts in order, and the latest end among the pauses up to each: whether a span overlaps a pause
    /// is a binary search, not a scan of every pause for every fix (which was O(fixes × pauses)).
    private let pauseStarts: [Instant]
    private let pauseEndsSoFar: [Instant]
    var stats = RouteStatistics()
    var index = 0
    var odometer: RouteOdometer
    var firstTime: Instant?
    var lastTime: Instant?
    // Moving time: slow stretches are held until they end, then counted or not.
    var moving = 0.0
    var slowRun = 0.0
    var slowStart: Instant?
    var movingIntervals: [ClosedRange<Instant>] = []
    var openMovingStart: Instant?
    // Elevation.
    var reference: Double?
    // Max speed over a window.
    var speedWindow: WindowSpeed

    /// Starts a computation.
    public init(options: StatisticsOptions, segmentStarts: [Int] = [], pauses: [ClosedRange<Instant>] = []) {
        self.options = options
        self.speedWindow = WindowSpeed(seconds: options.speedWindowSeconds)
        self.odometer = RouteOdometer(maxSpeed: options.maxSpeed)
        self.segmentStarts = Set(segmentStarts.filter { $0 > 0 })
        self.pauses = pauses
        let sorted = pauses.sorted { $0.lowerBound < $1.lowerBound }
        self.pauseStarts = sorted.map(\.lowerBound)
        var latest: Instant?
        self.pauseEndsSoFar = sorted.map { p in
            let end = max(latest ?? p.upperBound, p.upperBound)
            latest = end
            return end
        }
    }

    /// Whether a pause overlaps the span from `a` to `b`: one starting before `b` and ending after `a`.
    private func paused(_ a: Instant, _ b: Instant) -> Bool {
        // The pauses starting before `b` are the first `count`; the latest end among them decides.
        let count = pauseStarts.partitioningIndex { $0 >= b }
        return count > 0 && a < pauseEndsSoFar[count - 1]
    }

    private mutating func closeMoving(at t: Instant?) {
        if let s = openMovingStart, let t, s < t { movingIntervals.append(s...t) }
        openMovingStart = nil
    }

    /// Adds the next batch of locations, in route order.
    public mutating func add(_ batch: [Location]) {
        for l in batch {
            defer { index += 1 }
            if let z = l.altitude { addElevation(z) }
            let newSegment = segmentStarts.contains(index)
            if newSegment {
                // The gap between segments is a pause.
                closeMoving(at: odometer.last?.timestamp?.instant)
                resetSpeed()
                slowRun = 0
                slowStart = nil
            }
            // Distance is the odometer's (one definition for every door); time, moving and speeds follow its steps.
            let step = odometer.add(l, newSegment: newSegment)
            stats.distanceMetres = odometer.metres
            switch step {
            case .first:
                noteTime(l)
            case .untimed, .sameTime, .spike:
                break
            case .backwards(let t0):
                // A clock reset, a track pasted in: the step cannot be measured; carry on from this fix as after a
                // segment gap, instead of dropping everything until time catches up.
                closeMoving(at: t0)
                resetSpeed()
                slowRun = 0
                slowStart = nil
                noteTime(l)
            case .moved(let d, let t0, let t1):
                noteTime(l)
                let dt = t0.seconds(to: t1)
                if paused(t0, t1) {
                    closeMoving(at: t0)
                    resetSpeed()
                    slowRun = 0
                    slowStart = nil
                    continue
                }
                addSpeed(l, t1)
                if d / dt < options.minimumSpeed {
                    if slowStart == nil { slowStart = t0 }
                    slowRun += dt
                    if slowRun > options.grace, openMovingStart != nil {
                        // The stop began where the slow stretch did.
                        closeMoving(at: slowStart)
                    }
                } else {
                    if slowRun > 0 && slowRun <= options.grace { moving += slowRun }
                    if openMovingStart == nil { openMovingStart = slowRun > options.grace ? t0 : (slowStart ?? t0) }
                    slowRun = 0
                    slowStart = nil
                    moving += dt
                }
            }
        }
    }

    private mutating func noteTime(_ l: Location) {
        guard let t = l.timestamp?.instant else { return }
        if firstTime.map({ t < $0 }) ?? true { firstTime = t }
        if lastTime.map({ t > $0 }) ?? true { lastTime = t }
    }

    private mutating func addElevation(_ z: Double) {
        stats.minElevation = min(stats.minElevation ?? z, z)
        stats.maxElevation = max(stats.maxElevation ?? z, z)
        stats.elevationGainMetres = stats.elevationGainMetres ?? 0
        stats.elevationLossMetres = stats.elevationLossMetres ?? 0
        guard let r = reference else { return reference = z }
        if z >= r + options.elevationHysteresis {
            stats.elevationGainMetres = (stats.elevationGainMetres ?? 0) + (z - r)
            reference = z
        } else if z <= r - options.elevationHysteresis {
            stats.elevationLossMetres = (stats.elevationLossMetres ?? 0) + (r - z)
            reference = z
        }
    }

    private mutating func addSpeed(_ l: Location, _ t: Instant) {
        if let v = speedWindow.add(l, t) { stats.maxSpeed = max(stats.maxSpeed ?? 0, v) }
    }

    private mutating func resetSpeed() { speedWindow.reset() }

    /// For a recording without fixes (an indoor workout, a treadmill run): the series are weighted over `span` less
    /// the pauses, instead of over moving intervals no fix could show. Distance, elapsed and moving time stay those
    /// of the fixes (none). Call before ``finish(heartRate:cadence:zones:power:powerZones:)``; ignored when fixes
    /// were added.
    package mutating func weighSeriesWithoutFixes(over span: ClosedRange<Instant>) {
        guard firstTime == nil, odometer.last == nil, movingIntervals.isEmpty, openMovingStart == nil else { return }
        var start = span.lowerBound
        for p in pauses.sorted(by: { $0.lowerBound < $1.lowerBound }) where p.upperBound > start {
            if p.lowerBound > span.upperBound { break }
            if p.lowerBound > start { movingIntervals.append(start...p.lowerBound) }
            start = max(start, p.upperBound)
        }
        if start < span.upperBound { movingIntervals.append(start...span.upperBound) }
    }

    /// The statistics, with the series' time-weighted averages and zones over the moving intervals.
    public mutating func finish(
        heartRate: [QuantitySample], cadence: [QuantitySample], zones: Zones?, power: [QuantitySample] = [],
        powerZones: Zones? = nil
    ) -> RouteStatistics {
        if slowRun > 0 && slowRun <= options.grace { moving += slowRun }
        closeMoving(at: slowRun > options.grace ? slowStart : lastTime)
        if let a = firstTime, let b = lastTime {
            stats.elapsedSeconds = a.seconds(to: b)
            stats.movingSeconds = moving
            if moving > 0 { stats.averageSpeed = stats.distanceMetres / moving }
        }
        // A heart rate of 0 or less is no measurement (FitoTrack writes −1 without a sensor), nor is negative power.
        // (Copied only when there is something to leave out: a series can hold a million samples.)
        let heartRate =
            heartRate.allSatisfy { SampleHold.measures($0.value, .heartRate) }
            ? heartRate : heartRate.filter { SampleHold.measures($0.value, .heartRate) }
        let power =
            power.allSatisfy { SampleHold.measures($0.value, .power) }
            ? power : power.filter { SampleHold.measures($0.value, .power) }
        let hr = weighted(heartRate)
        stats.heartRateAverage = hr.average
        stats.heartRateMax = heartRate.map(\.value).max()
        stats.cadenceAverage = weighted(cadence).average
        if let zones, !heartRate.isEmpty { stats.zones = timeInZones(heartRate, zones: zones) }
        stats.powerAverage = weighted(power).average
        stats.powerMax = power.map(\.value).max()
        if let powerZones, !power.isEmpty { stats.powerZones = timeInZones(power, zones: powerZones) }
        return stats
    }

    /// Time in another zone configuration, from the same samples over the same moving time (after ``finish(heartRate:cadence:zones:power:powerZones:)``):
    /// workouts bucketed with different zones can be compared. The zones' times add up to the same total.
    public func timeInZones(_ samples: [QuantitySample], zones: Zones) -> [ZoneTime] {
        var seconds = [Double](repeating: 0, count: zones.lowerBounds.count)
        for (value, duration) in weighted(samples).pieces { seconds[zones.zone(of: value)] += duration }
        return zones.lowerBounds.indices.map { i in
            ZoneTime(
                zone: i + 1, lower: zones.lowerBounds[i],
                upper: i + 1 < zones.lowerBounds.count ? zones.lowerBounds[i + 1] : nil, seconds: seconds[i])
        }
    }

    /// Sample and hold (capped at ``StatisticsOptions/maxSampleGap``), clipped to the moving intervals.
    func weighted(_ samples: [QuantitySample]) -> (average: Double?, pieces: [(Double, Double)]) {
        guard !samples.isEmpty, !movingIntervals.isEmpty else { return (nil, []) }
        var pieces: [(Double, Double)] = []
        var total = 0.0
        var sum = 0.0
        var m = 0
        for (i, s) in samples.enumerated() {
            let start = s.timestamp.instant
            let end = SampleHold.end(
                of: start, next: i + 1 < samples.count ? samples[i + 1].timestamp.instant : nil,
                maxGap: options.maxSampleGap)
            while m < movingIntervals.count && movingIntervals[m].upperBound <= start { m += 1 }
            var k = m
            while k < movingIntervals.count && movingIntervals[k].lowerBound < end {
                let lo = max(start, movingIntervals[k].lowerBound)
                let hi = min(end, movingIntervals[k].upperBound)
                if lo < hi {
                    let d = lo.seconds(to: hi)
                    pieces.append((s.value, d))
                    total += d
                    sum += d * s.value
                }
                k += 1
            }
        }
        return (total > 0 ? sum / total : nil, pieces)
    }
}

/// How a series' samples weigh over time: the one definition the statistics (``StatisticsAccumulator``'s time-weighted
/// averages and time in zones) and a builder's live zones (``LiveZones``) share.
package enum SampleHold {
    /// Until when a sample taken at `start` holds its value: the next sample's time when that comes sooner, else
    /// `maxGap` seconds after it (``StatisticsOptions/maxSampleGap``: a gap in the series is not filled by the last
    /// value).
    package static func end(of start: Instant, next: Instant?, maxGap: Double) -> Instant {
        let capped = Instant(seconds: start.seconds + Int64(maxGap), nanoseconds: start.nanoseconds)
        guard let next, next < capped else { return capped }
        return next
    }

    /// Whether a value of a zoned quantity is a measurement: a heart rate of 0 or less is none (FitoTrack writes −1
    /// without a sensor), nor is a negative power.
    package static func measures(_ value: Double, _ quantity: ZoneConfiguration.Quantity) -> Bool {
        quantity == .heartRate ? value > 0 : value >= 0
    }
}

/// The zone a heart-rate (or power) series is in as its samples arrive, and the time spent in each zone so far: a
/// route builder's live zones (`GET /v1/builders/{id}/zones`). Time is weighed as the statistics weigh it
/// (``SampleHold``: a sample's value holds until the next sample, at most ``StatisticsOptions/maxSampleGap``
/// seconds), over the whole series: no route is measured live, so there are no moving intervals to clip to. Samples
/// that are no measurement (a heart rate of 0) are left out, as the statistics leave them out.
package struct LiveZones: Sendable {
    /// The zones.
    package let zones: Zones
    /// What they divide.
    package let quantity: ZoneConfiguration.Quantity
    /// How long a value holds at most, in seconds.
    package let maxGap: Double
    /// Seconds spent in each zone (index 0 is zone 1) up to the last sample's time.
    package private(set) var seconds: [Double]
    /// The last sample taken into account: its time and its zone (0-based).
    private var last: (time: Instant, zone: Int)?

    /// Live zones over `zones`, with the statistics' default hold (``StatisticsOptions/maxSampleGap``).
    package init(zones: Zones, quantity: ZoneConfiguration.Quantity, maxGap: Double = StatisticsOptions().maxSampleGap)
    {
        self.zones = zones
        self.quantity = quantity
        self.maxGap = maxGap
        self.seconds = Array(repeating: 0, count: zones.lowerBounds.count)
    }

    /// The zone of the last sample taken into account, numbered from 1; `nil` before any.
    package var current: Int? { last.map { $0.zone + 1 } }

    /// The time of the last sample taken into account.
    package var time: Instant? { last?.time }

    /// Takes samples into account, in the order given (each batch of a builder is in time order): the previous
    /// sample's value is counted in its zone until this one's time (at most ``maxGap`` seconds).
    package mutating func add(_ samples: some Sequence<QuantitySample>) {
        for s in samples where SampleHold.measures(s.value, quantity) {
            let t = s.timestamp.instant
            if let last {
                let end = SampleHold.end(of: last.time, next: t, maxGap: maxGap)
                let held = last.time.seconds(to: end)
                if held > 0 { seconds[last.zone] += held }
            }
            last = (t, zones.zone(of: s.value))
        }
    }
}
