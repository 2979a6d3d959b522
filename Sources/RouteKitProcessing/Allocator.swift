internal import CRouteKitSystem

/// Process-wide allocator settings for batch processing.
@_spi(RouteKitInternals)
public enum BatchAllocator {
    /// Keeps route-sized buffers (up to 32 MiB, a route of about 300,000 locations) in the allocator's heaps
    /// instead of mapping and unmapping them for every route, and lets freed memory stay for the next route.
    ///
    /// With glibc's defaults, each worker maps its pipeline's arrays afresh and unmaps them after the route; the
    /// page faults and unmaps of two workers serialise on the process's memory map, and two workers fall well
    /// short of twice the speed of one; with this they come close (the `BatchScaling` benchmark's compute-only
    /// mode; figures in `Benchmarks/README.md`). Larger buffers (routes of millions of points) are still mapped
    /// and given back.
    /// Call it once, before starting workers; it does nothing on platforms without glibc.
    public static func tuneForBatchProcessing() {
        #if os(Linux)
            _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
            _ = mallopt(M_TRIM_THRESHOLD, 64 << 20)
        #endif
    }

    /// Gives memory the allocator holds but no longer uses back to the system (glibc's `malloc_trim`): for a
    /// server after a burst of connections has gone. Does nothing on platforms without glibc.
    package static func returnFreeMemory() {
        #if os(Linux)
            _ = malloc_trim(0)
        #endif
    }
}
