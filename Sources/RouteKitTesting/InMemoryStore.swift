public import Foundation
@_spi(RouteKitBackend) public import RouteKit

/// A store held in memory: the reference implementation of ``RouteStore`` for tests and examples. It is **not
/// durable**: everything is gone when the object is released, and nothing is shared with another process.
///
/// It keeps the rules of the real backends without any SQL: every decision those rules cover (the sync decision,
/// provenance kept or dropped, ownership and workout checks, a saved route's chunks, the feed's read start,
/// change-set assembly and the next anchor, anchor validation) is asked of the same core rules the SQLite and
/// PostgreSQL stores ask, and it runs the whole conformance suite (``StoreConformance/checks``, and
/// ``PeopleConformance`` for people).
///
/// - **Transactions:** all state sits behind one lock. Each method is one transaction: it takes the lock, checks,
///   changes a draft of the state and installs it only when nothing failed, then lets the lock go. The lock is
///   never held across a suspension.
/// - **Values, not references:** what goes in and comes out is copied, so a route query that began before its
///   route was replaced reads the version it started with (its cursor holds the chunks it was made with).
/// - **The change feed** is a log in commit order, as on SQLite: positions are never reused, one added row per
///   current route and one row per deletion, each transaction with its token; a first read owes deletions only
///   after its horizon, and compaction raises the floor below which anchors expire. Followers in the same process
///   are woken at once after each commit that recorded changes.
/// - **People:** the store object is one person's view (``person``; `PersonID.default` for a new store).
///   ``forPerson(_:)`` makes another view of the same state: every view shares one box (the lock, the state, the
///   commit signal). The objects of each person live in a partition of their own, so a view's reads and writes see
///   only its person's objects (another person's id is not found, exactly as a missing one), and sync identities,
///   privacy zones and zone settings are per person. Leases, tickets and tokens are the store's; the change log is
///   one log in commit order whose rows carry their person: a view reads only its person's rows, and its head is
///   its person's newest transaction (raised to the compaction floor, below which no anchor is valid).
/// - It is also a ``TokenStore``, a `JobStore`, a `SummaryStore`, a `WebhookStore` (each person's subscriptions in
///   their partition) and a `PeopleStore` (people are the store's, not the view's).
public final class InMemoryStore: RouteStore, TokenStore, JobStore, SummaryStore, PeopleStore, @unchecked Sendable {
    /// The store's own identity (anchors name it).
    public let storeID: UUID
    /// The person this view reads and writes as.
    public let person: PersonID
    /// What every view of the store shares.
    private let shared: Shared

    /// The state every view of one store shares: one lock, the state behind it, and the signal that wakes followers.
    private final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var state: State
        let commitSignal = CommitSignal()

