package import RouteKit
package import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// One feature of a GeoJSON document as RouteKit reads it: a track, a planned route or waypoints, its positions held
/// compactly (three numbers and a time each) until they are handed out as points.
package struct GeoJSONFeature: Sendable {
    /// What a feature becomes.
    package enum Kind: Sendable, Hashable {
        /// A `LineString` or `MultiLineString` (or a feature without geometry): a recording, each line a segment.
        case track
        /// A `LineString` whose `properties.kind` is `route` (RouteKit's GeoJSON) or whose `_gpxType` is `rte`
        /// (togeojson's): a planned route, as GPX `<rte>`.
        case route
        /// A `Point` or `MultiPoint`: waypoints.
        case waypoints
    }

    /// What the feature becomes.
    package var kind: Kind
    /// Its index in the `features` array (0 for a document that is a lone feature or geometry).
    package var index: Int
    /// `properties.name`, `desc` (or `description`), `cmt`, `src` and `type`, as a GPX track's or route's fields.
    package var info = GPXPathInfo()
    /// `properties.time`: a waypoint's time (a position's own time, from `coordTimes`, wins).
    package var time: Timestamp?
    /// `properties.sym`: a waypoint's symbol.
    package var symbol: String?
    /// Longitude, latitude and altitude (NaN: none) of each position, in order.
    var coordinates: [Double] = []
    /// The index of each line's first position: one line for a `LineString`, one per part of a `MultiLineString`.
    var lineStarts: [Int] = []
    /// One time per position (`nil`: none), or empty when the feature has no `coordTimes`.
    var times: [Timestamp?] = []

    /// How many positions the feature has.
    package var positionCount: Int { coordinates.count / 3 }
    /// How many lines it has.
    package var lineCount: Int { lineStarts.count }

    /// The positions of line `n`.
    package func positions(ofLine n: Int) -> Range<Int> {
        let end = n + 1 < lineStarts.count ? lineStarts[n + 1] : positionCount
        return lineStarts[n]..<end
    }

    /// Position `i` as a location: latitude, longitude, altitude and time.
    package func location(_ i: Int) -> Location {
        let altitude = coordinates[3 * i + 2]
        return Location(
            latitude: coordinates[3 * i + 1], longitude: coordinates[3 * i], timestamp: times.isEmpty ? nil : times[i],
            altitude: altitude.isNaN ? nil : altitude)
    }

    /// The positions of `range` as points (a batch for an importer or a writer).
    package func points(_ range: Range<Int>) -> [GPXPoint] {
        range.map { GPXPoint(location: location($0)) }
    }

    /// Every position as a waypoint, with the feature's name, description, comment, source, type and symbol, and
    /// `properties.time` when the position has no time of its own.
    package func waypoints() -> [GPXPoint] {
        var extras = GPXPointExtras()
        extras.name = info.name
        extras.description = info.description
        extras.comment = info.comment
        extras.source = info.source
        extras.type = info.type
        extras.symbol = symbol
        let kept: GPXPointExtras? = extras == GPXPointExtras() ? nil : extras
        return (0..<positionCount).map { i in
            var l = location(i)
            if l.timestamp == nil { l.timestamp = time }
            return GPXPoint(location: l, extras: kept)
        }
    }
}

