import RouteKit

/// A route's profiles as numbers, for a client that draws them itself (the web view, `GET /v1/routes/ID/profile`):
/// the same profiles a ``RoutePicture`` draws, from the same recording, measured by the same rules. Elevation and speed
/// at evenly spread locations of the recording (every k-th, with the first and the last), heart rate and power at
/// their samples' times, each against the distance along the recording.
package struct RouteProfile: Sendable {
    /// The length of the recording in metres: the statistics' distance (`RouteOdometer`), over every location.
    package var distanceMetres: Double
    /// Locations in the recording.
    package var locations: Int
    /// Metres along the recording at each location given.
    package var distance: [Double] = []
    /// Metres, NaN where a location has none; empty when none has one.
    package var elevation: [Double] = []
    /// Metres per second (`WindowSpeed`, the statistics' speed), NaN where it cannot be told; empty without times.
    package var speed: [Double] = []
    /// Heart-rate samples placed along the recording by time: (metres, beats per minute), at most `maxPoints`.
    package var heartRate: [(distance: Double, value: Double)] = []
    /// Power samples likewise: (metres, watts).
    package var power: [(distance: Double, value: Double)] = []
    /// Seconds from the recording's first location at each location given (the profiles against time); empty
    /// when a location has no time.
    package var time: [Double] = []
    /// Seconds from the recording's first location at each heart-rate sample given.
    package var heartRateTime: [Double] = []
    /// Seconds from the recording's first location at each power sample given.
    package var powerTime: [Double] = []

    /// The profiles of `input`'s recording (its raw recording when it has one, else `current`), with at most
    /// `maxPoints` (at least 2) entries in each.
    package init(_ input: RoutePictureInput, maxPoints: Int) {
        let track = input.raw ?? input.current
        let limit = max(2, maxPoints)
        distanceMetres = track.length
        locations = track.count
        let picks = Self.spread(track.count, limit)
        distance = picks.map { track.distance[$0] }
        if track.hasAltitude { elevation = picks.map { track.altitude[$0] } }
        if track.hasTimes {
            let start = track.time[0]
            time = picks.map { track.time[$0] - start }
            let speeds = track.speed
            if speeds.contains(where: { !$0.isNaN }) { speed = picks.map { speeds[$0] } }
            let hr = RoutePicture.timedSeries(input.heartRate, on: track)
            let hrPicks = Self.spread(hr.count, limit)
            heartRate = hrPicks.map { (hr[$0].distance, hr[$0].value) }
            heartRateTime = hrPicks.map { hr[$0].seconds }
            let watts = RoutePicture.timedSeries(input.power, on: track)
            let powerPicks = Self.spread(watts.count, limit)
            power = powerPicks.map { (watts[$0].distance, watts[$0].value) }
            powerTime = powerPicks.map { watts[$0].seconds }
        }
    }

    /// At most `limit` indices of `0..<count`, evenly spread, the first and the last among them.
    static func spread(_ count: Int, _ limit: Int) -> [Int] {
        guard count > limit else { return Array(0..<count) }
        let step = Double(count - 1) / Double(limit - 1)
        var out: [Int] = []
        out.reserveCapacity(limit)
        for k in 0..<limit { out.append(min(count - 1, Int((Double(k) * step).rounded()))) }
        return out
    }
}