        init(created: Date) { state = State(created: created) }
    }

    /// Creates an empty store, seen as `PersonID.default` (who exists from the start).
    /// - Parameter storeID: its identity; a new one by default.
    public init(storeID: UUID = UUID()) {
        self.storeID = storeID
        self.person = .default
        self.shared = Shared(created: Date())
    }

    private init(storeID: UUID, person: PersonID, shared: Shared) {
        self.storeID = storeID
        self.person = person
        self.shared = shared
    }

    /// The same store seen as `person`: a new view sharing this one's state (nothing is checked or copied).
    public func forPerson(_ person: PersonID) -> InMemoryStore {
        InMemoryStore(storeID: storeID, person: person, shared: shared)
    }

    // MARK: Transactions

    /// One write transaction as this view's person: `body` changes a draft of the state, installed only when it
    /// returns; the changes it recorded are sealed into one change-log transaction of the person, and followers are
    /// woken after the lock is released.
    private func write<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        let (value, recorded) = try locked { () throws(E) -> (T, Bool) in
            var draft = shared.state
            draft.person = person
            let value = try body(&draft)
            let recorded = draft.seal(token: Int64.random(in: 1...Int64.max), now: Date().timeIntervalSince1970)
            shared.state = draft
            return (value, recorded)
        }
        if recorded { shared.commitSignal.fire() }
        return value
    }

    /// One read transaction as this view's person.
    private func read<T, E: Error>(_ body: (State) throws(E) -> T) throws(E) -> T {
        try locked { () throws(E) -> T in
            var view = shared.state
            view.person = person
            return try body(view)
        }
    }

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        shared.lock.lock()
        defer { shared.lock.unlock() }
        return try body()
    }

    // MARK: Workouts

    /// Saves a workout with the sync semantics of ``RouteStore/saveWorkout(_:)``.
    public func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome {
        // Nothing is encoded here, but what the SQL stores cannot store is refused alike.
        let body = try StoredRecord.body(of: workout)
        return try write { (s: inout State) throws(RouteKitError) -> SaveOutcome in
            let current = s.currentWorkout(identity: workout)
            let plan = try StoreRules.saveWorkout(
                workout, body: body, uuidTaken: s.workoutUUIDTaken(workout.id), current: current,
                currentRoutes: current.map { s.currentRoutes(ofWorkout: $0.id) } ?? [])
            try s.apply(plan.writes)
            return plan.outcome
        }
    }

    /// A current workout by uuid.
    public func workout(id: UUID) async throws(RouteKitError) -> Workout? {
        read { s in s.workouts[id]?.workout }
    }

    /// Current workouts in saving order, filtered and paged like the SQLite store's keyset listing.
    public func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout] {
        read { s in
            var rows = s.workouts.values.filter { row in
                (filter.source.map { row.workout.source == $0 } ?? true)
                    && (filter.syncIdentifier.map { row.workout.sync?.identifier == $0 } ?? true)
            }
            if let after = filter.after {
                // Keyset paging: nothing when the workout named is gone.
                guard let mark = s.workouts[after]?.row else { return [] }
                rows = rows.filter { filter.newestFirst ? $0.row < mark : $0.row > mark }
            }
            rows.sort { filter.newestFirst ? $0.row > $1.row : $0.row < $1.row }
            if let limit = filter.limit { rows = Array(rows.prefix(max(0, limit))) }
            return rows.map(\.workout)
        }
    }

    /// Deletes a workout with its routes (recorded as deletions in the feed), series and effort scores.
    public func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            try s.apply(
                StoreRules.deleteWorkout(
                    id, as: source, owner: s.workouts[id]?.workout.source.name,
                    currentRoutes: s.currentRoutes(ofWorkout: id)))
        }
    }

    // MARK: Routes

    /// A route by uuid: current, or kept as provenance.
    public func route(id: UUID) async throws(RouteKitError) -> RouteSample? {
        read { s in s.routes[id]?.route }
    }

    /// Whether the route is current.
    public func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool {
        read { s in s.routes[id]?.current ?? false }
    }

    /// Current routes in saving order.
    public func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample] {
        read { s in
            var rows = s.routes.values.filter { row in
                row.current && (filter.workout.map { row.route.workoutID == $0 } ?? true)
                    && (filter.source.map { row.route.source == $0 } ?? true)
                    && (filter.syncIdentifier.map { row.route.sync.identifier == $0 } ?? true)
            }
            if let after = filter.after {
                // Keyset paging: nothing when the route named is gone.
                guard let mark = s.routes[after]?.row else { return [] }
                rows = rows.filter { filter.newestFirst ? $0.row < mark : $0.row > mark }
            }
            rows.sort { filter.newestFirst ? $0.row > $1.row : $0.row < $1.row }
            return (filter.limit.map { Array(rows.prefix(max(0, $0))) } ?? rows).map(\.route)
        }
    }

    /// Deletes a current route and every kept version of its sync identity.
    public func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            let current = s.routes[id].flatMap { $0.current ? $0.stored : nil }
            try s.apply(StoreRules.deleteRoute(id, as: source, current: current))
        }
    }

    /// The route's chunks of one kind by sequence number, copied when the cursor is made, skipping those a read of
    /// `interval` does not need (`StoreRules.readNeeds`: whole seconds, as the SQL backends compare them).
    @_spi(RouteKitBackend) public func routeChunks(ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?)
        async throws(RouteKitError) -> any ChunkCursor
    {
        let chunks = try read { (s: State) throws(RouteKitError) -> [StoredChunk] in
            guard let row = s.routes[id] else { throw RouteKitError(.notFound, "no route \(id)") }
            return s.chunks(in: row.container, kind: kind).filter { StoreRules.readNeeds($0, interval: interval) }
        }
        return ArrayChunkCursor(chunks)
    }

    // MARK: Series

    /// Appends chunks to a workout's series, numbered after the chunks it has.
    @_spi(RouteKitBackend) public func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try write { (s: inout State) throws(RouteKitError) in
            try s.apply(
                StoreRules.appendSeries(
                    chunks, toWorkout: id, as: source, owner: s.workouts[id]?.workout.source.name,
                    nextSequence: s.nextSequence(in: StoreRules.seriesContainer(of: id))))
        }
    }

    /// The quantity types a workout has series of.
    public func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType] {
        read { s in
            let known = Set(s.series.filter { $0.workout == id }.map(\.kind))
            return QuantityType.all.filter { known.contains($0.identifier) }
        }
    }

    /// A workout's chunks of one kind, ordered by time (chunks without a time first), then by the order their
    /// series and chunks were saved.
    @_spi(RouteKitBackend) public func workoutChunks(ofWorkout id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> any ChunkCursor
    {
        let chunks = read { s in
            var found: [(series: Int64, chunk: StoredChunk)] = []
            for row in s.series where row.workout == id && row.kind == kind.description {
                for c in s.chunks(in: row.container, kind: kind) { found.append((row.row, c)) }
            }
            found.sort { a, b in
                if a.chunk.minTime != b.chunk.minTime {
                    guard let x = a.chunk.minTime else { return true }
                    guard let y = b.chunk.minTime else { return false }
                    return x < y
                }
                if a.series != b.series { return a.series < b.series }
                return a.chunk.sequence < b.chunk.sequence
            }
            return found.map(\.chunk)
        }
        return ArrayChunkCursor(chunks)
    }

    // MARK: Builders

    /// Records a new builder.
    @_spi(RouteKitBackend) public func createBuilder(_ builder: PendingBuilder) async throws(RouteKitError) {
        _ = try StoredRecord.encode(metadata: builder.metadata)
        try write { (s: inout State) throws(RouteKitError) in
            guard !s.builderUUIDTaken(builder.id) else {
                // As on SQLite and PostgreSQL, where the key's constraint refuses it.
                throw RouteKitError(.storage, "a route builder with uuid \(builder.id) exists")
            }
            var b = builder
            b.nextSequence = 0
            s.builders[builder.id] = b
        }
    }

    /// A pending builder by id.
    public func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder? {
        read { s in s.pending(id) }
    }

    /// Every pending builder, oldest first.
    public func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder] {
        read { s in
            s.builders.values.sorted { ($0.created, $0.id.lowercaseText) < ($1.created, $1.id.lowercaseText) }
                .compactMap { s.pending($0.id) }
        }
    }

    /// Takes a builder over when it still has `expectedLocationCount` locations and the claim `previous`.
    @_spi(RouteKitBackend) public func claimBuilder(id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID)
        async throws(RouteKitError) -> Bool
    {
        try write { (s: inout State) throws(RouteKitError) -> Bool in
            guard let b = s.builders[id], b.progress.locationCount == expectedLocationCount, b.claim == previous
            else { return false }
            s.builders[id]?.claim = claim
            return true
        }
    }

    /// Adds chunks to a builder and records its progress and metadata, with its claim.
    @_spi(RouteKitBackend) public func appendToBuilder(
        id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
    ) async throws(RouteKitError) {
        _ = try StoredRecord.encode(metadata: metadata)
        let now = Date()
        try write { (s: inout State) throws(RouteKitError) in
            try s.checkClaim(id, claim)
            s.builders[id]?.progress = progress
            s.builders[id]?.metadata = metadata
            s.builders[id]?.updated = now
            for chunk in chunks { try s.insert(chunk, container: id.lowercaseText) }
        }
    }

    /// One of a builder's chunks.
    @_spi(RouteKitBackend) public func builderChunk(id: UUID, kind: ChunkKind, sequence: Int)
        async throws(RouteKitError) -> StoredChunk?
    {
        read { s in s.chunks(in: id.lowercaseText, kind: kind).first { $0.sequence == sequence } }
    }

    /// A builder's chunk bounds of one kind, without their bytes.
    @_spi(RouteKitBackend) public func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError)
        -> [StoredChunk]
    {
        read { s in
            s.chunks(in: id.lowercaseText, kind: kind).map { c in
                var c = c
                c.bytes = []
                return c
            }
        }
    }

    /// Deletes the builder's location chunks `sequences` and turns its staging chunks into location chunks.
    @_spi(RouteKitBackend) public func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int])
        async throws(RouteKitError)
    {
        try write { (s: inout State) throws(RouteKitError) in
            try s.checkClaim(id, claim)
            let container = id.lowercaseText
            let dropped = Set(sequences)
            var chunks = (s.chunks[container] ?? []).filter {
                !($0.kind == .locations && dropped.contains($0.sequence))
            }
            for i in chunks.indices where chunks[i].kind == .staging { chunks[i].kind = .locations }
            var seen: Set<Int> = []
            for c in chunks where c.kind == .locations {
                guard seen.insert(c.sequence).inserted else {
                    throw RouteKitError(.storage, "merging route builder \(id): two location chunks \(c.sequence)")
                }
            }
            s.chunks[container] = chunks
        }
    }

    /// Deletes a builder's staging chunks.
    @_spi(RouteKitBackend) public func dropStaging(builder id: UUID) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            let container = id.lowercaseText
            if let chunks = s.chunks[container] { s.chunks[container] = chunks.filter { $0.kind != .staging } }
        }
    }

    /// Saves the builder's route with the sync semantics of ``saveWorkout(_:)``, attaches its series to the
    /// workout and retires it; a stale route discards it.
    @_spi(RouteKitBackend) public func finishBuilder(
        id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?
    ) async throws(RouteKitError) -> SaveOutcome {
        let body = try StoredRecord.body(of: route)
        let workoutBody = try creating.map { w throws(RouteKitError) in try StoredRecord.body(of: w) }
        return try write { (s: inout State) throws(RouteKitError) -> SaveOutcome in
            let new = creating.map { w in
                NewWorkoutRow(
                    workout: w, body: workoutBody ?? "", uuidTaken: s.workoutUUIDTaken(w.id),
                    current: s.currentWorkout(identity: w))
            }
            let plan = try StoreRules.finishBuilder(
                id, claim: claim, route: route, body: body, sequenceOrder: sequenceOrder,
                builder: s.builders[id].map { StoredBuilderRow(source: $0.source.name, claim: $0.claim.lowercaseText) },
                workoutSource: s.workouts[route.workoutID]?.workout.source.name, current: s.currentVersion(of: route),
                creating: new)
            try s.apply(plan.writes)
            return plan.outcome
        }
    }

    /// Drops a pending builder and its chunks (only as its source).
    public func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            try s.apply(StoreRules.discardBuilder(id, as: source, owner: s.builders[id]?.source.name))
        }
    }

    // MARK: Work claims and provenance

    /// Claims `key` for `holder` for `seconds` unless another holder's claim is live.
    @_spi(RouteKitBackend) public func claimWork(key: String, holder: UUID, seconds: Double) async throws(RouteKitError)
        -> Bool
    {
        try await claimWork(keys: [key], holder: holder, seconds: seconds).contains(key)
    }

    /// Claims several keys for `holder` in one transaction; the keys it now holds.
    @_spi(RouteKitBackend) public func claimWork(keys: [String], holder: UUID, seconds: Double)
        async throws(RouteKitError) -> Set<String>
    {
        try StoreRules.checkClaimSeconds(seconds)
        if keys.isEmpty { return [] }
        let now = Date().timeIntervalSince1970
        return try write { (s: inout State) throws(RouteKitError) -> Set<String> in
            var held: Set<String> = []
            for key in keys {
                if let lease = s.leases[key], lease.expires >= now, lease.holder != holder { continue }
                s.leases[key] = Lease(holder: holder, expires: now + seconds)
                held.insert(key)
            }
            return held
        }
    }

    /// Saves a whole route at once with the sync semantics of `finishBuilder`, giving `claim` up.
    @_spi(RouteKitBackend) public func saveRoute(
        _ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?
    ) async throws(RouteKitError) -> SaveOutcome {
        let body = try StoredRecord.body(of: route)
        try StoreRules.checkRouteChunks(chunks)
        return try write { (s: inout State) throws(RouteKitError) -> SaveOutcome in
            let plan = try StoreRules.saveRoute(
                route, chunks: chunks, body: body, releasing: claim,
                workoutSource: s.workouts[route.workoutID]?.workout.source.name, current: s.currentVersion(of: route))
            try s.apply(plan.writes)
            return plan.outcome
        }
    }

    /// Gives a claim up (only the holder's).
    @_spi(RouteKitBackend) public func releaseWork(key: String, holder: UUID) async throws(RouteKitError) {
        write { s in
            if s.leases[key]?.holder == holder { s.leases[key] = nil }
        }
    }

    /// The newest route of a sync identity that no pipeline derived, current or kept.
    public func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError) -> RouteSample? {
        read { s in
            s.routes.values.filter { $0.raw && $0.route.source == source && $0.route.sync.identifier == syncIdentifier }
                .max { ($0.route.sync.version, $0.row) < ($1.route.sync.version, $1.row) }?.route
        }
    }

    // MARK: Privacy zones

    /// A source's privacy zones, in the order they were set.
    public func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone] {
        read { s in s.zones[source.name] ?? [] }
    }

    /// Replaces a source's privacy zones (an empty list removes them).
    public func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError) {
        write { s in s.zones[source.name] = zones.isEmpty ? nil : zones }
    }

    // MARK: Zone settings

    /// A source's zone settings (empty when none).
    public func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings {
        read { s in s.zoneSettings[source.name] ?? ZoneSettings() }
    }

    /// Replaces a source's zone settings (empty settings remove them).
    public func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError) {
        try settings.validate()
        write { s in s.zoneSettings[source.name] = settings.isEmpty ? nil : settings }
    }

    /// The zone settings saved with a workout.
    public func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings {
        read { s in s.workoutZoneSettings[id] ?? ZoneSettings() }
    }

    /// Replaces the zone settings saved with a workout, as its source.
    public func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source)
        async throws(RouteKitError)
    {
        try settings.validate()
        try write { (s: inout State) throws(RouteKitError) in
            guard let w = s.workouts[id]?.workout else { throw RouteKitError(.notFound, "no workout \(id)") }
            try StoreRules.checkOwner(w.source.name, of: "workout \(id)", is: source)
            s.workoutZoneSettings[id] = settings.isEmpty ? nil : settings
        }
    }

    // MARK: Effort

    /// Relates an effort score to a saved workout.
    public func relateEffort(_ score: EffortScore) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            guard s.workouts[score.workoutID] != nil else {
                throw RouteKitError(.notFound, "workout \(score.workoutID) is not saved")
            }
            guard !s.effortUUIDTaken(score.id) else {
                throw RouteKitError(.storage, "an effort score with uuid \(score.id) exists")
            }
            s.efforts[score.id] = EffortRow(row: s.nextRow(), score: score)
            s.recordAddition(.effort(id: score.id, workout: score.workoutID, source: score.source.name))
        }
    }

    /// Unrelates a score, as the source that related it.
    public func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            guard let row = s.efforts[id] else { throw RouteKitError(.notFound, "no effort score \(id)") }
            try StoreRules.checkOwner(row.score.source.name, of: "effort score \(id)", is: source)
            s.recordDeletion(.effort(id: id, workout: row.score.workoutID, source: row.score.source.name))
            s.efforts[id] = nil
        }
    }

    /// The scores related to a workout, oldest first.
    public func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore] {
        read { s in
            s.efforts.values.filter { $0.score.workoutID == id }
                .sorted { ($0.score.created, $0.row) < ($1.score.created, $1.row) }.map(\.score)
        }
    }

    // MARK: Change feed

    /// What changed of the person's since `anchor`, matching `predicate`, in sets that never split a transaction.
    public func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
        async throws(RouteKitError) -> ChangeSet
    {
        try StoreRules.checkLimit(limit)
        return try read { (s: State) throws(RouteKitError) -> ChangeSet in
            let state = s.feedState(storeID)
            if let anchor { try state.validate(anchor, tokenAtCheckpoint: s.token(endingAt: anchor.checkpoint)) }
            let (after, horizon) = StoreRules.readStart(anchor: anchor, state: state)
            // Only the person's rows: the log is the store's, in commit order.
            func owed(_ c: Change, after: Int64) -> Bool {
                c.person == s.person && c.position > after && (c.added || c.position > horizon)
                    && c.record.matches(predicate)
            }
            var rows: [Change] = []
            var i = s.firstChange(after: after)
            while i < s.log.count && rows.count < limit {
                if owed(s.log[i], after: after) { rows.append(s.log[i]) }
                i += 1
            }
            var hasMore = false
            var end = state.head
            if let last = rows.last {
                // Never split a transaction: take the rest of the last one, and end the anchor with it.
                while i < s.log.count && s.log[i].txn == last.txn {
                    if owed(s.log[i], after: last.position) { rows.append(s.log[i]) }
                    i += 1
                }
                while i < s.log.count && !hasMore {
                    hasMore = owed(s.log[i], after: last.txnEnd)
                    i += 1
                }
                if hasMore { end = last.txnEnd }
            }
            let split = try StoreRules.split(rows.map { ($0.added, $0.record) })
            var found: [String: RouteSample] = [:]
            for id in split.addedRouteIDs {
                if let uuid = UUID(text: id), let row = s.routes[uuid] { found[id] = row.route }
            }
            var workouts: [String: Workout] = [:]
            var efforts: [String: EffortScore] = [:]
            var series: [String: SeriesSummary] = [:]
            for r in split.addedObjects {
                guard let id = UUID(text: r.key) else { continue }
                switch r.type {
                case .workout: workouts[r.key] = s.workouts[id]?.workout
                case .effort: efforts[r.key] = s.efforts[id]?.score
                case .series:
                    for row in s.series where row.workout == id && row.kind == r.detail {
                        for chunk in s.chunks(in: row.container) where chunk.kind.description == r.detail {
                            try StoreRules.addChunk(
                                to: &series, workout: r.key, source: row.source, kind: r.detail, count: chunk.count,
                                first: chunk.minTime, last: chunk.maxTime)
                        }
                    }
                case .route: continue
                }
            }
            let choice = StoreRules.nextAnchor(hasMore: hasMore, end: end, horizon: horizon)
            let token = choice.tokenPosition.flatMap { s.token(endingAt: $0) }
            return ChangeSet(
                deleted: split.deletedRoutes, added: try StoreRules.addedRoutes(split.addedRouteIDs, found: found),
                deletedObjects: split.deletedObjects,
                addedObjects: try StoreRules.addedObjects(
                    split.addedObjects, workouts: workouts, efforts: efforts, series: series),
                anchor: choice.anchor(state, token: token), hasMore: hasMore)
        }
    }

    /// The anchor of the person's newest change.
    public func currentAnchor() async throws(RouteKitError) -> ChangeAnchor {
        read { s in s.feedState(storeID).headAnchor }
    }

    /// Drops deletions recorded before `date`, everyone's; anchors from before the newest one dropped then expire.
    public func compactChanges(before date: Date) async throws(RouteKitError) -> Int {
        let cutoff = date.timeIntervalSince1970
        return write { s in
            guard let newest = s.log.last(where: { !$0.added && $0.committed < cutoff })?.position else { return 0 }
            let before = s.log.count
            s.log.removeAll { !$0.added && $0.position <= newest }
            let dropped = before - s.log.count
            // Anchors before the newest dropped deletion would miss it: they expire. The anchor of the
            // transaction that held it stays valid (it had seen that deletion).
            let floor = s.txns.first { $0.end >= newest }?.end ?? newest
            s.floor = max(s.floor, floor)
            s.txns.removeAll { $0.end < floor }
            return dropped
        }
    }

    /// A waiter woken at once by this store's commits that recorded changes.
    @_spi(RouteKitBackend) public func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter {
        InMemoryCommitWaiter(signal: shared.commitSignal)
    }

    // MARK: Tokens

    /// Saves a new API token.
    public func saveToken(_ token: APIToken) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            guard s.tokens[token.id] == nil else {
                throw RouteKitError(.invalidArgument, "an API token with id \(token.id) exists")
            }
            s.tokens[token.id] = token
        }
    }

    /// The token with `id`, revoked and expired ones included.
    public func token(id: UUID) async throws(RouteKitError) -> APIToken? {
        read { s in s.tokens[id] }
    }

    /// Every token, oldest first (everyone's: tokens are the store's, not the view's).
    public func tokens() async throws(RouteKitError) -> [APIToken] {
        read { s in
            s.tokens.values.sorted { ($0.created, $0.id.lowercaseText) < ($1.created, $1.id.lowercaseText) }
        }
    }

    /// The tokens of `person` (`nil`: the admin tokens), oldest first.
    public func tokens(of person: PersonID?) async throws(RouteKitError) -> [APIToken] {
        read { s in
            s.tokens.values.filter { $0.person == person }
                .sorted { ($0.created, $0.id.lowercaseText) < ($1.created, $1.id.lowercaseText) }
        }
    }

    /// Revokes a token at `date` (revoking twice keeps the first date); `false` when there is none.
    public func revokeToken(id: UUID, at date: Date) async throws(RouteKitError) -> Bool {
        write { s in
            guard s.tokens[id] != nil else { return false }
            if s.tokens[id]?.revoked == nil { s.tokens[id]?.revoked = date }
            return true
        }
    }

    /// Records that the token was used at `date`.
    public func touchToken(id: UUID, at date: Date) async throws(RouteKitError) {
        write { s in s.tokens[id]?.lastUsed = date }
    }

    /// Records a single-use ticket's use until `expires`; `false` when it was used before.
    public func redeemTicket(key: String, expires: Date, now: Date) async throws(RouteKitError) -> Bool {
        write { s in
            s.usedTickets = s.usedTickets.filter { $0.value >= now }
            return s.usedTickets.updateValue(expires, forKey: key) == nil
        }
    }

    // MARK: Jobs

    /// Saves a job (a request to cancel it is kept); returns whether its cancellation was requested.
    package func saveJob(_ job: StoredJob) async throws(RouteKitError) -> Bool {
        write { s in
            var saved = job
            saved.cancelRequested = job.cancelRequested || (s.jobs[job.id]?.cancelRequested ?? false)
            if let old = s.jobs[job.id] { saved.created = old.created }
            s.jobs[job.id] = saved
            return saved.cancelRequested
        }
    }

    /// The job with `id`, or `nil`.
    package func job(id: UUID) async throws(RouteKitError) -> StoredJob? {
        read { s in s.jobs[id] }
    }

    /// Asks for a job to stop; `false` when there is none with `id`.
    package func requestJobCancellation(id: UUID) async throws(RouteKitError) -> Bool {
        write { s in
            guard s.jobs[id] != nil else { return false }
            s.jobs[id]?.cancelRequested = true
            return true
        }
    }

    /// Deletes the jobs no longer running that were last saved before `date`, everyone's (operator housekeeping).
    package func deleteJobs(endedBefore date: Date) async throws(RouteKitError) -> Int {
        write { s in
            var deleted = 0
            for owner in Array(s.partitions.keys) {
                guard var objects = s.partitions[owner] else { continue }
                let old = objects.jobs.values.filter { $0.state != .running && $0.updated < date }.map(\.id)
                if old.isEmpty { continue }
                for id in old { objects.jobs[id] = nil }
                s.partitions[owner] = objects
                deleted += old.count
            }
            return deleted
        }
    }
}

