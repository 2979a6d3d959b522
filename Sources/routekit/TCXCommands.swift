import Foundation
import RouteKit
import RouteKitGeoJSON
import RouteKitIngest
import RouteKitTCX

/// TCX in `routekit inspect` and `convert`: a TCX file (told by its content) is read whole, parsed once, and
/// handed to the same summaries and writers as GPX through ``TCXDocument/gpxEvents(_:)``.
/// The format of a regular file, by content; `nil` for what cannot be read or is not a regular file (a pipe
/// can be read only once: it is left to the GPX reader, which names any error).
func regularFileFormat(_ path: String) -> InputFile.Format? {
    guard InputFile.status(of: path)?.isRegularFile == true else { return nil }
    return try? InputFile.format(of: path)
}

/// The error for an Apple Health export given to a command that reads activity files.
func healthExportRefusal(_ path: String) -> RouteKitError {
    RouteKitError(
        .invalidArgument,
        "an Apple Health export (export.xml): `routekit import` and `routekit render` read it; inspect and convert "
            + "read GPX, FIT, TCX and GeoJSON files",
        file: path)
}

enum TCXCommands {
    /// The file's TCX document.
    static func document(_ path: String) throws(RouteKitError) -> TCXDocument {
        do {
            return try TCXDocument.parse(InputFile.contents(of: path).bytes)
        } catch {
            throw error.inFile(path)
        }
    }

    /// A TCX file summarised as GPX would be (activities as tracks, courses as routes), the names of its courses
    /// (`nil` for one without a name), and how many activities each of its multisport workouts has (a
    /// `MultiSportSession` of several activities imports as one workout).
    static func summary(_ path: String) throws(RouteKitError) -> (
        summary: GPXSummary, courses: [String?], multisport: [Int]
    ) {
        let doc = try document(path)
        var s = GPXSummary(file: path)
        try doc.gpxEvents { (event: GPXEvent) throws(RouteKitError) in s.add(event) }
        return (s, doc.courseNames, doc.multisportActivityCounts)
    }
}

enum GeoJSONCommands {
    /// A GeoJSON file summarised as GPX would be (lines as tracks or routes, points as waypoints), from the events
    /// ``GeoJSONFile/events(of:name:inGPXOrder:_:)`` makes of it.
    static func summary(_ path: String) throws(RouteKitError) -> GPXSummary {
        let file = try GeoJSONFile.contents(of: path)
        var s = GPXSummary(file: path)
        try GeoJSONFile.events(of: file.bytes, name: path, inGPXOrder: false) {
            (event: GPXEvent) throws(RouteKitError) in
            s.add(event)
        }
        if file.gzip {
            s.warnings.insert(
                GPXWarning(kind: "gzip", message: "the file is gzip-compressed; it was decompressed while reading"),
                at: 0)
        }
        return s
    }
}

extension Convert {
    /// A TCX file through the same writers, from the events ``TCXDocument/gpxEvents(_:)`` makes of it (in GPX
    /// 1.1's order already).
    func convertTCX(to target: Target) throws(RouteKitError) -> String {
        let doc = try TCXCommands.document(input)
        return try convertEvents(to: target) { (emit: (GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) in
            try doc.gpxEvents(emit)
        }
    }
}
