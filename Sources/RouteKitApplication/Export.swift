package import Foundation
package import RouteKit
package import RouteKitGPX
package import RouteKitIngest

/// The formats a route or workout is exported in (`routekit export`, `routekit convert`,
/// `GET /v1/routes/ID/export`), and the writer of each (``makeWriter(to:)``): one switch for every door, so that a
/// new format is added here alone.
package enum ExportFormat: String, CaseIterable, Sendable {
    /// GPX 1.1 (``RouteKitGPX/GPXWriter``).
    case gpx
    /// GeoJSON, RFC 7946 (``GeoJSONWriter``).
    case geojson
    /// CSV, a row per point (``CSVWriter``).
    case csv

    /// The format an output's extension names (`.geojson`/`.json`, `.csv`), else GPX.
    package init(forOutput output: String) {
        let lower = output.lowercased()
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") {
            self = .geojson
        } else if lower.hasSuffix(".csv") {
            self = .csv
        } else {
            self = .gpx
        }
    }

    /// The media type an HTTP answer gives it.
    package var contentType: String {
        switch self {
        case .gpx: "application/gpx+xml"
        case .geojson: "application/geo+json"
        case .csv: "text/csv; charset=utf-8"
        }
    }

    /// Whether this format's writer takes events only in GPX 1.1's order (metadata, waypoints, routes, tracks) and
    /// throws on a waypoint or route after a track: GPX's does (`routekit convert` reads a file that has another
    /// order again, to reorder it); GeoJSON's and CSV's take the events as they come, in one pass.
    package var needsGPXOrder: Bool {
        switch self {
        case .gpx: true
        case .geojson, .csv: false
        }
    }

    /// This format's writer on `sink` (which the caller closes): the one place a format names its writer.
    package func makeWriter(to sink: OutputSink) -> any ExportWriter {
        switch self {
        case .gpx: return GPXWriter(to: sink)
        case .geojson: return GeoJSONWriter(to: sink)
        case .csv: return CSVWriter(to: sink)
        }
    }

    /// Runs `body` with this format's writer (``makeWriter(to:)``) on `sink`.
    package func withWriter(
        to sink: OutputSink, _ body: (inout any GPXEventWriter) async throws(RouteKitError) -> Void
    ) async throws(RouteKitError) {
        var writer: any GPXEventWriter = makeWriter(to: sink)
        try await body(&writer)
    }
}

/// A format's writer (``ExportFormat/makeWriter(to:)``): GPX events in, the format's bytes out, and when it is done a
/// sentence on what it wrote (the line `routekit convert` ends with).
package protocol ExportWriter: GPXEventWriter {
    /// What was written, for the person who asked for it.
    /// - Parameter warnings: how many warnings the input's reader gave, as the caller counted them (0 when it did
    ///   not count them).
    func summary(warnings: Int) -> String
}

extension GPXWriter: ExportWriter {
    /// The points written, the input's warnings, and what GPX 1.1 could not hold, separated by semicolons
    /// (`1204 points written; 1 input warning (see routekit inspect)`).
    package func summary(warnings: Int) -> String {
        var parts = ["\(pointsWritten) points written"]
        if warnings > 0 { parts.append("\(warnings) input warning\(warnings == 1 ? "" : "s") (see routekit inspect)") }
        if droppedElements > 0 {
            parts.append(
                "\(droppedElements) extension element\(droppedElements == 1 ? "" : "s") in the GPX namespace"
                    + " not writable in GPX 1.1")
        }
        if droppedValues > 0 { parts.append("\(droppedValues) value(s) outside the schema left out") }
        return parts.joined(separator: "; ")
    }
}

extension GeoJSONWriter: ExportWriter {
    /// `GeoJSON written`, then the input's warnings if it had any.
    package func summary(warnings: Int) -> String { "GeoJSON written" + inputWarnings(warnings) }
}

extension CSVWriter: ExportWriter {
    /// `CSV written`, then the input's warnings if it had any.
    package func summary(warnings: Int) -> String { "CSV written" + inputWarnings(warnings) }
}

/// `; N input warning(s) (see routekit inspect)` when the input had warnings, else nothing: what a writer that counts
/// nothing of its own adds to its summary.
private func inputWarnings(_ warnings: Int) -> String {
    warnings > 0 ? "; \(warnings) input warning(s) (see routekit inspect)" : ""
}

/// Export from a store, for both doors: the file's `<metadata>` its import kept, then routes as tracks, after their
/// workout's waypoints and planned routes when a workout is exported (``StoredRouteEvents``).
package enum StoreExport {
    /// Writes `routes` in `format` to `sink` (which the caller closes); with `workout`, its attachments first.
    ///
    /// The GPX `<metadata>` an import kept (RouteKitIngest's `GPXMetadataStorage`) is written first: that of
    /// `workout`, else of the first route's workout. GeoJSON and CSV have no place for it.
    package static func write(
        _ routes: [RouteSample], attachmentsOf workout: UUID? = nil, from store: any RouteStore,
        as format: ExportFormat, to sink: OutputSink
    ) async throws(RouteKitError) {
        try await format.withWriter(to: sink) { (w: inout any GPXEventWriter) async throws(RouteKitError) in
            try w.write(.document(GPXDocumentInfo(version: "1.1", creator: "RouteKit")))
            if let owner = workout ?? routes.first?.workoutID,
                let metadata = try await StoredRouteEvents.documentMetadata(workout: owner, store: store)
            {
                try w.write(.metadata(metadata))
            }
            if let workout { try await StoredRouteEvents.writeAttachments(workout: workout, store: store, to: &w) }
            for r in routes { try await StoredRouteEvents.writeTrack(route: r, store: store, to: &w) }
            try w.finish()
        }
    }
}