extension InMemoryStore: WebhookStore {
    // MARK: Webhook subscriptions (each person's, in their partition; admin-wide ones the store's)

    /// Adds a subscription of the view's person, unless they have `limit`; one without a cursor gets the person's
    /// current anchor.
    package func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool {
        var record = subscription
        if record.cursor == nil { record.cursor = try await currentAnchor().text }
        let stored = record
        let owner = person
        return try write { (s: inout State) throws(RouteKitError) -> Bool in
            guard s.ownWebhooks.count < limit else { return false }
            var added = stored
            added.person = owner
            added.parent = nil
            try s.insertWebhook(added)
            return true
        }
    }

    /// The person's subscription with `id`.
    package func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        read { s in s.ownWebhooks[id] }
    }

    /// The person's subscription, or cursor of an admin-wide one, with `id`.
    package func webhookToDeliver(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        read { s in s.webhooks[id] }
    }

    /// The person's subscriptions, oldest first.
    package func webhooks() async throws(RouteKitError) -> [WebhookSubscription] {
        read { s in Self.oldestFirst(s.ownWebhooks.values) }
    }

    /// Deletes the person's subscription.
    package func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool {
        write { s in
            guard s.ownWebhooks[id] != nil else { return false }
            s.webhooks[id] = nil
            return true
        }
    }

    /// Rotates the subscription's secret.
    package func rotateWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
        async throws(RouteKitError) -> WebhookSubscription?
    {
        write { s in
            guard var w = s.ownWebhooks[id] else { return nil }
            w.rotate(to: secret, previousExpires: previousExpires)
            s.webhooks[id] = w
            return w
        }
    }

    /// Makes the subscription active again, with no failed attempts, due at `due`; `cursor` replaces its cursor when
    /// given.
    package func resumeWebhook(id: UUID, cursor: String?, due: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    {
        write { s in
            guard var w = s.ownWebhooks[id] else { return nil }
            w.resume(due: due)
            if let cursor { w.cursor = cursor }
            s.webhooks[id] = w
            return w
        }
    }

    /// Records a delivery while the subscription's cursor is still `cursor`.
    package func updateWebhookDelivery(id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
        async throws(RouteKitError) -> Bool
    {
        write { s in
            guard var w = s.webhooks[id], w.cursor == cursor else { return false }
            if let next = update.cursor { w.cursor = next }
            w.attempts = update.attempts
            w.nextAttempt = update.nextAttempt
            w.pendingSince = update.pendingSince
            if let reason = update.pauseReason { w.state = .paused(reason: reason) }
            w.recentAttempts = WebhookSubscription.recent(w.recentAttempts, adding: update.attempt)
            s.webhooks[id] = w
            return true
        }
    }

    /// Everyone's active subscriptions due at `now` (see `WebhookStore`), by id text.
    package func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int)
        async throws(RouteKitError) -> [WebhookSubscription]
    {
        read { s in
            let start = after?.lowercaseText ?? ""
            var due: [WebhookSubscription] = []
            for (owner, objects) in s.partitions {
                for w in objects.webhooks.values where w.pauseReason == nil && w.id.lowercaseText > start {
                    let retryDue = w.nextAttempt.map { $0 <= now } ?? false
                    let fresh = w.nextAttempt == nil && (people?.contains(owner) ?? true)
                    if retryDue || fresh { due.append(w) }
                }
            }
            due.sort { $0.id.lowercaseText < $1.id.lowercaseText }
            return Array(due.prefix(max(0, limit)))
        }
    }

    // MARK: Admin-wide subscriptions

    /// Adds an admin-wide subscription, unless there are `limit`; one without a cursor gets the log's head.
    package func addAdminWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError)
        -> Bool
    {
        let storeID = self.storeID
        return try write { (s: inout State) throws(RouteKitError) -> Bool in
            guard s.adminWebhooks.count < limit else { return false }
            var added = subscription
            added.person = nil
            added.parent = nil
            if added.cursor == nil { added.cursor = s.logHeadAnchor(storeID).text }
            try s.insertWebhook(added)
            return true
        }
    }

    /// The admin-wide subscription with `id`.
    package func adminWebhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        read { s in s.adminWebhooks[id] }
    }

    /// The admin-wide subscriptions, oldest first.
    package func adminWebhooks() async throws(RouteKitError) -> [WebhookSubscription] {
        read { s in Self.oldestFirst(s.adminWebhooks.values) }
    }

    /// Deletes an admin-wide subscription and every person's cursor of it.
    package func deleteAdminWebhook(id: UUID) async throws(RouteKitError) -> Bool {
        write { s in
            guard s.adminWebhooks.removeValue(forKey: id) != nil else { return false }
            s.editCursors(of: id) { _ in nil }
            return true
        }
    }

    /// Rotates an admin-wide subscription's secret, and its people's cursors'.
    package func rotateAdminWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
        async throws(RouteKitError) -> WebhookSubscription?
    {
        write { s in
            guard var w = s.adminWebhooks[id] else { return nil }
            w.rotate(to: secret, previousExpires: previousExpires)
            s.adminWebhooks[id] = w
            s.editCursors(of: id) { cursor in
                var rotated = cursor
                rotated.rotate(to: secret, previousExpires: previousExpires)
                return rotated
            }
            return w
        }
    }

    /// Resumes an admin-wide subscription's people's cursors, or (`fromNow`) drops them and starts it again from
    /// the log's head.
    package func resumeAdminWebhook(id: UUID, fromNow: Bool, due: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    {
        let storeID = self.storeID
        return write { s in
            guard var w = s.adminWebhooks[id] else { return nil }
            if fromNow {
                s.editCursors(of: id) { _ in nil }
                w.cursor = s.logHeadAnchor(storeID).text
                s.adminWebhooks[id] = w
                return w
            }
            s.editCursors(of: id) { cursor in
                guard cursor.pauseReason != nil || cursor.attempts > 0 || cursor.nextAttempt != nil else {
                    return cursor
                }
                var resumed = cursor
                resumed.resume(due: due)
                return resumed
            }
            return w
        }
    }

    /// The paused people's cursors of admin-wide subscription `id`, by person.
    package func pausedAdminWebhookCursors(id: UUID, limit: Int) async throws(RouteKitError)
        -> [WebhookSubscription]
    {
        read { s in
            let paused = s.cursors(of: id).filter { $0.pauseReason != nil }
            return Array(
                paused.sorted { ($0.person?.description ?? "") < ($1.person?.description ?? "") }
                    .prefix(max(0, limit)))
        }
    }

    /// How many of admin-wide subscription `id`'s people's cursors are failing, and their newest `limit` attempts.
    package func adminWebhookActivity(id: UUID, limit: Int) async throws(RouteKitError) -> AdminWebhookActivity {
        read { s in
            let cursors = s.cursors(of: id)
            let attempts = cursors.compactMap { cursor in
                cursor.person.map { (person: $0, attempts: cursor.recentAttempts) }
            }
            return AdminWebhookActivity(
                failingCursors: cursors.filter { $0.attempts > 0 }.count, cursors: attempts, limit: limit)
        }
    }

    /// Makes the cursors of people past an admin-wide subscription's start who have none; with `people` `nil`,
    /// moves each start to the log's head after.
    package func startAdminWebhookCursors(people: Set<PersonID>?) async throws(RouteKitError) -> Int {
        if let people, people.isEmpty { return 0 }
        let storeID = self.storeID
        return write { s in
            let head = people == nil ? s.logHeadAnchor(storeID) : nil
            var made = 0
            for var subscription in s.adminWebhooks.values.sorted(by: { $0.id.lowercaseText < $1.id.lowercaseText }) {
                guard let start = subscription.startPosition else { continue }
                let having = Set(s.cursors(of: subscription.id).compactMap(\.person))
                for (person, last) in s.heads
                where last.end > start && !having.contains(person) && (people?.contains(person) ?? true) {
                    var cursor = subscription
                    cursor.id = UUID()
                    cursor.person = person
                    cursor.parent = subscription.id
                    cursor.created = Date()
                    s.partitions[person, default: Objects()].webhooks[cursor.id] = cursor
                    made += 1
                }
                if let head, head.position > start {
                    subscription.cursor = head.text
                    s.adminWebhooks[subscription.id] = subscription
                }
            }
            return made
        }
    }

    /// Subscriptions oldest first (by creation, then id).
    static func oldestFirst(_ list: Dictionary<UUID, WebhookSubscription>.Values) -> [WebhookSubscription] {
        list.sorted { ($0.created, $0.id.lowercaseText) < ($1.created, $1.id.lowercaseText) }
    }
}

