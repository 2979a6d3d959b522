package import Foundation
package import RouteKit
package import RouteKitIngest

/// The events of what a store holds, for any `GPXEventWriter` (GPX 1.1, GeoJSON, CSV): a route as a track (its
/// own fields from its workout, segments from `gpxSegmentStarts`, the workout's quantity series merged back into
/// each point by timestamp, and the point fields the importers kept beside the route), a workout's waypoints and
/// planned routes (its attachments).
package enum StoredRouteEvents {
    /// Writes one route as a `<trk>` (the caller writes `.document` first and calls `finish()` after).
    ///
    /// Memory: one chunk of locations, plus the workout's series (held whole to merge by timestamp).
    package static func writeTrack<W: GPXEventWriter>(
        route: RouteSample, store: any RouteStore, to writer: inout W
    ) async throws(RouteKitError) {
        let workout = try await store.workout(id: route.workoutID)
        try writer.write(.trackStart(pathInfo(workout)))
        var series: [QuantitySeries] = []
        if let workout {
            for type in try await store.seriesTypes(ofWorkout: workout.id) {
                series.append(
                    QuantitySeries(type: type, samples: try await store.allSamples(of: type, workout: workout.id)))
            }
        }
        var merger = SeriesMerger(series)
        let segmentStarts = route.segmentStarts.isEmpty ? [0] : route.segmentStarts
        var nextSegment = 0  // index into segmentStarts of the next segment to open
        var index = 0
        var open = false
        let chunks = try await store.storedRouteChunks(ofRoute: route.id)
        defer { chunks.close() }
        let decoder = JSONDecoder()
        while let chunk = try await chunks.next() {
            var points = chunk.locations.map { GPXPoint(location: $0) }
            if let x = chunk.extras {
                let entries: [ExtrasEntry]
                do { entries = try decoder.decode([ExtrasEntry].self, from: Data(x)) } catch {
                    throw RouteKitError(.storage, "route \(route.id) has unreadable extras (chunk \(chunk.sequence))")
                }
                for e in entries where e.i >= 0 && e.i < points.count {
                    if let extras = e.x { points[e.i].extras = extras }
                    for (name, value) in e.v ?? [:] {
                        if let type = QuantityType(identifier: name) { points[e.i].values[type] = value }
                    }
                }
            }
            merger.apply(to: &points)
            // Split the chunk at segment starts (several starts at one index are empty segments).
            var start = 0
            while start < points.count {
                while nextSegment < segmentStarts.count && segmentStarts[nextSegment] <= index + start {
                    if open { try writer.write(.segmentEnd(extensions: [])) }
                    try writer.write(.segmentStart)
                    open = true
                    nextSegment += 1
                }
                if !open {
                    try writer.write(.segmentStart)
                    open = true
                }
                var end = points.count
                if nextSegment < segmentStarts.count { end = min(end, segmentStarts[nextSegment] - index) }
                try writer.write(.trackPoints(Array(points[start..<end])))
                start = end
            }
            index += points.count
        }
        // Empty segments after the last point.
        while nextSegment < segmentStarts.count {
            if open { try writer.write(.segmentEnd(extensions: [])) }
            try writer.write(.segmentStart)
            open = true
            nextSegment += 1
        }
        if open { try writer.write(.segmentEnd(extensions: [])) }
        try writer.write(.trackEnd(pathInfo(workout)))
    }

    /// The `<trk>` fields the importer kept in the workout's metadata.
    static func pathInfo(_ workout: Workout?) -> GPXPathInfo {
        var info = GPXPathInfo()
        guard let m = workout?.metadata else { return info }
        func string(_ key: String) -> String? {
            if case .string(let s)? = m[key] { return s }
            return nil
        }
        info.name = string("name")
        info.description = string("description")
        info.comment = string("comment")
        info.source = string("gpxSource")
        info.type =
            string("gpxType") ?? workout.map { $0.activityType == .other ? nil : $0.activityType.rawValue } ?? nil
        if case .integer(let n)? = m["gpxNumber"] { info.number = Int(exactly: n) }
        if let links = string("gpxLinks"),
            let decoded = try? JSONDecoder().decode([GPXLink].self, from: Data(links.utf8))
        {
            info.links = decoded
        }
        if let ext = string("gpxExtensions"),
            let decoded = try? JSONDecoder().decode([String].self, from: Data(ext.utf8))
        {
            info.extensions = decoded
        }
        return info
    }
}

extension StoredRouteEvents {
    /// The GPX `<metadata>` the import of a workout's file kept (RouteKitIngest's `GPXMetadataStorage`), `nil` when
    /// it kept none (or the workout does not exist). Write it after `.document`, before anything else.
    package static func documentMetadata(workout: UUID, store: any RouteStore) async throws(RouteKitError)
        -> GPXMetadata?
    {
        guard let stored = try await store.workout(id: workout) else { return nil }
        return GPXMetadataStorage.metadata(stored.metadata[GPXMetadataStorage.key])
    }

    /// Writes a workout's stored waypoints and routes (call it after `.document`, before any track).
    package static func writeAttachments<W: GPXEventWriter>(
        workout: UUID, store: any RouteStore, to writer: inout W
    ) async throws(RouteKitError) {
        let a = try await GPXAttachments.read(workout: workout, from: store)
        for p in a.waypoints { try writer.write(.waypoint(p)) }
        for r in a.routes {
            try writer.write(.routeStart(r.info))
            var s = 0
            while s < r.points.count {
                let e = min(s + 1024, r.points.count)
                try writer.write(.routePoints(Array(r.points[s..<e])))
                s = e
            }
            try writer.write(.routeEnd(r.info))
        }
    }
}
