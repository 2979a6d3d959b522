import ArgumentParser
import Foundation
import RouteKit
import RouteKitGPX

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read GPX files and report what they hold, without storing anything.",
        discussion: """
            For each file: GPX version and creator; tracks, segments, track points, routes, route points and \
            waypoints; the first and last time; how many points carry heart rate, cadence, power or temperature; \
            the quirks that were tolerated (warnings); or the error, with line and column.

            Files are read streaming, in constant memory, whatever their size; gzip-compressed files are \
            decompressed on the fly. A failed file does not stop the others: the exit code is 1 if any failed.

            A TCX file (told by its content, whatever its name) is shown as RouteKit reads it: each Activity a \
            track, each of its Tracks a segment, trackpoints with a position as points (those without one are \
            counted in a warning), each Course a route, CoursePoints waypoints.

            Examples:
              routekit inspect sample-routes/*.gpx
              routekit inspect --json ride.gpx | jq .points
            """
    )

    @Argument(help: "GPX files (.gpx or .gpx.gz).", completion: .file(extensions: ["gpx", "gz"]))
    var files: [String]

    @Flag(help: "One JSON object per file, one per line.")
    var json = false

    @OptionGroup var readingOptions: GPXReadingOptions

    func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one GPX file.") }
    }

    struct Report: Encodable {
        var file: String
        var status: String
        var version: String?
        var creator: String?
        var tracks = 0
        var segments = 0
        var points = 0
        var routes = 0
        var routePoints = 0
        var waypoints = 0
        var pauses = 0
        var firstTime: String?
        var lastTime: String?
        var timeReversals = 0
        var series: [String: Int] = [:]
        var warnings: [String] = []
        var error: JSONError?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(file, forKey: .file)
            try c.encode(status, forKey: .status)
            try c.encode(version, forKey: .version)
            try c.encode(creator, forKey: .creator)
            try c.encode(tracks, forKey: .tracks)
            try c.encode(segments, forKey: .segments)
            try c.encode(points, forKey: .points)
            try c.encode(routes, forKey: .routes)
            try c.encode(routePoints, forKey: .routePoints)
            try c.encode(waypoints, forKey: .waypoints)
            try c.encode(pauses, forKey: .pauses)
            try c.encode(firstTime, forKey: .firstTime)
            try c.encode(lastTime, forKey: .lastTime)
            try c.encode(timeReversals, forKey: .timeReversals)
            try c.encode(series, forKey: .series)
            try c.encode(warnings, forKey: .warnings)
            try c.encode(error, forKey: .error)
        }

        enum CodingKeys: String, CodingKey {
            case file, status, version, creator, tracks, segments, points, routes, routePoints, waypoints, pauses
            case firstTime, lastTime, timeReversals, series, warnings, error
        }
    }

    func run() throws {
        var failures: [RouteKitError] = []
        for file in files {
            var report = Report(file: file, status: "ok")
            do {
                let s = try readSummary(file)
                report.version = s.version
                report.creator = s.creator
                report.tracks = s.tracks
                report.segments = s.segments
                report.points = s.trackPoints
                report.routes = s.routes
                report.routePoints = s.routePoints
                report.waypoints = s.waypoints
                report.pauses = s.pauses
                report.firstTime = s.firstTime?.iso8601
                report.lastTime = s.lastTime?.iso8601
                report.timeReversals = s.timeReversals
                for (key, count) in [
                    ("heartRate", s.pointsWithHeartRate), ("cadence", s.pointsWithCadence),
                    ("power", s.pointsWithPower),
                    ("temperature", s.pointsWithTemperature),
                ] where count > 0 {
                    report.series[key] = count
                }
                report.warnings = s.warnings.map(\.description)
            } catch {
                report.status = "failed"
                report.error = JSONError(error)
                failures.append(error)
            }
            if json {
                printJSONLine(report)
            } else {
                printText(report)
            }
        }
        if !failures.isEmpty {
            if !json {
                printError("\(failures.count) of \(files.count) file\(files.count == 1 ? "" : "s") failed:")
                for f in failures { printError("  " + f.description) }
            }
            throw exitInputFailed
        }
    }

    func printText(_ r: Report) {
        print(r.file)
        if let e = r.error {
            let place = e.line.map { "line \($0)" + (e.column.map { ", column \($0)" } ?? "") + ": " } ?? ""
            print("  error: \(place)\(e.message) [\(e.code)]")
            return
        }
        let version = r.version.map { "GPX \($0)" } ?? "GPX (no version)"
        let creator = r.creator.map { ", creator \"\($0)\"" } ?? ""
        print("  \(version)\(creator)")
        print(
            "  tracks \(r.tracks), segments \(r.segments), track points \(r.points), routes \(r.routes), route points \(r.routePoints), waypoints \(r.waypoints)"
                + (r.pauses > 0 ? ", pauses \(r.pauses)" : ""))
        if let first = r.firstTime, let last = r.lastTime {
            print(
                "  time \(first) → \(last)" + (r.timeReversals > 0 ? " (time goes backwards \(r.timeReversals)×)" : ""))
        } else {
            print("  no times")
        }
        if !r.series.isEmpty {
            print(
                "  points with "
                    + r.series.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        for w in r.warnings { print("  warning: \(w)") }
    }
}