extension WebhookSubscription {
    /// Replaces the secret, the current one signing until `previousExpires`.
    fileprivate mutating func rotate(to secret: String, previousExpires: Date) {
        previousSecret = self.secret
        previousSecretExpires = previousExpires
        self.secret = secret
    }

    /// Active, with no failed attempts, due at `due`.
    fileprivate mutating func resume(due: Date) {
        state = .active
        attempts = 0
        nextAttempt = due
        pendingSince = nil
    }
}

extension InMemoryStore {
    // MARK: People (the store's, not the view's)

    /// Adds a person.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a person with its id, or its subject, exists.
    public func addPerson(_ person: Person) async throws(RouteKitError) {
        try write { (s: inout State) throws(RouteKitError) in
            guard s.people[person.id] == nil else {
                throw RouteKitError(.invalidArgument, "a person with id \(person.id) exists")
            }
            if let subject = person.subject, s.people.values.contains(where: { $0.subject == subject }) {
                throw RouteKitError(
                    .invalidArgument,
                    "a person with subject '\(subject.subject)' of issuer '\(subject.issuer)' exists")
            }
            s.people[person.id] = person
        }
    }

    /// The person with `id`.
    public func person(id: PersonID) async throws(RouteKitError) -> Person? {
        read { s in s.people[id] }
    }

