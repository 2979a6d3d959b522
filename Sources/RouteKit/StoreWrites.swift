import Foundation

/// A stored route as the store's rules need it: what the change log records when it stops being current, whether
/// it is a raw recording, and where its chunks live. A backend reads it inside its write transaction (PostgreSQL
/// under the sync identity's lock).
package struct StoredRouteRow: Sendable, Equatable {
    /// The route's uuid.
    package var id: UUID
    /// Its workout's uuid.
    package var workoutID: UUID
    /// Its source's name.
    package var source: String
    /// Its sync identifier.
    package var syncIdentifier: String
    /// Its sync version.
    package var version: Int64
    /// Its first and last times, in whole seconds (as the change log stores them).
    package var startSeconds: Int64?
    package var endSeconds: Int64?
    /// Whether it is a recording rather than a pipeline's output.
    package var raw: Bool
    /// The container that holds its chunks.
    package var container: String

    package init(
        id: UUID, workoutID: UUID, source: String, syncIdentifier: String, version: Int64, startSeconds: Int64?,
        endSeconds: Int64?, raw: Bool, container: String
    ) {
        self.id = id
        self.workoutID = workoutID
        self.source = source
        self.syncIdentifier = syncIdentifier
        self.version = version
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.raw = raw
        self.container = container
    }
}

/// A pending builder as ``StoreRules/finishBuilder(_:claim:route:body:sequenceOrder:builder:workoutSource:current:)``
/// needs it: its source's name and the claim that holds it (uuid text, as stored).
package struct StoredBuilderRow: Sendable, Equatable {
    package var source: String
    package var claim: String

    package init(source: String, claim: String) {
        self.source = source
        self.claim = claim
    }
}

/// A workout to be inserted by the transaction that finishes a builder, with what the backend read about it in that
/// transaction: whether its uuid is taken, and the current version of its sync identity.
package struct NewWorkoutRow: Sendable {
    package var workout: Workout
    package var body: String
    package var uuidTaken: Bool
    package var current: (id: UUID, version: Int64)?

    package init(workout: Workout, body: String, uuidTaken: Bool, current: (id: UUID, version: Int64)?) {
        self.workout = workout
        self.body = body
        self.uuidTaken = uuidTaken
        self.current = current
    }
}

/// One write the store's rules decide on. A backend carries each out with its own SQL, in the order given, inside
/// the transaction in which it read what the rule was given; no write decides anything.
package enum StoreWrite: Sendable {
    /// Records in the change log that a current route stops being current (its added row, if any, goes).
    case logDeletion(StoredRouteRow)
    /// Keeps a replaced route as provenance: it stays stored, no longer current.
    case keepAsProvenance(routeID: UUID)
    /// Deletes one route row.
    case deleteRoute(routeID: UUID)
    /// Deletes every kept (not current) version of a sync identity, and the chunks of the containers no route or
    /// pending builder uses any more (``StoreWrite/dropContainerIfUnused(_:)``).
    case deleteKeptVersions(source: String, syncIdentifier: String)
    /// Deletes every version of a sync identity, current and kept, and the chunks no one uses any more.
    case deleteIdentity(source: String, syncIdentifier: String)
    /// Deletes a container's chunks unless a route or a pending builder still uses it; the kinds a workout's series
    /// use from it stay.
    case dropContainerIfUnused(String)
    /// Stores chunks in a container.
    case insertChunks([StoredChunk], container: String)
    /// Renumbers a builder's location chunks: the chunk numbered `order[i]` becomes number `i` (in two steps, so
    /// that no two chunks ever share a number).
    case renumberLocations(container: String, order: [Int])
    /// Inserts a route as the current version of its identity and records its addition in the change log.
    case insertRoute(RouteSample, container: String, raw: Bool, body: String)
    /// Attaches series of these kinds (stored names) in a container to a workout; already attached ones stay.
    case attachSeries(workoutID: UUID, source: String, kinds: [String], container: String)
    /// Attaches every sample kind a container holds (not locations, staging or extras) to a workout as series.
    case attachStoredSeries(workoutID: UUID, source: String, container: String)
    /// Adds the workout events a builder's container holds (its `events` chunks, in sequence order) after a workout's
    /// events, rewriting the workout's stored body (`StoredRecord.body(_:addingEvents:)`), and deletes those chunks.
    /// Nothing is written when the container holds none.
    case addStoredEvents(workoutID: UUID, container: String)
    /// Deletes a pending builder's row (not its chunks).
    case deleteBuilder(UUID)
    /// Deletes every chunk of a container.
    case deleteContainer(String)
    /// Gives up a work claim, if `holder` still holds it.
    case releaseClaim(WorkClaim)
    /// Deletes a workout's row with its routes (current and kept), series and effort scores, and the chunks no one
    /// uses any more. The deletions of its current routes are logged first (``StoreWrite/logDeletion(_:)``).
    case deleteWorkoutRows(UUID)
    /// Inserts a workout.
    case insertWorkout(Workout, body: String)
}

