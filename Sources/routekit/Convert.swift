import ArgumentParser
import Foundation
import RouteKit
import RouteKitGPX

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a GPX file to GPX 1.1, GeoJSON or CSV, streaming.",
        discussion: """
            GPX output is GPX 1.1 that validates against the official schema, whatever the input's version: \
            heart rate, cadence, temperature and power go back into each point as Garmin extensions, the \
            accuracies as RouteKit's extension, and unknown extensions are kept when the schema allows them.

            GeoJSON output is one FeatureCollection (tracks as MultiLineString, routes as LineString, waypoints \
            as Point). CSV output is one row per point with every field and sensor value.

            The format follows the output's extension (.gpx, .geojson/.json, .csv) unless --format is given. \
            Use -o - for standard output. On error nothing is left behind: the output file is removed.

            Examples:
              routekit convert old-1.0.gpx -o clean.gpx
              routekit convert ride.gpx.gz -o ride.geojson
              routekit convert ride.gpx --format csv -o - | head
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case gpx, geojson, csv
    }

    @Argument(help: "The input GPX file (.gpx or .gpx.gz).", completion: .file(extensions: ["gpx", "gz"]))
    var input: String

    @Option(name: .shortAndLong, help: "The output file, or - for standard output.")
    var output: String

    @Option(help: "Output format: gpx, geojson or csv (default: from the output's extension, else gpx).")
    var format: Format?

    var resolvedFormat: Format {
        if let format { return format }
        let lower = output.lowercased()
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") { return .geojson }
        if lower.hasSuffix(".csv") { return .csv }
        return .gpx
    }

    func run() throws {
        do {
            let summary = try convert()
            if output != "-" {
                printError("\(input) → \(output): \(summary)")
            }
        } catch {
            if output != "-" { try? FileManager.default.removeItem(atPath: output) }
            printError("error: " + error.description)
            throw exitInputFailed
        }
    }

    func sink() throws(RouteKitError) -> OutputSink {
        output == "-" ? OutputSink.standardOutput() : try OutputSink(path: output)
    }

    func convert() throws(RouteKitError) -> String {
        switch resolvedFormat {
        case .gpx:
            return try convertGPX()
        case .geojson:
            let out = try sink()
            var writer = GeoJSONWriter(to: out)
            try writer.write(contentsOf: GPXReader(path: input))
            try out.close()
            return "GeoJSON written"
        case .csv:
            let out = try sink()
            var writer = CSVWriter(to: out)
            try writer.write(contentsOf: GPXReader(path: input))
            try out.close()
            return "CSV written"
        }
    }

    /// GPX 1.1 puts waypoints and routes before tracks. Most files already do; when one does not, the input
    /// is read twice (waypoints and routes first, then tracks), so memory stays constant.
    func convertGPX() throws(RouteKitError) -> String {
        if output != "-", let result = try convertGPXOnePass() { return result }
        let out = try sink()
        var writer = GPXWriter(to: out)
        var reader = try GPXReader(path: input)
        var warnings = 0
        while let event = try reader.next() {
            switch event {
            case .trackStart, .segmentStart, .trackPoints, .segmentEnd, .trackEnd, .pause, .resume, .documentExtensions:
                continue
            case .warning:
                warnings += 1
            default:
                try writer.write(event)
            }
        }
        reader = try GPXReader(path: input)
        var inTrack = false
        while let event = try reader.next() {
            switch event {
            case .trackStart:
                inTrack = true
                try writer.write(event)
            case .trackEnd:
                inTrack = false
                try writer.write(event)
            case .segmentStart, .trackPoints, .segmentEnd, .pause, .resume, .documentExtensions:
                try writer.write(event)
            default:
                _ = inTrack
            }
        }
        try writer.finish()
        try out.close()
        return describe(writer, warnings: warnings)
    }

    /// Writes in one pass; returns nil (having written nothing useful) when the input needs reordering.
    func convertGPXOnePass() throws(RouteKitError) -> String? {
        let out = try sink()
        var writer = GPXWriter(to: out)
        let reader = try GPXReader(path: input)
        var warnings = 0
        var seenTrack = false
        while let event = try reader.next() {
            switch event {
            case .trackStart: seenTrack = true
            case .waypoint, .routeStart, .metadata:
                if seenTrack {
                    try out.close()
                    return nil
                }
            case .warning: warnings += 1
            default: break
            }
            try writer.write(event)
        }
        try writer.finish()
        try out.close()
        return describe(writer, warnings: warnings)
    }

    func describe(_ writer: GPXWriter, warnings: Int) -> String {
        var parts = ["\(writer.pointsWritten) points written"]
        if warnings > 0 { parts.append("\(warnings) input warning\(warnings == 1 ? "" : "s") (see routekit inspect)") }
        if writer.droppedElements > 0 {
            parts.append(
                "\(writer.droppedElements) extension element\(writer.droppedElements == 1 ? "" : "s") in the GPX namespace not writable in GPX 1.1"
            )
        }
        if writer.droppedValues > 0 { parts.append("\(writer.droppedValues) value(s) outside the schema left out") }
        return parts.joined(separator: "; ")
    }
}
