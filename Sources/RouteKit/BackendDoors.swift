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

/// A route's stored locations a chunk at a time, from one consistent version, each chunk with the `extras` chunk of
/// the same sequence number when there is one (the importers' per-point fields, opaque here): what exporting a stored
/// route reads.
package final class StoredRouteChunks {
    private let locations: any ChunkCursor
    private let extras: any ChunkCursor
    /// The next extras chunk not yet matched with a location chunk.
    private var pendingExtras: StoredChunk?

    init(locations: any ChunkCursor, extras: any ChunkCursor, firstExtras: StoredChunk?) {
        self.locations = locations
        self.extras = extras
        pendingExtras = firstExtras
    }

    /// The next chunk: its sequence number, its locations, and the bytes of its extras chunk (`nil` when it has
    /// none); `nil` after the last.
    /// - Throws: what reading the store throws; ``RouteKitError/Code/invalidArgument`` for a corrupt chunk.
    package func next() async throws(RouteKitError) -> (sequence: Int, locations: [Location], extras: [UInt8]?)? {
        guard let chunk = try await locations.next() else { return nil }
        let decoded = try LocationChunk.decode(chunk.bytes)
        while let x = pendingExtras, x.sequence < chunk.sequence { pendingExtras = try await extras.next() }
        var bytes: [UInt8]?
        if let x = pendingExtras, x.sequence == chunk.sequence {
            bytes = x.bytes
            pendingExtras = try await extras.next()
        }
        return (chunk.sequence, decoded, bytes)
    }

    /// Releases what the reads hold.
    package func close() {
        locations.close()
        extras.close()
    }
}

extension RouteStore {
    /// A route's stored location chunks with their extras (`routeChunks(ofRoute:kind:interval:)` of both kinds).
    /// - Throws: ``RouteKitError/Code/notFound`` when there is no such route.
    package func storedRouteChunks(ofRoute id: UUID) async throws(RouteKitError) -> StoredRouteChunks {
        let locations = try await routeChunks(ofRoute: id, kind: .locations, interval: nil)
        do throws(RouteKitError) {
            let extras = try await routeChunks(ofRoute: id, kind: .extras, interval: nil)
            do throws(RouteKitError) {
                let first = try await extras.next()
                return StoredRouteChunks(locations: locations, extras: extras, firstExtras: first)
            } catch {
                extras.close()
                throw error
            }
        } catch {
            locations.close()
            throw error
        }
    }
}

/// A workout's attachments (`ChunkKind.attachment` chunks: the opaque data its writer attached, the importers'
/// waypoints and planned routes) a chunk at a time, in the order they were appended.
package final class WorkoutAttachments {
    private let cursor: any ChunkCursor

    init(_ cursor: any ChunkCursor) { self.cursor = cursor }

    /// The next chunk's sequence number and bytes, `nil` after the last.
    package func next() async throws(RouteKitError) -> (sequence: Int, bytes: [UInt8])? {
        guard let chunk = try await cursor.next() else { return nil }
        return (chunk.sequence, chunk.bytes)
    }

    /// Releases what the read holds.
    package func close() { cursor.close() }
}

extension RouteStore {
    /// A workout's attachments (`workoutChunks(ofWorkout:kind:)` of kind `attachment`).
    package func attachments(ofWorkout id: UUID) async throws(RouteKitError) -> WorkoutAttachments {
        WorkoutAttachments(try await workoutChunks(ofWorkout: id, kind: .attachment))
    }

    /// Attaches opaque data to a workout as `source`, one chunk per element in order (`count`: the items it holds),
    /// in one transaction (`appendSeries(_:toWorkout:as:)` of `attachment` chunks).
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not current.
    package func appendAttachments(
        _ attachments: [(count: Int, bytes: [UInt8])], toWorkout id: UUID, as source: Source
    ) async throws(RouteKitError) {
        var chunks: [StoredChunk] = []
        for a in attachments {
            chunks.append(
                StoredChunk(
                    kind: .attachment, sequence: chunks.count, count: a.count, minTime: nil, maxTime: nil,
                    bytes: a.bytes))
        }
        try await appendSeries(chunks, toWorkout: id, as: source)
    }

    /// Appends samples of several quantity types to a workout's series in one transaction (`appendSeries`): the
    /// types by identifier, each type's samples in time order, packed in chunks of ``RouteBuilder/chunkSize``.
    /// Nothing is written when there are no samples.
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not current.
    package func appendSamples(
        _ samples: [QuantityType: [QuantitySample]], toWorkout id: UUID, as source: Source
    ) async throws(RouteKitError) {
        var chunks: [StoredChunk] = []
        for type in samples.keys.sorted(by: { $0.identifier < $1.identifier }) {
            let sorted = (samples[type] ?? []).sorted { $0.timestamp.instant < $1.timestamp.instant }
            var start = 0
            while start < sorted.count {
                let end = min(start + RouteBuilder.chunkSize, sorted.count)
                chunks.append(.samples(Array(sorted[start..<end]), of: type, sequence: chunks.count))
                start = end
            }
        }
        if !chunks.isEmpty { try await appendSeries(chunks, toWorkout: id, as: source) }
    }
}
