import Foundation

/// A route's batches held in memory and saved whole, in one transaction: the chunks, route and outcome a
/// ``RouteBuilder`` in ``LocationOrder/insertion`` order would have stored for the same batches, with none of its
/// round trips (no pending builder, no batch acknowledged before the save).
///
/// For writers that read a short track whole before they know whether it is new (the importers): nothing of it
/// is in the store until ``save(workout:metadata:in:)``, so an interrupted import leaves nothing to resume and
/// reads the track again.
package struct HeldRoute: Sendable {
    /// The packed batches, in the order a builder appends them.
    package private(set) var chunks: [StoredChunk] = []
    /// Locations held.
    package private(set) var locationCount = 0
    private var nextSequence = 0
    /// The earliest and the latest time held (the first of equal instants), as ``RouteBuilder/timeBounds()`` reads
    /// them.
    private var earliest: Timestamp?
    private var latest: Timestamp?

    /// An empty route.
    package init() {}

    /// Checks and packs a batch as ``RouteBuilder/insert(_:related:checkpoint:extras:)`` does.
    /// - Throws: what that method throws for the batch (nothing is held then).
    package mutating func insert(
        _ batch: [Location], related: [QuantityType: [QuantitySample]] = [:], extras: [UInt8]? = nil
    ) throws(RouteKitError) {
        let (packed, next) = try RouteBuilder.pack(
            batch, related: related, extras: extras, order: .insertion, from: nextSequence)
        guard !packed.isEmpty else { return }
        chunks += packed
        nextSequence = next
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
        let outcome = try await store.saveRoute(route, chunks: chunks, releasing: nil)
        return RouteFinish(route: route, outcome: outcome)
    }
}
