package import Foundation
package import RouteKit

/// What ``StoreDeletion/delete(_:kind:as:readableSources:in:)`` deleted.
package enum StoreDeletionResult: Sendable, Hashable {
    /// A current route, with every kept version of its sync identity.
    case route(RouteSample)
    /// A workout, with its routes, series and effort scores.
    case workout(Workout)

    /// The deleted object's uuid.
    package var id: UUID {
        switch self {
        case .route(let route): route.id
        case .workout(let workout): workout.id
        }
    }
}

/// Deleting a stored route or workout as a source, as `routekit delete` and `DELETE /v1/routes/ID`,
/// `DELETE /v1/workouts/ID` do: one decision (is the uuid a route's or a workout's, may the source see it, is it the
/// source's), then the store's delete, which checks the owner again inside its transaction. The deletion reaches the
/// change feed (the store records it): a route's as one deleted route, a workout's as one per current route.
package enum StoreDeletion {
    /// What a deletion is asked for.
    package enum Kind: String, Sendable, Hashable {
        /// A current route.
        case route
        /// A workout.
        case workout
    }

    /// Deletes the current route or the workout with uuid `id`, as `source`.
    ///
    /// An object of a source outside `readableSources` is answered as if it did not exist (the same error, the same
    /// message), so a caller limited to some sources never learns that the others' objects exist.
    /// - Parameters:
    ///   - id: The route's or workout's uuid.
    ///   - kind: Only a route, only a workout, or (`nil`) whichever `id` is: a current route first, then a workout.
    ///   - source: The acting source: only the source that wrote an object may delete it.
    ///   - readableSources: The sources the caller may read; `nil` for every source (the command line).
    ///   - store: The store.
    /// - Returns: What was deleted (as it was before the deletion).
    /// - Throws: ``RouteKit/RouteKitError/Code/notFound`` when there is no such object (or the caller may not read
    ///   its source), or when `id` names a replaced version of a route (only the current version is deleted, and
    ///   takes the kept ones with it); ``RouteKit/RouteKitError/Code/notOwner`` when another source wrote it
    ///   (nothing is deleted); what the store throws.
    package static func delete(
        _ id: UUID, kind: Kind? = nil, as source: Source, readableSources: Set<Source>? = nil,
        in store: any RouteStore
    ) async throws(RouteKitError) -> StoreDeletionResult {
        func visible(_ owner: Source) -> Bool { readableSources?.contains(owner) ?? true }
        if kind != .workout, let route = try await store.route(id: id), visible(route.source) {
            guard try await store.isCurrent(route: id) else {
                throw RouteKitError(
                    .notFound,
                    "route \(id.lowercaseText) is a replaced version, not the current one: delete the current version "
                        + "(its kept versions go with it)")
            }
            try StoreRules.checkOwner(route.source.name, of: "route \(id.lowercaseText)", is: source)
            try await store.deleteRoute(id: id, as: source)
            return .route(route)
        }
        if kind != .route, let workout = try await store.workout(id: id), visible(workout.source) {
            try StoreRules.checkOwner(workout.source.name, of: "workout \(id.lowercaseText)", is: source)
            try await store.deleteWorkout(id: id, as: source)
            return .workout(workout)
        }
        // One message whether the object is missing or hidden from the caller.
        switch kind {
        case .route: throw RouteKitError(.notFound, "route \(id.lowercaseText) is not in the store")
        case .workout: throw RouteKitError(.notFound, "workout \(id.lowercaseText) is not in the store")
        case nil: throw RouteKitError(.notFound, "no current route or workout \(id.lowercaseText)")
        }
    }
}
