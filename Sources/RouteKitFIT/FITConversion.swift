public import RouteKit
public import RouteKitIngest

extension FITFile {
    /// A FIT file as the GPX reader's events, for `routekit convert` and `inspect`: what GPX can hold.
    ///
    /// - An activity becomes one `<trk>` per session (named after its sport); a timer stop ends a `<trkseg>`
    ///   and the next positioned record after it starts another. Each positioned record becomes a point with its
    ///   time, altitude, speed, heart rate, cadence, power and temperature. Records without a position cannot be
    ///   GPX points and are counted in a warning.
    /// - A course becomes one `<rte>` of its positioned records, its course points `<wpt>`s (written first, as
    ///   GPX 1.1 orders them).
    /// - The decoder's warnings come first, as `GPXEvent.warning(_:)` events.
    /// - Throws: `RouteKitError.Code.invalidFIT` for a file that is not FIT or holds neither an activity nor a
    ///   course, or what `emit` throws.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - emit: called with each event, in document order.
    public static func gpxEvents(_ bytes: [UInt8], _ emit: (GPXEvent) throws(RouteKitError) -> Void)
        throws(RouteKitError)
    {
        try gpxEvents(FITInput(bytes: bytes), summary: nil, emit)
    }

    /// ``gpxEvents(_:_:)`` of an input read a chunk at a time, from the file's summary when the caller has it
    /// already (else read first: a second pass).
    package static func gpxEvents(
        _ input: FITInput, summary known: FITSummary? = nil, _ emit: (GPXEvent) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        let summary: FITSummary
        if let known { summary = known } else { summary = try FITFile.summary(input) }
        for e in preamble(summary) { try emit(e) }
        do {
            switch summary.fileType {
            case 6?:
                try course(input, summary, emit)
            case 4?, nil:
                let clock = FITClock(summary)
                var layout = FITActivityLayout<GPXPoint>(summary)
                func points(_ p: [GPXPoint]) throws(RouteKitError) { try emit(.trackPoints(p)) }
                try FITFile.records(input) { r in
                    try layout.add(r.timestamp, point(r, clock), hasPosition: r.hasPosition, emit, points)
                }
                try layout.finish(emit, points)
            default:
                throw RouteKitError(
                    .invalidFIT,
                    "a FIT \(summary.fileTypeName) file holds no activity or course: RouteKit reads activity and course files"
                )
            }
        } catch let e as RouteKitError {
            throw e
        } catch {
            throw RouteKitError(.invalidFIT, "\(error)")
        }
    }

    /// The events before a file's content: the document, then the decoder's warnings.
    static func preamble(_ summary: FITSummary) -> [GPXEvent] {
        [.document(GPXDocumentInfo(version: "1.1", creator: "RouteKit (from FIT)"))]
            + summary.warnings.map { w in .warning(GPXWarning(kind: "fit.\(w.kind.rawValue)", message: "\(w)")) }
    }

    private static func point(_ r: FITRecord, _ clock: FITClock) -> GPXPoint? {
        guard let lat = r.latitude, let lon = r.longitude else { return nil }
        let location = Location(
            latitude: lat, longitude: lon, timestamp: clock.timestamp(r.timestamp), altitude: r.altitude,
            speed: r.speed)
        guard (try? location.validate()) != nil else { return nil }
        let values = GPXPointValues(
            heartRate: r.heartRate, cadence: r.cadence, temperature: r.temperature, power: r.power)
        return GPXPoint(location: location, values: values)
    }

    private static func course(
        _ input: FITInput, _ summary: FITSummary, _ emit: (GPXEvent) throws(RouteKitError) -> Void
    )
        throws
    {
        try coursePoints(input) { t, lat, lon, name in
            guard let lat, let lon else { return }
            let l = Location(latitude: lat, longitude: lon, timestamp: summary.timestamp(t))
            guard (try? l.validate()) != nil else { return }
            var extras = GPXPointExtras()
            extras.name = name
            try emit(.waypoint(GPXPoint(location: l, extras: extras)))
        }
        var info = GPXPathInfo()
        info.name = summary.courseName
        info.type = summary.courseSportName
        try emit(.routeStart(info))
        let clock = FITClock(summary)
        var reader = FITRecordReader(input)
        while let records = try reader.next() {
            let points = records.compactMap { point($0, clock) }
            if !points.isEmpty { try emit(.routePoints(points)) }
        }
        try emit(.routeEnd(info))
    }
}

