import Foundation
@_spi(RouteKitBackend) public import RouteKit

/// A store that forwards to another and fails on purpose: the `n`-th builder append (counting from 1)
/// throws a storage error before reaching the store, as a dying process or a full disk would. Tests use it
/// to prove that what was acknowledged before stays and can be resumed.
public final class FaultInjectingStore: RouteStore, @unchecked Sendable {
    /// The store written to.
    public let base: any RouteStore
    private let lock = NSLock()
    private var appends = 0
    private let failAt: Int
    private var finishFailures: Int
    /// `finishFailures` as given (what a view of another person starts with).
    private let failingFinishes: Int

    /// Fails the `failAt`-th call of `appendToBuilder(id:claim:chunks:progress:metadata:)`, and every later
    /// one; and the first `finishFailures` calls that finish a route (`finishBuilder(id:claim:route:sequenceOrder:creating:)`
    /// or `saveRoute(_:chunks:releasing:)`).
    public init(_ base: any RouteStore, failingAppend failAt: Int = .max, failingFinishes finishFailures: Int = 0) {
        self.base = base
        self.failAt = failAt
        self.finishFailures = finishFailures
        self.failingFinishes = finishFailures
    }

    public var storeID: UUID { base.storeID }

    /// The base store's person.
    public var person: PersonID { base.person }

    /// The base store seen as `person`, failing the same way: a new wrapper of `base.forPerson(person)` with counters
    /// of its own, from zero.
    /// (This wrapper itself when `person` is its own: a server takes a view per request, and the faults switched on
    /// for the wrapper must reach it.)
    public func forPerson(_ person: PersonID) -> FaultInjectingStore {
        if person == self.person { return self }
        return FaultInjectingStore(base.forPerson(person), failingAppend: failAt, failingFinishes: failingFinishes)
    }

    /// Whether this call that finishes a route fails (one of the first `finishFailures`).
    private func takeFinishFailure() -> Bool {
        lock.withLock { () -> Bool in
            guard finishFailures > 0 else { return false }
            finishFailures -= 1
            return true
        }
    }

