public import RouteKit
public import RouteKitIngest

/// A `<trkseg>`: its points in file order.
public struct GPXSegment: Sendable, Hashable {
    public var points: [GPXPoint]
    /// Unknown extension elements of the segment.
    public var extensions: [String]
    public init(points: [GPXPoint] = [], extensions: [String] = []) {
        self.points = points
        self.extensions = extensions
    }
}

/// A `<trk>`: descriptive fields, segments, and the pauses its file marked inside segments.
public struct GPXTrack: Sendable, Hashable {
    public var info: GPXPathInfo
    public var segments: [GPXSegment]
    /// Pauses and resumes read from OpenTracks' legacy markers. Each pause also splits the segment.
    public var events: [WorkoutEvent]
    public init(info: GPXPathInfo = GPXPathInfo(), segments: [GPXSegment] = [], events: [WorkoutEvent] = []) {
        self.info = info
        self.segments = segments
        self.events = events
    }

    /// Every point of every segment.
    public var pointCount: Int { segments.reduce(0) { $0 + $1.points.count } }
}

/// A `<rte>`.
public struct GPXRoute: Sendable, Hashable {
    public var info: GPXPathInfo
    public var points: [GPXPoint]
    public init(info: GPXPathInfo = GPXPathInfo(), points: [GPXPoint] = []) {
        self.info = info
        self.points = points
    }
}

/// A whole GPX document in memory, for small files and tests. Large files: use ``GPXReader``.
public struct GPXDocument: Sendable, Hashable {
    public var info = GPXDocumentInfo()
    public var metadata = GPXMetadata()
    public var waypoints: [GPXPoint] = []
    public var routes: [GPXRoute] = []
    public var tracks: [GPXTrack] = []
    public var extensions: [String] = []
    public var warnings: [GPXWarning] = []

    public init() {}

    /// Reads a whole file.
    public init(path: String, options: GPXReadOptions = GPXReadOptions()) throws(RouteKitError) {
        try self.init(reader: GPXReader(path: path, options: options))
    }

    /// Reads bytes, fed to the parser `chunkSize` bytes at a time.
    public init(bytes: [UInt8], name: String = "<memory>", chunkSize: Int? = nil) throws(RouteKitError) {
        try self.init(reader: GPXReader(bytes: bytes, name: name, chunkSize: chunkSize))
    }

    /// Collects every event of a reader.
    public init(reader: GPXReader) throws(RouteKitError) {
        var inPause = false
        while let event = try reader.next() {
            switch event {
            case .document(let info): self.info = info
            case .metadata(let m): metadata = m
            case .waypoint(let p): waypoints.append(p)
            case .routeStart(let info): routes.append(GPXRoute(info: info))
            case .routePoints(let points): routes[routes.count - 1].points += points
            case .routeEnd(let info): routes[routes.count - 1].info = info
            case .trackStart(let info): tracks.append(GPXTrack(info: info))
            case .segmentStart:
                tracks[tracks.count - 1].segments.append(GPXSegment())
                inPause = false
            case .trackPoints(let points):
                let t = tracks.count - 1
                if inPause {
                    // Points after a pause without a resume: start the new segment anyway.
                    tracks[t].segments.append(GPXSegment())
                    inPause = false
                }
                tracks[t].segments[tracks[t].segments.count - 1].points += points
            case .pause(let time):
                tracks[tracks.count - 1].events.append(WorkoutEvent(kind: .pause, start: time))
                inPause = true
            case .resume(let time):
                let t = tracks.count - 1
                tracks[t].events.append(WorkoutEvent(kind: .resume, start: time))
                if inPause || !(tracks[t].segments.last?.points.isEmpty ?? true) {
                    tracks[t].segments.append(GPXSegment())
                }
                inPause = false
            case .segmentEnd(let ext):
                let t = tracks.count - 1
                tracks[t].segments[tracks[t].segments.count - 1].extensions = ext
                inPause = false
            case .trackEnd(let info): tracks[tracks.count - 1].info = info
            case .documentExtensions(let ext): extensions = ext
            case .warning(let w): warnings.append(w)
            }
        }
    }

    /// The events that describe this document, in GPX 1.1 order (metadata, waypoints, routes, tracks).
    public func events(batchSize: Int = 1024) -> [GPXEvent] {
        var out: [GPXEvent] = [.document(info)]
        if !metadata.isEmpty { out.append(.metadata(metadata)) }
        for w in waypoints { out.append(.waypoint(w)) }
        for r in routes {
            out.append(.routeStart(r.info))
            for i in stride(from: 0, to: r.points.count, by: batchSize) {
                out.append(.routePoints(Array(r.points[i..<min(i + batchSize, r.points.count)])))
            }
            out.append(.routeEnd(r.info))
        }
        for t in tracks {
            out.append(.trackStart(t.info))
            for s in t.segments {
                out.append(.segmentStart)
                for i in stride(from: 0, to: s.points.count, by: batchSize) {
                    out.append(.trackPoints(Array(s.points[i..<min(i + batchSize, s.points.count)])))
                }
                out.append(.segmentEnd(extensions: s.extensions))
            }
            out.append(.trackEnd(t.info))
        }
        if !extensions.isEmpty { out.append(.documentExtensions(extensions)) }
        return out
    }
}

extension GPXSummary {
    /// Reads a file to the end and summarises it.
    package static func read(path: String, options: GPXReadOptions = GPXReadOptions()) throws(RouteKitError)
        -> GPXSummary
    {
        let reader = try GPXReader(path: path, options: options)
        var s = GPXSummary(file: path)
        while let event = try reader.next() { s.add(event) }
        return s
    }
}

extension GPXDocument {
    /// The track's known extension values as quantity series keyed by timestamp (points without a time are
    /// left out: a series sample needs a time).
    package static func series(of points: [GPXPoint]) -> [QuantitySeries] {
        QuantityType.all.compactMap { type in
            let samples = points.compactMap { p -> QuantitySample? in
                guard let t = p.location.timestamp, let v = p.values[type] else { return nil }
                return QuantitySample(timestamp: t, value: v)
            }
            return samples.isEmpty ? nil : QuantitySeries(type: type, samples: samples)
        }
    }
}
