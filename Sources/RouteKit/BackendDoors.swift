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
