package import RouteKit
package import RouteKitGPX
package import RouteKitIngest

/// Writes GeoJSON (RFC 7946), streaming: one `FeatureCollection` whose features are waypoints (`Point`),
/// routes (`LineString`) and tracks (`MultiLineString`, one line per segment; a pause also starts a new
/// line). Positions are `[longitude, latitude]` or `[longitude, latitude, altitude]`. Per-point times and
/// sensor values are not in GeoJSON's model: use CSV for those.
///
/// RFC 7946 lines need two positions: a route or segment with fewer is left out of the geometry (counted in the
/// feature's `pointsNotInGeometry`), and a path with no drawable line gets `"geometry": null`. A waypoint that a
/// producer put inside a route or track is written after that feature.
package struct GeoJSONWriter: GPXEventWriter {
    private let out: OutputSink
    private var features = 0
    // The open route or track feature.
    private var inPath = false
    private var isTrack = false
    private var headerWritten = false
    private var lines = 0
    private var lineFirst: Location?
    private var lineCount = 0
    private var notInGeometry = 0
    private var points = 0
    private var first: Timestamp?
    private var last: Timestamp?
    private var pendingWaypoints: [GPXPoint] = []

    package init(to out: OutputSink) {
        self.out = out
        out.write("{\"type\":\"FeatureCollection\",\"features\":[\n")
    }

    private mutating func beginFeature() {
        if features > 0 { out.write(",\n") }
        features += 1
    }

    private func position(_ l: Location) {
        out.writeByte(0x5B)
        out.writeDecimal(l.longitude)
        out.writeByte(0x2C)
        out.writeDecimal(l.latitude)
        if let a = l.altitude {
            out.writeByte(0x2C)
            out.writeDecimal(a)
        }
        out.writeByte(0x5D)
    }

    private func property(_ key: String, _ value: String?) {
        guard let value else { return }
        out.write(",\"\(key)\":\"")
        out.write(JSONEscaping.escaped(value))
        out.writeByte(0x22)
    }

    private mutating func writeWaypoint(_ p: GPXPoint) {
        beginFeature()
        out.write("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":")
        position(p.location)
        out.write("},\"properties\":{\"kind\":\"waypoint\"")
        property("name", p.extras?.name)
        property("desc", p.extras?.description)
        property("sym", p.extras?.symbol)
        property("time", p.location.timestamp?.iso8601)
        out.write("}}")
    }

    private mutating func startPath(track: Bool) {
        inPath = true
        isTrack = track
        headerWritten = false
        lines = 0
        lineFirst = nil
        lineCount = 0
        notInGeometry = 0
        points = 0
        first = nil
        last = nil
    }

    /// Adds a position to the current line; the feature and the line open at its second position.
    private mutating func add(_ l: Location) {
        points += 1
        if let t = l.timestamp {
            if first == nil { first = t }
            last = t
        }
        lineCount += 1
        if lineCount == 1 {
            lineFirst = l
            return
        }
        if lineCount == 2, let head = lineFirst {
            if !headerWritten {
                beginFeature()
                out.write(
                    isTrack
                        ? "{\"type\":\"Feature\",\"geometry\":{\"type\":\"MultiLineString\",\"coordinates\":["
                        : "{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":")
                headerWritten = true
            }
            if isTrack && lines > 0 { out.writeByte(0x2C) }
            lines += 1
            out.writeByte(0x5B)
            position(head)
        }
        out.writeByte(0x2C)
        position(l)
    }

    private mutating func endLine() {
        if lineCount >= 2 { out.writeByte(0x5D) } else { notInGeometry += lineCount }
        lineCount = 0
        lineFirst = nil
    }

    private mutating func endPath(_ info: GPXPathInfo) {
        endLine()
        if headerWritten {
            out.write(isTrack ? "]},\"properties\":{\"kind\":\"track\"" : "},\"properties\":{\"kind\":\"route\"")
        } else {
            beginFeature()
            out.write(
                "{\"type\":\"Feature\",\"geometry\":null,\"properties\":{\"kind\":\"\(isTrack ? "track" : "route")\"")
        }
        property("name", info.name)
        property("desc", info.description)
        property("type", info.type)
        property("start", first?.iso8601)
        property("end", last?.iso8601)
        out.write(",\"points\":\(points)")
        if notInGeometry > 0 { out.write(",\"pointsNotInGeometry\":\(notInGeometry)") }
        out.write("}}")
        inPath = false
        for w in pendingWaypoints { writeWaypoint(w) }
        pendingWaypoints.removeAll()
    }

    package mutating func write(_ event: GPXEvent) throws(RouteKitError) {
        switch event {
        case .waypoint(let p):
            if inPath { pendingWaypoints.append(p) } else { writeWaypoint(p) }
        case .routeStart:
            startPath(track: false)
        case .routePoints(let batch):
            for p in batch { add(p.location) }
            try out.maybeFlush()
        case .routeEnd(let info):
            endPath(info)
        case .trackStart:
            startPath(track: true)
        case .pause, .segmentEnd:
            endLine()
        case .trackPoints(let batch):
            for p in batch { add(p.location) }
            try out.maybeFlush()
        case .trackEnd(let info):
            endPath(info)
        default:
            break
        }
    }

    package mutating func finish() throws(RouteKitError) {
        out.write("\n]}\n")
        try out.flush()
    }
}

/// Writes one CSV row per point (RFC 4180, header first), streaming.
///
/// Columns: `kind` (`trkpt`, `rtept`, `wpt`), `track`, `segment`, `index` (0-based within its track or
/// route), `time` (ISO 8601 as written), `latitude`, `longitude`, `altitude`, the accuracies, `speed`,
/// `course`, the quantity values (`heartRate`, `cadence`, `temperature`, `waterTemperature`, `depth`,
/// `power`) and `name`. Empty cells are missing values.
package struct CSVWriter: GPXEventWriter {
    private let out: OutputSink
    private var track = -1
    private var route = -1
    private var segment = -1
    private var index = 0
    private var waypoint = 0

    /// The columns of a location, the same in `routekit locations` (the whole row there) and here.
    package static let locationColumns = [
        "time", "latitude", "longitude", "altitude", "horizontalAccuracy", "verticalAccuracy", "speed",
        "speedAccuracy", "course", "courseAccuracy",
    ]

    /// The header row (without its line end).
    package static let header =
        (["kind", "track", "segment", "index"] + locationColumns + QuantityType.all.map(\.identifier) + ["name"])
        .joined(separator: ",")

    package init(to out: OutputSink) {
        self.out = out
        out.write(Self.header)
        out.write("\n")
    }

    /// One row, formatted straight into the output's buffer (no string per row or per value).
    private static func row(
        _ b: inout RawBytes, _ kind: StaticString, _ p: GPXPoint, group: Int, segment: Int?, index: Int
    ) {
        /// A quantity value: NaN is a missing one.
        @inline(__always) func value(_ v: Double, _ b: inout RawBytes) {
            b.append(0x2C)
            if !v.isNaN { b.appendDecimal(v) }
        }
        @inline(__always) func cell(_ v: Double?, _ b: inout RawBytes) {
            b.append(0x2C)
            if let v { b.appendDecimal(v) }
        }
        b.append(kind.utf8Start, kind.utf8CodeUnitCount)
        b.append(0x2C)
        b.appendInteger(Int64(group))
        b.append(0x2C)
        if let segment { b.appendInteger(Int64(segment)) }
        b.append(0x2C)
        b.appendInteger(Int64(index))
        b.append(0x2C)
        let l = p.location
        if let t = l.timestamp {
            b.reserve(40)
            t.writeISO8601 { byte in b.append(byte) }
        }
        b.append(0x2C)
        b.appendDecimal(l.latitude)
        b.append(0x2C)
        b.appendDecimal(l.longitude)
        cell(l.altitude, &b)
        cell(l.horizontalAccuracy, &b)
        cell(l.verticalAccuracy, &b)
        cell(l.speed, &b)
        cell(l.speedAccuracy, &b)
        cell(l.course, &b)
        cell(l.courseAccuracy, &b)
        // The quantity values in `QuantityType.all`'s order (heart rate, cadence, temperature, water
        // temperature, depth, power), a missing one stored as NaN.
        let v = p.values.storage
        value(v.0, &b)
        value(v.1, &b)
        value(v.2, &b)
        value(v.3, &b)
        value(v.4, &b)
        value(v.5, &b)
        b.append(0x2C)
        if let name = p.extras?.name {
            if name.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                b.append("\"" + name.replacingAll("\"", with: "\"\"") + "\"")
            } else {
                b.append(name)
            }
        }
        b.append(0x0A)
    }

    /// Rows for a batch of points, numbered from `index`; returns the next index.
    private func rows(_ kind: StaticString, _ batch: [GPXPoint], group: Int, segment: Int?, from index: Int) -> Int {
        out.withBuffer { b in
            var i = index
            for p in batch {
                Self.row(&b, kind, p, group: group, segment: segment, index: i)
                i += 1
            }
            return i
        }
    }

    package mutating func write(_ event: GPXEvent) throws(RouteKitError) {
        switch event {
        case .waypoint(let p):
            waypoint = rows("wpt", [p], group: 0, segment: nil, from: waypoint)
        case .routeStart:
            route += 1
            index = 0
        case .routePoints(let batch):
            index = rows("rtept", batch, group: route, segment: nil, from: index)
            try out.maybeFlush()
        case .trackStart:
            track += 1
            segment = -1
            index = 0
        case .segmentStart, .resume:
            segment += 1
        case .trackPoints(let batch):
            index = rows("trkpt", batch, group: track, segment: max(segment, 0), from: index)
            try out.maybeFlush()
        default:
            break
        }
    }

    package mutating func finish() throws(RouteKitError) {
        try out.flush()
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
