import Foundation
public import RouteKit
public import RouteKitIngest

extension GPXEventWriter {
    /// Writes every event of `reader`, then finishes.
    public mutating func write(contentsOf reader: GPXReader) throws(RouteKitError) {
        while let event = try reader.next() { try write(event) }
        try finish()
    }
}

/// Writes GPX 1.1 that validates against the GPX 1.1 schema, from `GPXEvent`s (RouteKitIngest), streaming.
///
/// - Known extension values go back into each point's `<extensions>`: heart rate, cadence, temperatures,
///   depth, speed and course as Garmin TrackPointExtension v2; power as Garmin PowerExtension
///   `PowerInWatts`; the accuracies as RouteKit's own namespace (`https://routekit.dev/xmlns/gpx/v1`).
/// - Unknown extension elements are written back as they were read, when they are in a foreign namespace.
///   Elements in the GPX namespace or in no namespace (which producers sometimes put in `<extensions>`)
///   cannot be written validly and are counted in ``droppedElements`` instead.
/// - Values the schema cannot hold (a `fix` that is not `none|2d|3d|dgps|pps`, a satellite count below 0…)
///   are counted in ``droppedValues``.
///
/// GPX 1.1 orders a file as metadata, waypoints, routes, tracks, extensions. Events must come in that order
/// (``GPXDocument/events(batchSize:)`` does); a waypoint or route after a track throws
/// `RouteKitError.Code.invalidArgument`. `routekit convert` reads a file twice when it needs to reorder.
public struct GPXWriter: GPXEventWriter {
    private let out: OutputSink
    private var state: State = .start
    private var rootExtensions: [String] = []
    private var documentInfo = GPXDocumentInfo()
    private let creator: String
    /// Unknown extension elements that could not be written (GPX or no namespace).
    public private(set) var droppedElements = 0
    /// Values outside what the schema allows, not written.
    public private(set) var droppedValues = 0
    /// Points written (track, route and waypoints).
    public private(set) var pointsWritten = 0

    private enum State: Int, Comparable {
        case start, header, metadata, waypoints, routes, inRoute, tracks, inTrack, inSegment, ended
        static func < (a: State, b: State) -> Bool { a.rawValue < b.rawValue }
    }

    /// Creates a writer. `creator` goes into the root's `creator` attribute.
    public init(to out: OutputSink, creator: String = "RouteKit") {
        self.out = out
        self.creator = creator
    }

    /// Writes a whole document and finishes.
    public static func write(_ document: GPXDocument, to out: OutputSink, creator: String = "RouteKit")
        throws(RouteKitError) -> GPXWriter
    {
        var writer = GPXWriter(to: out, creator: creator)
        for event in document.events() { try writer.write(event) }
        try writer.finish()
        return writer
    }

    /// Writes a document to memory and returns the bytes.
    public static func data(for document: GPXDocument, creator: String = "RouteKit") throws(RouteKitError) -> [UInt8] {
        let sink = OutputSink()
        _ = try write(document, to: sink, creator: creator)
        try sink.close()
        return sink.bytes
    }

