import RouteKit
import RouteKitGEOS

/// Making a line no more detailed than the pixels that show it: a million-point route becomes a path of a few
/// thousand vertices that looks the same.
enum Decimation {
    /// Map lines: points closer than `radius` pixels to the last kept one are dropped (one pass), then GEOS's
    /// Douglas–Peucker with a tolerance of `tolerance` pixels. The first and last points are always kept.
    static func mapPath(_ points: [Point], radius: Double = 0.5, tolerance: Double = 0.25) -> [Point] {
        guard points.count > 2 else { return points }
        var kept: [Point] = [points[0]]
        kept.reserveCapacity(min(points.count, 65_536))
        let r2 = radius * radius
        for p in points.dropFirst().dropLast() {
            let last = kept[kept.count - 1]
            let dx = p.x - last.x
            let dy = p.y - last.y
            if dx * dx + dy * dy >= r2 { kept.append(p) }
        }
        kept.append(points[points.count - 1])
        guard kept.count > 2 else { return kept }
        // Douglas–Peucker on GEOS, in chunks of 10,000 vertices sharing their ends: GEOS recurses, and on a line
        // where nearly every vertex stays the depth grows with the vertex count. Should GEOS fail (it does not on
        // finite coordinates), the radial pass stands.
        let simplified: [Point]? = try? withGEOSContext { context throws(RouteKitError) -> [Point] in
            var out: [Point] = []
            var start = 0
            while start < kept.count - 1 {
                let end = min(start + chunkSize, kept.count - 1)
                var flat: [Double] = []
                flat.reserveCapacity((end - start + 1) * 2)
                for p in kept[start...end] {
                    flat.append(p.x)
                    flat.append(p.y)
                }
                let c = try GEOSLineString(context: context, coordinates: flat).simplified(tolerance: tolerance)
                    .coordinates()
                var i = out.isEmpty ? 0 : 2  // the chunk's first vertex is the previous chunk's last
                while i + 1 < c.count {
                    out.append(Point(c[i], c[i + 1]))
                    i += 2
                }
                start = end
            }
            return out
        }
        guard let simplified, simplified.count >= 2 else { return kept }
        return simplified
    }

    /// Vertices handed to GEOS at once.
    static let chunkSize = 10_000

    /// Profile lines (x increasing): for every pixel column, the first, lowest, highest and last point in it, in
    /// their order (at most four vertices a column, the same picture as every point). NaN values break the line:
    /// the result is one polyline per unbroken run.
    static func profilePaths(_ points: [Point]) -> [[Point]] {
        var paths: [[Point]] = []
        var current: [Point] = []
        var column = Int.min
        var first = Point(0, 0)
        var low = Point(0, 0)
        var high = Point(0, 0)
        var last = Point(0, 0)
        func flush() {
            guard column != Int.min else { return }
            var four = [first]
            let (a, b) = low.x <= high.x ? (low, high) : (high, low)
            for p in [a, b, last] where p != four[four.count - 1] { four.append(p) }
            current += four
            column = Int.min
        }
        for p in points {
            guard p.y.isFinite, p.x.isFinite else {
                flush()
                if current.count > 1 { paths.append(current) }
                current = []
                continue
            }
            let c = Int(p.x.rounded(.down))
            if c != column {
                flush()
                column = c
                first = p
                low = p
                high = p
            }
            if p.y > low.y { low = p }  // y grows downwards: the lowest value is the largest y
            if p.y < high.y { high = p }
            last = p
        }
        flush()
        if current.count > 1 { paths.append(current) }
        return paths
    }
}
