internal import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// GPX semantics, the last layer of the GPX reader (``GPXStreamParser``): what opening and closing each kind of element
// means. Points (`<trkpt>`, `<rtept>`, `<wpt>`) are built from their attributes and values (GPXLeafValues.swift) and
// sent in batches; tracks, routes and segments start and end; file-level metadata, persons, links, copyright and
// bounds are gathered; points without usable coordinates are skipped and counted. What it hands on: ``GPXEvent``s in
// ``GPXStreamParser/events``, which ``GPXReader`` returns one by one.

extension GPXStreamParser {
    /// The root element: exactly one, `<gpx>`, in the GPX 1.0 or 1.1 namespace or in none; its `version`,
    /// `creator` and `xmlns` go out as the `GPXEvent.document(_:)` event.
    mutating func openRoot(ns: KnownNamespace, localStart: Int, nameEnd: Int) throws(RouteKitError) {
        if rootSeen {
            throw error(.malformedXML, "a second root element: a document has exactly one")
        }
        let local = input.string(localStart, nameEnd)
        guard local == "gpx" else {
            throw error(
                .invalidGPX,
                "the root element is <\(input.string(input.tokenStart + 1, nameEnd))>, not <gpx>: this is not a GPX file"
            )
        }
        guard ns == .gpx || ns == .none else {
            throw error(.invalidGPX, "the root <gpx> is in a namespace that is not GPX 1.0 or 1.1")
        }
        rootSeen = true
        rootHasNamespace = ns == .gpx
        var info = GPXDocumentInfo()
        for ai in 0..<attrs.count {
            let a = attrs[ai]
            let name = input.string(a.nameStart, a.nameEnd)
            let value = attributeValue(a)
            switch name {
            case "version": info.version = value
            case "creator": info.creator = value
            case "xmlns": info.namespace = value
            default: break
            }
        }
        events.append(.document(info))
        if attrs.isEmpty {
            warn(
                "rootWithoutAttributes",
                "the <gpx> root has no attributes (no version, creator or namespace); read as GPX 1.1")
        } else if !rootHasNamespace {
            warn("rootWithoutNamespace", "the <gpx> root declares no GPX namespace; read as GPX 1.1")
        }
    }

    /// The attribute with this unprefixed name, if present.
    mutating func attribute(_ name: StaticString) -> Attribute? {
        let n = name.utf8CodeUnitCount
        let lit = name.utf8Start
        let b = input.bytes.base
        for ai in 0..<attrs.count where attrs.base[ai].nameEnd - attrs.base[ai].nameStart == n {
            let a = attrs.base[ai]
            var i = 0
            while i < n && b[a.nameStart + i] == lit[i] { i += 1 }
            if i == n { return a }
        }
        return nil
    }

    /// An attribute's value, references decoded (an invalid reference ends the value: openElement refused it
    /// already).
    mutating func attributeValue(_ a: Attribute) -> String {
        let b = input.bytes.base
        if memchrOffset(b, a.valueStart, a.valueEnd, AMP) == nil {
            return input.string(a.valueStart, a.valueEnd)
        }
        var out = RawBytes(capacity: a.valueEnd - a.valueStart)
        var i = a.valueStart
        while i < a.valueEnd {
            guard let amp = memchrOffset(b, i, a.valueEnd, AMP) else {
                out.append(b + i, a.valueEnd - i)
                break
            }
            out.append(b + i, amp - i)
            guard let reference = try? input.decodeReference(amp, a.valueEnd) else { break }
            out.append(reference.scalar)
            i = reference.next
        }
        return out.string
    }

    /// What opening an element means for GPX: a point, a path, a segment, metadata, a person, a link…
    mutating func startSemantics(kind: GPXElementKind, field: GPXLeafField, parent: GPXElementKind)
        throws(RouteKitError)
    {
        switch kind {
        case .leaf:
            text.count = 0
        case .trkpt, .rtept, .wpt:
            if kind == .wpt && parent != .root {
                warn("waypointInPath", "<wpt> elements inside a <trk> or <rte> were read as waypoints")
            }
            try beginPoint(kind)
        case .trk, .rte:
            flushMetadata()
            path = GPXPathInfo()
            pathStarted = false
        case .trkseg:
            if !pathStarted {
                events.append(.trackStart(path))
                pathStarted = true
            }
            segmentExtensions = []
            events.append(.segmentStart)
        case .metadata:
            break
        case .person:
            person = GPXPerson()
            text.count = 0
        case .email:
            text.count = 0
            if let id = attribute("id"), let domain = attribute("domain") {
                person.email = attributeValue(id) + "@" + attributeValue(domain)
            }
        case .link:
            var href = ""
            if let a = attribute("href") { href = attributeValue(a) }
            link = GPXLink(href: href)
        case .copyright:
            var author = ""
            if let a = attribute("author") { author = attributeValue(a) }
            meta.copyright = GPXCopyright(author: author)
        case .bounds:
            // A <bounds> is only a summary of the points: one that cannot be read (an attribute missing, Link2GPS's
            // min_lat-style names, a value that is not a number) is dropped with a warning, never fatal.
            func v(_ name: StaticString) -> Double? {
                guard let a = attribute(name) else { return nil }
                return coordinate(a)
            }
            if let minLatitude = v("minlat"), let minLongitude = v("minlon"), let maxLatitude = v("maxlat"),
                let maxLongitude = v("maxlon")
            {
                meta.bounds = GPXBounds(
                    minLatitude: minLatitude, minLongitude: minLongitude, maxLatitude: maxLatitude,
                    maxLongitude: maxLongitude)
            } else {
                warn(
                    "invalidBounds",
                    "a <bounds> without numeric minlat, minlon, maxlat and maxlon attributes was dropped")
            }
        default:
            break
        }
    }

