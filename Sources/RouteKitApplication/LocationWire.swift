package import RouteKit
internal import RouteKitGPX

/// A location as every door writes it, defined once: the objects of `routekit locations --json` and the lines of
/// `GET /v1/routes/ID/locations` are the same bytes, the rows of `routekit locations` have the columns of a location
/// in `routekit export … .csv` (``CSVWriter/locationColumns``).
///
/// JSON: keys sorted (as every JSON RouteKit prints), an absent value's key left out (the shape a builder accepts,
/// `LocationInput` in the OpenAPI description): `altitude`, `course`, `courseAccuracy`, `horizontalAccuracy`,
/// `latitude`, `longitude`, `speed`, `speedAccuracy`, `time`, `verticalAccuracy`. Numbers are the shortest text that
/// reads back as the same `Double`; times keep the offset they were recorded with.
package enum LocationWire {
    /// The CSV header row (without its line end).
    package static let csvHeader = CSVWriter.locationColumns.joined(separator: ",")

    /// One CSV row for `l` (without its line end): an absent value is an empty cell.
    package static func csvRow(_ l: Location) -> String {
        var line = l.timestamp?.iso8601 ?? ""
        line += "," + decimalText(l.latitude) + "," + decimalText(l.longitude)
        for v in [
            l.altitude, l.horizontalAccuracy, l.verticalAccuracy, l.speed, l.speedAccuracy, l.course, l.courseAccuracy,
        ] {
            line += "," + (v.map(decimalText) ?? "")
        }
        return line
    }

    /// The JSON object of `l`.
    package static func json(_ l: Location) -> String {
        var s = "{"
        func number(_ key: String, _ value: Double?) {
            guard let value else { return }
            if s.utf8.count > 1 { s += "," }
            s += "\"" + key + "\":" + decimalText(value)
        }
        number("altitude", l.altitude)
        number("course", l.course)
        number("courseAccuracy", l.courseAccuracy)
        number("horizontalAccuracy", l.horizontalAccuracy)
        number("latitude", l.latitude)
        number("longitude", l.longitude)
        number("speed", l.speed)
        number("speedAccuracy", l.speedAccuracy)
        if let t = l.timestamp { s += ",\"time\":\"" + t.iso8601 + "\"" }
        number("verticalAccuracy", l.verticalAccuracy)
        return s + "}"
    }
}
