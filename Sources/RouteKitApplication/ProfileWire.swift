internal import RouteKitGPX
package import RouteKitRender

/// A route's profiles as JSON (`GET /v1/routes/ID/profile`, what the web view draws), keys sorted:
/// `{"distance": [m…], "distanceMetres": m, "elevation": [m|null…]|null, "heartRate": {"distance": [m…], "time":
/// [s…], "value": [bpm…]}|null, "locations": n, "power": {…}|null, "speed": [m/s|null…]|null, "time": [s…]|null}`.
/// Distances and elevations to the decimetre, times (seconds from the first location, for profiles against time) to
/// the tenth of a second, speeds to the millimetre per second; `distanceMetres` is the statistics' distance,
/// unrounded.
package enum ProfileWire {
    /// The JSON text of `profile`.
    package static func json(_ profile: RouteProfile) -> String {
        func number(_ v: Double, _ places: Double) -> String {
            v.isFinite ? decimalText((v * places).rounded() / places) : "null"
        }
        func array(_ values: [Double], _ places: Double) -> String {
            "[" + values.map { number($0, places) }.joined(separator: ",") + "]"
        }
        func series(_ s: [(distance: Double, value: Double)], _ time: [Double]) -> String {
            guard !s.isEmpty else { return "null" }
            var text = "{\"distance\":" + array(s.map(\.distance), 10)
            if time.count == s.count { text += ",\"time\":" + array(time, 10) }
            return text + ",\"value\":" + array(s.map(\.value), 10) + "}"
        }
        var out = "{\"distance\":" + array(profile.distance, 10)
        out += ",\"distanceMetres\":" + (profile.distanceMetres.isFinite ? decimalText(profile.distanceMetres) : "0")
        out += ",\"elevation\":" + (profile.elevation.isEmpty ? "null" : array(profile.elevation, 10))
        out += ",\"heartRate\":" + series(profile.heartRate, profile.heartRateTime)
        out += ",\"locations\":" + String(profile.locations)
        out += ",\"power\":" + series(profile.power, profile.powerTime)
        out += ",\"speed\":" + (profile.speed.isEmpty ? "null" : array(profile.speed, 1000))
        out += ",\"time\":" + (profile.time.isEmpty ? "null" : array(profile.time, 10))
        return out + "}"
    }
}
