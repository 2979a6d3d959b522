import RouteKit
import RouteKitIngest

extension FITFile {
    /// A FIT file's ``FITSummary`` and the `GPXSummary` of its GPX events (what `routekit inspect` shows), in one
    /// pass over the file instead of two.
    ///
    /// The GPX summary is the one ``gpxEvents(_:_:)``'s events give to `GPXSummary.add(_:)`, without
    /// making the points. Where a record goes and its time need what the file gives at its end (sessions, timer
    /// stops, the time zone), so the records are kept meanwhile as five bytes each: their time and which values
    /// they carry. A course (small, and read with its course points) is read a second time, as
    /// ``gpxEvents(_:_:)`` reads it.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - file: the name the GPX summary gives (`GPXSummary.file`).
    /// - Throws: `RouteKitError.Code.invalidFIT` as ``summary(_:)`` and ``gpxEvents(_:_:)`` do.
    package static func inspect(_ bytes: [UInt8], file: String) throws(RouteKitError) -> (FITSummary, GPXSummary) {
        try inspect(FITInput(bytes: bytes), file: file)
    }

    /// ``inspect(_:file:)`` of an input read a chunk at a time.
    package static func inspect(_ input: FITInput, file: String) throws(RouteKitError) -> (FITSummary, GPXSummary) {
        var log = RecordLog()
        let summary = try FITFile.summary(input) { m in log.append(FITRecord(m)) }
        var s = GPXSummary(file: file)
        switch summary.fileType {
        case 4?, nil:
            for e in preamble(summary) { s.add(e) }
            let clock = FITClock(summary)
            // The time of the segment's previous point, as `GPXSummary` keeps it.
            var previousTime: Instant?
            func add(_ e: GPXEvent) {
                if case .segmentStart = e { previousTime = nil }
                s.add(e)
            }
            // A batch of points (records by their index in the log) counted as `GPXSummary.add(_:)` counts
            // `.trackPoints`.
            func count(_ points: [Int]) {
                // Copies for the loop: each access to a variable a closure captures is checked at run time.
                var g = s
                var previous = previousTime
                let times = log.times
                let flags = log.flags
                g.trackPoints += points.count
                for i in points {
                    let f = flags[i]
                    if let t = clock.timestamp(f & RecordLog.hasTime != 0 ? times[i] : nil) {
                        if g.firstTime == nil { g.firstTime = t }
                        g.lastTime = t
                        if let p = previous, t.instant < p { g.timeReversals += 1 }
                        previous = t.instant
                    }
                    if f & RecordLog.heartRate != 0 { g.pointsWithHeartRate += 1 }
                    if f & RecordLog.cadence != 0 { g.pointsWithCadence += 1 }
                    if f & RecordLog.temperature != 0 { g.pointsWithTemperature += 1 }
                    if f & RecordLog.power != 0 { g.pointsWithPower += 1 }
                }
                s = g
                previousTime = previous
            }
            var layout = FITActivityLayout<Int>(summary)
            for i in log.flags.indices {
                let f = log.flags[i]
                try layout.add(
                    f & RecordLog.hasTime != 0 ? log.times[i] : nil, f & RecordLog.isPoint != 0 ? i : nil,
                    hasPosition: f & RecordLog.hasPosition != 0, add, count)
            }
            try layout.finish(add, count)
        default:
            try gpxEvents(input, summary: summary) { (e: GPXEvent) throws(RouteKitError) in s.add(e) }
        }
        return (summary, s)
    }

    /// What the GPX summary needs of each record: its time, whether it makes a point, which values it has.
    private struct RecordLog {
        static let hasTime: UInt8 = 1
        static let hasPosition: UInt8 = 2
        /// A position that makes a valid location: a GPX point.
        static let isPoint: UInt8 = 4
        static let heartRate: UInt8 = 8
        static let cadence: UInt8 = 16
        static let temperature: UInt8 = 32
        static let power: UInt8 = 64

        var times: [UInt32] = []
        var flags: [UInt8] = []

        mutating func append(_ r: FITRecord) {
            var f: UInt8 = 0
            if r.timestamp != nil { f |= Self.hasTime }
            if let lat = r.latitude, let lon = r.longitude {
                f |= Self.hasPosition
                // As `gpxEvents` checks a point (the time does not take part).
                let l = Location(latitude: lat, longitude: lon, altitude: r.altitude, speed: r.speed)
                if (try? l.validate()) != nil { f |= Self.isPoint }
            }
            if r.heartRate != nil { f |= Self.heartRate }
            if r.cadence != nil { f |= Self.cadence }
            if r.temperature != nil { f |= Self.temperature }
            if r.power != nil { f |= Self.power }
            times.append(r.timestamp ?? 0)
            flags.append(f)
        }
    }
}