    /// The person created for an identity provider's subject.
    public func person(subject: ExternalSubject) async throws(RouteKitError) -> Person? {
        read { s in s.people.values.first { $0.subject == subject } }
    }

    /// Every person, the default person first, then oldest first.
    public func people() async throws(RouteKitError) -> [Person] {
        read { s in s.people.values.sorted(by: Self.peopleOrder) }
    }

    /// The order of ``people()``: the default person, then by creation, then by id.
    private static func peopleOrder(_ a: Person, _ b: Person) -> Bool {
        let aDefault = a.id == .default
        let bDefault = b.id == .default
        if aDefault != bDefault { return aDefault }
        if a.created != b.created { return a.created < b.created }
        return a.id < b.id
    }

    /// Erases a person in one transaction: their objects (every partition row), their tokens, their change-log rows
    /// and head, then the person. Nothing of theirs stays in memory (there is no file to overwrite). Their objects
    /// go even when the person was never added (a view of an unknown person can write).
    /// - Returns: whether the person existed.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` for the default person.
    public func erasePerson(id: PersonID) async throws(RouteKitError) -> Bool {
        guard id != .default else {
            throw RouteKitError(
                .invalidArgument, "the default person (\(id)) cannot be erased; delete their objects instead")
        }
        return write { s in
            let existed = s.people.removeValue(forKey: id) != nil
            s.partitions[id] = nil
            s.tokens = s.tokens.filter { $0.value.person != id }
            s.log.removeAll { $0.person == id }
            s.heads[id] = nil
            return existed
        }
    }

