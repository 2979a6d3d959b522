import Foundation
import RouteKit
import RouteKitGPX
import RouteKitTCX

/// TCX in `routekit inspect` and `convert`: a TCX file (told by its content) is read whole, parsed once, and
/// handed to the same summaries and writers as GPX through ``TCXDocument/gpxEvents(_:)``.
enum TCXCommands {
    /// Whether the file is TCX (by content); `false` when it cannot be read (the GPX path names the error) or is
    /// not a regular file (a pipe can be read only once: it is left to the GPX reader).
    static func isTCX(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return (try? InputFile.format(of: path)) == .tcx
    }

    /// The file's TCX document.
    static func document(_ path: String) throws(RouteKitError) -> TCXDocument {
        do {
            return try TCXDocument.parse(InputFile.contents(of: path).bytes)
        } catch {
            throw error.inFile(path)
        }
    }

    /// A TCX file summarised as GPX would be (activities as tracks, courses as routes).
    static func summary(_ path: String) throws(RouteKitError) -> GPXSummary {
        let doc = try document(path)
        var s = GPXSummary(file: path)
        var previous: Instant?
        try doc.gpxEvents { (event: GPXEvent) throws(RouteKitError) in
            switch event {
            case .document(let info):
                s.version = info.version
                s.creator = info.creator
            case .waypoint: s.waypoints += 1
            case .routeStart: s.routes += 1
            case .routePoints(let p): s.routePoints += p.count
            case .trackStart: s.tracks += 1
            case .segmentStart:
                s.segments += 1
                previous = nil
            case .trackPoints(let points):
                s.trackPoints += points.count
                for p in points {
                    if let t = p.location.timestamp {
                        if s.firstTime == nil { s.firstTime = t }
                        s.lastTime = t
                        if let prev = previous, t.instant < prev { s.timeReversals += 1 }
                        previous = t.instant
                    }
                    if p.values[.heartRate] != nil { s.pointsWithHeartRate += 1 }
                    if p.values[.cadence] != nil { s.pointsWithCadence += 1 }
                    if p.values[.power] != nil { s.pointsWithPower += 1 }
                }
            case .pause: s.pauses += 1
            case .warning(let w): s.warnings.append(w)
            default: break
            }
        }
        return s
    }
}

extension Inspect {
    /// The file's summary: TCX through ``TCXCommands/summary(_:)``, anything else through the GPX reader.
    func readSummary(_ file: String) throws(RouteKitError) -> GPXSummary {
        if TCXCommands.isTCX(file) { return try TCXCommands.summary(file) }
        return try GPXSummary.read(path: file, options: readingOptions.readOptions)
    }
}

extension Convert {
    /// A TCX file through the same writers, from the events ``TCXDocument/gpxEvents(_:)`` makes of it (in GPX
    /// 1.1's order already).
    func convertTCX(to target: Target) throws(RouteKitError) -> String {
        let doc = try TCXCommands.document(input)
        let out = try sink(target)
        var warnings = 0
        func run<W: GPXEventWriter>(_ writer: inout W) throws(RouteKitError) {
            try doc.gpxEvents { (e: GPXEvent) throws(RouteKitError) in
                if case .warning = e { warnings += 1 }
                try writer.write(e)
            }
            try writer.finish()
        }
        var summary: String
        switch resolvedFormat {
        case .gpx:
            var writer = GPXWriter(to: out)
            try run(&writer)
            summary = describe(writer, warnings: warnings)
        case .geojson:
            var writer = GeoJSONWriter(to: out)
            try run(&writer)
            summary = "GeoJSON written"
        case .csv:
            var writer = CSVWriter(to: out)
            try run(&writer)
            summary = "CSV written"
        }
        try out.close()
        if resolvedFormat != .gpx && warnings > 0 { summary += "; \(warnings) input warning(s) (see routekit inspect)" }
        return summary
    }
}
