public import RouteKit

/// Outlier removal: which fixes to drop before smoothing, and why.
public struct OutlierOptions: Sendable, Hashable, Codable {
    /// The highest plausible speed, m/s; `nil` picks one for the activity (see ``maxSpeed(for:)``).
    public var maxSpeed: Double?
    /// Fixes whose reported horizontal accuracy is worse than this (metres) are dropped.
    public var maxHorizontalAccuracy: Double
    /// Drop a fix whose time equals the previous kept fix's time.
    public var dropDuplicateTimes: Bool
    /// Drop a fix identical (time, position) to the previous kept one.
    public var dropDuplicatePoints: Bool
    /// After this many consecutive speed rejections that agree with one another, the gate accepts them (the
    /// device really moved: a tunnel, a train), instead of rejecting the rest of the route.
    public var reacquireAfter: Int

    /// Defaults: speed by activity, 100 m accuracy, duplicates dropped, re-acquire after 5 agreeing fixes.
    public init(
        maxSpeed: Double? = nil, maxHorizontalAccuracy: Double = 100, dropDuplicateTimes: Bool = true,
        dropDuplicatePoints: Bool = true, reacquireAfter: Int = 5
    ) {
        self.maxSpeed = maxSpeed
        self.maxHorizontalAccuracy = maxHorizontalAccuracy
        self.dropDuplicateTimes = dropDuplicateTimes
        self.dropDuplicatePoints = dropDuplicatePoints
        self.reacquireAfter = reacquireAfter
    }

    /// The speed gate for an activity, m/s (generous: a sprint finish, a steep descent).
    public static func maxSpeed(for activity: ActivityType) -> Double {
        switch activity {
        case .running: 12
        case .walking, .hiking: 7
        case .cycling: 35
        case .swimming: 5
        default: 70
        }
    }
}

/// Why fixes were dropped, counted.
public struct OutlierCounts: Sendable, Hashable, Codable {
    /// Faster than the speed gate from the last kept fix.
    public var speed = 0
    /// Reported accuracy worse than the limit.
    public var accuracy = 0
    /// Same time as the previous kept fix.
    public var duplicateTime = 0
    /// Identical to the previous kept fix.
    public var duplicatePoint = 0
    /// Of the speed rejections, how many were at (0, 0) ("null island").
    public var nullIsland = 0

    /// All dropped fixes.
    public var total: Int { speed + accuracy + duplicateTime + duplicatePoint }
}

/// Finds outliers: returns the indices to keep, in order.
///
/// The speed gate compares each fix with the last *kept* fix, so a rejected spike never becomes the
/// reference (the fix after a spike is judged against the fix before it). A (0, 0) fix is dropped only as a
/// speed outlier: real tracks pass near 0° 0°. Fixes without a time are never speed-tested.
public func findOutliers(_ locations: [Location], activity: ActivityType, options: OutlierOptions) -> (
    keep: [Int], counts: OutlierCounts
) {
    var keep: [Int] = []
    keep.reserveCapacity(locations.count)
    var counts = OutlierCounts()
    let gate = options.maxSpeed ?? OutlierOptions.maxSpeed(for: activity)
    var last: Int?  // the last kept fix
    var rejected: [Int] = []  // consecutive fixes the gate refused, which agree with one another
    var meter = StepMeter()
    func drop(_ r: [Int]) {
        counts.speed += r.count
        counts.nullIsland += r.filter { locations[$0].latitude == 0 && locations[$0].longitude == 0 }.count
    }
    /// Metres per second from fix `a` to fix `b`; `nil` when either has no time or no time passed.
    func speed(_ a: Int, _ b: Int) -> Double? {
        guard let ta = locations[a].timestamp?.instant, let tb = locations[b].timestamp?.instant else { return nil }
        let dt = ta.seconds(to: tb)
        return dt > 0 ? meter.distance(locations[a], locations[b]) / dt : nil
    }
    for (i, l) in locations.enumerated() {
        if let a = l.horizontalAccuracy, a > options.maxHorizontalAccuracy {
            counts.accuracy += 1
            continue
        }
        if let prev = last {
            let p = locations[prev]
            if options.dropDuplicatePoints && p.latitude == l.latitude && p.longitude == l.longitude
                && p.timestamp == l.timestamp
            {
                counts.duplicatePoint += 1
                continue
            }
            if options.dropDuplicateTimes, let t = l.timestamp?.instant, t == p.timestamp?.instant {
                counts.duplicateTime += 1
                continue
            }
            if let v = speed(prev, i), v > gate {
                // A fix the gate refuses. If several in a row agree with one another, the device moved.
                if let r = rejected.last, let w = speed(r, i), w <= gate {
                    rejected.append(i)
                } else {
                    drop(rejected)
                    rejected = [i]
                }
                if rejected.count >= options.reacquireAfter {
                    keep += rejected
                    last = i
                    rejected = []
                }
                continue
            }
        }
        drop(rejected)
        rejected = []
        keep.append(i)
        last = i
    }
    drop(rejected)
    return (keep, counts)
}