    private mutating func header() {
        guard state == .start else { return }
        out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"")
        out.writeEscaped(creator, attribute: true)
        out.write(
            "\" xmlns=\"http://www.topografix.com/GPX/1/1\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v2\" xmlns:gpxpx=\"http://www.garmin.com/xmlschemas/PowerExtension/v1\" xmlns:rk=\""
        )
        out.write(GPXNamespaces.routeKit)
        out.write(
            "\" xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd http://www.garmin.com/xmlschemas/TrackPointExtension/v2 https://www8.garmin.com/xmlschemas/TrackPointExtensionv2.xsd http://www.garmin.com/xmlschemas/PowerExtension/v1 https://www8.garmin.com/xmlschemas/PowerExtensionv1.xsd\">\n"
        )
        state = .header
    }

    private mutating func advance(to target: State, what: String) throws(RouteKitError) {
        header()
        if state == .inSegment || state == .inTrack || state == .inRoute {
            throw RouteKitError(.invalidArgument, "\(what) inside an open track or route")
        }
        if state > target {
            throw RouteKitError(
                .invalidArgument,
                "\(what) after the file's tracks or routes: GPX 1.1 orders metadata, waypoints, routes, tracks")
        }
        state = target
    }

    /// Writes one event.
    public mutating func write(_ event: GPXEvent) throws(RouteKitError) {
        switch event {
        case .document(let info):
            documentInfo = info
            header()
        case .metadata(let m):
            if state >= .metadata {
                // A second metadata block cannot be placed; keep the first.
                droppedElements += 1
                return
            }
            try advance(to: .metadata, what: "metadata")
            writeMetadata(m)
        case .waypoint(let p):
            try advance(to: .waypoints, what: "a waypoint")
            try p.location.validate(index: 0)
            writePoint(p, element: "wpt", indent: 2)
        case .routeStart(let info):
            try advance(to: .routes, what: "a route")
            out.write("  <rte>\n")
            writePathInfo(info)
            state = .inRoute
        case .routePoints(let points):
            guard state == .inRoute else { throw RouteKitError(.invalidArgument, "route points outside a route") }
            try Self.validate(points)
            for p in points { writePoint(p, element: "rtept", indent: 4) }
            try out.maybeFlush()
        case .routeEnd:
            guard state == .inRoute else { throw RouteKitError(.invalidArgument, "a route end without a route") }
            out.write("  </rte>\n")
            state = .routes
        case .trackStart(let info):
            try advance(to: .tracks, what: "a track")
            out.write("  <trk>\n")
            writePathInfo(info)
            state = .inTrack
        case .segmentStart:
            guard state == .inTrack else { throw RouteKitError(.invalidArgument, "a segment outside a track") }
            out.write("    <trkseg>\n")
            state = .inSegment
        case .trackPoints(let points):
            if state == .inTrack && !points.isEmpty {
                // Points after a pause that had no resume: they open a new segment.
                out.write("    <trkseg>\n")
                state = .inSegment
            }
            guard state == .inSegment else { throw RouteKitError(.invalidArgument, "track points outside a segment") }
            try Self.validate(points)
            for p in points { writePoint(p, element: "trkpt", indent: 6) }
            try out.maybeFlush()
        case .pause:
            // A pause inside a segment is written as the end of the segment.
            guard state == .inSegment else { return }
            out.write("    </trkseg>\n")
            state = .inTrack
        case .resume:
            if state == .inTrack {
                out.write("    <trkseg>\n")
                state = .inSegment
            }
        case .segmentEnd(let ext):
            if state == .inTrack {
                // The segment was closed by a pause without a resume.
                return
            }
            guard state == .inSegment else { throw RouteKitError(.invalidArgument, "a segment end outside a segment") }
            writeExtensions(ext, values: nil, location: nil, indent: 6)
            out.write("    </trkseg>\n")
            state = .inTrack
        case .trackEnd:
            guard state == .inTrack else { throw RouteKitError(.invalidArgument, "a track end without a track") }
            out.write("  </trk>\n")
            state = .tracks
        case .documentExtensions(let ext):
            rootExtensions += ext
        case .warning:
            break
        }
    }

    /// Every point of a batch must be a valid location (what the reader produces always is); the error names
    /// the index in the batch.
    static func validate(_ points: [GPXPoint]) throws(RouteKitError) {
        for (i, p) in points.enumerated() { try p.location.validate(index: i) }
    }

    /// Closes the document and flushes.
    public mutating func finish() throws(RouteKitError) {
        header()
        guard state != .ended else { return }
        if state == .inSegment || state == .inTrack || state == .inRoute {
            throw RouteKitError(.invalidArgument, "the document ended inside an open track or route")
        }
        writeExtensions(rootExtensions, values: nil, location: nil, indent: 2)
        out.write("</gpx>\n")
        state = .ended
        try out.flush()
    }

    // MARK: - Elements

    private func element(_ name: StaticString, _ value: String?, indent: Int) {
        guard let value else { return }
        out.writeSpaces(indent)
        out.writeByte(0x3C)
        out.write(name)
        out.writeByte(0x3E)
        out.writeEscaped(value)
        out.write("</")
        out.write(name)
        out.write(">\n")
    }

    private func decimal(_ name: StaticString, _ value: Double?, indent: Int) {
        guard let value, value.isFinite else { return }
        out.writeSpaces(indent)
        out.writeByte(0x3C)
        out.write(name)
        out.writeByte(0x3E)
        out.writeDecimal(value)
        out.write("</")
        out.write(name)
        out.write(">\n")
    }

    private func writeLink(_ link: GPXLink, indent: Int) {
        out.writeSpaces(indent)
        out.write("<link href=\"")
        out.writeEscaped(link.href, attribute: true)
        if link.text == nil && link.type == nil {
            out.write("\"/>\n")
            return
        }
        out.write("\">\n")
        element("text", link.text, indent: indent + 2)
        element("type", link.type, indent: indent + 2)
        out.writeSpaces(indent)
        out.write("</link>\n")
    }

    private mutating func writeMetadata(_ m: GPXMetadata) {
        if m.isEmpty { return }
        out.write("  <metadata>\n")
        let i = 4
        element("name", m.name, indent: i)
        element("desc", m.description, indent: i)
        if let a = m.author, a.name != nil || a.email != nil || a.link != nil {
            out.write("    <author>\n")
            element("name", a.name, indent: i + 2)
            if let email = a.email {
                let parts = email.split(separator: "@", maxSplits: 1)
                if parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty {
                    out.write("      <email id=\"")
                    out.writeEscaped(String(parts[0]), attribute: true)
                    out.write("\" domain=\"")
                    out.writeEscaped(String(parts[1]), attribute: true)
                    out.write("\"/>\n")
                } else {
                    droppedValues += 1
                }
            }
            if let l = a.link { writeLink(l, indent: i + 2) }
            out.write("    </author>\n")
        }
        if let c = m.copyright {
            out.write("    <copyright author=\"")
            out.writeEscaped(c.author, attribute: true)
            out.write("\">\n")
            if let y = c.year {
                if Self.isGYear(y) { element("year", y, indent: i + 2) } else { droppedValues += 1 }
            }
            element("license", c.license, indent: i + 2)
            out.write("    </copyright>\n")
        }
        for l in m.links { writeLink(l, indent: i) }
        if let t = m.time { timeElement(t, indent: i) }
        element("keywords", m.keywords, indent: i)
        if let b = m.bounds {
            if abs(b.minLatitude) <= 90 && abs(b.maxLatitude) <= 90 && b.minLongitude >= -180 && b.minLongitude < 180
                && b.maxLongitude >= -180 && b.maxLongitude < 180
            {
                out.write("    <bounds minlat=\"")
                out.writeDecimal(b.minLatitude)
                out.write("\" minlon=\"")
                out.writeDecimal(b.minLongitude)
                out.write("\" maxlat=\"")
                out.writeDecimal(b.maxLatitude)
                out.write("\" maxlon=\"")
                out.writeDecimal(b.maxLongitude)
                out.write("\"/>\n")
            } else {
                droppedValues += 1
            }
        }
        writeExtensions(m.extensions, values: nil, location: nil, indent: i)
        out.write("  </metadata>\n")
    }

    static func isGYear(_ s: String) -> Bool {
        // xs:gYear: at least four digits, and year 0000 does not exist.
        let u = Array(s.utf8)
        return u.count >= 4 && u.allSatisfy { $0 >= 48 && $0 <= 57 } && u.contains { $0 != 48 }
    }

    private mutating func writePathInfo(_ info: GPXPathInfo) {
        let i = 4
        element("name", info.name, indent: i)
        element("cmt", info.comment, indent: i)
        element("desc", info.description, indent: i)
        element("src", info.source, indent: i)
        for l in info.links { writeLink(l, indent: i) }
        if let n = info.number {
            if n >= 0 { element("number", String(n), indent: i) } else { droppedValues += 1 }
        }
        element("type", info.type, indent: i)
        writeExtensions(info.extensions, values: nil, location: nil, indent: i)
    }

    private mutating func timeElement(_ t: Timestamp, indent: Int) {
        var t = t
        if let offset = t.utcOffsetSeconds, abs(Int(offset)) > 14 * 3600 {
            // xs:dateTime allows offsets up to ±14:00: write the same instant in UTC.
            t.utcOffsetSeconds = 0
            droppedValues += 1
        }
        out.writeSpaces(indent)
        out.write("<time>")
        out.writeTimestamp(t)
        out.write("</time>\n")
    }

    private mutating func writePoint(_ p: GPXPoint, element name: StaticString, indent: Int) {
        pointsWritten += 1
        let loc = p.location
        out.writeSpaces(indent)
        out.writeByte(0x3C)
        out.write(name)
        out.write(" lat=\"")
        out.writeDecimal(loc.latitude)
        out.write("\" lon=\"")
        // The schema's longitude is -180 ≤ lon < 180: 180 is written as the same meridian, -180.
        out.writeDecimal(loc.longitude == 180 ? -180 : loc.longitude)
        out.write("\">\n")
        let i = indent + 2
        decimal("ele", loc.altitude, indent: i)
        if let t = loc.timestamp { timeElement(t, indent: i) }
        let extras = p.extras
        if let e = extras {
            if let mv = e.magneticVariation {
                if mv >= 0 && mv < 360 { decimal("magvar", mv, indent: i) } else { droppedValues += 1 }
            }
            decimal("geoidheight", e.geoidHeight, indent: i)
            element("name", e.name, indent: i)
            element("cmt", e.comment, indent: i)
            element("desc", e.description, indent: i)
            element("src", e.source, indent: i)
            for l in e.links { writeLink(l, indent: i) }
            element("sym", e.symbol, indent: i)
            element("type", e.type, indent: i)
            if let f = e.fix {
                if ["none", "2d", "3d", "dgps", "pps"].contains(f) {
                    element("fix", f, indent: i)
                } else {
                    droppedValues += 1
                }
            }
            if let s = e.satellites {
                if s >= 0 { element("sat", String(s), indent: i) } else { droppedValues += 1 }
            }
            decimal("hdop", e.hdop, indent: i)
            decimal("vdop", e.vdop, indent: i)
            decimal("pdop", e.pdop, indent: i)
            decimal("ageofdgpsdata", e.ageOfDGPSData, indent: i)
            if let d = e.dgpsID {
                if d >= 0 && d <= 1023 { element("dgpsid", String(d), indent: i) } else { droppedValues += 1 }
            }
        }
        writeExtensions(extras?.extensions ?? [], values: p.values, location: loc, indent: i)
        out.writeSpaces(indent)
        out.write("</")
        out.write(name)
        out.write(">\n")
    }

    private mutating func writeExtensions(
        _ fragments: [String], values: GPXPointValues?, location: Location?, indent: Int
    ) {
        let v = values ?? GPXPointValues()
        let hasTPX =
            v[.heartRate] != nil || v[.cadence] != nil || v[.temperature] != nil || v[.waterTemperature] != nil
            || v[.depth] != nil || location?.speed != nil || location?.course != nil
        let hasPower = v[.power] != nil
        let hasRK =
            location?.horizontalAccuracy != nil || location?.verticalAccuracy != nil || location?.speedAccuracy != nil
            || location?.courseAccuracy != nil
        var writable: [String] = []
        for f in fragments {
            if Self.isForeignFragment(f) { writable.append(f) } else { droppedElements += 1 }
        }
        guard hasTPX || hasPower || hasRK || !writable.isEmpty else { return }
        out.writeSpaces(indent)
        out.write("<extensions>\n")
        let i = indent + 2
        if hasTPX {
            // TrackPointExtension v2's order: atemp, wtemp, depth, hr, cad, speed, course.
            out.writeSpaces(i)
            out.write("<gpxtpx:TrackPointExtension>")
            func tpx(_ name: StaticString, _ value: Double?) {
                guard let value else { return }
                out.write("<gpxtpx:")
                out.write(name)
                out.writeByte(0x3E)
                out.writeDecimal(value)
                out.write("</gpxtpx:")
                out.write(name)
                out.writeByte(0x3E)
            }
            tpx("atemp", v[.temperature])
            tpx("wtemp", v[.waterTemperature])
            tpx("depth", v[.depth])
            tpx("hr", v[.heartRate])
            tpx("cad", v[.cadence])
            tpx("speed", location?.speed)
            tpx("course", location?.course)
            out.write("</gpxtpx:TrackPointExtension>\n")
        }
        if let power = v[.power] {
            out.writeSpaces(i)
            out.write("<gpxpx:PowerInWatts>")
            out.writeDecimal(power)
            out.write("</gpxpx:PowerInWatts>\n")
        }
        if let loc = location, hasRK {
            func rk(_ name: StaticString, _ value: Double?) {
                guard let value else { return }
                out.writeSpaces(i)
                out.write("<rk:")
                out.write(name)
                out.writeByte(0x3E)
                out.writeDecimal(value)
                out.write("</rk:")
                out.write(name)
                out.write(">\n")
            }
            rk("hAcc", loc.horizontalAccuracy)
            rk("vAcc", loc.verticalAccuracy)
            rk("speedAcc", loc.speedAccuracy)
            rk("courseAcc", loc.courseAccuracy)
        }
        for f in writable {
            out.writeSpaces(i)
            out.write(f)
            out.writeByte(0x0A)
        }
        out.writeSpaces(indent)
        out.write("</extensions>\n")
    }

    /// Whether a captured fragment's root element is in a namespace other than GPX's (the schema's
    /// `<extensions>` only takes those).
    static func isForeignFragment(_ fragment: String) -> Bool {
        let u = Array(fragment.utf8)
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        guard u.first == 0x3C else { return false }
        var i = 1
        while i < u.count && !isSpace(u[i]) && u[i] != 0x3E && u[i] != 0x2F { i += 1 }
        let name = u[1..<i]
        let wanted: [UInt8]
        if let colon = name.firstIndex(of: 0x3A) {
            wanted = Array("xmlns:".utf8) + Array(u[1..<colon])
        } else {
            wanted = Array("xmlns".utf8)
        }
        // Walk the root tag's attributes: name, optional spaces, '=', optional spaces, quoted value.
        while i < u.count {
            while i < u.count && isSpace(u[i]) { i += 1 }
            guard i < u.count, u[i] != 0x3E, u[i] != 0x2F else { return false }
            let nameStart = i
            while i < u.count && !isSpace(u[i]) && u[i] != 0x3D { i += 1 }
            let attribute = Array(u[nameStart..<i])
            while i < u.count && isSpace(u[i]) { i += 1 }
            guard i < u.count, u[i] == 0x3D else { return false }
            i += 1
            while i < u.count && isSpace(u[i]) { i += 1 }
            guard i < u.count, u[i] == 0x22 || u[i] == 0x27 else { return false }
            let quote = u[i]
            let valueStart = i + 1
            guard let valueEnd = u[valueStart...].firstIndex(of: quote) else { return false }
            i = valueEnd + 1
            if attribute == wanted {
                let uri = String(decoding: u[valueStart..<valueEnd], as: UTF8.self)
                return !uri.isEmpty && uri != GPXNamespaces.gpx11 && uri != GPXNamespaces.gpx10
            }
        }
        return false
    }
}
