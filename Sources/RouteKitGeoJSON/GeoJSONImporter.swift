import Foundation
package import RouteKit
package import RouteKitIngest

/// A GeoJSON file read whole: GeoJSON is one JSON value, so it is held in memory, up to
/// ``GeoJSONReader/maxBytes`` (gzip decompressed).
package enum GeoJSONFile {
    /// The bytes of the GeoJSON file at `path` (decompressed when it is gzip), and whether it was gzip.
    /// - Throws: ``RouteKit/RouteKitError/Code/invalidGeoJSON`` past ``GeoJSONReader/maxBytes``;
    ///   ``RouteKit/RouteKitError/Code/io`` when it cannot be read, ``RouteKit/RouteKitError/Code/compression`` for
    ///   corrupt gzip.
    package static func contents(of path: String) throws(RouteKitError) -> (bytes: [UInt8], gzip: Bool) {
        // One byte more than the limit is read, never the rest: a larger file (or a gzip bomb) stops there.
        let read = try InputFile.contents(of: path, limit: GeoJSONReader.maxBytes + 1, stopAtLimit: true)
        try GeoJSONReader.checkSize(read.bytes.count, name: path)
        return read
    }

    /// The events of the GeoJSON held in `bytes` (named `name` in errors), as GPX's reader gives a file's: each
    /// `LineString` or `MultiLineString` a track (``RouteKitIngest/GPXEvent/trackStart(_:)``, a segment per line), or a
    /// route when it is one; each point a waypoint; the reader's warnings last. With `inGPXOrder` (GPX 1.1's writer
    /// needs it) the document is read three times, for its waypoints, then its routes, then its tracks; otherwise once,
    /// in document order.
    package static func events(
        of bytes: [UInt8], name: String, inGPXOrder: Bool, _ emit: (GPXEvent) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        try emit(.document(GPXDocumentInfo()))
        let passes: [Set<GeoJSONFeature.Kind>] =
            inGPXOrder ? [[.waypoints], [.route], [.track]] : [[.waypoints, .route, .track]]
        var warnings: [String] = []
        for kinds in passes {
            var reader = try GeoJSONReader(bytes: bytes, name: name)
            while let feature = try reader.next() {
                guard kinds.contains(feature.kind) else { continue }
                try events(of: feature, emit)
            }
            warnings = reader.warnings
        }
        for w in warnings { try emit(.warning(GPXWarning(kind: "geojson", message: w))) }
    }

    /// The events of one feature.
    static func events(of feature: GeoJSONFeature, _ emit: (GPXEvent) throws(RouteKitError) -> Void)
        throws(RouteKitError)
    {
        switch feature.kind {
        case .waypoints:
            for p in feature.waypoints() { try emit(.waypoint(p)) }
        case .route:
            try emit(.routeStart(feature.info))
            for line in 0..<feature.lineCount {
                for batch in batches(feature.positions(ofLine: line)) { try emit(.routePoints(feature.points(batch))) }
            }
            try emit(.routeEnd(feature.info))
        case .track:
            try emit(.trackStart(feature.info))
            for line in 0..<feature.lineCount {
                try emit(.segmentStart)
                for batch in batches(feature.positions(ofLine: line)) { try emit(.trackPoints(feature.points(batch))) }
                try emit(.segmentEnd(extensions: []))
            }
            try emit(.trackEnd(feature.info))
        }
    }

    /// `range` cut into ranges of at most `RouteBuilder.chunkSize` positions.
    static func batches(_ range: Range<Int>) -> [Range<Int>] {
        stride(from: range.lowerBound, to: range.upperBound, by: RouteBuilder.chunkSize).map {
            $0..<min($0 + RouteBuilder.chunkSize, range.upperBound)
        }
    }
}