/// What a write decides: its outcome and the writes that carry it out.
package struct WritePlan: Sendable {
    package var outcome: SaveOutcome
    package var writes: [StoreWrite]

    package init(_ outcome: SaveOutcome, _ writes: [StoreWrite]) {
        self.outcome = outcome
        self.writes = writes
    }
}

extension StoreRules {
    // MARK: Saving versions

    /// Saving `route` over its identity's current version (`nil` when there is none): the outcome and, unless it is
    /// stale, the writes that retire the current version (its deletion logged; kept as provenance when it was raw
    /// and the new one is derived, deleted otherwise) and, for a new raw version, drop older kept provenance.
    package static func replace(_ current: StoredRouteRow?, with route: RouteSample) -> WritePlan {
        guard let current else { return WritePlan(.inserted(route.id), []) }
        let outcome = saveOutcome(saving: route.id, version: route.sync.version, current: (current.id, current.version))
        if case .stale = outcome { return WritePlan(outcome, []) }
        var writes: [StoreWrite] = [.logDeletion(current)]
        if keepsReplaced(replacedWasRaw: current.raw, replacement: route) {
            writes.append(.keepAsProvenance(routeID: current.id))
        } else {
            writes += [.deleteRoute(routeID: current.id), .dropContainerIfUnused(current.container)]
        }
        if dropsKeptProvenance(replacement: route) {
            // A new raw version: older kept provenance of this identity is no longer the raw one.
            writes.append(.deleteKeptVersions(source: route.source.name, syncIdentifier: route.sync.identifier))
        }
        return WritePlan(outcome, writes)
    }

    /// Saving a whole route (`RouteStore.saveRoute`): its workout must be saved and its source's; then the sync
    /// decision; unless stale, its chunks, its row and its sample kinds as the workout's series; the claim given up
    /// either way.
    /// - Parameters:
    ///   - body: the route's stored body, made before the transaction.
    ///   - workoutSource: the source's name of the route's workout, `nil` when it is not saved.
    ///   - current: the identity's current version.
    package static func saveRoute(
        _ route: RouteSample, chunks: [StoredChunk], body: String, releasing claim: WorkClaim?,
        workoutSource: String?, current: StoredRouteRow?
    ) throws(RouteKitError) -> WritePlan {
        try checkWorkout(workoutSource, for: route)
        var plan = replace(current, with: route)
        if !plan.outcome.isStale {
            let container = route.id.lowercaseText
            plan.writes += [
                .insertChunks(chunks, container: container),
                .insertRoute(route, container: container, raw: !isDerived(route), body: body),
                .attachSeries(
                    workoutID: route.workoutID, source: route.source.name, kinds: seriesKinds(chunks),
                    container: container),
            ]
        }
        if let claim { plan.writes.append(.releaseClaim(claim)) }
        return plan
    }

