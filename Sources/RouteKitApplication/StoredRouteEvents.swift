package import Foundation
package import RouteKit
package import RouteKitIngest

/// The events of what a store holds, for any `GPXEventWriter` (GPX 1.1, GeoJSON, CSV): a route as a track (its
/// own fields from its workout, segments from `gpxSegmentStarts` and from the workout's pauses, the workout's
/// quantity series merged back into each point by timestamp, and the point fields the importers kept beside the
/// route), a workout's waypoints and planned routes (its attachments).
package enum StoredRouteEvents {
    /// Writes one route as a `<trk>` (the caller writes `.document` first and calls `finish()` after).
    ///
    /// Segments begin where the route's `gpxSegmentStarts` say, and at the first location after each of the
    /// workout's pauses (``pauseStarts(_:)``): a location whose time is after a pause's start while the previous
    /// location with a time was at or before it, unless a segment starts between the two already. So a FIT
    /// file's timer stops give the same segments whether it is converted (`routekit convert`) or imported and
    /// exported, and a GPX file's segments (whose gaps the import made pauses) get no extra ones.
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
        let pauses = workout.map { Self.pauseStarts($0) } ?? []
        var breaks = PauseBreaks(pauses: pauses, segmentStarts: segmentStarts)
        let chunks = try await store.storedRouteChunks(ofRoute: route.id)
        defer { chunks.close() }
        let decoder = JSONDecoder()
        // What the store's reader may see (an API token narrowed to some quantity types): the series above are only
        // those already; a point's own values of the other types are left out, and so are the extension elements
        // RouteKit does not interpret, which may carry any of them.
        let grant = store.readGrant
        let keepsExtensions = grant.readsEveryQuantity
        while let chunk = try await chunks.next() {
            var points = chunk.locations.map { GPXPoint(location: $0) }
            if let x = chunk.extras {
                let entries: [ExtrasEntry]
                do { entries = try decoder.decode([ExtrasEntry].self, from: Data(x)) } catch {
                    throw RouteKitError(.storage, "route \(route.id) has unreadable extras (chunk \(chunk.sequence))")
                }
                for e in entries where e.i >= 0 && e.i < points.count {
                    if var extras = e.x {
                        if !keepsExtensions { extras.extensions = [] }
                        points[e.i].extras = extras
                    }
                    for (name, value) in e.v ?? [:] {
                        if let type = QuantityType(identifier: name), grant.mayRead(quantity: type) {
                            points[e.i].values[type] = value
                        }
                    }
                }
            }
            merger.apply(to: &points)
            // Where a pause starts a segment in this chunk (indices in it, ascending, never at a segment start).
            let pauseBreaks = breaks.scan(points, from: index)
            var nextBreak = 0
            // Split the chunk at segment starts (several starts at one index are empty segments) and pause breaks.
            var start = 0
            while start < points.count {
                while nextSegment < segmentStarts.count && segmentStarts[nextSegment] <= index + start {
                    if open { try writer.write(.segmentEnd(extensions: [])) }
                    try writer.write(.segmentStart)
                    open = true
                    nextSegment += 1
                }
                while nextBreak < pauseBreaks.count && pauseBreaks[nextBreak] <= start {
                    if open { try writer.write(.segmentEnd(extensions: [])) }
                    try writer.write(.segmentStart)
                    open = true
                    nextBreak += 1
                }
                if !open {
                    try writer.write(.segmentStart)
                    open = true
                }
                var end = points.count
                if nextSegment < segmentStarts.count { end = min(end, segmentStarts[nextSegment] - index) }
                if nextBreak < pauseBreaks.count { end = min(end, pauseBreaks[nextBreak]) }
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

    /// When the workout's pauses start: its pause and motion pause events (resumed or not, as `convert` ends a
    /// segment at every timer stop of a FIT file), in time order.
    package static func pauseStarts(_ workout: Workout) -> [Instant] {
        workout.events.filter { $0.kind.pauses }.compactMap { $0.start?.instant }.sorted()
    }

    /// Finds, chunk by chunk, the locations a pause starts a segment at (see ``writeTrack(route:store:to:)``).
    package struct PauseBreaks {
        /// When the pauses start, in time order.
        let pauses: [Instant]
        /// The route's segment starts (location indices, ascending).
        let segmentStarts: [Int]
        /// The next pause not yet passed.
        private var nextPause = 0
        /// The next segment start not yet passed.
        private var nextSegment = 0
        /// The last segment start at or before the location being looked at, -1 before any.
        private var lastStart = -1
        /// The index of the last location with a time, -1 before any.
        private var previousTimed = -1

        /// Breaks for `pauses` (``pauseStarts(_:)``) in a route whose segments start at `segmentStarts`.
        package init(pauses: [Instant], segmentStarts: [Int]) {
            self.pauses = pauses
            self.segmentStarts = segmentStarts
        }

        /// The indices in `points` (the route's locations from index `first` on, the chunks in order) where a
        /// pause starts a new segment: a location with a time after a pause's start whose previous location
        /// with a time was at or before it, unless a segment starts after that previous one and up to this one.
        package mutating func scan(_ points: [GPXPoint], from first: Int) -> [Int] {
            var out: [Int] = []
            guard nextPause < pauses.count else { return out }
            for i in points.indices {
                let index = first + i
                while nextSegment < segmentStarts.count && segmentStarts[nextSegment] <= index {
                    lastStart = segmentStarts[nextSegment]
                    nextSegment += 1
                }
                guard let t = points[i].location.timestamp?.instant else { continue }
                var passed = false
                while nextPause < pauses.count && pauses[nextPause] < t {
                    passed = true
                    nextPause += 1
                }
                if passed && previousTimed >= 0 && lastStart <= previousTimed { out.append(i) }
                previousTimed = index
                if nextPause == pauses.count { break }
            }
            return out
        }
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
        let grant = store.readGrant
        for p in a.waypoints { try writer.write(.waypoint(Self.readable(p, grant))) }
        for r in a.routes {
            try writer.write(.routeStart(r.info))
            var s = 0
            while s < r.points.count {
                let e = min(s + 1024, r.points.count)
                try writer.write(.routePoints(r.points[s..<e].map { Self.readable($0, grant) }))
                s = e
            }
            try writer.write(.routeEnd(r.info))
        }
    }

    /// `point` as `grant` may see it: without the values of quantity types it may not read, and without the extension
    /// elements RouteKit does not interpret (which may carry any type) unless it may read every type.
    static func readable(_ point: GPXPoint, _ grant: TokenGrant) -> GPXPoint {
        guard !grant.readsEveryQuantity else { return point }
        var out = point
        for type in QuantityType.all where !grant.mayRead(quantity: type) { out.values[type] = nil }
        if var extras = out.extras {
            extras.extensions = []
            out.extras = extras
        }
        return out
    }
}
