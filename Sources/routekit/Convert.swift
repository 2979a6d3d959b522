import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitFIT
import RouteKitGPX
import RouteKitGeoJSON
import RouteKitIngest

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a GPX, FIT, TCX or GeoJSON file to GPX 1.1, GeoJSON or CSV.",
        discussion: """
            GPX output is GPX 1.1 that validates against the official schema, whatever the input's version: \
            heart rate, cadence, temperature and power go back into each point as Garmin extensions, the \
            accuracies as RouteKit's extension, and unknown extensions are kept when the schema allows them.

            A FIT file (told by its content) is converted as RouteKit reads it: each session of an activity \
            becomes a <trk> (a timer stop starts a new <trkseg>), each record with a position a point with its \
            time, altitude, speed, heart rate, cadence, power and temperature; a course becomes a <rte> with its \
            course points as waypoints. Records without a position cannot be GPX points and are counted.

            A TCX file (told by its content) is converted as RouteKit reads it: each Activity becomes a <trk>, \
            each of its Tracks a <trkseg>, each trackpoint with a position a point with its time, altitude, \
            speed, heart rate, cadence and power; each Course a <rte>, its CoursePoints waypoints. Trackpoints \
            without a position cannot be GPX points and are counted.

            A GeoJSON file (told by its content: a JSON object) is read whole, up to 128 MiB: each LineString or \
            MultiLineString feature becomes a <trk> (each line a <trkseg>), or a <rte> when its properties say \
            kind "route" (RouteKit's) or _gpxType "rte" (togeojson's); Points and MultiPoints become waypoints; \
            properties.coordTimes (or coordinateProperties.times) give the points their times; name, desc, cmt, \
            src, type and sym are kept. Polygons are refused.

            GeoJSON output is one FeatureCollection (tracks as MultiLineString, routes as LineString, waypoints \
            as Point), each point's time in the feature's coordTimes. CSV output is one row per point with every \
            field and sensor value.

            The format follows the output's extension (.gpx, .geojson/.json, .csv) unless --format is given. \
            Use -o - for standard output. A file output is written to a temporary file beside it and renamed \
            into place only when the conversion succeeds: a failed conversion leaves an existing file as it was. \
            The output may not be the input file.

            GPX 1.1 puts waypoints before routes before tracks. When a file does not, RouteKit reads it once per \
            kind to reorder it in constant memory; that needs a regular file (not a pipe).

            Examples:
              routekit convert old-1.0.gpx -o clean.gpx
              routekit convert ride.gpx.gz -o ride.geojson
              routekit convert ride.gpx --format csv -o - | head
            """
    )

    typealias Format = ExportFormat

    @Argument(
        help: "The input GPX, FIT, TCX or GeoJSON file (plain or gzip-compressed).",
        completion: .file(extensions: ["gpx", "fit", "tcx", "geojson", "json", "gz"])
    )
    var input: String

    @Option(name: .shortAndLong, help: "The output file, or - for standard output.")
    var output: String

    @Option(help: "Output format: gpx, geojson or csv (default: from the output's extension, else gpx).")
    var format: Format?

    @OptionGroup var readingOptions: GPXReadingOptions

    var resolvedFormat: Format { format ?? Format(forOutput: output) }

    /// Where the bytes go.
    enum Target {
        /// Standard output.
        case standardOutput
        /// A regular file (new or replaced): written to `temporary`, renamed to `path` on success.
        case file(path: String, temporary: String)
        /// An existing non-regular file (a device, a FIFO): written in place, never removed.
        case special(path: String)
    }

    func run() throws {
        var target: Target?
        do {
            // The input is checked before anything touches the output (not opened: a pipe can be read only once).
            guard access(input, R_OK) == 0 else {
                throw RouteKitError(.io, "cannot read the input: \(String(cString: strerror(errno)))", file: input)
            }
            let resolved = try resolveTarget()
            target = resolved
            let summary = try convert(to: resolved)
            if case .file(let path, let temporary) = resolved, rename(temporary, path) != 0 {
                throw RouteKitError(
                    .io, "cannot move the result into place: \(String(cString: strerror(errno)))", file: path)
            }
            if output != "-" { printError("\(input) → \(output): \(summary)") }
        } catch {
            if case .file(_, let temporary) = target { unlink(temporary) }
            // A reader that closed the pipe (`-o - | head`) ends it quietly with 0; any other error is 1.
            throw reported(error)
        }
    }

    func resolveTarget() throws(RouteKitError) -> Target {
        if output == "-" { return .standardOutput }
        if let out = InputFile.status(of: output) {
            if InputFile.status(of: input)?.identity == out.identity {
                throw RouteKitError(
                    .invalidArgument, "the output is the input file; choose another output", file: output)
            }
            if !out.isRegularFile { return .special(path: output) }
        }
        return .file(path: output, temporary: temporarySibling(of: output))
    }

    func sink(_ target: Target) throws(RouteKitError) -> OutputSink {
        switch target {
        case .standardOutput: return OutputSink.standardOutput()
        case .file(_, let temporary): return try OutputSink(path: temporary)
        case .special(let path): return try OutputSink(path: path)
        }
    }

    func convert(to target: Target) throws(RouteKitError) -> String {
        if let format = regularFileFormat(input) {
            if format == .tcx { return try convertTCX(to: target) }
            if format == .fit { return try convertFIT(to: target) }
            if format == .healthExport { throw healthExportRefusal(input) }
            if format == .geojson { return try convertGeoJSON(to: target) }
        }
        // GPX 1.1's writer needs its order (a file that has another is read again to reorder it); the others take
        // the file as it comes.
        if resolvedFormat.needsGPXOrder { return try convertGPX(to: target) }
        return try stream(to: target)
    }

    /// A FIT file through the same writers, from the events ``FITFile/gpxEvents(_:_:)`` makes of it (in GPX 1.1's
    /// order already).
    func convertFIT(to target: Target) throws(RouteKitError) -> String {
        // Read a chunk at a time, twice (the summary, then the records): memory does not grow with the file.
        let fit = FITInput(path: input)
        return try convertEvents(to: target) { (emit: (GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) in
            do throws(RouteKitError) {
                try FITFile.gpxEvents(fit, emit)
            } catch {
                throw error.inFile(input)
            }
        }
    }

    /// Events another format's reader makes (FIT, TCX), through the writer the output's format makes
    /// (``ExportFormat/makeWriter(to:)``), in one pass; returns the writer's summary with the input's warnings.
    func convertEvents(
        to target: Target,
        _ produce: ((GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) -> Void
    ) throws(RouteKitError) -> String {
        let out = try sink(target)
        var writer = resolvedFormat.makeWriter(to: out)
        var warnings = 0
        try produce { (e: GPXEvent) throws(RouteKitError) in
            if case .warning = e { warnings += 1 }
            try writer.write(e)
        }
        try writer.finish()
        try out.close()
        return writer.summary(warnings: warnings)
    }

    /// One pass, in file order, for a format without an ordering rule (GeoJSON, CSV); returns the writer's summary.
    /// The reader's warnings are not counted on this path.
    func stream(to target: Target) throws(RouteKitError) -> String {
        let out = try sink(target)
        var writer = resolvedFormat.makeWriter(to: out)
        try writer.write(contentsOf: GPXReader(path: input, options: readingOptions.readOptions))
        try out.close()
        return writer.summary(warnings: 0)
    }

    /// A GeoJSON file through the same writers, from the events ``GeoJSONFile/events(of:name:inGPXOrder:_:)`` makes
    /// of it: read whole (up to ``GeoJSONReader/maxBytes``), and once per kind (waypoints, routes, tracks) when the
    /// output is GPX 1.1, which orders them so.
    func convertGeoJSON(to target: Target) throws(RouteKitError) -> String {
        let file = try GeoJSONFile.contents(of: input)
        let ordered = resolvedFormat.needsGPXOrder
        return try convertEvents(to: target) {
            (emit: (GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) in
            try GeoJSONFile.events(of: file.bytes, name: input, inGPXOrder: ordered, emit)
        }
    }

    /// Whether the input is a regular file (which can be read more than once).
    var inputIsRegularFile: Bool {
        InputFile.status(of: input)?.isRegularFile == true
    }

    /// GPX 1.1 orders waypoints, routes, tracks. Most files already do and are converted in one pass; a file that
    /// does not is read once per kind (constant memory), which needs a regular file.
    func convertGPX(to target: Target) throws(RouteKitError) -> String {
        let rewritable: Bool
        if case .file = target { rewritable = true } else { rewritable = false }
        let regular = inputIsRegularFile
        if regular && !rewritable {
            // Standard output or a device cannot be rewound: find out first whether the file needs reordering.
            if try needsReordering() { return try convertGPXReordering(to: target) }
        }
        if let result = try convertGPXInOrder(to: target) { return result }
        guard regular else {
            throw RouteKitError(
                .invalidGPX,
                "the file puts waypoints or routes after its tracks (or waypoints after routes); GPX 1.1 needs them first, and reordering needs a regular file, not a pipe",
                file: input)
        }
        return try convertGPXReordering(to: target)
    }

    /// Whether an event breaks GPX 1.1's order (waypoints, routes, tracks) given what came before.
    struct OrderCheck {
        var sawRoute = false
        var sawTrack = false
        var sawContent = false

        mutating func breaksOrder(_ event: GPXEvent) -> Bool {
            switch event {
            case .metadata: return sawContent
            case .waypoint:
                sawContent = true
                return sawRoute || sawTrack
            case .routeStart:
                sawContent = true
                sawRoute = true
                return sawTrack
            case .trackStart:
                sawContent = true
                sawTrack = true
                return false
            default: return false
            }
        }
    }

    func needsReordering() throws(RouteKitError) -> Bool {
        let reader = try GPXReader(path: input, options: readingOptions.readOptions)
        var order = OrderCheck()
        while let event = try reader.next() {
            if order.breaksOrder(event) { return true }
        }
        return false
    }

    /// Writes in one pass; returns nil when the input turns out to need reordering (what was written is discarded
    /// by the caller: this is only used on rewritable targets or after a check).
    func convertGPXInOrder(to target: Target) throws(RouteKitError) -> String? {
        let out = try sink(target)
        var writer = resolvedFormat.makeWriter(to: out)
        let reader = try GPXReader(path: input, options: readingOptions.readOptions)
        var warnings = 0
        var order = OrderCheck()
        while let event = try reader.next() {
            if order.breaksOrder(event) {
                try out.close()
                return nil
            }
            if case .warning = event { warnings += 1 }
            try writer.write(event)
        }
        try writer.finish()
        try out.close()
        return writer.summary(warnings: warnings)
    }

    /// Three filtered passes: metadata and waypoints, then routes, then tracks.
    func convertGPXReordering(to target: Target) throws(RouteKitError) -> String {
        let out = try sink(target)
        var writer = resolvedFormat.makeWriter(to: out)
        var warnings = 0
        for pass in 0..<3 {
            let reader = try GPXReader(path: input, options: readingOptions.readOptions)
            var inRoute = false
            while let event = try reader.next() {
                let kind: Int
                switch event {
                case .document, .metadata, .waypoint: kind = 0
                case .warning:
                    if pass == 0 { warnings += 1 }
                    continue
                case .routeStart:
                    inRoute = true
                    kind = 1
                case .routeEnd:
                    inRoute = false
                    kind = 1
                case .routePoints: kind = 1
                case .documentExtensions: kind = 2
                default: kind = inRoute ? 1 : 2
                }
                if kind == pass { try writer.write(event) }
            }
        }
        try writer.finish()
        try out.close()
        return writer.summary(warnings: warnings) + "; reordered (waypoints, routes, tracks)"
    }
}

extension ExportFormat: ExpressibleByArgument {}

/// The hidden file beside `output` that a command writes first and renames into place on success.
func temporarySibling(of output: String) -> String {
    let directory = (output as NSString).deletingLastPathComponent
    let name = (output as NSString).lastPathComponent
    return (directory.isEmpty ? "" : directory + "/") + ".\(name).routekit-\(getpid()).tmp"
}