    /// Sends the file-level metadata read so far, once, before the first waypoint, route or track.
    mutating func flushMetadata() {
        if !metaEmitted {
            metaEmitted = true
            emittedMeta = meta
            if !meta.isEmpty { events.append(.metadata(meta)) }
        }
    }

    /// Starts a `<trkpt>`, `<rtept>` or `<wpt>` from its `lat` and `lon` (or marks it skipped).
    mutating func beginPoint(_ kind: GPXElementKind) throws(RouteKitError) {
        if kind == .wpt { flushMetadata() }
        if kind == .rtept && !pathStarted {
            events.append(.routeStart(path))
            pathStarted = true
        }
        let element = kind == .trkpt ? "trkpt" : kind == .rtept ? "rtept" : "wpt"
        // A fresh point either way: a skipped point's children are read into it, then dropped.
        marker = 0
        skipPoint = false
        values = GPXPointValues()
        if hasExtras {
            extras = GPXPointExtras()
            hasExtras = false
        }
        // No lat or lon, or not a number (a Garmin eTrex 30 writes a <trkpt> without them): nothing to keep.
        guard let la = attribute("lat"), let lo = attribute("lon"), let lat = coordinate(la), let lon = coordinate(lo)
        else {
            skip(kind, .withoutCoordinates)
            return
        }
        if kind == .trkpt && (lat == 100 || lat == 200) {
            // OpenTracks' legacy pause (100) and resume (200) markers.
            marker = lat == 100 ? 1 : 2
        } else {
            guard lat >= -90 && lat <= 90 else {
                if options.skipInvalidPoints {
                    skip(kind, .outOfRange)
                    return
                }
                throw error(
                    .invalidValue, "the latitude of <\(element)> is outside -90...90", at: la.valueStart,
                    detail: "lat=\(lat)")
            }
            guard lon >= -180 && lon <= 180 else {
                if options.skipInvalidPoints {
                    skip(kind, .outOfRange)
                    return
                }
                throw error(
                    .invalidValue, "the longitude of <\(element)> is outside -180...180", at: lo.valueStart,
                    detail: "lon=\(lon)")
            }
        }
        location = Location(latitude: lat, longitude: lon)
    }

    /// Why a point was skipped.
    enum SkipReason: Int {
        /// No `lat` or `lon` attribute, or one that is not a number.
        case withoutCoordinates = 0
        /// A latitude or longitude out of range, with ``GPXReadOptions/skipInvalidPoints``.
        case outOfRange = 1
    }

    /// Marks the open point as skipped and counts it (reported by ``reportSkippedPoints()``).
    mutating func skip(_ kind: GPXElementKind, _ reason: SkipReason) {
        skipPoint = true
        location = Location(latitude: 0, longitude: 0)
        let slot = reason.rawValue * 3 + (kind == .trkpt ? 0 : kind == .rtept ? 1 : 2)
        if skippedCounts[slot] == 0 { skippedLines[slot] = input.tokenLine }
        skippedCounts[slot] += 1
    }

