package import RouteKit
package import RouteKitGPX
package import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Writes GeoJSON (RFC 7946), streaming: one `FeatureCollection` whose features are waypoints (`Point`),
/// routes (`LineString`) and tracks (`MultiLineString`, one line per segment; a pause also starts a new
/// line). Positions are `[longitude, latitude]` or `[longitude, latitude, altitude]`.
///
/// Per-point times are in the feature's `coordTimes` property, the convention of Mapbox's togeojson and the tools
/// that read its output: for a route an array of ISO 8601 times parallel to the coordinates, for a track an array of
/// such arrays, one per line; a point without a time has `null`; a path none of whose points has a time has no
/// `coordTimes`. The times are written after the geometry, so they are held meanwhile: in memory up to 1 MiB of
/// text, past that in an anonymous temporary file (`CoordTimesSpool`), so memory does not grow with a track's
/// length. Sensor values (heart rate, cadence, power, temperatures), speed, course and the accuracies are not in
/// GeoJSON's model: use CSV (or GPX) for those.
///
/// RFC 7946 lines need two positions: a route or segment with fewer is left out of the geometry (counted in the
/// feature's `pointsNotInGeometry`; its times are left out of `coordTimes` too), and a path with no drawable line
/// gets `"geometry": null`. A waypoint that a producer put inside a route or track is written after that feature.
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
    // The open path's `coordTimes`, written after its geometry.
    private let times = CoordTimesSpool()

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
        times.reset()
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
            if isTrack {
                // A track's times are an array per line, as its coordinates are; a route's one flat array.
                if lines > 0 { times.append(0x2C) }
                times.append(0x5B)
            }
            lines += 1
            out.writeByte(0x5B)
            position(head)
            times.time(head.timestamp)
        }
        out.writeByte(0x2C)
        position(l)
        times.append(0x2C)
        times.time(l.timestamp)
    }

    private mutating func endLine() {
        if lineCount >= 2 {
            out.writeByte(0x5D)
            if isTrack { times.append(0x5D) }
        } else {
            notInGeometry += lineCount
        }
        lineCount = 0
        lineFirst = nil
    }

    private mutating func endPath(_ info: GPXPathInfo) throws(RouteKitError) {
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
        if times.hasTime {
            out.write(",\"coordTimes\":[")
            try times.drain(into: out)
            out.writeByte(0x5D)
        } else {
            times.reset()
        }
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
            try times.spillIfNeeded()
        case .routeEnd(let info):
            try endPath(info)
        case .trackStart:
            startPath(track: true)
        case .pause, .segmentEnd:
            endLine()
        case .trackPoints(let batch):
            for p in batch { add(p.location) }
            try out.maybeFlush()
            try times.spillIfNeeded()
        case .trackEnd(let info):
            try endPath(info)
        default:
            break
        }
    }

    package mutating func finish() throws(RouteKitError) {
        out.write("\n]}\n")
        try out.flush()
    }
}

/// The `coordTimes` text of the path ``GeoJSONWriter`` is writing (the JSON array's content, without its
/// brackets), which goes after the path's geometry: held in memory up to ``memoryLimit`` bytes, then appended to an
/// anonymous temporary file (`tmpfile`, removed when it is closed), so that a track of millions of points costs no
/// more memory than a short one.
final class CoordTimesSpool {
    /// The most text held in memory; more goes to the temporary file.
    static let memoryLimit = 1 << 20

    private var buffer: [UInt8] = []
    private var file: UnsafeMutablePointer<FILE>?
    /// Whether a time (not `null`) was added since the last reset: without one, no `coordTimes` is written.
    private(set) var hasTime = false

    deinit {
        if let file { fclose(file) }
    }

    /// Adds one byte of JSON text (a comma or a bracket).
    func append(_ byte: UInt8) { buffer.append(byte) }

    /// Adds a time as a JSON string, or `null`.
    func time(_ t: Timestamp?) {
        guard let t else {
            buffer.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
            return
        }
        hasTime = true
        buffer.append(0x22)
        t.writeISO8601 { byte in buffer.append(byte) }
        buffer.append(0x22)
    }

    /// Moves the text held in memory to the temporary file once it passes ``memoryLimit``.
    func spillIfNeeded() throws(RouteKitError) {
        guard buffer.count >= Self.memoryLimit else { return }
        if file == nil {
            guard let created = tmpfile() else {
                throw RouteKitError(
                    .io,
                    "cannot create a temporary file for a feature's coordTimes: \(String(cString: strerror(errno)))")
            }
            file = created
        }
        guard let file else { return }
        let written = buffer.withUnsafeBytes { raw in fwrite(raw.baseAddress, 1, raw.count, file) }
        guard written == buffer.count else {
            throw RouteKitError(
                .io, "cannot write the temporary file of a feature's coordTimes: \(String(cString: strerror(errno)))")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the text (what went to the temporary file first, then what memory holds) to `out`, then resets.
    func drain(into out: OutputSink) throws(RouteKitError) {
        if let file {
            rewind(file)
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { raw in fread(raw.baseAddress, 1, raw.count, file) }
                if n > 0 {
                    out.write(Array(chunk[0..<n]))
                    try out.maybeFlush()
                }
                if n < chunk.count {
                    guard ferror(file) == 0 else {
                        throw RouteKitError(.io, "cannot read back the temporary file of a feature's coordTimes")
                    }
                    break
                }
            }
        }
        out.write(buffer)
        reset()
    }

    /// Forgets the text, closing (and so removing) the temporary file.
    func reset() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= 2 * Self.memoryLimit)
        if let file {
            fclose(file)
            self.file = nil
        }
        hasTime = false
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