    /// The bytes kept for `person`: the packed bytes of every chunk in their partition (routes, series,
    /// attachments, pending builders) and their workouts' and routes' records as the SQL stores encode them.
    public func storageUsed(by person: PersonID) async throws(RouteKitError) -> Int64 {
        guard let objects = read({ s in s.partitions[person] }) else { return 0 }
        var bytes = 0
        for chunks in objects.chunks.values { bytes += chunks.reduce(0) { $0 + $1.bytes.count } }
        for row in objects.workouts.values { bytes += try StoredRecord.body(of: row.workout).utf8.count }
        for row in objects.routes.values { bytes += try StoredRecord.body(of: row.route).utf8.count }
        return Int64(bytes)
    }

    /// The people with a pending builder whose last batch was acknowledged before `cutoff`, by id.
    public func feedHeads(after position: Int64) async throws(RouteKitError) -> FeedHeads {
        read { s in
            FeedHeads(
                head: s.txns.last?.end ?? 0, people: Set(s.heads.filter { $0.value.end > position }.keys))
        }
    }

    public func peopleWithPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PersonID] {
        read { s in
            var found: [PersonID] = []
            for (owner, objects) in s.partitions
            where objects.builders.values.contains(where: { $0.updated < cutoff }) {
                found.append(owner)
            }
            return found.sorted()
        }
    }
}

extension InMemoryStore {
    // MARK: Summaries

    /// The summaries stored for `ids`.
    package func summaries(ofWorkouts ids: [UUID]) async throws(RouteKitError) -> [UUID: StoredSummary] {
        read { s in
            var out: [UUID: StoredSummary] = [:]
            for id in ids { out[id] = s.summaries[id] }
            return out
        }
    }

    /// Saves a workout's summary, when the workout is stored.
    package func saveSummary(_ summary: StoredSummary, ofWorkout id: UUID) async throws(RouteKitError) {
        write { s in if s.workouts[id] != nil { s.summaries[id] = summary } }
    }
}

// MARK: - State

extension InMemoryStore {
    struct WorkoutRow {
        var row: Int64
        var workout: Workout
    }

    /// A route: current, or a raw version kept as provenance; its chunks live under `container`.
    struct RouteRow {
        var row: Int64
        var route: RouteSample
        var current: Bool
        var raw: Bool
        var container: String

        /// The row as the rules see it.
        var stored: StoredRouteRow {
            StoredRouteRow(
                id: route.id, workoutID: route.workoutID, source: route.source.name,
                syncIdentifier: route.sync.identifier, version: route.sync.version,
                startSeconds: route.start?.instant.seconds, endSeconds: route.end?.instant.seconds, raw: raw,
                container: container)
        }
    }

    /// Which container holds a workout's series of a kind.
    struct SeriesRow {
        var row: Int64
        var workout: UUID
        var source: String
        var kind: String
        var container: String
    }

    struct EffortRow {
        var row: Int64
        var score: EffortScore
    }

    struct Lease {
        var holder: UUID
        var expires: Double
    }

    /// One row of the change log: an addition (while its object is current) or a deletion, of one person's object.
    struct Change {
        var person: PersonID
        var position: Int64
        var txn: Int64
        var txnEnd: Int64
        var added: Bool
        var record: FeedRecord
        var committed: Double
    }

    /// A transaction of the change log: the position of its last change and its token.
    struct Transaction {
        var end: Int64
        var token: Int64
    }

    /// The objects of one person.
    struct Objects {
        var workouts: [UUID: WorkoutRow] = [:]
        var routes: [UUID: RouteRow] = [:]
        /// Pending builders (`nextSequence` is computed when read).
        var builders: [UUID: PendingBuilder] = [:]
        /// Chunks by container (a builder's or a route's uuid, `series-` and a workout's uuid).
        var chunks: [String: [StoredChunk]] = [:]
        var series: [SeriesRow] = []
        var efforts: [UUID: EffortRow] = [:]
        var zones: [String: [PrivacyZone]] = [:]
        var zoneSettings: [String: ZoneSettings] = [:]
        var workoutZoneSettings: [UUID: ZoneSettings] = [:]
        var jobs: [UUID: StoredJob] = [:]
        var summaries: [UUID: StoredSummary] = [:]
        var webhooks: [UUID: WebhookSubscription] = [:]
    }

    /// Everything the store holds, seen as ``person``.
    ///
    /// Each person's objects are a partition of their own (``partitions``); the properties named after them
    /// (``workouts``, ``routes``, …) are those of ``person``, whom each transaction sets before it runs. Everything
    /// else is the store's: leases, tokens, tickets, people, and the change log (its rows carry their person).
    struct State {
        /// The person the transaction running now reads and writes as.
        var person = PersonID.default
        /// Every person's objects.
        var partitions: [PersonID: Objects] = [:]
        var people: [PersonID: Person]
        var lastRow: Int64 = 0
        var leases: [String: Lease] = [:]
        var tokens: [UUID: APIToken] = [:]
        var usedTickets: [String: Date] = [:]
        /// The change log, by position.
        var log: [Change] = []
        /// The change log's transactions, by position.
        var txns: [Transaction] = []
        /// Each person's newest transaction (their head).
        var heads: [PersonID: Transaction] = [:]
        /// Admin-wide webhook subscriptions (their people's cursors are in the people's partitions).
        var adminWebhooks: [UUID: WebhookSubscription] = [:]
        /// The last position handed out (never reused).
        var lastPosition: Int64 = 0
        var floor: Int64 = 0
        /// Changes recorded by the transaction running now, given positions when it seals.
        var unsealed: [(added: Bool, record: FeedRecord)] = []

        /// A new store's state: the default person only.
        init(created: Date) {
            people = [.default: Person(id: .default, name: "default", created: created)]
        }

        // MARK: The person's objects

