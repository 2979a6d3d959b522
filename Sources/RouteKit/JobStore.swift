import Foundation

/// A processing job as a store keeps it for `routekit serve`: its state and the document the server answers with
/// (`GET /v1/jobs/ID`), so that a job outlives the server that ran it and any server of the store can report it.
package struct StoredJob: Hashable, Sendable, Identifiable {
    /// Where a job stands.
    package enum State: String, Hashable, Sendable, CaseIterable {
        /// Its workers are taking routes.
        case running
        /// Every route was taken.
        case finished
        /// It was stopped before the end.
        case cancelled
    }

    /// The job's id.
    package var id: UUID
    /// Where it stands.
    package var state: State
    /// The job's resource as served: a JSON object (progress, counts, per-route outcomes).
    package var document: String
    /// When it was started.
    package var created: Date
    /// When it was last saved: a running job whose last save is old was left by a server that stopped.
    package var updated: Date
    /// Whether someone asked for it to stop (any server of the store may ask; the one running it stops it).
    package var cancelRequested: Bool

    /// A job.
    /// - Parameters:
    ///   - id: the job's id.
    ///   - state: where it stands.
    ///   - document: its resource as served, a JSON object.
    ///   - created: when it was started.
    ///   - updated: when it was last saved.
    ///   - cancelRequested: whether someone asked for it to stop.
    package init(
        id: UUID, state: State, document: String, created: Date, updated: Date, cancelRequested: Bool = false
    ) {
        self.id = id
        self.state = state
        self.document = document
        self.created = created
        self.updated = updated
        self.cancelRequested = cancelRequested
    }
}

/// A store that keeps processing jobs (`routekit serve`'s `/v1/jobs`). Both backends conform.
package protocol JobStore: AnyObject, Sendable {
    /// Saves a job: its state, document and update time replace what was stored (a request to cancel it is kept).
    /// - Returns: whether its cancellation was requested, so that the server running it stops it.
    func saveJob(_ job: StoredJob) async throws(RouteKitError) -> Bool
    /// The job with `id`, or `nil`.
    func job(id: UUID) async throws(RouteKitError) -> StoredJob?
    /// Asks for a job to stop; `false` when there is no job with `id`.
    func requestJobCancellation(id: UUID) async throws(RouteKitError) -> Bool
    /// Deletes the jobs that are no longer running and were last saved before `date`.
    /// - Returns: how many were deleted.
    func deleteJobs(endedBefore date: Date) async throws(RouteKitError) -> Int
}