/// An activity's records as GPX: one track per session (sessions by start time; a record before the first
/// session's start goes to the first), a new segment after a timer stop, points in batches of up to 1,024.
/// Records are handed over one at a time (``add(_:_:hasPosition:_:_:)``), then ``finish(_:_:)``. Shared by
/// ``FITFile/gpxEvents(_:_:)`` (`Point` a `GPXPoint`) and ``FITFile/inspect(_:file:)`` (the record's
/// index in its log), so that both place records alike.
struct FITActivityLayout<Point> {
    private let sessions: [FITSession]
    private let starts: [UInt32]
    private let stops: [UInt32]
    private var current = -1
    private var nextStop = 0
    private var inSegment = false
    private var batch: [Point] = []
    private var withoutPosition = 0

    init(_ summary: FITSummary) {
        sessions =
            summary.sessions.isEmpty
            ? [FITSession()] : summary.sessions.sorted { ($0.startTime ?? 0) < ($1.startTime ?? 0) }
        starts = sessions.map { $0.startTime ?? 0 }
        stops = summary.timerEvents.filter { !$0.isStart }.map(\.timestamp).sorted()
        batch.reserveCapacity(1024)
    }

    private func info(_ session: Int) -> GPXPathInfo {
        var i = GPXPathInfo()
        i.name = sessions[session].sportName
        i.type = sessions[session].sportName
        return i
    }

    private mutating func flush(_ points: ([Point]) throws(RouteKitError) -> Void) throws(RouteKitError) {
        if !batch.isEmpty { try points(batch) }
        batch.removeAll(keepingCapacity: true)
    }

    private mutating func close(
        _ emit: (GPXEvent) throws(RouteKitError) -> Void, _ points: ([Point]) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        try flush(points)
        if inSegment { try emit(.segmentEnd(extensions: [])) }
        inSegment = false
    }

    /// One record: its time, its point (`nil` when it cannot be one) and whether it has a position.
    /// - Parameters:
    ///   - emit: called with each event but the points.
    ///   - points: called with each batch of a segment's points, where `emit` would have
    ///     ``GPXEvent/trackPoints(_:)``.
    mutating func add(
        _ timestamp: UInt32?, _ point: Point?, hasPosition: Bool, _ emit: (GPXEvent) throws(RouteKitError) -> Void,
        _ points: ([Point]) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        var session = max(current, 0)
        if let t = timestamp {
            while session + 1 < starts.count && starts[session + 1] <= t { session += 1 }
        }
        if session != current {
            if current >= 0 {
                try close(emit, points)
                try emit(.trackEnd(info(current)))
            }
            current = session
            try emit(.trackStart(info(current)))
        }
        guard let point else {
            if !hasPosition { withoutPosition += 1 }
            return
        }
        // A timer stop since the last point ends the segment.
        var stopped = false
        if let t = timestamp {
            while nextStop < stops.count && stops[nextStop] < t {
                stopped = true
                nextStop += 1
            }
        }
        if stopped && inSegment { try close(emit, points) }
        if !inSegment {
            try emit(.segmentStart)
            inSegment = true
        }
        batch.append(point)
        if batch.count == 1024 { try flush(points) }
    }

    /// Ends the last track; a warning counts the records without a position.
    mutating func finish(
        _ emit: (GPXEvent) throws(RouteKitError) -> Void, _ points: ([Point]) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        if current >= 0 {
            try close(emit, points)
            try emit(.trackEnd(info(current)))
        }
        if withoutPosition > 0 {
            try emit(
                .warning(
                    GPXWarning(
                        kind: "fit.recordsWithoutPosition",
                        message:
                            "\(withoutPosition) record(s) without a position cannot be GPX points and were left out")))
        }
    }
}