        var workouts: [UUID: WorkoutRow] {
            get { partitions[person]?.workouts ?? [:] }
            set { partitions[person, default: Objects()].workouts = newValue }
        }
        var routes: [UUID: RouteRow] {
            get { partitions[person]?.routes ?? [:] }
            set { partitions[person, default: Objects()].routes = newValue }
        }
        var builders: [UUID: PendingBuilder] {
            get { partitions[person]?.builders ?? [:] }
            set { partitions[person, default: Objects()].builders = newValue }
        }
        var chunks: [String: [StoredChunk]] {
            get { partitions[person]?.chunks ?? [:] }
            set { partitions[person, default: Objects()].chunks = newValue }
        }
        var series: [SeriesRow] {
            get { partitions[person]?.series ?? [] }
            set { partitions[person, default: Objects()].series = newValue }
        }
        var efforts: [UUID: EffortRow] {
            get { partitions[person]?.efforts ?? [:] }
            set { partitions[person, default: Objects()].efforts = newValue }
        }
        var zones: [String: [PrivacyZone]] {
            get { partitions[person]?.zones ?? [:] }
            set { partitions[person, default: Objects()].zones = newValue }
        }
        var zoneSettings: [String: ZoneSettings] {
            get { partitions[person]?.zoneSettings ?? [:] }
            set { partitions[person, default: Objects()].zoneSettings = newValue }
        }
        var workoutZoneSettings: [UUID: ZoneSettings] {
            get { partitions[person]?.workoutZoneSettings ?? [:] }
            set { partitions[person, default: Objects()].workoutZoneSettings = newValue }
        }
        var jobs: [UUID: StoredJob] {
            get { partitions[person]?.jobs ?? [:] }
            set { partitions[person, default: Objects()].jobs = newValue }
        }
        var summaries: [UUID: StoredSummary] {
            get { partitions[person]?.summaries ?? [:] }
            set { partitions[person, default: Objects()].summaries = newValue }
        }
        var webhooks: [UUID: WebhookSubscription] {
            get { partitions[person]?.webhooks ?? [:] }
            set { partitions[person, default: Objects()].webhooks = newValue }
        }
        /// The person's own subscriptions (not their cursors of admin-wide ones).
        var ownWebhooks: [UUID: WebhookSubscription] { webhooks.filter { $0.value.parent == nil } }

        // MARK: The store's

        /// Whether any person has a workout with this uuid (a uuid names one object in the whole store, as the SQL
        /// stores' keys do).
        func workoutUUIDTaken(_ id: UUID) -> Bool { partitions.values.contains { $0.workouts[id] != nil } }

        /// Whether any person has a builder with this uuid.
        func builderUUIDTaken(_ id: UUID) -> Bool { partitions.values.contains { $0.builders[id] != nil } }

        /// Whether any person has an effort score with this uuid.
        func effortUUIDTaken(_ id: UUID) -> Bool { partitions.values.contains { $0.efforts[id] != nil } }

        mutating func nextRow() -> Int64 {
            lastRow += 1
            return lastRow
        }

        // MARK: Chunks

        func chunks(in container: String) -> [StoredChunk] { chunks[container] ?? [] }

        func chunks(in container: String, kind: ChunkKind) -> [StoredChunk] {
            chunks(in: container).filter { $0.kind == kind }.sorted { $0.sequence < $1.sequence }
        }

        func nextSequence(in container: String) -> Int {
            (chunks[container]?.map(\.sequence).max()).map { $0 + 1 } ?? 0
        }

        mutating func insert(_ chunk: StoredChunk, container: String) throws(RouteKitError) {
            var list = chunks[container] ?? []
            guard !list.contains(where: { $0.kind == chunk.kind && $0.sequence == chunk.sequence }) else {
                throw RouteKitError(
                    .storage, "container \(container) already holds \(chunk.kind) chunk \(chunk.sequence)")
            }
            list.append(chunk)
            chunks[container] = list
        }

        mutating func addSeries(workout: UUID, source: String, kind: String, container: String) {
            guard !series.contains(where: { $0.workout == workout && $0.kind == kind && $0.container == container })
            else { return }
            series.append(SeriesRow(row: nextRow(), workout: workout, source: source, kind: kind, container: container))
        }

        /// Deletes a container's chunks unless a route or a pending builder still uses it (the kinds a workout's
        /// series use stay).
        mutating func dropContainerIfUnused(_ container: String) {
            if routes.values.contains(where: { $0.container == container }) { return }
            if let id = UUID(text: container), builders[id] != nil { return }
            let kept = Set(series.filter { $0.container == container }.map(\.kind))
            let left = (chunks[container] ?? []).filter { kept.contains($0.kind.description) }
            chunks[container] = left.isEmpty ? nil : left
        }

        // MARK: Builders

        func pending(_ id: UUID) -> PendingBuilder? {
            guard var b = builders[id] else { return nil }
            b.nextSequence = nextSequence(in: id.lowercaseText)
            // The samples and events held are counted from the chunks, as the SQL stores count them.
            var progress = BuilderProgress(locationCount: b.progress.locationCount, checkpoint: b.progress.checkpoint)
            for chunk in chunks(in: id.lowercaseText) {
                progress.count(chunk.count, ofStoredKind: chunk.kind.description)
            }
            b.progress = progress
            return b
        }

        /// Checks that `claim` holds the pending builder `id`.
        func checkClaim(_ id: UUID, _ claim: UUID) throws(RouteKitError) {
            try StoreRules.checkClaim(id, held: builders[id]?.claim.lowercaseText, by: claim)
        }

        // MARK: Reads for the rules

        /// The current workout of `workout`'s sync identity, with its version; `nil` without one.
        func currentWorkout(identity workout: Workout) -> (id: UUID, version: Int64)? {
            guard let sync = workout.sync,
                let row = workouts.values.first(where: {
                    $0.workout.source == workout.source && $0.workout.sync?.identifier == sync.identifier
                })
            else { return nil }
            return (row.workout.id, row.workout.sync?.version ?? 0)
        }

        /// The current version of a route's sync identity.
        func currentVersion(of route: RouteSample) -> StoredRouteRow? {
            routes.values.first {
                $0.current && $0.route.source == route.source && $0.route.sync.identifier == route.sync.identifier
            }?.stored
        }

        /// A workout's current routes, in saving order.
        func currentRoutes(ofWorkout id: UUID) -> [StoredRouteRow] {
            routes.values.filter { $0.current && $0.route.workoutID == id }.sorted { $0.row < $1.row }.map(\.stored)
        }

        // MARK: Writes

        /// Carries out the rules' writes, in order (as the SQL backends do, in their own statements).
        mutating func apply(_ writes: [StoreWrite]) throws(RouteKitError) {
            for write in writes { try apply(write) }
        }

        mutating func apply(_ write: StoreWrite) throws(RouteKitError) {
            switch write {
            case .logDeletion(let row):
                guard let route = routes[row.id]?.route else {
                    throw RouteKitError(.storage, "logging the deletion of route \(row.id), which is not stored")
                }
                recordDeletion(.route(route))
            case .keepAsProvenance(let id):
                routes[id]?.current = false
            case .deleteRoute(let id):
                routes[id] = nil
            case .deleteKeptVersions(let source, let syncID):
                deleteVersions { !$0.current && $0.route.source.name == source && $0.route.sync.identifier == syncID }
            case .deleteIdentity(let source, let syncID):
                deleteVersions { $0.route.source.name == source && $0.route.sync.identifier == syncID }
            case .dropContainerIfUnused(let container):
                dropContainerIfUnused(container)
            case .insertChunks(let list, let container):
                for chunk in list { try insert(chunk, container: container) }
            case .renumberLocations(let container, let order):
                guard var list = chunks[container] else { return }
                let position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                for i in list.indices where list[i].kind == .locations {
                    if let p = position[list[i].sequence] { list[i].sequence = p }
                }
                chunks[container] = list
            case .insertRoute(let route, let container, let raw, _):
                routes[route.id] = RouteRow(row: nextRow(), route: route, current: true, raw: raw, container: container)
                unsealed.append((true, .route(route)))
            case .attachSeries(let workout, let source, let kinds, let container):
                for kind in kinds { addSeries(workout: workout, source: source, kind: kind, container: container) }
                recordSeries(workout, source, kinds)
            case .attachStoredSeries(let workout, let source, let container):
                let kinds = Set(
                    self.chunks(in: container).map(\.kind).filter(StoreRules.isSeriesKind).map(\.description))
                for kind in kinds.sorted() {
                    addSeries(workout: workout, source: source, kind: kind, container: container)
                }
                recordSeries(workout, source, kinds.sorted())
            case .addStoredEvents(let workout, let container):
                let held = self.chunks(in: container, kind: .events)
                if held.isEmpty { return }
                guard workouts[workout] != nil else { throw RouteKitError(.notFound, "no workout \(workout)") }
                var events: [WorkoutEvent] = []
                for chunk in held { events += try StoredRecord.events(inChunk: chunk.bytes) }
                workouts[workout]?.workout.events += events
                chunks[container] = (chunks[container] ?? []).filter { $0.kind != .events }
                // The workout changed: a consumer following workouts gets it again.
                if let changed = workouts[workout]?.workout { recordAddition(.workout(changed)) }
            case .deleteBuilder(let id):
                builders[id] = nil
            case .deleteContainer(let container):
                chunks[container] = nil
            case .releaseClaim(let claim):
                if leases[claim.key]?.holder == claim.holder { leases[claim.key] = nil }
            case .deleteWorkoutRows(let id):
                recordWorkoutDeletion(id)
                summaries[id] = nil
                workoutZoneSettings[id] = nil
                let owned = routes.values.filter { $0.route.workoutID == id }
                let containers = owned.map(\.container) + series.filter { $0.workout == id }.map(\.container)
                for r in owned { routes[r.route.id] = nil }
                series.removeAll { $0.workout == id }
                efforts = efforts.filter { $0.value.score.workoutID != id }
                workouts[id] = nil
                for c in Set(containers).sorted() { dropContainerIfUnused(c) }
            case .insertWorkout(let workout, _):
                workouts[workout.id] = WorkoutRow(row: nextRow(), workout: workout)
                recordAddition(.workout(workout))
            }
        }