/// Imports GeoJSON (RFC 7946) files into a store, through the same engine as GPX (`TrackImport`): what
/// ``GeoJSONReader`` reads of each feature.
///
/// - **Tracks**: each `LineString` or `MultiLineString` feature becomes a workout (its `properties.name`, `desc`,
///   `cmt`, `src` and `type` kept as a GPX track's are: `name`, `description`, `comment`, `gpxSource`, `gpxType`; the
///   activity guessed from `type`) with one route of every position in order, with its altitude and its time from
///   `coordTimes`; each line is a segment (a workout segment event, `gpxSegmentStarts`), the gap between two a pause
///   and a resume.
/// - **Routes and waypoints**: a line whose `properties.kind` is `route` (RouteKit's GeoJSON) or whose `_gpxType` is
///   `rte` (togeojson's) is a planned route, and `Point`s and `MultiPoint`s waypoints (with `name`, `desc`, `sym` and
///   `time`): stored with the workout of the file's first track, as GPX's are, or, without a track, in a workout of
///   their own.
/// - **Identity**: a track's sync identifier is `geojson-` and a hash of its content (positions, times, lines,
///   fields), so importing the same file again, under any name or layout, is `unchanged`. A track exported from the
///   store as GeoJSON and imported again is a new workout: it has less than the original (no sensor values).
/// - **Memory**: the document is read whole (up to ``GeoJSONReader/maxBytes``); its features are imported one at a
///   time.
package final class GeoJSONImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "geojson-import"

    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source
    /// Values that win over the file's own for the workouts this importer creates.
    package var workoutOverrides: WorkoutOverrides?

    /// Creates an importer.
    package init(store: any RouteStore, source: Source = .defaultImport) {
        self.store = store
        self.source = source
    }

    /// Imports one file (plain or gzip). Never throws: failures are in the result, naming the file, the line and
    /// column, and the member at fault.
    package func importFile(_ path: String) async -> ImportResult {
        let read = Result { () throws(RouteKitError) -> (bytes: [UInt8], gzip: Bool) in
            try GeoJSONFile.contents(of: path)
        }
        // Builders record the file by its absolute path: `routekit recover` may run from another folder.
        let label = URL(fileURLWithPath: path).standardizedFileURL.path
        return await .collect(file: path) { result in
            let file = try read.get()
            if file.gzip { result.warnings.append("the file is gzip-compressed; it was decompressed while reading") }
            try await importDocument(file.bytes, name: path, label: label, into: &result)
        }
    }

    /// Imports GeoJSON held in memory (an archive's entry, decompressed), reported and labelled as `name`.
    package func importBytes(_ bytes: [UInt8], name: String) async -> ImportResult {
        await .collect(file: name) { result in
            try await importDocument(bytes, name: name, label: name, into: &result)
        }
    }

    /// Imports a document: its features one at a time, then its waypoints and routes.
    func importDocument(_ bytes: [UInt8], name: String, label: String, into result: inout ImportResult)
        async throws
    {
        var reader = try GeoJSONReader(bytes: bytes, name: name)
        let context = ImportContext(store: store, source: source, workoutOverrides: workoutOverrides)
        var attachments = GPXAttachments()
        var features = 0
        while let feature = try reader.next() {
            features += 1
            switch feature.kind {
            case .waypoints:
                for p in feature.waypoints() {
                    attachments.add(waypoint: p)
                    result.waypoints += 1
                }
            case .route:
                attachments.startRoute(feature.info)
                for line in 0..<feature.lineCount {
                    for batch in GeoJSONFile.batches(feature.positions(ofLine: line)) {
                        attachments.add(routePoints: feature.points(batch))
                    }
                }
                attachments.endRoute(feature.info)
            case .track:
                try await importTrack(feature, context: context, label: label, into: &result)
            }
        }
        result.warnings += reader.warnings
        if features == 0 { result.warnings.append("the file holds no feature: nothing to import") }
        if !attachments.isEmpty {
            try await context.store(attachments, creator: nil, into: &result, syncPrefix: "geojson-")
            if attachments.dropped > 0 {
                result.warnings.append(
                    "\(attachments.dropped) waypoint or route point(s) beyond \(GPXAttachments.maxPoints) were not "
                        + "stored")
            }
        }
    }

    /// One track: its lines as segments, through the import engine.
    private func importTrack(
        _ feature: GeoJSONFeature, context: ImportContext, label: String, into result: inout ImportResult
    ) async throws {
        let track = TrackImport(
            context: context, label: label, info: feature.info, creator: nil, allowResume: true,
            originKind: Self.originKind, syncPrefix: "geojson-")
        for line in 0..<feature.lineCount {
            track.segmentStart()
            for batch in GeoJSONFile.batches(feature.positions(ofLine: line)) {
                try await track.add(feature.points(batch))
            }
        }
        let done = try await track.finish(info: feature.info)
        result.tracks.append(done.track)
        result.warnings += done.warnings
    }
}
