import Foundation

/// A route's batches held in memory and saved whole, in one transaction: the chunks, route and outcome a
/// ``RouteBuilder`` in ``LocationOrder/insertion`` order would have stored for the same batches, with none of its
/// round trips (no pending builder, no batch acknowledged before the save).
///
/// For writers that read a short track whole before they know whether it is new (the importers): nothing of it
/// is in the store until ``save(workout:metadata:in:)``, so an interrupted import leaves nothing to resume and
/// reads the track again.
package struct HeldRoute: Sendable {
    /// A batch as it was inserted, checked.
    private struct Batch: Sendable {
        var locations: [Location]
        var related: [QuantityType: [QuantitySample]]
        var extras: [UInt8]?
        var checkpoint: String?
    }

    /// The batches, checked and not packed yet: a track found already stored at its end is never packed.
    private var batches: [Batch] = []
    /// Locations held.
    package private(set) var locationCount = 0
    /// The earliest and the latest time held (the first of equal instants), as ``RouteBuilder/timeBounds()`` reads
    /// them.
    private var earliest: Timestamp?
    private var latest: Timestamp?

    /// An empty route.
    package init() {}

    /// Checks a batch as ``RouteBuilder/insert(_:related:checkpoint:extras:)`` does, and holds it with its
    /// `checkpoint` (for ``insert(into:)``).
    /// - Throws: what that method throws for the batch (nothing is held then).
    package mutating func insert(
        _ batch: [Location], related: [QuantityType: [QuantitySample]] = [:], checkpoint: String? = nil,
        extras: [UInt8]? = nil
    ) throws(RouteKitError) {
        try RouteBuilder.check(batch, related: related, extras: extras, order: .insertion)
        // A builder stores nothing for such a batch either, checkpoint included.
        guard !batch.isEmpty || related.values.contains(where: { !$0.isEmpty }) else { return }
        batches.append(Batch(locations: batch, related: related, extras: extras, checkpoint: checkpoint))
        locationCount += batch.count
        for location in batch {
            guard let t = location.timestamp else { continue }
            if let e = earliest, !(t.instant < e.instant) {
            } else {
                earliest = t
            }
            if let l = latest, !(l.instant < t.instant) {
            } else {
                latest = t
            }
        }
    }

    /// Appends the held batches to `builder`, in order, each with its checkpoint: for a route that outgrew what a
    /// writer holds in memory and goes on through a builder.
    package func insert(into builder: RouteBuilder) async throws(RouteKitError) {
        for b in batches {
            try await builder.insert(b.locations, related: b.related, checkpoint: b.checkpoint, extras: b.extras)
        }
    }

    /// The batches packed as a builder in insertion order appends them.
    package func chunks() throws(RouteKitError) -> [StoredChunk] {
        var chunks: [StoredChunk] = []
        var next = 0
        for batch in batches {
            let (packed, after) = try RouteBuilder.pack(
                batch.locations, related: batch.related, extras: batch.extras, order: .insertion, from: next,
                checked: true)
            chunks += packed
            next = after
        }
        return chunks
    }

    /// Saves the route for `workout` (already saved, of `source`) with the store's sync semantics, as
    /// ``RouteBuilder/finish(workout:metadata:)`` does.
    /// - Throws: ``RouteKitError/Code/builderState`` when no location is held, and what `finish` throws.
    package func save(
        workout: Workout, source: Source, metadata: [String: MetadataValue], in store: any RouteStore
    ) async throws(RouteKitError) -> RouteFinish {
        guard locationCount > 0 else {
            throw RouteKitError(.builderState, "a held route has no locations: hold at least one batch before saving")
        }
        guard workout.source == source else {
            throw RouteKitError(
                .notOwner, "workout \(workout.id) belongs to source '\(workout.source)', not '\(source)'")
        }
        let (sync, rest) = try RouteBuilder.syncIdentity(in: metadata)
        let route = RouteSample(
            workoutID: workout.id, source: source, sync: sync, start: earliest, end: latest,
            locationCount: locationCount, metadata: rest)
        let outcome = try await store.saveRoute(route, chunks: try chunks(), releasing: nil)
        return RouteFinish(route: route, outcome: outcome)
    }
}