    public func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome {
        try await base.saveWorkout(workout)
    }
    public func workout(id: UUID) async throws(RouteKitError) -> Workout? { try await base.workout(id: id) }
    public func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout] {
        try await base.workouts(matching: filter)
    }
    public func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.deleteWorkout(id: id, as: source)
    }
    public func route(id: UUID) async throws(RouteKitError) -> RouteSample? { try await base.route(id: id) }
    public func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool { try await base.isCurrent(route: id) }
    public func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample] {
        try await base.routes(matching: filter)
    }
    public func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.deleteRoute(id: id, as: source)
    }
    @_spi(RouteKitBackend) public func routeChunks(ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?)
        async throws(RouteKitError) -> any ChunkCursor
    {
        try await base.routeChunks(ofRoute: id, kind: kind, interval: interval)
    }
    @_spi(RouteKitBackend) public func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try await base.appendSeries(chunks, toWorkout: id, as: source)
    }
    public func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType] {
        try await base.seriesTypes(ofWorkout: id)
    }
    @_spi(RouteKitBackend) public func workoutChunks(ofWorkout id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> any ChunkCursor
    {
        try await base.workoutChunks(ofWorkout: id, kind: kind)
    }
    @_spi(RouteKitBackend) public func createBuilder(_ builder: PendingBuilder) async throws(RouteKitError) {
        try await base.createBuilder(builder)
    }
    public func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder? {
        try await base.pendingBuilder(id: id)
    }
    public func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder] { try await base.pendingBuilders() }
    @_spi(RouteKitBackend) public func claimBuilder(id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID)
        async throws(RouteKitError) -> Bool
    {
        try await base.claimBuilder(
            id: id, expectedLocationCount: expectedLocationCount, previous: previous, claim: claim)
    }
    @_spi(RouteKitBackend) public func appendToBuilder(
        id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
    ) async throws(RouteKitError) {
        let n = lock.withLock {
            appends += 1
            return appends
        }
        if n >= failAt { throw RouteKitError(.storage, "injected fault at builder append \(n)") }
        try await base.appendToBuilder(id: id, claim: claim, chunks: chunks, progress: progress, metadata: metadata)
    }
    @_spi(RouteKitBackend) public func builderChunk(id: UUID, kind: ChunkKind, sequence: Int)
        async throws(RouteKitError) -> StoredChunk?
    {
        try await base.builderChunk(id: id, kind: kind, sequence: sequence)
    }
    @_spi(RouteKitBackend) public func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> [StoredChunk]
    {
        try await base.builderChunkBounds(id: id, kind: kind)
    }
    @_spi(RouteKitBackend) public func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int])
        async throws(RouteKitError)
    {
        try await base.promoteStaging(builder: id, claim: claim, replacing: sequences)
    }
    @_spi(RouteKitBackend) public func dropStaging(builder id: UUID) async throws(RouteKitError) {
        try await base.dropStaging(builder: id)
    }
    @_spi(RouteKitBackend) public func finishBuilder(
        id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?
    )
        async throws(RouteKitError) -> SaveOutcome
    {
        let fail = takeFinishFailure()
        if fail { throw RouteKitError(.storage, "injected fault in finishBuilder") }
        return try await base.finishBuilder(
            id: id, claim: claim, route: route, sequenceOrder: sequenceOrder, creating: creating)
    }
    @_spi(RouteKitBackend) public func claimWork(key: String, holder: UUID, seconds: Double) async throws(RouteKitError)
        -> Bool
    {
        try await base.claimWork(key: key, holder: holder, seconds: seconds)
    }
    @_spi(RouteKitBackend) public func claimWork(keys: [String], holder: UUID, seconds: Double)
        async throws(RouteKitError) -> Set<String>
    {
        try await base.claimWork(keys: keys, holder: holder, seconds: seconds)
    }
    @_spi(RouteKitBackend) public func saveRoute(
        _ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?
    )
        async throws(RouteKitError) -> SaveOutcome
    {
        let fail = takeFinishFailure()
        if fail { throw RouteKitError(.storage, "injected fault in saveRoute") }
        return try await base.saveRoute(route, chunks: chunks, releasing: claim)
    }
    public func relateEffort(_ score: EffortScore) async throws(RouteKitError) { try await base.relateEffort(score) }
    public func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.unrelateEffort(id: id, as: source)
    }
    public func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore] {
        try await base.efforts(ofWorkout: id)
    }
    @_spi(RouteKitBackend) public func releaseWork(key: String, holder: UUID) async throws(RouteKitError) {
        try await base.releaseWork(key: key, holder: holder)
    }
    public func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError)
        -> RouteSample?
    {
        try await base.rawRoute(source: source, syncIdentifier: syncIdentifier)
    }
    public func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone] {
        try await base.privacyZones(of: source)
    }
    public func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError) {
        try await base.setPrivacyZones(zones, of: source)
    }
    public func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings {
        try await base.zoneSettings(of: source)
    }
    public func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError) {
        try await base.setZoneSettings(settings, of: source)
    }
    public func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings {
        try await base.zoneSettings(ofWorkout: id)
    }
    public func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try await base.setZoneSettings(settings, ofWorkout: id, as: source)
    }
    public func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
        async throws(RouteKitError) -> ChangeSet
    {
        let unreachable = lock.withLock { () -> Bool in
            changeReads += 1
            return changesUnreachable
        }
        if unreachable {
            throw RouteKitError(.unavailable, "the store cannot be reached (made unreachable by the test)")
        }
        return try await base.changes(since: anchor, matching: predicate, limit: limit)
    }
    private var changeReads = 0
    private var changesUnreachable = false
    /// Makes ``changes(since:matching:limit:)`` fail with ``RouteKitError/Code/unavailable`` (a database server
    /// restarting) until called again with `false`.
    public func setChangesUnreachable(_ unreachable: Bool) { lock.withLock { changesUnreachable = unreachable } }
    private var waitersOpen = 0
    /// How many times ``changes(since:matching:limit:)`` was called.
    public var changeReadCount: Int { lock.withLock { changeReads } }
    /// Commit waiters made and not yet closed (what a follower holds while it lives).
    public var openCommitWaiters: Int { lock.withLock { waitersOpen } }
    public func currentAnchor() async throws(RouteKitError) -> ChangeAnchor { try await base.currentAnchor() }
    public func compactChanges(before date: Date) async throws(RouteKitError) -> Int {
        try await base.compactChanges(before: date)
    }
    @_spi(RouteKitBackend) public func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter {
        let waiter = try await base.makeCommitWaiter()
        lock.withLock { waitersOpen += 1 }
        return CountedWaiter(waiter) { [self] in lock.withLock { waitersOpen -= 1 } }
    }
    public func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError) {
        try await base.discardBuilder(id: id, as: source)
    }
}

