import Foundation

/// The store's rules, decided once for every backend. A backend reads what a rule needs inside its transaction,
/// asks the rule, and writes what it decides: only the SQL differs between SQLite and PostgreSQL (and any other
/// backend), never the semantics. See <doc:IdentityAndVersions> and <doc:TailingChanges>.
package enum StoreRules {
    // MARK: Sync identity

    /// What saving version `version` of a sync identity does, given the current holder of that identity:
    /// inserted when there is none, stale when the current version is the same or higher (nothing changes),
    /// replaced otherwise.
    package static func saveOutcome(saving id: UUID, version: Int64, current: (id: UUID, version: Int64)?)
        -> SaveOutcome
    {
        guard let current else { return .inserted(id) }
        if current.version >= version { return .stale(current: current.id, currentVersion: current.version) }
        return .replaced(id, previous: current.id, previousVersion: current.version)
    }

    /// Whether a route is a pipeline's output (a derived version) rather than a recording (a raw one).
    package static func isDerived(_ route: RouteSample) -> Bool { route.metadata[MetadataKey.derivedFrom] != nil }

    /// Whether the version a route replaces stays as provenance: the raw recording does, when a derived version
    /// replaces it; anything else replaced is deleted.
    package static func keepsReplaced(replacedWasRaw: Bool, replacement: RouteSample) -> Bool {
        replacedWasRaw && isDerived(replacement)
    }

    /// Whether a new version drops the provenance kept for its identity: a new raw version does (the old raw one
    /// is no longer the raw version); a derived one keeps it.
    package static func dropsKeptProvenance(replacement: RouteSample) -> Bool { !isDerived(replacement) }

    // MARK: Ownership

    /// Checks that `source` may change an object that `owner` (a source's name) wrote.
    /// - Throws: ``RouteKitError/Code/notOwner`` naming the object (`what`, such as "workout UUID") and both sources.
    package static func checkOwner(_ owner: String, of what: String, is source: Source) throws(RouteKitError) {
        guard owner == source.name else {
            throw RouteKitError(.notOwner, "\(what) belongs to source '\(owner)', not '\(source)'")
        }
    }

    /// Checks that a route is saved on a workout of its own source (`workoutSource` is the workout's source's
    /// name, `nil` when the workout is not saved).
    /// - Throws: ``RouteKitError/Code/notFound`` or ``RouteKitError/Code/notOwner``.
    package static func checkWorkout(_ workoutSource: String?, for route: RouteSample) throws(RouteKitError) {
        guard let workoutSource else { throw RouteKitError(.notFound, "workout \(route.workoutID) is not saved") }
        try checkOwner(workoutSource, of: "workout \(route.workoutID)", is: route.source)
    }

    // MARK: Work claims

    /// Checks a work claim's length: a positive, finite number of seconds.
    package static func checkClaimSeconds(_ seconds: Double) throws(RouteKitError) {
        guard seconds.isFinite, seconds > 0 else {
            throw RouteKitError(.invalidArgument, "a claim lasts a positive number of seconds, not \(seconds)")
        }
    }

    // MARK: Chunks

    /// Checks the chunks of a route saved whole: locations, and extras beside them.
    package static func checkRouteChunks(_ chunks: [StoredChunk]) throws(RouteKitError) {
        for chunk in chunks {
            switch chunk.kind {
            case .locations, .extras, .quantity: continue
            case .staging, .attachment, .events:
                throw RouteKitError(
                    .invalidArgument,
                    "a saved route's chunks are locations, extras and samples, not \(chunk.kind) (chunk \(chunk.sequence))"
                )
            }
        }
    }

    /// The quantity types among a saved route's chunks, by stored name, sorted: each becomes a series of the route's
    /// workout (as a finished builder's samples do).
    package static func seriesKinds(_ chunks: [StoredChunk]) -> [String] {
        Set(
            chunks.compactMap { chunk -> String? in
                if case .quantity = chunk.kind { return chunk.kind.description }
                return nil
            }
        ).sorted()
    }

    // MARK: The change feed

    /// Checks a change-feed read's limit.
    package static func checkLimit(_ limit: Int) throws(RouteKitError) {
        guard limit >= 1 else { throw RouteKitError(.invalidArgument, "the limit must be at least 1, not \(limit)") }
    }

    /// Where a read of the change log starts: after the anchor's position, owing the changes up to its horizon.
    /// Without an anchor: from the start, with the horizon at the head, so that the read lists every current route
    /// (the added rows) and no deletion up to now.
    package static func readStart(anchor: ChangeAnchor?, state: ChangeLogState) -> (after: Int64, horizon: Int64) {
        (anchor?.position ?? 0, anchor.map { $0.horizon } ?? state.head)
    }

    /// The added routes in the order of `ids`, from what the backend read by uuid.
    /// - Throws: ``RouteKitError/Code/storage`` when the change log names a route that is not stored.
    package static func addedRoutes(_ ids: [String], found: [String: RouteSample]) throws(RouteKitError)
        -> [RouteSample]
    {
        var added: [RouteSample] = []
        added.reserveCapacity(ids.count)
        for id in ids {
            guard let route = found[id] else {
                throw RouteKitError(.storage, "the change log names route \(id), which is not stored")
            }
            added.append(route)
        }
        return added
    }

    /// The anchor a change set ends with, once the backend has read it: the head when nothing more is owed;
    /// otherwise the end of the set's last transaction, keeping the horizon of a first read still paging through
    /// the current routes. The backend looks up the token of the transaction ending at ``AnchorChoice/tokenPosition``.
    package enum AnchorChoice: Sendable, Equatable {
        /// The head of the log: `ChangeLogState.headAnchor`.
        case head
        /// `position`, with the token of the transaction ending at `tokenPosition` (the horizon while paging).
        case at(position: Int64, horizon: Int64, tokenPosition: Int64)

        /// Where the token is looked up; `nil` for the head (its token is in the state).
        package var tokenPosition: Int64? {
            if case .at(_, _, let p) = self { return p }
            return nil
        }

        /// The anchor, given the token the backend found (0 when none).
        package func anchor(_ state: ChangeLogState, token: Int64?) -> ChangeAnchor {
            switch self {
            case .head: return state.headAnchor
            case .at(let position, let horizon, _):
                return state.anchor(position: position, horizon: horizon, token: token ?? 0)
            }
        }
    }

    /// Which anchor ends a change set that reached `end` (the end of its last transaction, or the head when it was
    /// empty), in a read that owes changes up to `horizon`.
    package static func nextAnchor(hasMore: Bool, end: Int64, horizon: Int64) -> AnchorChoice {
        if !hasMore { return .head }
        if horizon > end { return .at(position: end, horizon: horizon, tokenPosition: horizon) }
        return .at(position: end, horizon: 0, tokenPosition: end)
    }
}
