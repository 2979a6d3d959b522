public import RouteKit

/// Escapes a string for a JSON string literal (without the quotes).
func jsonEscaped(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

/// Writes GeoJSON (RFC 7946), streaming: one `FeatureCollection` whose features are waypoints (`Point`),
/// routes (`LineString`) and tracks (`MultiLineString`, one line per segment; a pause also starts a new
/// line). Positions are `[longitude, latitude]` or `[longitude, latitude, altitude]`. Per-point times and
/// sensor values are not in GeoJSON's model: use CSV for those.
public struct GeoJSONWriter: GPXEventWriter {
    private let out: OutputSink
    private var features = 0
    private var inLine = false
    private var linePoints = 0
    private var lines = 0
    private var first: Timestamp?
    private var last: Timestamp?
    private var points = 0
    private var inTrack = false

    public init(to out: OutputSink) {
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

    private func property(_ key: String, _ value: String?, first: Bool = false) {
        guard let value else { return }
        if !first { out.writeByte(0x2C) }
        out.write("\"\(key)\":\"")
        out.write(jsonEscaped(value))
        out.writeByte(0x22)
    }

    private mutating func openLine() {
        if lines > 0 { out.writeByte(0x2C) }
        out.writeByte(0x5B)
        inLine = true
        linePoints = 0
        lines += 1
    }

    private mutating func closeLine() {
        if inLine { out.writeByte(0x5D) }
        inLine = false
    }

    public mutating func write(_ event: GPXEvent) throws(RouteKitError) {
        switch event {
        case .waypoint(let p):
            beginFeature()
            out.write("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":")
            position(p.location)
            out.write("},\"properties\":{\"kind\":\"waypoint\"")
            property("name", p.extras?.name)
            property("desc", p.extras?.description)
            property("sym", p.extras?.symbol)
            property("time", p.location.timestamp?.iso8601)
            out.write("}}")
        case .routeStart:
            beginFeature()
            out.write("{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[")
            linePoints = 0
        case .routePoints(let batch):
            for p in batch {
                if linePoints > 0 { out.writeByte(0x2C) }
                position(p.location)
                linePoints += 1
            }
            try out.maybeFlush()
        case .routeEnd(let info):
            out.write("]},\"properties\":{\"kind\":\"route\"")
            property("name", info.name)
            property("desc", info.description)
            out.write("}}")
        case .trackStart:
            beginFeature()
            out.write("{\"type\":\"Feature\",\"geometry\":{\"type\":\"MultiLineString\",\"coordinates\":[")
            lines = 0
            points = 0
            first = nil
            last = nil
            inTrack = true
        case .segmentStart, .resume:
            if inTrack && !inLine { openLine() }
        case .pause:
            closeLine()
        case .trackPoints(let batch):
            if !inLine { openLine() }
            for p in batch {
                if linePoints > 0 { out.writeByte(0x2C) }
                position(p.location)
                linePoints += 1
                if let t = p.location.timestamp {
                    if first == nil { first = t }
                    last = t
                }
            }
            points += batch.count
            try out.maybeFlush()
        case .segmentEnd:
            closeLine()
        case .trackEnd(let info):
            closeLine()
            out.write("]},\"properties\":{\"kind\":\"track\"")
            property("name", info.name)
            property("desc", info.description)
            property("type", info.type)
            property("start", first?.iso8601)
            property("end", last?.iso8601)
            out.write(",\"points\":\(points)}}")
            inTrack = false
        default:
            break
        }
    }

    public mutating func finish() throws(RouteKitError) {
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
public struct CSVWriter: GPXEventWriter {
    private let out: OutputSink
    private var track = -1
    private var route = -1
    private var segment = -1
    private var index = 0
    private var waypoint = 0

    public static let header =
        "kind,track,segment,index,time,latitude,longitude,altitude,horizontalAccuracy,verticalAccuracy,speed,speedAccuracy,course,courseAccuracy,heartRate,cadence,temperature,waterTemperature,depth,power,name"

    public init(to out: OutputSink) {
        self.out = out
        out.write(Self.header)
        out.write("\n")
    }

    private func cell(_ v: Double?) {
        out.writeByte(0x2C)
        if let v { out.writeDecimal(v) }
    }

    private func row(_ kind: StaticString, _ p: GPXPoint, group: Int, segment: Int?, index: Int) {
        out.write(kind)
        out.write(",\(group),\(segment.map(String.init) ?? ""),\(index),")
        if let t = p.location.timestamp {
            var b = [UInt8]()
            t.appendISO8601(to: &b)
            out.write(b)
        }
        let l = p.location
        cell(l.latitude)
        cell(l.longitude)
        cell(l.altitude)
        cell(l.horizontalAccuracy)
        cell(l.verticalAccuracy)
        cell(l.speed)
        cell(l.speedAccuracy)
        cell(l.course)
        cell(l.courseAccuracy)
        for type in QuantityType.all { cell(p.values[type]) }
        out.writeByte(0x2C)
        if let name = p.extras?.name {
            if name.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                out.write("\"" + name.replacingAll("\"", with: "\"\"") + "\"")
            } else {
                out.write(name)
            }
        }
        out.writeByte(0x0A)
    }

    public mutating func write(_ event: GPXEvent) throws(RouteKitError) {
        switch event {
        case .waypoint(let p):
            row("wpt", p, group: 0, segment: nil, index: waypoint)
            waypoint += 1
        case .routeStart:
            route += 1
            index = 0
        case .routePoints(let batch):
            for p in batch {
                row("rtept", p, group: route, segment: nil, index: index)
                index += 1
            }
            try out.maybeFlush()
        case .trackStart:
            track += 1
            segment = -1
            index = 0
        case .segmentStart, .resume:
            segment += 1
        case .trackPoints(let batch):
            for p in batch {
                row("trkpt", p, group: track, segment: max(segment, 0), index: index)
                index += 1
            }
            try out.maybeFlush()
        default:
            break
        }
    }

    public mutating func finish() throws(RouteKitError) {
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
