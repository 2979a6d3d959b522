import Foundation
public import RouteKit
public import RouteKitGEOS

/// Douglas–Peucker simplification on GEOS with a tolerance in metres.
public struct SimplificationOptions: Sendable, Hashable, Codable {
    /// The largest distance, metres, between a dropped point and the simplified line.
    public var toleranceMetres: Double
    /// GEOS's topology-preserving variant (no self-intersections introduced; slower, keeps more points).
    public var preserveTopology: Bool
    /// Points per chunk: each chunk is projected around its first point and simplified on its own (chunks
    /// share their end points, so the output is one continuous line). Bounds GEOS's recursion depth and its
    /// worst case (a zig-zag whose every point is kept is quadratic in the chunk size): after a chunk that
    /// kept more than 75 % of its points, chunks shrink to a sixteenth (at least 1,000 points) until one keeps
    /// less than half.
    public var chunkSize: Int

    /// Defaults: 5 m, plain Douglas–Peucker, chunks of 20,000 points.
    public init(toleranceMetres: Double = 5, preserveTopology: Bool = false, chunkSize: Int = 20_000) {
        self.toleranceMetres = toleranceMetres
        self.preserveTopology = preserveTopology
        self.chunkSize = chunkSize
    }
}

/// Simplifies in chunks; returns the indices kept (a subsequence, first and last always kept) and the largest
/// distance of a dropped point to the output segment that spans it, in the same chunk projection.
///
/// Each chunk is projected around the middle of its extent (`SimplifiedIndices.frames`): the tolerance holds
/// exactly in that projection, and within its scale error (about tan(latitude) × the chunk's half-height in
/// radians: a few parts in ten thousand for a chunk 5 km high) in any other.
///
/// - Throws: `RouteKitError.Code.invalidArgument` for a tolerance that is not finite and ≥ 0 or a chunk size
///   below 3; `RouteKitError.Code.geos` if GEOS fails.
public func simplifyIndices(_ locations: [Location], options: SimplificationOptions, context: GEOSContext)
    throws(RouteKitError) -> SimplifiedIndices
{
    guard options.toleranceMetres.isFinite, options.toleranceMetres >= 0 else {
        throw RouteKitError(.invalidArgument, "the tolerance must be a finite number of metres ≥ 0")
    }
    guard options.chunkSize >= 3 else { throw RouteKitError(.invalidArgument, "the chunk size must be at least 3") }
    let n = locations.count
    if n <= 2 {
        let frame = LocalProjection(
            latitude: locations.first?.latitude ?? 0, longitude: locations.first?.longitude ?? 0)
        return SimplifiedIndices(keep: Array(0..<n), maxDeviation: 0, frames: [(0, frame)])
    }
    var keep: [Int] = [0]
    keep.reserveCapacity(n / 2)
    var maxDeviation = 0.0
    var boundaries: [Int] = []  // positions in `keep` of chunk ends other than the last point
    var start = 0
    var buffer: [Double] = []
    // Chunks start at `chunkSize`; after a chunk that kept most of its points (a zig-zag, where Douglas–Peucker
    // is quadratic and recurses once per point) they shrink to a sixteenth until the line simplifies again.
    var size = options.chunkSize
    let small = max(3, min(options.chunkSize, max(1_000, options.chunkSize / 16)))
    var result = SimplifiedIndices(keep: [], maxDeviation: 0, frames: [])
    /// A frame around the middle of the chunk's extent.
    func chunkFrame(_ from: Int, _ to: Int) -> LocalProjection {
        var minLat = 90.0
        var maxLat = -90.0
        for i in from...to {
            minLat = min(minLat, locations[i].latitude)
            maxLat = max(maxLat, locations[i].latitude)
        }
        let mid = from + (to - from) / 2
        return LocalProjection(latitude: (minLat + maxLat) / 2, longitude: locations[mid].longitude)
    }
    while start < n - 1 {
        let end = min(n - 1, start + size - 1)
        let frame = chunkFrame(start, end)
        result.frames.append((start, frame))
        buffer.removeAll(keepingCapacity: true)
        for i in start...end {
            let p = frame.project(latitude: locations[i].latitude, longitude: locations[i].longitude)
            buffer.append(p.x)
            buffer.append(p.y)
            buffer.append(Double(i - start))  // the index rides along in Z, bit-identical through GEOS
        }
        let line = try GEOSLineString(context: context, coordinates: buffer, dimensions: 3)
        let simplified = try line.simplified(
            tolerance: options.toleranceMetres, preservingTopology: options.preserveTopology)
        let out = try simplified.coordinates(dimensions: 3)
        var kept: [Int] = []
        kept.reserveCapacity(out.count / 3)
        var k = 2
        while k < out.count {
            let z = out[k]
            let j = Int(exactly: z) ?? -1
            guard j >= 0, j <= end - start, kept.last.map({ j > $0 }) ?? true else {
                throw RouteKitError(.geos, "GEOS returned a vertex that is not one of its input's, in order")
            }
            kept.append(j)
            k += 3
        }
        // GEOS keeps both ends; make sure of it.
        if kept.first != 0 { kept.insert(0, at: 0) }
        if kept.last != end - start { kept.append(end - start) }
        for b in kept.dropFirst() { keep.append(start + b) }
        if end < n - 1 { boundaries.append(keep.count - 1) }
        let ratio = Double(kept.count) / Double(end - start + 1)
        if ratio > 0.75 { size = small } else if ratio < 0.5 { size = options.chunkSize }
        start = end
    }
    // A chunk's end is kept only because it is an end: drop it when the segment that then spans it is within
    // the tolerance of every point it spans (measured in the frame of the chunk the segment starts in).
    var drop = Set<Int>()
    for position in boundaries {
        let a = keep[position - 1]
        let b = keep[position + 1]
        let frame = result.frame(at: a)
        let pa = frame.project(latitude: locations[a].latitude, longitude: locations[a].longitude)
        let pb = frame.project(latitude: locations[b].latitude, longitude: locations[b].longitude)
        var fits = true
        for m in (a + 1)..<b {
            let p = frame.project(latitude: locations[m].latitude, longitude: locations[m].longitude)
            if segmentDistance(p.x, p.y, pa.x, pa.y, pb.x, pb.y) > options.toleranceMetres {
                fits = false
                break
            }
        }
        if fits { drop.insert(position) }
    }
    if !drop.isEmpty { keep = keep.enumerated().filter { !drop.contains($0.offset) }.map(\.element) }
    // The stage's own metric: every dropped point against the output segment that spans it.
    for s in 0..<(keep.count - 1) {
        let a = keep[s]
        let b = keep[s + 1]
        guard b - a > 1 else { continue }
        let frame = result.frame(at: a)
        let pa = frame.project(latitude: locations[a].latitude, longitude: locations[a].longitude)
        let pb = frame.project(latitude: locations[b].latitude, longitude: locations[b].longitude)
        for m in (a + 1)..<b {
            let p = frame.project(latitude: locations[m].latitude, longitude: locations[m].longitude)
            maxDeviation = max(maxDeviation, segmentDistance(p.x, p.y, pa.x, pa.y, pb.x, pb.y))
        }
    }
    result.keep = keep
    result.maxDeviation = maxDeviation
    return result
}

/// What ``simplifyIndices(_:options:context:)`` kept, and in which projections it measured.
public struct SimplifiedIndices: @unchecked Sendable {
    /// The indices kept: a subsequence of the input's, first and last always.
    public var keep: [Int]
    /// The largest distance of a dropped point to the output segment that spans it, metres.
    public var maxDeviation: Double
    /// The projections: each applies from its start index (a segment is measured in the projection of the
    /// chunk its first point is in).
    package var frames: [(start: Int, projection: LocalProjection)]

    /// The projection a segment starting at index `i` is measured in.
    public func frame(at i: Int) -> LocalProjection {
        var lo = 0
        var hi = frames.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if frames[mid].start <= i { lo = mid } else { hi = mid - 1 }
        }
        return frames[lo].projection
    }
}

/// Distance from (px, py) to the segment (ax, ay)–(bx, by).
@inline(__always) func segmentDistance(
    _ px: Double, _ py: Double, _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double
) -> Double {
    let dx = bx - ax
    let dy = by - ay
    let len2 = dx * dx + dy * dy
    var t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0
    t = min(1, max(0, t))
    let cx = ax + t * dx - px
    let cy = ay + t * dy - py
    return (cx * cx + cy * cy).squareRoot()
}