/// A commit waiter that reports its closing (once).
private final class CountedWaiter: CommitWaiter {
    private let base: any CommitWaiter
    private var onClose: (() -> Void)?

    init(_ base: any CommitWaiter, onClose: @escaping () -> Void) {
        self.base = base
        self.onClose = onClose
    }

    func wait(timeout: Double) async { await base.wait(timeout: timeout) }

    func close() {
        base.close()
        onClose?()
        onClose = nil
    }
}

/// Tokens are the base store's (when it keeps them), never failed on purpose: a server can run on the faulty store.
extension FaultInjectingStore: TokenStore {
    private var tokens: any TokenStore {
        get throws(RouteKitError) {
            guard let t = base as? any TokenStore else {
                throw RouteKitError(.invalidArgument, "the base store keeps no API tokens")
            }
            return t
        }
    }
    public func saveToken(_ token: APIToken) async throws(RouteKitError) { try await tokens.saveToken(token) }
    public func token(id: UUID) async throws(RouteKitError) -> APIToken? { try await tokens.token(id: id) }
    public func tokens() async throws(RouteKitError) -> [APIToken] { try await tokens.tokens() }
    public func tokens(of person: PersonID?) async throws(RouteKitError) -> [APIToken] {
        try await tokens.tokens(of: person)
    }
    public func revokeToken(id: UUID, at date: Date) async throws(RouteKitError) -> Bool {
        try await tokens.revokeToken(id: id, at: date)
    }
    public func touchToken(id: UUID, at date: Date) async throws(RouteKitError) {
        try await tokens.touchToken(id: id, at: date)
    }
    public func redeemTicket(key: String, expires: Date, now: Date) async throws(RouteKitError) -> Bool {
        try await tokens.redeemTicket(key: key, expires: expires, now: now)
    }
}

extension FaultInjectingStore: PeopleStore {
    private var peopleStore: any PeopleStore {
        get throws(RouteKitError) {
            guard let p = base as? any PeopleStore else {
                throw RouteKitError(.unavailable, "the wrapped store keeps no people")
            }
            return p
        }
    }

    public func addPerson(_ person: Person) async throws(RouteKitError) { try await peopleStore.addPerson(person) }
    public func person(id: PersonID) async throws(RouteKitError) -> Person? { try await peopleStore.person(id: id) }
    public func person(subject: ExternalSubject) async throws(RouteKitError) -> Person? {
        try await peopleStore.person(subject: subject)
    }
    public func people() async throws(RouteKitError) -> [Person] { try await peopleStore.people() }
    public func erasePerson(id: PersonID) async throws(RouteKitError) -> Bool {
        try await peopleStore.erasePerson(id: id)
    }
    public func peopleWithPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PersonID] {
        try await peopleStore.peopleWithPendingBuilders(updatedBefore: cutoff)
    }
    public func feedHeads(after position: Int64) async throws(RouteKitError) -> FeedHeads {
        try await peopleStore.feedHeads(after: position)
    }
    public func storageUsed(by person: PersonID) async throws(RouteKitError) -> Int64 {
        try await peopleStore.storageUsed(by: person)
    }
}
