import Foundation

// Package doors to the backend interface (`@_spi(RouteKitBackend)`) for RouteKit's own modules that are not backends
// (the import engine, the processing batch job, the export of stored routes, the HTTP service): each is what one of
// them needs from the store, with only public types in its signature, so that the backend SPI is imported by the
// backends and the test kit alone. Like `HeldRoute` and `RouteBuilder`, they call the SPI requirements here.

/// A watch of a store's commits: the store's `CommitWaiter`, for the HTTP service's feed hub.
package final class CommitWatch {
    private let waiter: any CommitWaiter

    init(_ waiter: any CommitWaiter) { self.waiter = waiter }

    /// Returns after a commit that may have recorded changes (in this process: at once; in another process: within
    /// the backend's polling interval), or after `timeout` seconds, whichever comes first.
    package func wait(timeout: Double) async { await waiter.wait(timeout: timeout) }

    /// Releases what the watch holds.
    package func close() { waiter.close() }
}

extension RouteStore {
    /// A watch of the store's commits (`makeCommitWaiter()`).
    package func commitWatch() async throws(RouteKitError) -> CommitWatch {
        CommitWatch(try await makeCommitWaiter())
    }
}

extension RouteStore {
    /// Claims `keys` for `holder` for `seconds`, with the rules of `claimWork(keys:holder:seconds:)` (one transaction
    /// where the backend has it), and returns the keys the holder now holds: the processing batch job's claims.
    package func claimWorkBatch(_ keys: [String], holder: UUID, seconds: Double) async throws(RouteKitError)
        -> Set<String>
    {
        try await claimWork(keys: keys, holder: holder, seconds: seconds)
    }

    /// Gives up `holder`'s claim of `key` (`releaseWork(key:holder:)`).
    package func releaseWorkClaim(_ key: String, holder: UUID) async throws(RouteKitError) {
        try await releaseWork(key: key, holder: holder)
    }

    /// Saves a whole route from its locations, packed in chunks of ``RouteBuilder/chunkSize`` in route order, in one
    /// transaction that also gives up `holder`'s claim of `key` (`saveRoute(_:chunks:releasing:)`): the processing
    /// batch job's new versions.
    package func saveWholeRoute(_ route: RouteSample, locations: [Location], releasingWork key: String, holder: UUID)
        async throws(RouteKitError) -> SaveOutcome
    {
        var chunks: [StoredChunk] = []
        var start = 0
        while start < locations.count {
            let end = min(start + RouteBuilder.chunkSize, locations.count)
            chunks.append(.locations(Array(locations[start..<end]), sequence: chunks.count))
            start = end
        }
        return try await saveRoute(route, chunks: chunks, releasing: WorkClaim(key: key, holder: holder))
    }
}
