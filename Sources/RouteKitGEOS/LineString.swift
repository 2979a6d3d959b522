internal import CGEOS
public import RouteKit

/// A GEOS line string owned by Swift, tied to the ``GEOSContext`` that made it.
///
/// Coordinates go in and out in bulk (`GEOSCoordSeq_copyFromBuffer_r` / `copyToBuffer_r`), never one C call
/// per point. Non-finite coordinates are refused before GEOS sees them (GEOS loops forever on some of
/// them). The optional third ordinate travels through simplification bit-identical, which is how callers
/// map kept vertices back to their input indices.
public final class GEOSLineString {
    let context: GEOSContext
    let geometry: OpaquePointer

    private init(context: GEOSContext, geometry: OpaquePointer) {
        self.context = context
        self.geometry = geometry
    }

    /// Builds a line string from interleaved coordinates.
    ///
    /// - Parameters:
    ///   - context: the worker's GEOS context, which the line string belongs to.
    ///   - coordinates: `x0, y0, x1, y1, …` (`dimensions` = 2) or `x0, y0, z0, …` (`dimensions` = 3).
    ///   - dimensions: 2 or 3.
    /// - Throws: `RouteKitError.Code.invalidArgument` for a non-finite value (naming its point index), a
    ///   length that is not a multiple of `dimensions`, or exactly one point (GEOS needs 0 or ≥ 2);
    ///   `RouteKitError.Code.geos` if GEOS fails.
    public convenience init(context: GEOSContext, coordinates: [Double], dimensions: Int = 2) throws(RouteKitError) {
        guard dimensions == 2 || dimensions == 3 else {
            throw RouteKitError(.invalidArgument, "dimensions must be 2 or 3, not \(dimensions)")
        }
        guard coordinates.count % dimensions == 0 else {
            throw RouteKitError(
                .invalidArgument, "coordinate count \(coordinates.count) is not a multiple of \(dimensions)")
        }
        let count = coordinates.count / dimensions
        if count == 1 {
            throw RouteKitError(.invalidArgument, "a line string needs 0 or at least 2 points, not 1")
        }
        if let bad = coordinates.firstIndex(where: { !$0.isFinite }) {
            throw RouteKitError(
                .invalidArgument, "coordinate of point \(bad / dimensions) is not finite", index: bad / dimensions)
        }
        context.clearError()
        let sequence: OpaquePointer? = coordinates.withUnsafeBufferPointer { buffer in
            GEOSCoordSeq_copyFromBuffer_r(
                context.handle, buffer.baseAddress, UInt32(count), dimensions == 3 ? 1 : 0, 0)
        }
        guard let sequence else { throw context.error("GEOSCoordSeq_copyFromBuffer_r") }
        // GEOSGeom_createLineString_r takes ownership of the sequence, even when it fails.
        guard let geometry = GEOSGeom_createLineString_r(context.handle, sequence) else {
            throw context.error("GEOSGeom_createLineString_r")
        }
        self.init(context: context, geometry: geometry)
    }

    deinit {
        GEOSGeom_destroy_r(context.handle, geometry)
    }

    /// Number of points.
    public var count: Int {
        Int(GEOSGeomGetNumPoints_r(context.handle, geometry))
    }

    /// Planar length in the coordinates' unit.
    public func length() throws(RouteKitError) -> Double {
        var value = 0.0
        context.clearError()
        guard GEOSLength_r(context.handle, geometry, &value) == 1 else { throw context.error("GEOSLength_r") }
        return value
    }

    /// Douglas–Peucker simplification (`GEOSSimplify_r`), or the topology-preserving variant.
    ///
    /// The output's vertices are a subsequence of the input's, bit-identical, third ordinate included.
    ///
    /// - Important: both algorithms recurse; on inputs where almost every vertex is kept their depth grows
    ///   with the point count and can overflow the stack past about 100,000 points. Callers simplify long
    ///   routes in bounded chunks.
    public func simplified(tolerance: Double, preservingTopology: Bool = false) throws(RouteKitError) -> GEOSLineString
    {
        guard tolerance.isFinite, tolerance >= 0 else {
            throw RouteKitError(.invalidArgument, "tolerance must be a finite number ≥ 0")
        }
        context.clearError()
        let result =
            preservingTopology
            ? GEOSTopologyPreserveSimplify_r(context.handle, geometry, tolerance)
            : GEOSSimplify_r(context.handle, geometry, tolerance)
        guard let result else {
            throw context.error(preservingTopology ? "GEOSTopologyPreserveSimplify_r" : "GEOSSimplify_r")
        }
        return GEOSLineString(context: context, geometry: result)
    }

    /// The coordinates, interleaved with `dimensions` (2 or 3) values per point.
    ///
    /// An empty geometry returns `[]`. A simplification result that is not a line string (GEOS may
    /// collapse a closed ring) also returns its points in order.
    public func coordinates(dimensions: Int = 2) throws(RouteKitError) -> [Double] {
        guard dimensions == 2 || dimensions == 3 else {
            throw RouteKitError(.invalidArgument, "dimensions must be 2 or 3, not \(dimensions)")
        }
        if GEOSisEmpty_r(context.handle, geometry) == 1 { return [] }
        context.clearError()
        guard let sequence = GEOSGeom_getCoordSeq_r(context.handle, geometry) else {
            throw context.error("GEOSGeom_getCoordSeq_r")
        }
        var size: UInt32 = 0
        guard GEOSCoordSeq_getSize_r(context.handle, sequence, &size) == 1 else {
            throw context.error("GEOSCoordSeq_getSize_r")
        }
        var out = [Double](repeating: 0, count: Int(size) * dimensions)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            GEOSCoordSeq_copyToBuffer_r(context.handle, sequence, buffer.baseAddress, dimensions == 3 ? 1 : 0, 0)
        }
        guard ok == 1 else { throw context.error("GEOSCoordSeq_copyToBuffer_r") }
        return out
    }
}

@available(*, unavailable)
extension GEOSLineString: Sendable {}
