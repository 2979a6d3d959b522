public import RouteKit
public import RouteKitIngest

extension TCXDocument {
    /// The document as the GPX reader's events, for `routekit convert` and `inspect`: what GPX can hold.
    ///
    /// - Each activity becomes one `<trk>` (named after its `Id`, its sport as type), each of its `Track`s a
    ///   `<trkseg>`, each trackpoint with a position a point with its time, altitude, speed, heart rate, cadence
    ///   and power. Trackpoints without a position cannot be GPX points and are counted in a warning.
    /// - Each course becomes one `<rte>` of its positioned trackpoints, its course points `<wpt>`s (written
    ///   first, as GPX 1.1 orders them).
    /// - The parser's warnings come first, as `GPXEvent.warning(_:)` events.
    /// - Throws: what `emit` throws.
    public func gpxEvents(_ emit: (GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) {
        var document = GPXDocumentInfo(version: "1.1", creator: "RouteKit (from TCX)")
        if let authorName { document.creator = "RouteKit (from TCX by \(authorName))" }
        try emit(.document(document))
        for w in warnings { try emit(.warning(GPXWarning(kind: "tcx", message: w))) }
        var invalid = 0
        for course in courses {
            for c in course.coursePoints {
                guard let p = c.waypoint(invalid: &invalid) else { continue }
                try emit(.waypoint(p))
            }
        }
        for course in courses {
            var info = GPXPathInfo()
            info.name = course.name
            try emit(.routeStart(info))
            let points = course.trackpoints.compactMap { p in
                TCXImporter.location(p, invalid: &invalid).map { GPXPoint(location: $0) }
            }
            if !points.isEmpty { try emit(.routePoints(points)) }
            try emit(.routeEnd(info))
        }
        var withoutPosition = 0
        for activity in activities {
            var info = GPXPathInfo()
            info.name = activity.idText ?? activity.sport
            info.type = activity.sport
            try emit(.trackStart(info))
            for lap in activity.laps {
                for track in lap.tracks {
                    try emit(.segmentStart)
                    var batch: [GPXPoint] = []
                    for p in track {
                        guard let l = TCXImporter.location(p, invalid: &invalid) else {
                            if !p.hasPosition { withoutPosition += 1 }
                            continue
                        }
                        batch.append(GPXPoint(location: l, values: TCXImporter.values(p)))
                        if batch.count == 1024 {
                            try emit(.trackPoints(batch))
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    if !batch.isEmpty { try emit(.trackPoints(batch)) }
                    try emit(.segmentEnd(extensions: []))
                }
            }
            try emit(.trackEnd(info))
        }
        if withoutPosition > 0 {
            try emit(
                .warning(
                    GPXWarning(
                        kind: "tcx.trackpointsWithoutPosition",
                        message:
                            "\(withoutPosition) trackpoint(s) without a position cannot be GPX points and were left out"
                    )))
        }
        if invalid > 0 {
            try emit(
                .warning(
                    GPXWarning(
                        kind: "tcx.invalidPositions",
                        message: "\(invalid) point(s) with a position outside the valid range were left out")))
        }
    }
}

extension TCXCoursePoint {
    /// The course point as a GPX waypoint (name, type, notes), `nil` without a valid position (an invalid one is
    /// counted).
    func waypoint(invalid: inout Int) -> GPXPoint? {
        guard let latitude, let longitude else { return nil }
        let l = Location(latitude: latitude, longitude: longitude, timestamp: time, altitude: altitude)
        guard (try? l.validate()) != nil else {
            invalid += 1
            return nil
        }
        var extras = GPXPointExtras()
        extras.name = name
        extras.type = pointType
        extras.comment = notes
        return GPXPoint(location: l, extras: extras)
    }
}
