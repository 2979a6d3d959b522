import Foundation

/// A person's view of a store narrowed to what an API token may read (``TokenGrant``): what the HTTP service gives a
/// request whose token has scopes narrowed to some types of object (no plain `read`). Everything that reads series
/// through it (the series endpoints, statistics and splits, pictures and profiles, exports, archives) then sees only
/// the quantity types the token may read, without a check of its own:
///
/// - ``seriesTypes(ofWorkout:)`` lists only readable types, and a series of another type reads as empty (as a
///   workout without it does), a pending builder's samples likewise;
/// - workouts are read without the recorded totals of the other types (the grant's `redacted(_:)` of a workout).
///
/// Every other read goes to the store unchanged: the doors check the object types a token may read and write
/// (workouts, routes, effort scores) themselves, and what reads the whole grant (`readGrant`) leaves out the rest (an
/// archive's routes and effort scores, an export's raw extension elements). The change feed is read unchanged too: the
/// feed filters each set for its token, since sets are shared by every token of a person.
///
/// Writes go to the store unchanged, unless it narrows them too (``init(_:grant:narrowingWrites:)``: what the HTTP
/// service imports an uploaded file through). Then whatever an import writes leaves out what the grant may not write,
/// without a check of the importers' own:
///
/// - samples of a quantity type it may not write (heart rate without `write:heartRate` or `write`) are not stored,
///   whether they come as a workout's series (`appendSeries`), a builder's batches (`appendToBuilder`, then the
///   finished route's workout) or with a whole route (`saveRoute`);
/// - workouts are saved without the recorded totals of those types (the grant's `writable(_:)` of a workout).
///
/// It remembers which types it left out of each workout (``leftOut(ofWorkouts:)``), for the answer to say so.
package final class GrantedStore: RouteStore, SummaryStore {
    /// The person's view of the store.
    package let base: any RouteStore
    /// What the token may read (and, with ``narrowsWrites``, write).
    package let grant: TokenGrant
    /// Whether writes leave out what the grant may not write.
    package let narrowsWrites: Bool
    /// The quantity types left out of what was written: by workout, and by pending builder until it finishes.
    private let dropped = Locked(Dropped())

    /// What a store that narrows writes left out.
    private struct Dropped {
        var workouts: [UUID: Set<QuantityType>] = [:]
        var builders: [UUID: Set<QuantityType>] = [:]
    }

    /// `base` narrowed to `grant`: its reads, and with `narrowingWrites` its writes too.
    package init(_ base: any RouteStore, grant: TokenGrant, narrowingWrites: Bool = false) {
        self.base = base
        self.grant = grant
        self.narrowsWrites = narrowingWrites
    }

    package var storeID: UUID { base.storeID }

    package var person: PersonID { base.person }

    package func forPerson(_ person: PersonID) -> GrantedStore {
        GrantedStore(base.forPerson(person), grant: grant, narrowingWrites: narrowsWrites)
    }

    // MARK: Narrowed

    package func workout(id: UUID) async throws(RouteKitError) -> Workout? {
        guard let workout = try await base.workout(id: id) else { return nil }
        return grant.redacted(workout)
    }

    package func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout] {
        let grant = self.grant
        return try await base.workouts(matching: filter).map { grant.redacted($0) }
    }

    package func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType] {
        let grant = self.grant
        return try await base.seriesTypes(ofWorkout: id).filter { grant.mayRead(quantity: $0) }
    }

    /// Whether chunks of `kind` are of a quantity type the grant may not read.
    private func hides(_ kind: ChunkKind) -> Bool {
        if case .quantity(let type) = kind { return !grant.mayRead(quantity: type) }
        return false
    }

    package func workoutChunks(ofWorkout id: UUID, kind: ChunkKind) async throws(RouteKitError) -> any ChunkCursor {
        if hides(kind) { return ArrayChunkCursor([]) }
        return try await base.workoutChunks(ofWorkout: id, kind: kind)
    }

    package func builderChunk(id: UUID, kind: ChunkKind, sequence: Int) async throws(RouteKitError) -> StoredChunk? {
        if hides(kind) { return nil }
        return try await base.builderChunk(id: id, kind: kind, sequence: sequence)
    }

    package func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError) -> [StoredChunk] {
        if hides(kind) { return [] }
        return try await base.builderChunkBounds(id: id, kind: kind)
    }

    // MARK: Figures (a list's distance and durations: nothing of a quantity type)

    package func summaries(ofWorkouts ids: [UUID]) async throws(RouteKitError) -> [UUID: StoredSummary] {
        guard let summaries = base as? any SummaryStore else { return [:] }
        return try await summaries.summaries(ofWorkouts: ids)
    }

    package func saveSummary(_ summary: StoredSummary, ofWorkout id: UUID) async throws(RouteKitError) {
        guard let summaries = base as? any SummaryStore else { return }
        try await summaries.saveSummary(summary, ofWorkout: id)
    }

    // MARK: Writes (narrowed with `narrowsWrites`)

    /// The quantity types whose samples or recorded totals were left out of what was written to these workouts
    /// (none unless writes are narrowed), in ``QuantityType/all``'s order.
    package func leftOut(ofWorkouts ids: [UUID]) -> [QuantityType] {
        let types = dropped.withLock { state in
            ids.reduce(into: Set<QuantityType>()) { $0.formUnion(state.workouts[$1] ?? []) }
        }
        return QuantityType.all.filter { types.contains($0) }
    }

    /// `chunks` without the samples of the quantity types the grant may not write when writes are narrowed, and
    /// those types.
    private func writable(_ chunks: [StoredChunk]) -> (kept: [StoredChunk], leftOut: Set<QuantityType>) {
        guard narrowsWrites else { return (chunks, []) }
        var kept: [StoredChunk] = []
        var leftOut: Set<QuantityType> = []
        for chunk in chunks {
            if case .quantity(let type) = chunk.kind, !grant.mayWrite(quantity: type) {
                leftOut.insert(type)
            } else {
                kept.append(chunk)
            }
        }
        return (kept, leftOut)
    }

    /// `workout` without the recorded totals the grant may not write when writes are narrowed, and their types.
    private func writable(_ workout: Workout) -> (workout: Workout, leftOut: [QuantityType]) {
        guard narrowsWrites else { return (workout, []) }
        return grant.writable(workout)
    }

    /// Records `types` as left out of what was written to workout `id`.
    private func note(_ types: some Sequence<QuantityType>, workout id: UUID) {
        let types = Set(types)
        guard !types.isEmpty else { return }
        dropped.withLock { $0.workouts[id, default: []].formUnion(types) }
    }

    package func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome {
        let (kept, leftOut) = writable(workout)
        let outcome = try await base.saveWorkout(kept)
        if outcome.savedID != nil { note(leftOut, workout: workout.id) }
        return outcome
    }

    package func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        let (kept, leftOut) = writable(chunks)
        // A call whose every chunk was left out writes nothing.
        if leftOut.isEmpty || !kept.isEmpty { try await base.appendSeries(kept, toWorkout: id, as: source) }
        note(leftOut, workout: id)
    }

    package func appendToBuilder(
        id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
    ) async throws(RouteKitError) {
        // The progress is written as it is: a store counts a builder's samples from its chunks.
        let (kept, leftOut) = writable(chunks)
        try await base.appendToBuilder(id: id, claim: claim, chunks: kept, progress: progress, metadata: metadata)
        if !leftOut.isEmpty { dropped.withLock { $0.builders[id, default: []].formUnion(leftOut) } }
    }

    package func finishBuilder(id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?)
        async throws(RouteKitError) -> SaveOutcome
    {
        let made = creating.map { writable($0) }
        let outcome = try await base.finishBuilder(
            id: id, claim: claim, route: route, sequenceOrder: sequenceOrder, creating: made?.workout)
        // What the builder left out is now left out of the route's workout.
        let fromBuilder = dropped.withLock { $0.builders.removeValue(forKey: id) } ?? []
        if outcome.savedID != nil { note(fromBuilder.union(made?.leftOut ?? []), workout: route.workoutID) }
        return outcome
    }

    package func saveRoute(_ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?)
        async throws(RouteKitError) -> SaveOutcome
    {
        let (kept, leftOut) = writable(chunks)
        let outcome = try await base.saveRoute(route, chunks: kept, releasing: claim)
        if outcome.savedID != nil { note(leftOut, workout: route.workoutID) }
        return outcome
    }

    // MARK: Unchanged

    package func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.deleteWorkout(id: id, as: source)
    }
    package func route(id: UUID) async throws(RouteKitError) -> RouteSample? { try await base.route(id: id) }
    package func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool { try await base.isCurrent(route: id) }
    package func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample] {
        try await base.routes(matching: filter)
    }
    package func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.deleteRoute(id: id, as: source)
    }
    package func routeChunks(ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?)
        async throws(RouteKitError) -> any ChunkCursor
    {
        try await base.routeChunks(ofRoute: id, kind: kind, interval: interval)
    }
    package func createBuilder(_ builder: PendingBuilder) async throws(RouteKitError) {
        try await base.createBuilder(builder)
    }
    package func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder? {
        try await base.pendingBuilder(id: id)
    }
    package func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder] { try await base.pendingBuilders() }
    package func claimBuilder(id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID)
        async throws(RouteKitError) -> Bool
    {
        try await base.claimBuilder(
            id: id, expectedLocationCount: expectedLocationCount, previous: previous, claim: claim)
    }
    package func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int]) async throws(RouteKitError) {
        try await base.promoteStaging(builder: id, claim: claim, replacing: sequences)
    }
    package func dropStaging(builder id: UUID) async throws(RouteKitError) { try await base.dropStaging(builder: id) }
    package func claimWork(key: String, holder: UUID, seconds: Double) async throws(RouteKitError) -> Bool {
        try await base.claimWork(key: key, holder: holder, seconds: seconds)
    }
    package func claimWork(keys: [String], holder: UUID, seconds: Double) async throws(RouteKitError) -> Set<String> {
        try await base.claimWork(keys: keys, holder: holder, seconds: seconds)
    }
    package func releaseWork(key: String, holder: UUID) async throws(RouteKitError) {
        try await base.releaseWork(key: key, holder: holder)
    }
    package func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError) -> RouteSample? {
        try await base.rawRoute(source: source, syncIdentifier: syncIdentifier)
    }
    package func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone] {
        try await base.privacyZones(of: source)
    }
    package func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError) {
        try await base.setPrivacyZones(zones, of: source)
    }
    // Zone settings are read whole by the writes that change one quantity's: the doors leave out what is not readable.
    package func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings {
        try await base.zoneSettings(of: source)
    }
    package func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError) {
        try await base.setZoneSettings(settings, of: source)
    }
    package func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings {
        try await base.zoneSettings(ofWorkout: id)
    }
    package func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try await base.setZoneSettings(settings, ofWorkout: id, as: source)
    }
    // Effort scores are read by the writes that relate them: the doors check `read:effort`.
    package func relateEffort(_ score: EffortScore) async throws(RouteKitError) { try await base.relateEffort(score) }
    package func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.unrelateEffort(id: id, as: source)
    }
    package func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore] {
        try await base.efforts(ofWorkout: id)
    }
    package func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
        async throws(RouteKitError) -> ChangeSet
    {
        try await base.changes(since: anchor, matching: predicate, limit: limit)
    }
    package func currentAnchor() async throws(RouteKitError) -> ChangeAnchor { try await base.currentAnchor() }
    package func compactChanges(before date: Date) async throws(RouteKitError) -> Int {
        try await base.compactChanges(before: date)
    }
    package func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter {
        try await base.makeCommitWaiter()
    }
    package func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.discardBuilder(id: id, as: source)
    }
}