    /// Finishing a builder (`RouteStore.finishBuilder`): the builder must be pending, of the route's source, and
    /// held by `claim`; the workout saved and the source's; then the sync decision. A stale route discards the
    /// builder and its chunks. Otherwise its location chunks are put in `sequenceOrder` when given, the route is
    /// inserted over the builder's chunks, its sample kinds become the workout's series, the events it collected join
    /// the workout's events, and the builder is retired.
    ///
    /// With `creating`, the route's workout is inserted first in the same transaction (a finish that makes its
    /// workout leaves nothing behind when it fails): it must be the route's workout, of its source, and new; a
    /// workout saved meanwhile with its uuid or sync identity (a concurrent finish of the same recording) is a
    /// ``RouteKitError/Code/builderState`` error, and the finish can be tried again against that workout. A stale
    /// route inserts no workout.
    package static func finishBuilder(
        _ id: UUID, claim: UUID, route: RouteSample, body: String, sequenceOrder: [Int]?,
        builder: StoredBuilderRow?, workoutSource: String?, current: StoredRouteRow?, creating: NewWorkoutRow? = nil
    ) throws(RouteKitError) -> WritePlan {
        guard let builder else { throw builderNotPending(id) }
        try checkOwner(builder.source, of: "route builder \(id)", is: route.source)
        try checkClaim(id, held: builder.claim, by: claim)
        var first: [StoreWrite] = []
        if let creating {
            guard creating.workout.id == route.workoutID else {
                throw RouteKitError(
                    .invalidArgument, "the workout to create (\(creating.workout.id)) is not the route's workout")
            }
            try checkOwner(creating.workout.source.name, of: "workout \(route.workoutID)", is: route.source)
            if creating.uuidTaken || creating.current != nil {
                throw RouteKitError(
                    .builderState,
                    "workout \(route.workoutID) or one with its sync identity was saved meanwhile (another finish of "
                        + "the same recording?): finish again to add the route to the saved workout")
            }
            first = [.insertWorkout(creating.workout, body: creating.body)]
        } else {
            try checkWorkout(workoutSource, for: route)
        }
        let container = id.lowercaseText
        var plan = replace(current, with: route)
        if plan.outcome.isStale { return WritePlan(plan.outcome, [.deleteBuilder(id), .deleteContainer(container)]) }
        plan.writes = first + plan.writes
        if let order = sequenceOrder, order != order.sorted() {
            plan.writes.append(.renumberLocations(container: container, order: order))
        }
        plan.writes += [
            .insertRoute(route, container: container, raw: !isDerived(route), body: body),
            .attachStoredSeries(workoutID: route.workoutID, source: route.source.name, container: container),
            .addStoredEvents(workoutID: route.workoutID, container: container),
            .deleteBuilder(id),
        ]
        return plan
    }

    /// Saving a workout (`RouteStore.saveWorkout`): refused when its uuid is taken; with a sync identity, stale
    /// when the identity's current version is as new, or the current version deleted (with its routes, their
    /// deletions logged) before it is inserted.
    /// - Parameters:
    ///   - uuidTaken: whether a workout with this uuid is stored.
    ///   - current: the identity's current workout and version, when it has a sync identity and one is stored.
    ///   - currentRoutes: the current routes of that workout, in saving order.
    package static func saveWorkout(
        _ workout: Workout, body: String, uuidTaken: Bool, current: (id: UUID, version: Int64)?,
        currentRoutes: [StoredRouteRow]
    ) throws(RouteKitError) -> WritePlan {
        if uuidTaken { throw RouteKitError(.invalidArgument, "a workout with uuid \(workout.id) is already saved") }
        var writes: [StoreWrite] = []
        var outcome = SaveOutcome.inserted(workout.id)
        if let sync = workout.sync, let current {
            outcome = saveOutcome(saving: workout.id, version: sync.version, current: current)
            if outcome.isStale { return WritePlan(outcome, []) }
            writes = currentRoutes.map { .logDeletion($0) } + [.deleteWorkoutRows(current.id)]
        }
        writes.append(.insertWorkout(workout, body: body))
        return WritePlan(outcome, writes)
    }

    // MARK: Deleting

    /// Deleting a workout (`RouteStore.deleteWorkout`) as `source`: `owner` is its source's name, `nil` when it is
    /// not stored; `currentRoutes` its current routes in saving order (their deletions are logged).
    package static func deleteWorkout(
        _ id: UUID, as source: Source, owner: String?, currentRoutes: [StoredRouteRow]
    ) throws(RouteKitError) -> [StoreWrite] {
        guard let owner else { throw RouteKitError(.notFound, "no workout \(id)") }
        try checkOwner(owner, of: "workout \(id)", is: source)
        return currentRoutes.map { .logDeletion($0) } + [.deleteWorkoutRows(id)]
    }

    /// Deleting a current route (`RouteStore.deleteRoute`) as `source`: its deletion logged, and every version of
    /// its identity deleted. `current` is the route when it is current (`nil` otherwise).
    package static func deleteRoute(_ id: UUID, as source: Source, current: StoredRouteRow?) throws(RouteKitError)
        -> [StoreWrite]
    {
        guard let current else { throw RouteKitError(.notFound, "no current route \(id)") }
        try checkOwner(current.source, of: "route \(id)", is: source)
        return [.logDeletion(current), .deleteIdentity(source: current.source, syncIdentifier: current.syncIdentifier)]
    }

