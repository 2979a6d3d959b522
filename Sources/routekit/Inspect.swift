import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitGPX
import RouteKitIngest
@_spi(RouteKitInternals) import RouteKitProcessing

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Read GPX, FIT, TCX and GeoJSON files and report what they hold, without storing anything.",
        discussion: """
            For each file: its format (told by content); GPX version and creator; tracks, segments, track points, routes, route points and \
            waypoints; the first and last time; how many points carry heart rate, cadence, power or temperature; \
            the quirks that were tolerated (warnings); or the error, with line and column (a byte offset for \
            FIT). A FIT file is shown as RouteKit reads it (sessions as tracks, courses as routes) with what the \
            FIT file itself says: file type, sessions and sports, records, chained files, developer fields. A \
            course (a FIT course file, a TCX Course) is named as one, with its name and sport (JSON: courses); \
            import makes it a workout marked as a course. A multisport file (a FIT file with several sessions, a \
            TCX MultiSportSession) says how many activities the one workout that import makes of it has (JSON: \
            multisport, a count per such workout).

            Files are read streaming, in constant memory, whatever their size; gzip-compressed files are \
            decompressed on the fly. A failed file does not stop the others: the exit code is 1 if any failed.

            A TCX file (told by its content, whatever its name) is shown as RouteKit reads it: each Activity a \
            track, each of its Tracks a segment, trackpoints with a position as points (those without one are \
            counted in a warning), each Course a route, CoursePoints waypoints.

            A GeoJSON file (told by its content) is read whole (up to 128 MiB) and shown as RouteKit imports it: \
            each LineString or MultiLineString feature a track (each line a segment) or a route, Points and \
            MultiPoints waypoints, with the times of coordTimes.

            Examples:
              routekit inspect sample-routes/*.gpx
              routekit inspect --json ride.gpx | jq .points
            """
    )

    @Argument(
        help: "GPX, FIT, TCX or GeoJSON files (plain or gzip-compressed).",
        completion: .file(extensions: ["gpx", "fit", "tcx", "geojson", "json", "gz"]))
    var files: [String]

    @Flag(help: "One JSON object per file, one per line.")
    var json = false

    @OptionGroup var readingOptions: GPXReadingOptions

    func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one GPX or FIT file.") }
    }

    /// What a FIT file says of itself.
    struct FITReport: Encodable {
        var fileType: String
        var sessions: [String]
        var records: Int
        var recordsWithPosition: Int
        var recordsWithHeartRate: Int
        var chainedFiles: Int
        var compressedTimestamps: Int
        var developerFields: [String]
        var recovered: Bool
    }

    /// A course the file holds (a FIT course file, a TCX `Course`): a planned route, which `import` stores as a
    /// workout whose metadata says `course`.
    struct CourseReport: Encodable {
        @ExplicitNull var name: String?
        @ExplicitNull var sport: String?
    }

    struct Report: Encodable {
        var file: String
        var status: String
        var format = "gpx"
        var fit: FITReport?
        /// The file's courses; absent for a file without any.
        var courses: [CourseReport]?
        /// Each multisport workout the file imports as (a FIT file's sessions, a TCX `MultiSportSession`): how many
        /// activities it has; absent for a file without any.
        var multisport: [Int]?
        @ExplicitNull var version: String?
        @ExplicitNull var creator: String?
        var tracks = 0
        var segments = 0
        var points = 0
        var routes = 0
        var routePoints = 0
        var waypoints = 0
        var pauses = 0
        @ExplicitNull var firstTime: String?
        @ExplicitNull var lastTime: String?
        var timeReversals = 0
        var series: [String: Int] = [:]
        var warnings: [String] = []
        @ExplicitNull var error: ErrorJSON?

        enum CodingKeys: String, CodingKey {
            case file, status, format, fit, courses, multisport, version, creator, tracks, segments, points, routes,
                routePoints, waypoints, pauses
            case firstTime, lastTime, timeReversals, series, warnings, error
        }
    }

    func run() throws {
        var failures: [RouteKitError] = []
        // Megabyte read buffers reused from file to file instead of mapped and faulted in for each.
        if files.count > 1 { BatchAllocator.tuneForBatchProcessing() }
        for file in files {
            var report = Report(file: file, status: "ok")
            do throws(RouteKitError) {
                let s: GPXSummary
                switch regularFileFormat(file) {
                case .fit?:
                    report.format = "fit"
                    let fit = try Self.readFIT(file)
                    s = fit.summary
                    report.fit = fit.report
                    if let course = fit.course { report.courses = [course] }
                    // An activity file of several sessions imports as one workout of that many activities.
                    let sessions = fit.report.sessions.count
                    if fit.course == nil && sessions > 1 { report.multisport = [sessions] }
                case .tcx?:
                    report.format = "tcx"
                    let tcx = try TCXCommands.summary(file)
                    s = tcx.summary
                    if !tcx.courses.isEmpty { report.courses = tcx.courses.map { CourseReport(name: $0, sport: nil) } }
                    if !tcx.multisport.isEmpty { report.multisport = tcx.multisport }
                case .geojson?:
                    report.format = "geojson"
                    s = try GeoJSONCommands.summary(file)
                case .healthExport?:
                    throw healthExportRefusal(file)
                default:
                    s = try GPXSummary.read(path: file, options: readingOptions.readOptions)
                }
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
                report.error = ErrorJSON(error)
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

    /// A FIT file summarised as GPX would be, what it says of itself, and its course when it is a course file
    /// (`file_id.type` 6).
    static func readFIT(_ path: String) throws(RouteKitError) -> (
        summary: GPXSummary, report: FITReport, course: CourseReport?
    ) {
        do {
            let (fit, s) = try FITFile.inspect(FITInput(path: path), file: path)
            let report = FITReport(
                fileType: fit.fileTypeName, sessions: fit.sessions.map { $0.sportName ?? "unknown sport" },
                records: fit.records, recordsWithPosition: fit.recordsWithPosition,
                recordsWithHeartRate: fit.recordsWithHeartRate, chainedFiles: fit.files,
                compressedTimestamps: fit.compressedTimestampMessages,
                developerFields: fit.developerFields.map { f in
                    (f.name ?? "unnamed developer field \(f.number)") + (f.units.map { " (\($0))" } ?? "")
                }, recovered: fit.recovered)
            let course = fit.fileType == 6 ? CourseReport(name: fit.courseName, sport: fit.courseSportName) : nil
            return (s, report, course)
        } catch {
            throw error.inFile(path)
        }
    }

    func printText(_ r: Report) {
        print(r.file)
        if let e = r.error {
            let place =
                e.byteOffset.map { "byte \($0): " }
                ?? e.line.map { "line \($0)" + (e.column.map { ", column \($0)" } ?? "") + ": " } ?? ""
            print("  error: \(place)\(e.message) [\(e.code)]")
            return
        }
        if let f = r.fit {
            print(
                "  FIT \(f.fileType)" + (f.chainedFiles > 1 ? ", \(f.chainedFiles) chained files" : "")
                    + (f.recovered ? ", recovered" : ""))
            if !f.sessions.isEmpty { print("  sessions: \(f.sessions.joined(separator: ", "))") }
            print(
                "  records \(f.records), with a position \(f.recordsWithPosition), with heart rate \(f.recordsWithHeartRate)"
                    + (f.compressedTimestamps > 0 ? ", compressed timestamps \(f.compressedTimestamps)" : ""))
            if !f.developerFields.isEmpty { print("  developer fields: \(f.developerFields.joined(separator: ", "))") }
        }
        for c in r.courses ?? [] {
            // A planned route: what `import` stores as a workout marked as a course.
            print(
                "  course " + (c.name.map { "\"\($0)\"" } ?? "without a name") + (c.sport.map { " (\($0))" } ?? "")
                    + ": a planned route, imported as a workout marked course")
        }
        for n in r.multisport ?? [] { print("  multisport: \(n) activities, imported as one workout") }
        let version = r.format == "geojson" ? "GeoJSON" : r.version.map { "GPX \($0)" } ?? "GPX (no version)"
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