    /// One warning per element kind and reason for the points skipped since the last report, counting them; it
    /// names the line of the first, never coordinates. `<trkpt>`s are reported at the end of their `<trk>`,
    /// `<rtept>`s at the end of their `<rte>` (`only`), `<wpt>`s at the end of the document.
    mutating func reportSkippedPoints(only: GPXElementKind? = nil) {
        for slot in 0..<6 where skippedCounts[slot] > 0 {
            if let only, only != (slot % 3 == 0 ? .trkpt : slot % 3 == 1 ? .rtept : .wpt) { continue }
            let n = skippedCounts[slot]
            let element = ["trkpt", "rtept", "wpt"][slot % 3]
            let points = "\(n) <\(element)>"
            let verb = n == 1 ? "was skipped, with its time and values" : "were skipped, with their time and values"
            let warning: GPXWarning
            if slot < 3 {
                warning = GPXWarning(
                    kind: "pointsWithoutCoordinates",
                    message: "\(points) without lat/lon (missing or not a number) \(verb)",
                    line: skippedLines[slot])
            } else {
                warning = GPXWarning(
                    kind: "pointsOutOfRange",
                    message: "\(points) with a latitude or longitude out of range \(verb)",
                    line: skippedLines[slot])
            }
            events.append(.warning(warning))
            skippedCounts[slot] = 0
        }
    }

    /// What closing an element means for GPX: a point joins its batch, a value is stored, a path or segment ends…
    mutating func endSemantics(_ frame: Frame) throws(RouteKitError) {
        if skipPoint && (frame.kind == .trkpt || frame.kind == .rtept || frame.kind == .wpt) {
            // Its children were read and checked; the point, its time and values are dropped (counted).
            skipPoint = false
            return
        }
        switch frame.kind {
        case .leaf:
            let parent = stack.last?.kind ?? .root
            try setLeaf(frame.field, parent: parent)
        case .trkpt:
            if marker != 0 {
                flushBatch(track: true)
                events.append(marker == 1 ? .pause(location.timestamp) : .resume(location.timestamp))
                warn(
                    "pauseMarkers",
                    "OpenTracks' legacy lat=100/lat=200 points were read as pause and resume, not as locations")
            } else {
                batch.append(currentPoint())
                if batch.count >= options.batchSize { flushBatch(track: true) }
            }
        case .rtept:
            batch.append(currentPoint())
            if batch.count >= options.batchSize { flushBatch(track: false) }
        case .wpt:
            events.append(.waypoint(currentPoint()))
        case .trkseg:
            flushBatch(track: true)
            events.append(.segmentEnd(extensions: segmentExtensions))
            segmentExtensions = []
        case .trk:
            if !pathStarted {
                events.append(.trackStart(path))
                pathStarted = true
            }
            reportSkippedPoints(only: .trkpt)
            events.append(.trackEnd(path))
        case .rte:
            if !pathStarted {
                events.append(.routeStart(path))
                pathStarted = true
            }
            flushBatch(track: false)
            reportSkippedPoints(only: .rtept)
            events.append(.routeEnd(path))
        case .metadata:
            metaEmitted = true
            emittedMeta = meta
            events.append(.metadata(meta))
        case .root:
            flushMetadata()
            reportSkippedPoints()
            if meta != emittedMeta {
                // GPX 1.0 descriptive elements after the first waypoint, route or track: said again, complete.
                warn(
                    "lateMetadata",
                    "file-level name, time or other metadata came after the first waypoint, route or track")
                events.append(.metadata(meta))
            }
            if !rootExtensions.isEmpty { events.append(.documentExtensions(rootExtensions)) }
        case .person:
            if person.name == nil && !textIsBlank() { person.name = textString() }
            let parent = stack.last?.kind ?? .root
            if parent == .metadata || parent == .root { meta.author = person }
        case .email:
            if person.email == nil && !textIsBlank() { person.email = textString() }
            let parent = stack.last?.kind ?? .root
            if parent == .metadata || parent == .root {
                var author = meta.author ?? GPXPerson()
                author.email = person.email
                meta.author = author
            }
        case .link:
            let parent = stack.last?.kind ?? .root
            switch parent {
            case .trkpt, .rtept, .wpt:
                extras.links.append(link)
                hasExtras = true
            case .trk, .rte:
                path.links.append(link)
            case .person:
                person.link = link
            default:
                meta.links.append(link)
            }
        default:
            break
        }
    }

    /// The open point, as read so far.
    mutating func currentPoint() -> GPXPoint {
        var point = GPXPoint(location: location, values: values)
        if hasExtras { point.extras = extras }
        return point
    }

    /// Sends the batch of points as one event.
    mutating func flushBatch(track: Bool) {
        guard !batch.isEmpty else { return }
        events.append(track ? .trackPoints(batch) : .routePoints(batch))
        batch.removeAll(keepingCapacity: true)
    }

    /// A coordinate attribute's number (character references decoded first, as XML requires).
    mutating func coordinate(_ a: Attribute) -> Double? {
        if !a.hasAmp { return parseDecimal(input.bytes.base + a.valueStart, a.valueEnd - a.valueStart) }
        var text = Array(attributeValue(a).utf8)
        return text.withUnsafeMutableBufferPointer { t in
            guard let base = t.baseAddress else { return nil }
            return parseDecimal(base, t.count)
        }
    }
}
