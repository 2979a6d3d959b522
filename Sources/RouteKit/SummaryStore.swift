import Foundation

/// A workout's figures as a store keeps them: a cache of what the statistics compute from its recording, so that a
/// list of workouts carries each one's distance and duration without measuring every route again.
///
/// The store does not interpret either field: `basis` says what the figures were computed from (the route version,
/// the activity, the pauses, the definition's version), and a reader that finds another basis than the one it
/// would compute from today computes the figures again.
package struct StoredSummary: Hashable, Sendable {
    /// What the figures were computed from.
    package var basis: String
    /// The figures (JSON).
    package var document: String

    /// A stored summary.
    package init(basis: String, document: String) {
        self.basis = basis
        self.document = document
    }
}

/// A store that keeps workouts' figures (``StoredSummary``) beside them. Deleting a workout deletes its summary.
package protocol SummaryStore: AnyObject, Sendable {
    /// The summaries stored for `ids` (workouts without one are left out).
    func summaries(ofWorkouts ids: [UUID]) async throws(RouteKitError) -> [UUID: StoredSummary]
    /// Saves a workout's summary over the one it had; nothing is saved when the workout is not stored.
    func saveSummary(_ summary: StoredSummary, ofWorkout id: UUID) async throws(RouteKitError)
}