    /// Discarding a pending builder (`RouteStore.discardBuilder`) as `source`: `owner` is its source's name, `nil`
    /// when it is not pending.
    package static func discardBuilder(_ id: UUID, as source: Source, owner: String?) throws(RouteKitError)
        -> [StoreWrite]
    {
        guard let owner else { throw builderNotPending(id) }
        try checkOwner(owner, of: "route builder \(id)", is: source)
        return [.deleteBuilder(id), .deleteContainer(id.lowercaseText)]
    }

    // MARK: Builders and series

    /// The error for a builder that is not pending.
    package static func builderNotPending(_ id: UUID) -> RouteKitError {
        RouteKitError(.notFound, "route builder \(id) is not pending (finished, discarded or unknown)")
    }

    /// Checks that `claim` holds builder `id`, whose stored claim is `held` (uuid text; `nil` when the builder is
    /// not pending).
    /// - Throws: ``RouteKitError/Code/notFound`` or ``RouteKitError/Code/builderState`` (taken over).
    package static func checkClaim(_ id: UUID, held: String?, by claim: UUID) throws(RouteKitError) {
        guard let held else { throw builderNotPending(id) }
        guard held == claim.lowercaseText else {
            throw RouteKitError(.builderState, "route builder \(id) was taken over by another process")
        }
    }

    /// Appending chunks to a workout's series (`RouteStore.appendSeries`) as `source`: `owner` is the workout's
    /// source's name (`nil` when not stored), `nextSequence` the number after the series container's last chunk.
    /// The chunks are numbered from there, in order.
    package static func appendSeries(
        _ chunks: [StoredChunk], toWorkout id: UUID, as source: Source, owner: String?, nextSequence: Int
    ) throws(RouteKitError) -> [StoreWrite] {
        guard let owner else { throw RouteKitError(.notFound, "no workout \(id)") }
        try checkOwner(owner, of: "workout \(id)", is: source)
        let container = seriesContainer(of: id)
        var numbered = chunks
        for i in numbered.indices { numbered[i].sequence = nextSequence + i }
        return [
            .insertChunks(numbered, container: container),
            .attachSeries(
                workoutID: id, source: source.name, kinds: Set(chunks.map(\.kind.description)).sorted(),
                container: container),
        ]
    }

    /// The container of the series appended to a workout directly (not collected by a builder).
    package static func seriesContainer(of workout: UUID) -> String { "series-" + workout.lowercaseText }

    /// Whether a chunk kind is a sample kind that becomes a workout's series when its builder finishes.
    package static func isSeriesKind(_ kind: ChunkKind) -> Bool {
        switch kind {
        case .locations, .staging, .extras, .events: return false
        case .quantity, .attachment: return true
        }
    }

    /// The whole seconds a chunk's times must meet for a read of `interval` to need it: its last second at least
    /// `from`, its first at most `through`. A chunk without times holds no location of an interval. Locations are
    /// filtered exactly afterwards (by the route query), so whole seconds only widen the choice; a backend puts the
    /// same two comparisons in its SQL (`max_s >= from AND min_s <= through`).
    package static func chunkSeconds(of interval: ClosedRange<Instant>) -> (from: Int64, through: Int64) {
        (interval.lowerBound.seconds, interval.upperBound.seconds)
    }

    /// Whether a read of `interval` (all of a route when `nil`) needs `chunk` (see ``chunkSeconds(of:)``).
    package static func readNeeds(_ chunk: StoredChunk, interval: ClosedRange<Instant>?) -> Bool {
        guard let interval else { return true }
        guard let first = chunk.minTime, let last = chunk.maxTime else { return false }
        let window = chunkSeconds(of: interval)
        return last.seconds >= window.from && first.seconds <= window.through
    }

    /// The number of chunks up to which a route or series is read whole in one read transaction; longer reads go
    /// through a cursor that holds a snapshot while they are iterated.
    package static let wholeReadChunks = 64
}

extension SaveOutcome {
    /// Whether nothing changed.
    package var isStale: Bool {
        if case .stale = self { return true }
        return false
    }
}
