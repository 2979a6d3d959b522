package import Foundation
package import RouteKit
package import RouteKitGPX
package import RouteKitIngest

/// The formats a route or workout is exported in (`routekit export`, `routekit convert`,
/// `GET /v1/routes/ID/export`), and the writer of each: one switch for every door.
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

    /// Runs `body` with this format's writer on `sink`.
    package func withWriter(
        to sink: OutputSink, _ body: (inout any GPXEventWriter) async throws(RouteKitError) -> Void
    ) async throws(RouteKitError) {
        var writer: any GPXEventWriter
        switch self {
        case .gpx: writer = GPXWriter(to: sink)
        case .geojson: writer = GeoJSONWriter(to: sink)
        case .csv: writer = CSVWriter(to: sink)
        }
        try await body(&writer)
    }
}

/// Export from a store, for both doors: routes as tracks, after their workout's waypoints and planned routes when a
/// workout is exported (``StoredRouteEvents``).
package enum StoreExport {
    /// Writes `routes` in `format` to `sink` (which the caller closes); with `workout`, its attachments first.
    package static func write(
        _ routes: [RouteSample], attachmentsOf workout: UUID? = nil, from store: any RouteStore,
        as format: ExportFormat, to sink: OutputSink
    ) async throws(RouteKitError) {
        try await format.withWriter(to: sink) { (w: inout any GPXEventWriter) async throws(RouteKitError) in
            try w.write(.document(GPXDocumentInfo(version: "1.1", creator: "RouteKit")))
            if let workout { try await StoredRouteEvents.writeAttachments(workout: workout, store: store, to: &w) }
            for r in routes { try await StoredRouteEvents.writeTrack(route: r, store: store, to: &w) }
            try w.finish()
        }
    }
}