/// Reads GeoJSON (RFC 7946) held in memory, one feature at a time (``next()``): a `FeatureCollection`, a lone
/// `Feature`, or a lone geometry. Memory is the document's bytes and one feature's positions (about 50 bytes each),
/// whatever the number of features.
///
/// - **Geometries**: `LineString` and `MultiLineString` become tracks (each line a segment) or, with
///   `properties.kind` `route` or `_gpxType` `rte`, planned routes; `Point` and `MultiPoint` waypoints; a feature
///   whose geometry is `null` an empty track. Polygons and geometry collections are refused. Positions are
///   `[longitude, latitude]` or `[longitude, latitude, altitude]`; numbers after the third are ignored, with a warning.
/// - **Times**: `properties.coordTimes` (togeojson's and RouteKit's: ISO 8601 strings parallel to the coordinates, an
///   array per line for a `MultiLineString`, `null` for a position without a time) or `properties.coordinateProperties
///   .times` (newer togeojson's, the same shape). A waypoint's time is `properties.time`.
/// - **Fields**: `properties.name`, `desc` (or `description`), `cmt`, `src`, `type`, `sym` (strings; other values are
///   ignored). Every other member is skipped without being kept.
/// - **Refused**, with ``RouteKit/RouteKitError/Code/invalidGeoJSON``, the member's path, line and column: input that
///   is not JSON (RFC 8259: no comments, no trailing commas, no `NaN`), nesting deeper than 512 levels, a document that
///   is not a GeoJSON object, a `type` that is not one, a feature without the members its type needs, a geometry other
///   than the four above, `coordTimes` whose shape or count does not match the coordinates, content after the
///   document. With ``RouteKit/RouteKitError/Code/invalidValue``: a coordinate that is not a finite number in range
///   (longitude -180…180, latitude -90…90), a time that is not ISO 8601. Errors never print coordinates or times.
package struct GeoJSONReader {
    /// The largest document read (after decompression): GeoJSON is one JSON value, read whole.
    package static let maxBytes = 128 << 20
    /// The deepest nesting of arrays and objects read.
    static let maxDepth = 512

    /// The file's name, for errors.
    package let name: String
    private let bytes: [UInt8]
    private var i = 0
    private var state: State = .start
    /// The top-level object's `type`.
    private var topType: String?
    /// The top-level object's members that make a lone feature or geometry.
    private var top = FeatureBuilder()
    private var sawFeatures = false
    private var featureIndex = 0
    private var dayCache = Timestamp.DayCache()
    /// Oddities tolerated so far, for a person (see ``warnings``).
    private var notes: [String] = []
    private var extraNumbers = 0
    private var unreadableTimes = 0

    private enum State {
        case start
        case members(first: Bool)
        case features(first: Bool)
        case done
    }

    /// A reader of the GeoJSON in `bytes`, named `name` in errors.
    /// - Throws: ``RouteKit/RouteKitError/Code/invalidGeoJSON`` when `bytes` is larger than ``maxBytes``.
    package init(bytes: [UInt8], name: String) throws(RouteKitError) {
        try Self.checkSize(bytes.count, name: name)
        self.bytes = bytes
        self.name = name
    }

    /// Refuses a document larger than ``maxBytes``.
    package static func checkSize(_ count: Int, name: String) throws(RouteKitError) {
        guard count > maxBytes else { return }
        throw RouteKitError(
            .invalidGeoJSON,
            "the GeoJSON is larger than \(InputFile.sizeText(maxBytes)), the most RouteKit reads (a GeoJSON document "
                + "is one JSON value, read whole)", file: name)
    }

    // MARK: - Features

    /// The next feature, `nil` at the end of the document.
    /// - Throws: ``RouteKit/RouteKitError/Code/invalidGeoJSON`` or ``RouteKit/RouteKitError/Code/invalidValue``,
    ///   naming the file, line, column and the member's path.
    package mutating func next() throws(RouteKitError) -> GeoJSONFeature? {
        while true {
            switch state {
            case .start:
                if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
                skipSpace()
                guard i < bytes.count else { throw fail(.invalidGeoJSON, "the file is empty") }
                guard bytes[i] == UInt8(ascii: "{") else {
                    throw fail(.invalidGeoJSON, "not a GeoJSON document: it does not start with a JSON object")
                }
                i += 1
                state = .members(first: true)
            case .members(let first):
                guard let key = try nextKey(first: first, in: "the document") else {
                    state = .done
                    if let feature = try finishDocument() { return feature }
                    continue
                }
                state = .members(first: false)
                switch key {
                case "type": topType = try readString(at: "type")
                case "features":
                    sawFeatures = true
                    try beginArray(at: "features")
                    state = .features(first: true)
                case "geometry", "properties", "coordinates":
                    // Read into a local builder (a mutating call cannot also hold `top` inout), then put back.
                    var builder = FeatureBuilder()
                    swap(&builder, &top)
                    if key == "geometry" {
                        try readGeometry(into: &builder, at: "geometry")
                    } else if key == "properties" {
                        try readProperties(into: &builder, at: "properties")
                    } else {
                        try readCoordinates(into: &builder, at: "coordinates")
                    }
                    top = builder
                default: try skipValue(depth: 1)
                }
            case .features(let first):
                guard try nextElement(first: first, in: "features") else {
                    state = .members(first: false)
                    continue
                }
                state = .features(first: false)
                let n = featureIndex
                featureIndex += 1
                if let feature = try readFeature(index: n) { return feature }
            case .done:
                return nil
            }
        }
    }

    /// What a feature (or a lone geometry) holds while it is read.
    private struct FeatureBuilder {
        var type: String?
        var geometryType: String?
        var geometryNull = false
        /// The nesting of `coordinates`: 1 a position, 2 an array of positions, 3 an array of lines; 0 when
        /// absent, -1 when empty (`[]`), more when deeper (not read).
        var depth = 0
        var coordinatesStart = 0
        var coordinates: [Double] = []
        var lineStarts: [Int] = []
        var info = GPXPathInfo()
        var kind: String?
        var gpxType: String?
        var time: Timestamp?
        var symbol: String?
        var times: [Timestamp?]?
        /// The number of times in each nested array of `coordTimes`, `nil` when it is flat.
        var timeLines: [Int]?
        var timesStart = 0
        var timesPath = ""
        var pointsNotInGeometry = 0
    }

    /// Reads `features[index]`; `nil` for a feature that holds nothing to import.
    private mutating func readFeature(index: Int) throws(RouteKitError) -> GeoJSONFeature? {
        let path = "features[\(index)]"
        let start = i
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected in features") }
            throw fail(.invalidGeoJSON, "\(path) is not an object: a feature is a JSON object")
        }
        i += 1
        var b = FeatureBuilder()
        var first = true
        while let key = try nextKey(first: first, in: path) {
            first = false
            switch key {
            case "type": b.type = try readString(at: "\(path).type")
            case "geometry": try readGeometry(into: &b, at: "\(path).geometry")
            case "properties": try readProperties(into: &b, at: "\(path).properties")
            default: try skipValue(depth: 2)
            }
        }
        if let type = b.type, type != "Feature" {
            throw fail(
                .invalidGeoJSON, "\(path).type is \(quoted(type)), not \"Feature\": a FeatureCollection holds features",
                at: start)
        }
        return try finish(b, index: index)
    }

    /// The end of the top-level object: checks its type, and returns the lone feature or geometry it is.
    private mutating func finishDocument() throws(RouteKitError) -> GeoJSONFeature? {
        skipSpace()
        if i < bytes.count { throw syntax("content after the GeoJSON document") }
        if sawFeatures {
            if let topType, topType != "FeatureCollection" {
                throw fail(.invalidGeoJSON, "the document has features but its type is \(quoted(topType))", at: 0)
            }
            return nil
        }
        switch topType {
        case nil:
            throw fail(.invalidGeoJSON, "not a GeoJSON document: the top-level object has no type", at: 0)
        case "FeatureCollection"?:
            throw fail(.invalidGeoJSON, "the FeatureCollection has no features member", at: 0)
        case "Feature"?:
            return try finish(top, index: 0)
        case let type?:
            guard Self.geometryTypes.contains(type) || type == "GeometryCollection" else {
                throw fail(.invalidGeoJSON, "type \(quoted(type)) is not a GeoJSON object type", at: 0)
            }
            var geometry = top
            geometry.geometryType = type
            try checkGeometry(geometry, at: "the geometry", offset: 0)
            return try finish(geometry, index: 0)
        }
    }

    static let geometryTypes: Set<String> = [
        "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
    ]

    /// Makes the feature `b` holds: its kind, its positions and their times.
    private func finish(_ b: FeatureBuilder, index: Int) throws(RouteKitError) -> GeoJSONFeature? {
        var feature = GeoJSONFeature(kind: .track, index: index)
        feature.info = b.info
        feature.time = b.time
        feature.symbol = b.symbol
        let isRoute = b.kind == "route" || b.gpxType == "rte"
        switch b.geometryType {
        case "Point"?, "MultiPoint"?:
            feature.kind = .waypoints
        case "LineString"?, "MultiLineString"?:
            feature.kind = isRoute ? .route : .track
        default:
            // No geometry, or `null`: an empty route or track (a waypoint without a position is nothing).
            if b.kind == "waypoint" || b.gpxType == "wpt" { return nil }
            feature.kind = isRoute ? .route : .track
        }
        feature.coordinates = b.coordinates
        feature.lineStarts = b.coordinates.isEmpty ? [] : b.lineStarts
        if let times = b.times {
            let count = feature.positionCount
            if let perLine = b.timeLines, !(feature.lineCount == 1 && perLine.count == 1 && times.count == count) {
                // An array per line: as many as the lines, each as long as its line.
                guard b.geometryType == "MultiLineString" else {
                    throw fail(
                        .invalidGeoJSON,
                        "\(b.timesPath) is an array of arrays, but the geometry is a \(b.geometryType ?? "null"): "
                            + "its times must be one array of strings", at: b.timesStart)
                }
                guard perLine.count == feature.lineCount else {
                    throw fail(
                        .invalidGeoJSON,
                        "\(b.timesPath) has \(perLine.count) arrays of times for \(feature.lineCount) lines",
                        at: b.timesStart)
                }
                for (n, c) in perLine.enumerated() where c != feature.positions(ofLine: n).count {
                    throw fail(
                        .invalidGeoJSON,
                        "\(b.timesPath)[\(n)] has \(c) times for \(feature.positions(ofLine: n).count) positions",
                        at: b.timesStart)
                }
            } else if times.count != count {
                throw fail(
                    .invalidGeoJSON, "\(b.timesPath) has \(times.count) times for \(count) positions",
                    at: b.timesStart)
            }
            if times.contains(where: { $0 != nil }) { feature.times = times }
        }
        return feature
    }

    // MARK: - Geometry

    /// Reads a feature's `geometry`: `null`, or a geometry object.
    private mutating func readGeometry(into b: inout FeatureBuilder, at path: String) throws(RouteKitError) {
        skipSpace()
        let start = i
        if try readNull() {
            b.geometryNull = true
            b.geometryType = nil
            b.coordinates = []
            b.lineStarts = []
            b.depth = 0
            return
        }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected for \(path)") }
            throw fail(.invalidGeoJSON, "\(path) is neither an object nor null")
        }
        i += 1
        var first = true
        var type: String?
        while let key = try nextKey(first: first, in: path) {
            first = false
            switch key {
            case "type": type = try readString(at: "\(path).type")
            case "coordinates": try readCoordinates(into: &b, at: "\(path).coordinates")
            default: try skipValue(depth: 3)
            }
        }
        guard let type else { throw fail(.invalidGeoJSON, "\(path) has no type", at: start) }
        b.geometryType = type
        b.geometryNull = false
        try checkGeometry(b, at: path, offset: start)
    }

    /// Checks a geometry's type and the shape of its coordinates.
    private func checkGeometry(_ b: FeatureBuilder, at path: String, offset: Int) throws(RouteKitError) {
        guard let type = b.geometryType else { return }
        let wanted: Int
        switch type {
        case "Point": wanted = 1
        case "MultiPoint", "LineString": wanted = 2
        case "MultiLineString": wanted = 3
        case "Polygon", "MultiPolygon", "GeometryCollection":
            throw fail(
                .invalidGeoJSON,
                "\(path).type is \(quoted(type)): RouteKit reads LineString and MultiLineString (tracks and routes), "
                    + "Point and MultiPoint (waypoints)", at: offset)
        default:
            throw fail(.invalidGeoJSON, "\(path).type \(quoted(type)) is not a GeoJSON geometry type", at: offset)
        }
        if b.depth == 0 { throw fail(.invalidGeoJSON, "\(path) (a \(type)) has no coordinates", at: offset) }
        if b.depth == -1 {
            if type == "Point" {
                throw fail(.invalidGeoJSON, "\(path).coordinates of a Point is an empty array", at: b.coordinatesStart)
            }
            return
        }
        guard b.depth == wanted else {
            let shapes = [1: "a position", 2: "an array of positions", 3: "an array of arrays of positions"]
            throw fail(
                .invalidGeoJSON,
                "\(path).coordinates of a \(type) must be \(shapes[wanted] ?? "positions"), not "
                    + (shapes[b.depth] ?? "arrays nested \(b.depth) deep"), at: b.coordinatesStart)
        }
    }

    /// Reads `coordinates` whatever its nesting (the geometry's `type` may come after it): a position (1), an array of
    /// positions (2: one line) or an array of arrays of positions (3: one line each). Deeper arrays (a MultiPolygon's)
    /// are skipped, their depth recorded for the type's error.
    private mutating func readCoordinates(into b: inout FeatureBuilder, at path: String) throws(RouteKitError) {
        skipSpace()
        b.coordinates = []
        b.lineStarts = []
        b.coordinatesStart = i
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected for \(path)") }
            throw fail(.invalidGeoJSON, "\(path) is not an array")
        }
        // The depth: how many '[' open before the first value.
        var k = i
        var depth = 0
        while k < bytes.count {
            let c = bytes[k]
            if c == UInt8(ascii: "[") {
                depth += 1
            } else if !isSpace(c) {
                break
            }
            k += 1
        }
        if k < bytes.count && bytes[k] == UInt8(ascii: "]") {
            if depth == 1 {
                b.depth = -1
                i = k + 1
                return
            }
            // `[[]…`: an empty first line of a MultiLineString (an empty position is never valid).
            depth += 1
        }
        b.depth = depth
        switch depth {
        case 1:
            b.lineStarts = [0]
            try readPosition(into: &b.coordinates) { "\(path)" }
        case 2:
            b.lineStarts = [0]
            try readLine(into: &b.coordinates, at: path)
        case 3:
            try beginArray(at: path)
            var first = true
            var n = 0
            while try nextElement(first: first, in: path) {
                first = false
                b.lineStarts.append(b.coordinates.count / 3)
                try readLine(into: &b.coordinates, at: "\(path)[\(n)]")
                n += 1
            }
        default:
            try skipValue(depth: 3)
        }
    }

    /// Reads an array of positions.
    private mutating func readLine(into coordinates: inout [Double], at path: String) throws(RouteKitError) {
        try beginArray(at: path)
        var first = true
        var n = 0
        while try nextElement(first: first, in: path) {
            first = false
            let index = n
            try readPosition(into: &coordinates) { "\(path)[\(index)]" }
            n += 1
        }
    }

    /// Reads one position, `[longitude, latitude]` or `[longitude, latitude, altitude]`, appending longitude,
    /// latitude and altitude (NaN when absent) to `coordinates`.
    private mutating func readPosition(into coordinates: inout [Double], path: () -> String) throws(RouteKitError) {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected in \(path())") }
            throw fail(.invalidGeoJSON, "\(path()) is not a position: an array of two or three numbers")
        }
        let start = i
        i += 1
        var values: (Double, Double, Double) = (.nan, .nan, .nan)
        var n = 0
        var first = true
        while try nextElement(first: first, in: path()) {
            first = false
            let at = i
            guard let v = try readNumber() else {
                if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected in \(path())") }
                throw fail(.invalidGeoJSON, "\(path())[\(n)] is not a number")
            }
            guard v.isFinite else {
                throw fail(.invalidValue, "\(path())[\(n)] is not a finite number", at: at)
            }
            switch n {
            case 0: values.0 = v
            case 1: values.1 = v
            case 2: values.2 = v
            default: extraNumbers += 1
            }
            n += 1
        }
        guard n >= 2 else {
            throw fail(
                .invalidGeoJSON, "\(path()) has \(n) number\(n == 1 ? "" : "s"): a position has two or three", at: start
            )
        }
        guard values.0 >= -180 && values.0 <= 180 else {
            throw fail(
                .invalidValue, "\(path())[0]: the longitude is out of range (-180…180)", at: start,
                privateDetail: "longitude \(values.0)")
        }
        guard values.1 >= -90 && values.1 <= 90 else {
            throw fail(
                .invalidValue, "\(path())[1]: the latitude is out of range (-90…90)", at: start,
                privateDetail: "latitude \(values.1)")
        }
        coordinates.append(values.0)
        coordinates.append(values.1)
        coordinates.append(values.2)
    }

    // MARK: - Properties

    /// Reads a feature's `properties`: `null`, or an object whose known members are kept.
    private mutating func readProperties(into b: inout FeatureBuilder, at path: String) throws(RouteKitError) {
        skipSpace()
        if try readNull() { return }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected for \(path)") }
            throw fail(.invalidGeoJSON, "\(path) is neither an object nor null")
        }
        i += 1
        var first = true
        while let key = try nextKey(first: first, in: path) {
            first = false
            switch key {
            case "name": b.info.name = try readOptionalString() ?? b.info.name
            case "desc", "description": b.info.description = try readOptionalString() ?? b.info.description
            case "cmt": b.info.comment = try readOptionalString() ?? b.info.comment
            case "src": b.info.source = try readOptionalString() ?? b.info.source
            case "type": b.info.type = try readOptionalString() ?? b.info.type
            case "sym": b.symbol = try readOptionalString() ?? b.symbol
            case "kind": b.kind = try readOptionalString() ?? b.kind
            case "_gpxType": b.gpxType = try readOptionalString() ?? b.gpxType
            case "time":
                if let text = try readOptionalString() {
                    if let t = Timestamp(iso8601: text) { b.time = t } else { unreadableTimes += 1 }
                }
            case "coordTimes": try readTimes(into: &b, at: "\(path).coordTimes")
            case "coordinateProperties":
                try readCoordinateProperties(into: &b, at: "\(path).coordinateProperties")
            case "pointsNotInGeometry":
                skipSpace()
                let at = i
                if let n = try readNumber(), n > 0, n < 1e15 {
                    b.pointsNotInGeometry = Int(n)
                } else if i == at {
                    try skipValue(depth: 3)
                }
            default: try skipValue(depth: 3)
            }
        }
        if b.pointsNotInGeometry > 0 {
            notes.append(
                "\(path): \(b.pointsNotInGeometry) point(s) of lines shorter than two positions were left out of the "
                    + "geometry by the program that wrote it (pointsNotInGeometry), and cannot be read back")
        }
    }

    /// Reads newer togeojson's `coordinateProperties`, keeping its `times`.
    private mutating func readCoordinateProperties(into b: inout FeatureBuilder, at path: String)
        throws(RouteKitError)
    {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else {
            try skipValue(depth: 3)
            return
        }
        i += 1
        var first = true
        while let key = try nextKey(first: first, in: path) {
            first = false
            if key == "times" { try readTimes(into: &b, at: "\(path).times") } else { try skipValue(depth: 4) }
        }
    }

    /// Reads `coordTimes`: an array of times (ISO 8601 strings, or `null`), or an array of such arrays (one per line).
    private mutating func readTimes(into b: inout FeatureBuilder, at path: String) throws(RouteKitError) {
        skipSpace()
        b.timesStart = i
        b.timesPath = path
        try beginArray(at: path)
        var times: [Timestamp?] = []
        var perLine: [Int]?
        var first = true
        var n = 0
        while try nextElement(first: first, in: path) {
            first = false
            skipSpace()
            if i < bytes.count && bytes[i] == UInt8(ascii: "[") {
                if perLine == nil {
                    guard n == 0 else {
                        throw fail(.invalidGeoJSON, "\(path)[\(n)] is an array, but \(path)[0] is not")
                    }
                    perLine = []
                }
                let before = times.count
                let line = n
                try beginArray(at: "\(path)[\(line)]")
                var firstTime = true
                var m = 0
                while try nextElement(first: firstTime, in: "\(path)[\(line)]") {
                    firstTime = false
                    let index = m
                    times.append(try readTime { "\(path)[\(line)][\(index)]" })
                    m += 1
                }
                perLine?.append(times.count - before)
            } else {
                guard perLine == nil else {
                    throw fail(.invalidGeoJSON, "\(path)[\(n)] is not an array, but \(path)[0] is")
                }
                let index = n
                times.append(try readTime { "\(path)[\(index)]" })
            }
            n += 1
        }
        b.times = times
        b.timeLines = perLine
    }

    /// Reads one time: an ISO 8601 string, or `null`.
    private mutating func readTime(_ path: () -> String) throws(RouteKitError) -> Timestamp? {
        skipSpace()
        let start = i
        if try readNull() { return nil }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected in \(path())") }
            throw fail(.invalidGeoJSON, "\(path()) is not a time: an ISO 8601 string, or null")
        }
        let (from, to, escaped) = try scanString()
        var parsed: Timestamp?
        if escaped {
            parsed = Timestamp(iso8601: try decodeString(from, to))
        } else {
            let text = bytes
            var cache = dayCache
            parsed = text.withUnsafeBufferPointer { buffer -> Timestamp? in
                guard let base = buffer.baseAddress else { return nil }
                return Timestamp.parse(base + from, to - from, dayCache: &cache)
            }
            dayCache = cache
        }
        guard let parsed else {
            throw fail(.invalidValue, "\(path()) is not an ISO 8601 time", at: start)
        }
        return parsed
    }

    // MARK: - JSON

    @inline(__always) private func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    @inline(__always) private mutating func skipSpace() {
        while i < bytes.count && isSpace(bytes[i]) { i += 1 }
    }

    /// Whether `c` can start a JSON value.
    private func isValueStart(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "t"),
            UInt8(ascii: "f"), UInt8(ascii: "n"):
            return true
        default: return c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
        }
    }

    /// The next member's key of the object being read (its `{` consumed), with its `:` consumed; `nil` at its `}`
    /// (consumed). `first` says whether no member was read yet.
    private mutating func nextKey(first: Bool, in what: @autoclosure () -> String) throws(RouteKitError) -> String? {
        skipSpace()
        guard i < bytes.count else { throw syntax("the document ends inside \(what())") }
        if bytes[i] == UInt8(ascii: "}") {
            i += 1
            return nil
        }
        if !first {
            guard bytes[i] == UInt8(ascii: ",") else {
                throw syntax("',' or '}' expected after a member of \(what())")
            }
            i += 1
            skipSpace()
            guard i < bytes.count else { throw syntax("the document ends inside \(what())") }
        }
        guard bytes[i] == UInt8(ascii: "\"") else { throw syntax("a member name (a string) expected in \(what())") }
        let (from, to, escaped) = try scanString()
        let key = try escaped ? decodeString(from, to) : String(decoding: bytes[from..<to], as: UTF8.self)
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw syntax("':' expected after a member name") }
        i += 1
        skipSpace()
        guard i < bytes.count else { throw syntax("the document ends inside \(what())") }
        return key
    }

    /// Consumes the `[` of an array, which the value at the cursor must be.
    private mutating func beginArray(at path: String) throws(RouteKitError) {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected for \(path)") }
            throw fail(.invalidGeoJSON, "\(path) is not an array")
        }
        i += 1
    }

    /// Whether the array being read (its `[` consumed) has another element (the cursor then at it); at its `]`
    /// (consumed), `false`.
    private mutating func nextElement(first: Bool, in what: @autoclosure () -> String) throws(RouteKitError) -> Bool {
        skipSpace()
        guard i < bytes.count else { throw syntax("the document ends inside \(what())") }
        if bytes[i] == UInt8(ascii: "]") {
            i += 1
            return false
        }
        if !first {
            guard bytes[i] == UInt8(ascii: ",") else { throw syntax("',' or ']' expected in \(what())") }
            i += 1
            skipSpace()
            guard i < bytes.count else { throw syntax("the document ends inside \(what())") }
        }
        return true
    }

    /// Consumes `null` if it is at the cursor.
    private mutating func readNull() throws(RouteKitError) -> Bool {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads a string value that must be one.
    private mutating func readString(at path: String) throws(RouteKitError) -> String {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            if i < bytes.count && !isValueStart(bytes[i]) { throw syntax("a value expected for \(path)") }
            throw fail(.invalidGeoJSON, "\(path) is not a string")
        }
        let (from, to, escaped) = try scanString()
        return try escaped ? decodeString(from, to) : String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// Reads a string value, or skips any other value and returns `nil`.
    private mutating func readOptionalString() throws(RouteKitError) -> String? {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            try skipValue(depth: 3)
            return nil
        }
        let (from, to, escaped) = try scanString()
        return try escaped ? decodeString(from, to) : String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// Moves past the string at the cursor (its opening quote), checking it: returns where its content starts and
    /// ends and whether it has escapes.
    private mutating func scanString() throws(RouteKitError) -> (Int, Int, Bool) {
        let open = i
        i += 1
        let from = i
        var escaped = false
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return (from, i - 1, escaped)
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                guard i + 1 < bytes.count else { break }
                switch bytes[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"), UInt8(ascii: "u"):
                    i += 2
                    continue
                default:
                    throw syntax("an unknown escape in a string")
                }
            }
            if c < 0x20 { throw syntax("a control character inside a string (it must be escaped)") }
            i += 1
        }
        i = open
        throw syntax("a string that does not end")
    }

    /// The text of a string with escapes, its content between `from` and `to`.
    private func decodeString(_ from: Int, _ to: Int) throws(RouteKitError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(to - from)
        var k = from
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= to else { return nil }
            var v: UInt32 = 0
            for j in at..<(at + 4) {
                let c = bytes[j]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        func appendScalar(_ scalar: UInt32) {
            let s = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            out.append(contentsOf: Array(String(Character(s)).utf8))
        }
        while k < to {
            let c = bytes[k]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                k += 1
                continue
            }
            guard k + 1 < to else {
                throw fail(.invalidGeoJSON, "not valid JSON: a string ends with a backslash", at: k)
            }
            let e = bytes[k + 1]
            k += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let u = hex4(k) else {
                    throw fail(.invalidGeoJSON, "not valid JSON: \\u needs four hexadecimal digits", at: k - 2)
                }
                k += 4
                if u >= 0xD800 && u < 0xDC00, k + 6 <= to, bytes[k] == UInt8(ascii: "\\"),
                    bytes[k + 1] == UInt8(ascii: "u"), let low = hex4(k + 2), low >= 0xDC00 && low < 0xE000
                {
                    appendScalar(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00))
                    k += 6
                } else {
                    appendScalar(u)
                }
            default:
                throw fail(.invalidGeoJSON, "not valid JSON: an unknown escape in a string", at: k - 2)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Consumes `word` (`true`, `false`, `null`), which must be at the cursor.
    private mutating func literal(_ word: StaticString) throws(RouteKitError) {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { throw syntax("the document ends inside a value") }
        let text = bytes
        let at = i
        let matches = word.withUTF8Buffer { w in (0..<count).allSatisfy { text[at + $0] == w[$0] } }
        guard matches else { throw syntax("not a JSON value") }
        i += count
    }

    /// Reads a number at the cursor (RFC 8259's grammar), `nil` (the cursor unmoved) when no number starts there.
    private mutating func readNumber() throws(RouteKitError) -> Double? {
        skipSpace()
        let bytes = self.bytes
        let start = i
        var k = i
        let n = bytes.count
        func digit(_ at: Int) -> Bool { at < n && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }
        if k < n && bytes[k] == UInt8(ascii: "-") { k += 1 }
        guard digit(k) else {
            if k > start { throw syntax("a '-' that does not start a number") }
            return nil
        }
        var mantissa: UInt64 = 0
        var significant = 0
        if bytes[k] == UInt8(ascii: "0") {
            k += 1
        } else {
            while digit(k) {
                if significant < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[k] &- 48) }
                significant += 1
                k += 1
            }
        }
        var fraction = 0
        if k < n && bytes[k] == UInt8(ascii: ".") {
            k += 1
            guard digit(k) else {
                i = k
                throw syntax("a number without digits after its '.'")
            }
            while digit(k) {
                if significant < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[k] &- 48) }
                if mantissa != 0 { significant += 1 }
                fraction += 1
                k += 1
            }
        }
        var exponent = false
        if k < n && (bytes[k] == UInt8(ascii: "e") || bytes[k] == UInt8(ascii: "E")) {
            exponent = true
            k += 1
            if k < n && (bytes[k] == UInt8(ascii: "+") || bytes[k] == UInt8(ascii: "-")) { k += 1 }
            guard digit(k) else {
                i = k
                throw syntax("a number without digits in its exponent")
            }
            while digit(k) { k += 1 }
        }
        i = k
        let negative = bytes[start] == UInt8(ascii: "-")
        // Exact when the digits fit a Double's 53 bits and the scale is an exact power of ten (Clinger's fast path):
        // the same Double strtod gives.
        if !exponent && significant <= 15 && fraction <= 22 {
            let v = Double(mantissa) / Self.powersOfTen[fraction]
            return negative ? -v : v
        }
        // Anything else: strtod (correctly rounded in glibc and Darwin) on a NUL-terminated copy.
        var text = bytes[start..<k].map { CChar(bitPattern: $0) }
        text.append(0)
        return strtod(text, nil)
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// Moves past the value at the cursor, checking it, without keeping it.
    private mutating func skipValue(depth: Int) throws(RouteKitError) {
        skipSpace()
        guard i < bytes.count else { throw syntax("the document ends where a value is expected") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            guard depth < Self.maxDepth else { throw nestingTooDeep() }
            i += 1
            var first = true
            while try nextKey(first: first, in: "an object") != nil {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            guard depth < Self.maxDepth else { throw nestingTooDeep() }
            i += 1
            var first = true
            while try nextElement(first: first, in: "an array") {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default:
            guard try readNumber() != nil else { throw syntax("not a JSON value") }
        }
    }

    private func nestingTooDeep() -> RouteKitError {
        fail(.invalidGeoJSON, "arrays and objects nested deeper than \(Self.maxDepth) levels")
    }

    // MARK: - Errors

    /// `"text"`, at most 40 characters of it: a type name from the file, never a coordinate or a time.
    private func quoted(_ text: String) -> String {
        let cut = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return "\"\(cut)\""
    }

    /// A JSON syntax error at the cursor.
    private func syntax(_ message: String) -> RouteKitError {
        fail(.invalidGeoJSON, "not valid JSON: \(message)")
    }

    /// An error at `offset` (the cursor by default), with the line and column (in bytes) it is at.
    private func fail(
        _ code: RouteKitError.Code, _ message: String, at offset: Int? = nil, privateDetail: String? = nil
    ) -> RouteKitError {
        let o = max(0, min(offset ?? i, bytes.count))
        var line = 1
        var lineStart = 0
        var k = 0
        while k < o {
            if bytes[k] == 0x0A {
                line += 1
                lineStart = k + 1
            }
            k += 1
        }
        return RouteKitError(
            code, message, file: name, line: line, column: o - lineStart + 1, privateDetail: privateDetail)
    }

    /// What was tolerated so far, for a person: the whole document's once ``next()`` returned `nil`.
    package var warnings: [String] {
        var out = notes
        if extraNumbers > 0 {
            out.append(
                "\(extraNumbers) position(s) with more than three numbers: the numbers after the altitude were ignored")
        }
        if unreadableTimes > 0 {
            out.append("\(unreadableTimes) properties.time value(s) that are not ISO 8601 times were ignored")
        }
        return out
    }
}
