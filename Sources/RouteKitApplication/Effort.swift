package import Foundation
package import RouteKit

/// Relating effort scores to a workout and unrelating them, as `routekit effort --set/--delete` and
/// `POST /v1/workouts/ID/effort`, `DELETE /v1/workouts/ID/effort/SCORE` do. Any source may relate a score to a
/// workout it can see; only the source that related a score may unrelate it.
package enum WorkoutEffort {
    /// A workout's scores and the one that counts (``RouteKit/EffortScore`` `effective`: the newest manual score,
    /// else the newest estimate).
    package struct Scores: Sendable, Hashable {
        /// The scores, oldest first.
        package var scores: [EffortScore]
        /// The one that counts, `nil` without scores.
        package var effective: EffortScore?

        /// The scores and the one that counts among them.
        package init(_ scores: [EffortScore]) {
            self.scores = scores
            effective = EffortScore.effective(scores)
        }

        /// Whether `score` is the one that counts (by uuid: a score read back may differ from the one related in
        /// the last digits of its time).
        package func isEffective(_ score: EffortScore) -> Bool { effective?.id == score.id }
    }

    /// The workout with uuid `id` when it is saved and its source is among `readableSources` (`nil`: every source).
    /// - Throws: ``RouteKit/RouteKitError/Code/notFound`` otherwise, with one message for both cases.
    package static func workout(_ id: UUID, readableSources: Set<Source>?, in store: any RouteStore)
        async throws(RouteKitError) -> Workout
    {
        guard let workout = try await store.workout(id: id), readableSources?.contains(workout.source) ?? true else {
            throw RouteKitError(.notFound, "workout \(id.lowercaseText) is not in the store")
        }
        return workout
    }

    /// Relates a score to the workout with uuid `id` as `source`.
    /// - Parameters:
    ///   - score: 1 to 10.
    ///   - manual: A person's own rating (it wins over any estimate), or an estimate.
    ///   - id: The workout's uuid.
    ///   - source: Who relates it (only that source may unrelate it).
    ///   - readableSources: The sources the caller may read; `nil` for every source.
    ///   - store: The store.
    /// - Returns: The score as stored, and the workout's scores after it (to tell whether it counts).
    /// - Throws: ``RouteKit/RouteKitError/Code/invalidArgument`` for a score outside 1…10 (nothing is stored),
    ///   ``RouteKit/RouteKitError/Code/notFound`` when the workout is not saved or its source not readable; what
    ///   the store throws.
    package static func relate(
        score: Double, manual: Bool, toWorkout id: UUID, as source: Source, readableSources: Set<Source>? = nil,
        in store: any RouteStore
    ) async throws(RouteKitError) -> (score: EffortScore, scores: Scores) {
        let effort = try EffortScore(workoutID: id, source: source, score: score, isManual: manual)
        _ = try await workout(id, readableSources: readableSources, in: store)
        try await store.relateEffort(effort)
        let scores = Scores(try await store.efforts(ofWorkout: id))
        return (scores.scores.first(where: { $0.id == effort.id }) ?? effort, scores)
    }

    /// Unrelates the score with uuid `scoreID` from the workout with uuid `id`, as `source`.
    /// - Returns: The score unrelated.
    /// - Throws: ``RouteKit/RouteKitError/Code/notFound`` when the workout is not saved or its source not readable,
    ///   or when the score is not related to that workout; ``RouteKit/RouteKitError/Code/notOwner`` when another
    ///   source related it (nothing changes); what the store throws.
    @discardableResult
    package static func unrelate(
        _ scoreID: UUID, fromWorkout id: UUID, as source: Source, readableSources: Set<Source>? = nil,
        in store: any RouteStore
    ) async throws(RouteKitError) -> EffortScore {
        _ = try await workout(id, readableSources: readableSources, in: store)
        guard let score = try await store.efforts(ofWorkout: id).first(where: { $0.id == scoreID }) else {
            throw RouteKitError(
                .notFound, "workout \(id.lowercaseText) has no effort score \(scoreID.lowercaseText)")
        }
        try StoreRules.checkOwner(score.source.name, of: "effort score \(scoreID.lowercaseText)", is: source)
        try await store.unrelateEffort(id: scoreID, as: source)
        return score
    }
}
