public import RouteKit
import RouteKitProcessing

/// A route's locations kept as the columns a picture needs (about 48 bytes a location, against about 100 for a
/// `Location`): position, altitude, time, speed and the distance along the route. Fed batch by batch from a
/// route query or a file.
public struct RenderTrack: Sendable {
    public private(set) var latitude: [Double] = []
    public private(set) var longitude: [Double] = []
    /// Metres, NaN where absent.
    public private(set) var altitude: [Double] = []
    /// Seconds since 1970, NaN where absent.
    public private(set) var time: [Double] = []
    /// Metres per second as recorded, NaN where absent.
    public private(set) var recordedSpeed: [Double] = []
    /// Metres along the route from its first location (ellipsoidal steps; no step across a segment break).
    public private(set) var distance: [Double] = []
    /// Indices where a new segment begins (after a pause), besides 0.
    public private(set) var segmentStarts: [Int] = []

    private var meter = StepMeter()
    private var last: Location?
    private var breakBeforeNext = false

    /// An empty track.
    public init() {}

    /// Locations in the track.
    public var count: Int { latitude.count }

    /// The length in metres.
    public var length: Double { distance.last ?? 0 }

    /// Whether every location has a time (a speed profile and series against distance need it).
    public var hasTimes: Bool { count > 0 && untimed == 0 }

    /// Whether any location has an altitude.
    public var hasAltitude: Bool { withAltitude > 0 }

    private var untimed = 0
    private var withAltitude = 0

    /// Reserves room for `n` locations.
    public mutating func reserve(_ n: Int) {
        for k in [\RenderTrack.latitude, \.longitude, \.altitude, \.time, \.recordedSpeed, \.distance]
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
            var d = distance.last ?? 0
            if let last {
                if breakBeforeNext {
                    segmentStarts.append(count)
                } else {
                    d += meter.distance(last, l)
                }
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
            distance.append(d)
            last = l
        }
    }

    /// The index of the last location at or before `t` (times must be in order, as a route's are), or nil.
    public func index(atOrBefore t: Double) -> Int? {
        guard hasTimes, let first = time.first, t >= first else { return nil }
        var lo = 0
        var hi = time.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if time[mid] <= t { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The distance along the route at time `t` (linear between locations), or nil outside the route's times.
    public func distance(at t: Double) -> Double? {
        guard let i = index(atOrBefore: t), t <= time[time.count - 1] else { return nil }
        guard i + 1 < count, time[i + 1] > time[i] else { return distance[i] }
        let f = (t - time[i]) / (time[i + 1] - time[i])
        return distance[i] + f * (distance[i + 1] - distance[i])
    }

    /// Speed in metres per second at each location: the recorded one where present, else the distance covered in
    /// the `window` seconds before it, divided by the time. NaN where neither can be told.
    public func speeds(window: Double = 10) -> [Double] {
        var out = [Double](repeating: .nan, count: count)
        guard hasTimes else { return out }
        var j = 0
        for i in 0..<count {
            if recordedSpeed[i] >= 0 {
                out[i] = recordedSpeed[i]
                continue
            }
            while j < i && time[i] - time[j + 1] >= window { j += 1 }
            let dt = time[i] - time[j]
            if dt > 0 { out[i] = (distance[i] - distance[j]) / dt }
        }
        return out
    }
}
