public import RouteKit
import RouteKitProcessing

/// A route's locations kept as the columns a picture needs (about 48 bytes a location, against about 100 for a
/// `Location`): position, altitude, time, speed and the distance along the route. Fed batch by batch from a
/// route query or a file.
public struct RenderTrack: Sendable {
    package private(set) var latitude: [Double] = []
    package private(set) var longitude: [Double] = []
    /// Metres, NaN where absent.
    package private(set) var altitude: [Double] = []
    /// Seconds since 1970, NaN where absent.
    package private(set) var time: [Double] = []
    /// Metres per second as recorded, NaN where absent.
    package private(set) var recordedSpeed: [Double] = []
    /// Metres along the route from its first location, as `RouteOdometer` counts them (the statistics' distance:
    /// no step across a segment break, GPS spikes left out).
    package private(set) var distance: [Double] = []
    /// Metres per second at each location as `WindowSpeed` tells it (the statistics' speed), NaN where it cannot
    /// be told (a spike, the first seconds after a break, a location without a time).
    package private(set) var speed: [Double] = []
    /// Indices where a new segment begins (after a pause), besides 0.
    package private(set) var segmentStarts: [Int] = []

    private var odometer: RouteOdometer
    private var speedWindow: WindowSpeed
    private var breakBeforeNext = false

    /// An empty track whose distance and speeds follow the statistics' rules for `activity` (its speed gate).
    public init(activity: ActivityType = .other) {
        let options = StatisticsOptions(activity: activity)
        odometer = RouteOdometer(maxSpeed: options.maxSpeed)
        speedWindow = WindowSpeed(seconds: options.speedWindowSeconds)
    }

    /// Locations in the track.
    package var count: Int { latitude.count }

    /// The length in metres.
    package var length: Double { distance.last ?? 0 }

    /// Whether every location has a time (a speed profile and series against distance need it).
    package var hasTimes: Bool { count > 0 && untimed == 0 }

    /// Whether any location has an altitude.
    package var hasAltitude: Bool { withAltitude > 0 }

    private var untimed = 0
    private var withAltitude = 0

    /// Reserves room for `n` locations.
    package mutating func reserve(_ n: Int) {
        for k in [\RenderTrack.latitude, \.longitude, \.altitude, \.time, \.recordedSpeed, \.distance, \.speed]
            as [WritableKeyPath<RenderTrack, [Double]>]
        {
            self[keyPath: k].reserveCapacity(n)
        }
    }

    /// The next location starts a new segment (the route was paused in between): no distance is counted across.
    public mutating func breakSegment() {
        if count > 0 { breakBeforeNext = true }
    }

    /// Appends locations in route order; a location whose index (in the whole track) is in `segmentStarts` begins
    /// a new segment.
    public mutating func append(_ batch: [Location], segmentStarts breaks: Set<Int> = []) {
        for l in batch {
            if !breaks.isEmpty && breaks.contains(count) { breakSegment() }
            if breakBeforeNext { segmentStarts.append(count) }
            let step = odometer.add(l, newSegment: breakBeforeNext)
            var v = Double.nan
            switch step {
            case .first, .backwards:
                speedWindow.reset()
            case .moved(_, _, let t):
                v = speedWindow.add(l, t) ?? .nan
            case .untimed, .sameTime, .spike:
                break
            }
            breakBeforeNext = false
            latitude.append(l.latitude)
            longitude.append(l.longitude)
            if let a = l.altitude {
                altitude.append(a)
                withAltitude += 1
            } else {
                altitude.append(.nan)
            }
            if let t = l.timestamp?.instant {
                time.append(Double(t.seconds) + Double(t.nanoseconds) / 1e9)
            } else {
                time.append(.nan)
                untimed += 1
            }
            recordedSpeed.append(l.speed ?? .nan)
            distance.append(odometer.metres)
            speed.append(v)
        }
    }

    /// Measures the track again under the statistics' rules for `activity` (a file's activity is known only at its
    /// track's end): its distance and speed columns, from the locations it holds.
    package mutating func measure(activity: ActivityType) {
        var again = RenderTrack(activity: activity)
        again.reserve(count)
        let breaks = Set(segmentStarts)
        for i in 0..<count {
            var timestamp: Timestamp?
            if !time[i].isNaN {
                let whole = time[i].rounded(.down)
                let nanos = Int32(max(0, min(999_999_999, ((time[i] - whole) * 1e9).rounded())))
                timestamp = Timestamp(Instant(seconds: Int64(whole), nanoseconds: nanos))
            }
            let l = Location(
                latitude: latitude[i], longitude: longitude[i], timestamp: timestamp,
                altitude: altitude[i].isNaN ? nil : altitude[i])
            again.append([l], segmentStarts: breaks)
        }
        distance = again.distance
        speed = again.speed
    }

    /// The index of the last location at or before `t` (times must be in order, as a route's are), or nil.
    package func index(atOrBefore t: Double) -> Int? {
        guard hasTimes, let first = time.first, t >= first else { return nil }
        return time.partitioningIndex { $0 > t } - 1
    }

    /// The distance along the route at time `t` (linear between locations), or nil outside the route's times.
    package func distance(at t: Double) -> Double? {
        guard let i = index(atOrBefore: t), t <= time[time.count - 1] else { return nil }
        guard i + 1 < count, time[i + 1] > time[i] else { return distance[i] }
        let f = (t - time[i]) / (time[i + 1] - time[i])
        return distance[i] + f * (distance[i + 1] - distance[i])
    }
}
