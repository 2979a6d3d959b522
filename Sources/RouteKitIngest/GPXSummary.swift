import RouteKit

/// What `routekit inspect` reports for one file, computed while streaming (no points kept).
package struct GPXSummary: Sendable, Hashable {
    package var file: String
    package var version: String?
    package var creator: String?
    package var tracks = 0
    package var segments = 0
    package var trackPoints = 0
    package var routes = 0
    package var routePoints = 0
    package var waypoints = 0
    package var pauses = 0
    package var firstTime: Timestamp?
    package var lastTime: Timestamp?
    /// Points whose time is earlier than the point before (within a segment).
    package var timeReversals = 0
    package var pointsWithHeartRate = 0
    package var pointsWithCadence = 0
    package var pointsWithPower = 0
    package var pointsWithTemperature = 0
    package var warnings: [GPXWarning] = []
    package var bytes: Int = 0

    /// The time of the previous point of the current segment.
    private var previousTime: Instant?

    package init(file: String) { self.file = file }

    /// Counts one event (for readers of other formats that produce ``GPXEvent``s).
    package mutating func add(_ event: GPXEvent) {
        switch event {
        case .document(let info):
            version = info.version
            creator = info.creator
        case .waypoint: waypoints += 1
        case .routeStart: routes += 1
        case .routePoints(let p): routePoints += p.count
        case .trackStart: tracks += 1
        case .segmentStart:
            segments += 1
            previousTime = nil
        case .trackPoints(let points):
            trackPoints += points.count
            for p in points {
                if let t = p.location.timestamp {
                    if firstTime == nil { firstTime = t }
                    lastTime = t
                    if let prev = previousTime, t.instant < prev { timeReversals += 1 }
                    previousTime = t.instant
                }
                let v = p.values.storage
                if !v.0.isNaN { pointsWithHeartRate += 1 }
                if !v.1.isNaN { pointsWithCadence += 1 }
                if !v.2.isNaN { pointsWithTemperature += 1 }
                if !v.5.isNaN { pointsWithPower += 1 }
            }
        case .pause: pauses += 1
        case .warning(let w): warnings.append(w)
        default: break
        }
    }
}