        /// Deletes the routes `matching` says, then the containers no one uses any more.
        mutating func deleteVersions(matching: (RouteRow) -> Bool) {
            let gone = routes.values.filter(matching)
            for r in gone { routes[r.route.id] = nil }
            for c in Set(gone.map(\.container)).sorted() { dropContainerIfUnused(c) }
        }

        // MARK: The change log

        /// Records that an object stops being current: its added row goes, a deletion is recorded.
        mutating func recordDeletion(_ record: FeedRecord) {
            dropAdded(record)
            unsealed.append((false, record))
        }

        /// Records that an object became current or changed: its previous added row (if any) goes.
        mutating func recordAddition(_ record: FeedRecord) {
            dropAdded(record)
            unsealed.append((true, record))
        }

        mutating func dropAdded(_ record: FeedRecord) {
            log.removeAll { $0.added && $0.person == person && $0.record.isSameObject(as: record) }
            unsealed.removeAll { $0.added && $0.record.isSameObject(as: record) }
        }

        /// Records that a workout's series of these chunk kinds changed.
        mutating func recordSeries(_ workout: UUID, _ source: String, _ kinds: [String]) {
            for kind in kinds {
                if let record = FeedRecord.series(workout: workout, source: source, kind: kind) {
                    recordAddition(record)
                }
            }
        }

        /// Records the deletions of a workout's effort scores and series, then of the workout (before its rows go).
        mutating func recordWorkoutDeletion(_ id: UUID) {
            for e in efforts.values.filter({ $0.score.workoutID == id }).sorted(by: { $0.row < $1.row }) {
                recordDeletion(.effort(id: e.score.id, workout: id, source: e.score.source.name))
            }
            var kinds: [String: String] = [:]
            for row in series where row.workout == id {
                kinds[row.kind] = min(kinds[row.kind] ?? row.source, row.source)
            }
            for (kind, source) in kinds.sorted(by: { $0.key < $1.key }) {
                if let record = FeedRecord.series(workout: id, source: source, kind: kind) { recordDeletion(record) }
            }
            if let w = workouts[id]?.workout { recordDeletion(.workout(w)) }
        }

        /// Gives the changes recorded in this transaction (all of ``person``'s) their positions, transaction and
        /// token, and makes the transaction the person's head. Returns whether there were any.
        mutating func seal(token: Int64, now: Double) -> Bool {
            guard !unsealed.isEmpty else { return false }
            let first = lastPosition + 1
            let last = lastPosition + Int64(unsealed.count)
            for (i, change) in unsealed.enumerated() {
                log.append(
                    Change(
                        person: person, position: first + Int64(i), txn: first, txnEnd: last, added: change.added,
                        record: change.record, committed: now))
            }
            let transaction = Transaction(end: last, token: token)
            txns.append(transaction)
            heads[person] = transaction
            lastPosition = last
            unsealed = []
            return true
        }

        /// The feed as ``person`` sees it: the store's epoch and floor, the person's head. A head below the floor
        /// (a person quiet since before the newest compaction, or without a change yet) is raised to the floor's
        /// transaction: the person has no change between the two, and an anchor below the floor is expired, so the
        /// head a consumer is handed must not be.
        func feedState(_ storeID: UUID) -> ChangeLogState {
            var head = heads[person] ?? Transaction(end: 0, token: 0)
            if head.end < floor, let atFloor = token(endingAt: floor) { head = Transaction(end: floor, token: atFloor) }
            return ChangeLogState(storeID: storeID, epoch: 1, floor: floor, head: head.end, headToken: head.token)
        }

        /// The change log's head, everyone's: the newest transaction's end and token (the store's start when there
        /// is none).
        func logHeadAnchor(_ storeID: UUID) -> ChangeAnchor {
            let newest = txns.last ?? Transaction(end: 0, token: 0)
            return feedState(storeID).anchor(position: newest.end, token: newest.token)
        }

        /// Adds a webhook subscription (the person's, or an admin-wide one when it has no person).
        /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
        mutating func insertWebhook(_ subscription: WebhookSubscription) throws(RouteKitError) {
            let id = subscription.id
            guard adminWebhooks[id] == nil, !partitions.values.contains(where: { $0.webhooks[id] != nil }) else {
                throw RouteKitError(.invalidArgument, "a webhook subscription with id \(id) exists")
            }
            if subscription.person == nil {
                adminWebhooks[id] = subscription
            } else {
                webhooks[id] = subscription
            }
        }

        /// Every person's cursor of admin-wide subscription `id`.
        func cursors(of id: UUID) -> [WebhookSubscription] {
            partitions.values.flatMap { $0.webhooks.values.filter { $0.parent == id } }
        }

        /// Replaces every person's cursor of admin-wide subscription `id` with what `edit` makes of it (`nil`
        /// removes it).
        mutating func editCursors(of id: UUID, _ edit: (WebhookSubscription) -> WebhookSubscription?) {
            for (owner, objects) in partitions {
                var changed = objects
                for (key, cursor) in objects.webhooks where cursor.parent == id { changed.webhooks[key] = edit(cursor) }
                partitions[owner] = changed
            }
        }

        /// The token of the transaction that ends at `position`, if one does.
        func token(endingAt position: Int64) -> Int64? {
            var lo = 0
            var hi = txns.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if txns[mid].end < position { lo = mid + 1 } else { hi = mid }
            }
            return lo < txns.count && txns[lo].end == position ? txns[lo].token : nil
        }

        /// The index of the first change after `position`.
        func firstChange(after position: Int64) -> Int {
            var lo = 0
            var hi = log.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if log[mid].position <= position { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }
}

/// Wakes a follower at once when the in-memory store commits changes.
final class InMemoryCommitWaiter: CommitWaiter {
    private let signal: CommitSignal
    private var seen: UInt64

    init(signal: CommitSignal) {
        self.signal = signal
        self.seen = signal.current
    }

    func wait(timeout: Double) async {
        let milliseconds = timeout.isFinite ? Int(min(max(timeout, 0), 86_400) * 1000) : 1000
        let g = signal.current
        if g == seen { await signal.wait(seen: g, milliseconds: milliseconds) }
        seen = signal.current
    }

    func close() {}
}
