import Foundation

/// What happened when an object with a sync identity was saved.
///
/// An equal or higher version already in the store is a normal race between writers, not a failure, so it
/// is an outcome (``stale(current:currentVersion:)``) rather than an error.
public enum SaveOutcome: Hashable, Sendable {
    /// Nothing current had the identity: the object was added.
    case inserted(UUID)
    /// The current object had a lower version: it was deleted and this one added, in one transaction.
    case replaced(UUID, previous: UUID, previousVersion: Int64)
    /// The current object has an equal or higher version: nothing was saved.
    case stale(current: UUID, currentVersion: Int64)

    /// The uuid of the object now saved, `nil` when stale.
    public var savedID: UUID? {
        switch self {
        case .inserted(let id), .replaced(let id, _, _): id
        case .stale: nil
        }
    }
}

/// How a route builder orders its locations when it finishes.
public enum LocationOrder: String, Hashable, Sendable, Codable {
    /// By timestamp (HealthKit's behaviour): batches may arrive in any order; every location needs a time.
    case timestamp
    /// As inserted (the importer's mode): real clocks jump backwards and route planners write no times.
    case insertion
}

/// Where a builder's locations come from, so that an interrupted build can be found again and resumed.
public struct BuilderOrigin: Hashable, Sendable, Codable {
    /// The kind of origin (`"gpx-import"`).
    public var kind: String
    /// A stable key that the same origin produces again (for an import: a hash of the track's first points
    /// and fields, independent of the file's name and formatting).
    public var key: String
    /// For people: the file it was read from, and which track.
    public var label: String?

    /// Creates an origin.
    public init(kind: String, key: String, label: String? = nil) {
        self.kind = kind
        self.key = key
        self.label = label
    }
}

/// How far a builder got: written with every acknowledged batch, in the same transaction.
///
/// The sample and event counts are what the builder's stored chunks hold (a store counts them in the transaction
/// that reads the builder), so they are exactly as durable as the batches. As JSON, a record without
/// `sampleCounts` or `eventCount` (one written before builders took samples and events) reads as none held.
public struct BuilderProgress: Hashable, Sendable, Codable {
    /// Locations acknowledged (durable) so far.
    public var locationCount: Int
    /// An origin-specific checkpoint of the acknowledged prefix (the importer's running content hash).
    public var checkpoint: String?
    /// Samples acknowledged so far, by quantity type (a type without samples is absent): the index the next batch
    /// of that type starts at (``RouteBuilder/insert(samples:of:first:)``).
    public var sampleCounts: [QuantityType: Int]
    /// Workout events acknowledged so far: the index the next batch of events starts at
    /// (``RouteBuilder/insert(events:first:)``).
    public var eventCount: Int

    /// Creates a progress record.
    public init(
        locationCount: Int, checkpoint: String? = nil, sampleCounts: [QuantityType: Int] = [:], eventCount: Int = 0
    ) {
        self.locationCount = locationCount
        self.checkpoint = checkpoint
        self.sampleCounts = sampleCounts
        self.eventCount = eventCount
    }

    /// The samples of `type` acknowledged so far (0 when none).
    public func sampleCount(of type: QuantityType) -> Int { sampleCounts[type] ?? 0 }

    /// Counts `count` more samples or events held in chunks stored under the kind name `kind` (a quantity type's
    /// identifier, or `events`); other kinds (locations, staging, extras, attachments, unknown names) are not counted
    /// here. For store backends, which read a builder's counts from its chunks.
    package mutating func count(_ count: Int, ofStoredKind kind: String) {
        guard count > 0 else { return }
        if kind == ChunkKind.events.description {
            eventCount += count
        } else if let type = QuantityType(identifier: kind) {
            sampleCounts[type, default: 0] += count
        }
    }

    enum CodingKeys: String, CodingKey { case locationCount, checkpoint, sampleCounts, eventCount }

    /// Decodes a record; missing sample counts or event count read as none held, unknown quantity types are left out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        locationCount = try c.decode(Int.self, forKey: .locationCount)
        checkpoint = try c.decodeIfPresent(String.self, forKey: .checkpoint)
        let byName = try c.decodeIfPresent([String: Int].self, forKey: .sampleCounts) ?? [:]
        var counts: [QuantityType: Int] = [:]
        for (name, n) in byName {
            if let type = QuantityType(identifier: name) { counts[type] = n }
        }
        sampleCounts = counts
        eventCount = try c.decodeIfPresent(Int.self, forKey: .eventCount) ?? 0
    }

    /// Encodes the record, sample counts keyed by the types' identifiers (`{"heartRate": 120}`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(locationCount, forKey: .locationCount)
        try c.encodeIfPresent(checkpoint, forKey: .checkpoint)
        var byName: [String: Int] = [:]
        for (type, n) in sampleCounts { byName[type.identifier] = n }
        try c.encode(byName, forKey: .sampleCounts)
        try c.encode(eventCount, forKey: .eventCount)
    }
}

/// A route builder that has not finished: what ``RouteStore/pendingBuilders()`` lists after a crash.
public struct PendingBuilder: Hashable, Sendable, Identifiable {
    /// The builder's identity.
    public var id: UUID
    /// Who is building.
    public var source: Source
    /// How it orders locations when it finishes.
    public var order: LocationOrder
    /// Where its locations come from, if recorded.
    public var origin: BuilderOrigin?
    /// How far it got.
    public var progress: BuilderProgress
    /// Metadata added so far.
    public var metadata: [String: MetadataValue]
    /// When it was created.
    public var created: Date
    /// When its last batch was acknowledged.
    public var updated: Date
    /// The sequence number its next chunk takes.
    package var nextSequence: Int
    /// Who holds the builder: only the ``RouteBuilder`` with this claim may add to or finish it. Resuming a
    /// builder takes a new claim (`RouteStore.claimBuilder(id:expectedLocationCount:previous:claim:)`), so a process
    /// that was presumed dead but is not can no longer write into it.
    package var claim: UUID

    /// Creates a record.
    package init(
        id: UUID = UUID(), source: Source, order: LocationOrder, origin: BuilderOrigin?,
        progress: BuilderProgress = BuilderProgress(locationCount: 0), metadata: [String: MetadataValue] = [:],
        created: Date = Date(), updated: Date = Date(), nextSequence: Int = 0, claim: UUID = UUID()
    ) {
        self.id = id
        self.source = source
        self.order = order
        self.origin = origin
        self.progress = progress
        self.metadata = metadata
        self.created = created
        self.updated = updated
        self.nextSequence = nextSequence
        self.claim = claim
    }
}

/// What a chunk holds.
@_spi(RouteKitBackend)
public enum ChunkKind: Hashable, Sendable, CustomStringConvertible {
    /// Locations (`LocationChunk`).
    case locations
    /// Samples of one quantity type (`QuantityChunk`).
    case quantity(QuantityType)
    /// Locations being merged into time order while a builder finishes (never read by queries).
    case staging
    /// Opaque per-batch annotations kept with a route (the importer's GPX fields that are not location fields),
    /// numbered like the location chunk they annotate.
    case extras
    /// Opaque data its writer attached to a workout (the importer's GPX waypoints and `<rte>` routes).
    case attachment
    /// Workout events a builder collected (``RouteBuilder/insert(events:first:)``), as JSON, numbered in the order
    /// they were acknowledged; they join the workout's events when the builder finishes, never a series.
    case events

    /// The stable name stored in a backend (`"locations"`, `"heartRate"`, `"staging"`).
    public var description: String {
        switch self {
        case .locations: "locations"
        case .quantity(let type): type.identifier
        case .staging: "staging"
        case .extras: "extras"
        case .attachment: "attachment"
        case .events: "events"
        }
    }

    /// The kind stored under a name; `nil` for a name this version does not know.
    public init?(name: String) {
        switch name {
        case "locations": self = .locations
        case "staging": self = .staging
        case "extras": self = .extras
        case "attachment": self = .attachment
        case "events": self = .events
        default:
            guard let type = QuantityType(identifier: name) else { return nil }
            self = .quantity(type)
        }
    }
}

/// One packed chunk as a backend stores it: a few thousand locations or samples, with the bounds a query
/// uses to skip it.
@_spi(RouteKitBackend)
public struct StoredChunk: Hashable, Sendable {
    /// What it holds.
    public var kind: ChunkKind
    /// Its position among the chunks of the same kind in its container.
    public var sequence: Int
    /// How many locations or samples it holds.
    public var count: Int
    /// The earliest time in it (`nil` when none has a time).
    public var minTime: Instant?
    /// The latest time in it.
    public var maxTime: Instant?
    /// The packed bytes.
    public var bytes: [UInt8]

    /// Creates a chunk record.
    public init(kind: ChunkKind, sequence: Int, count: Int, minTime: Instant?, maxTime: Instant?, bytes: [UInt8]) {
        self.kind = kind
        self.sequence = sequence
        self.count = count
        self.minTime = minTime
        self.maxTime = maxTime
        self.bytes = bytes
    }

    /// Packs locations (in the order given).
    public static func locations(_ locations: [Location], sequence: Int, kind: ChunkKind = .locations) -> StoredChunk {
        var lo: Instant?
        var hi: Instant?
        for l in locations {
            guard let t = l.timestamp?.instant else { continue }
            if lo.map({ t < $0 }) ?? true { lo = t }
            if hi.map({ t > $0 }) ?? true { hi = t }
        }
        return StoredChunk(
            kind: kind, sequence: sequence, count: locations.count, minTime: lo, maxTime: hi,
            bytes: LocationChunk.encode(locations))
    }

    /// Packs quantity samples (in the order given).
    public static func samples(_ samples: [QuantitySample], of type: QuantityType, sequence: Int) -> StoredChunk {
        let times = samples.map(\.timestamp.instant)
        return StoredChunk(
            kind: .quantity(type), sequence: sequence, count: samples.count, minTime: times.min(),
            maxTime: times.max(), bytes: QuantityChunk.encode(samples))
    }

    /// Packs workout events (in the order given) as a builder keeps them: JSON, as a workout's stored body holds its
    /// events; the times are the events' starts and ends.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when an event's metadata cannot be encoded.
    public static func events(_ events: [WorkoutEvent], sequence: Int) throws(RouteKitError) -> StoredChunk {
        let times = events.flatMap { [$0.start?.instant, $0.end?.instant] }.compactMap { $0 }
        return StoredChunk(
            kind: .events, sequence: sequence, count: events.count, minTime: times.min(), maxTime: times.max(),
            bytes: try StoredRecord.eventChunk(events))
    }
}

/// Reads stored chunks one at a time, in order, from one consistent version of the store.
///
/// A cursor holds what the backend needs for that (a read snapshot on SQLite, a repeatable-read transaction
/// on PostgreSQL) until it returns `nil`, ``close()`` is called, or it is released.
@_spi(RouteKitBackend)
public protocol ChunkCursor: AnyObject {
    /// The next chunk, `nil` at the end.
    func next() async throws(RouteKitError) -> StoredChunk?
    /// Releases what the cursor holds. Calling it twice, or after the end, does nothing.
    func close()
}

/// Chunks already read: what a backend returns for a route read whole in one transaction. For store backends.
package final class ArrayChunkCursor: ChunkCursor {
    private var chunks: [StoredChunk]
    private var position = 0

    /// A cursor over `chunks`, in that order.
    package init(_ chunks: [StoredChunk]) { self.chunks = chunks }

    package func next() async throws(RouteKitError) -> StoredChunk? {
        guard position < chunks.count else { return nil }
        defer { position += 1 }
        return chunks[position]
    }

    package func close() {
        chunks = []
        position = 0
    }
}

/// A work claim: what `RouteStore.claimWork(key:holder:seconds:)` took.
@_spi(RouteKitBackend)
public struct WorkClaim: Hashable, Sendable {
    /// The claimed key.
    public var key: String
    /// Who holds it.
    public var holder: UUID

    /// A claim.
    public init(key: String, holder: UUID) {
        self.key = key
        self.holder = holder
    }
}

/// An effort score (1–10) related to a workout: HealthKit's workout effort.
public struct EffortScore: Hashable, Sendable, Identifiable {
    /// The score's identity.
    public var id: UUID
    /// The workout it is related to.
    public var workoutID: UUID
    /// Who related it (only that source may unrelate it).
    public var source: Source
    /// 1 to 10.
    public var score: Double
    /// A person's own rating (wins over any estimate), or an estimate.
    public var isManual: Bool
    /// When it was related.
    public var created: Date

    /// A score.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` for a score outside 1…10.
    public init(
        id: UUID = UUID(), workoutID: UUID, source: Source, score: Double, isManual: Bool, created: Date = Date()
    ) throws(RouteKitError) {
        guard score.isFinite, (1...10).contains(score) else {
            throw RouteKitError(.invalidArgument, "an effort score is 1 to 10, not \(score)")
        }
        self.id = id
        self.workoutID = workoutID
        self.source = source
        self.score = score
        self.isManual = isManual
        self.created = created
    }

    /// The score that counts among several: the newest manual one, else the newest estimate.
    package static func effective(_ scores: [EffortScore]) -> EffortScore? {
        let manual = scores.filter(\.isManual)
        let pool = manual.isEmpty ? scores : manual
        return pool.max { ($0.created, $0.id.uuidString) < ($1.created, $1.id.uuidString) }
    }
}

/// Which routes to list.
public struct RouteFilter: Hashable, Sendable {
    /// Only routes of this workout.
    public var workout: UUID?
    /// Only routes of this source.
    public var source: Source?
    /// Only routes with this sync identifier.
    public var syncIdentifier: String?
    /// At most this many.
    public var limit: Int?
    /// Newest saved first, instead of oldest saved first.
    public var newestFirst: Bool
    /// Only the routes that come after this one in the listing's order (the last one of a page): keyset paging,
    /// one indexed query per page. When this route is no longer in the store, nothing matches.
    public var after: UUID?

    /// Creates a filter; no argument matches every current route.
    public init(
        workout: UUID? = nil, source: Source? = nil, syncIdentifier: String? = nil, limit: Int? = nil,
        newestFirst: Bool = false, after: UUID? = nil
    ) {
        self.workout = workout
        self.source = source
        self.syncIdentifier = syncIdentifier
        self.limit = limit
        self.newestFirst = newestFirst
        self.after = after
    }
}

/// Which workouts to list.
public struct WorkoutFilter: Hashable, Sendable {
    /// Only workouts of this source.
    public var source: Source?
    /// Only workouts with this sync identifier.
    public var syncIdentifier: String?
    /// At most this many.
    public var limit: Int?
    /// Newest saved first, instead of oldest saved first.
    public var newestFirst: Bool
    /// Only the workouts that come after this one in the listing's order (the last one of a page): keyset paging,
    /// one indexed query per page. When this workout is no longer in the store, nothing matches.
    public var after: UUID?

    /// Creates a filter; no argument matches every workout.
    public init(
        source: Source? = nil, syncIdentifier: String? = nil, limit: Int? = nil, newestFirst: Bool = false,
        after: UUID? = nil
    ) {
        self.source = source
        self.syncIdentifier = syncIdentifier
        self.limit = limit
        self.newestFirst = newestFirst
        self.after = after
    }
}

/// A store that can tell whether it can take writes now, more surely than a read can: `routekit serve`'s `/readyz`
/// asks it, so that a full disk or a store file deleted under the server takes the server out of rotation instead
/// of answering uploads it cannot keep.
package protocol StoreReadiness: Sendable {
    /// Checks that a write would succeed now.
    /// - Throws: ``RouteKitError/Code/storageFull`` when the device is (nearly) full,
    ///   ``RouteKitError/Code/unavailable`` when the store cannot be written (its file gone, its device read-only).
    func checkReady() async throws(RouteKitError)
}

/// A store of workouts, routes and their related series: the protocol every backend (SQLite, PostgreSQL)
/// implements, with the semantics of <doc:IdentityAndVersions> and <doc:StorageBackends>.
///
/// Nothing here assumes one writer or one machine: every method is one transaction of its own, identity
/// checks happen inside it, and builders are records in the store, not state in a process.
///
/// Most callers use the higher-level types built on it: ``RouteBuilder`` to write a route and
/// ``RouteQuery`` (``RouteStore/locations(of:batchSize:interval:)``) to read one back.
public protocol RouteStore: AnyObject, Sendable {
    /// The store's own identity (anchors and exports name it).
    var storeID: UUID { get }

    // MARK: People

    /// The person this store object reads and writes as: every method below sees only their objects (another
    /// person's object is ``RouteKitError/Code/notFound``, exactly as if it did not exist), writes make objects of
    /// theirs, and the change feed holds only their changes. A store opened by path is ``PersonID/default``'s.
    var person: PersonID { get }
    /// The same store seen as `person`: it shares connections, caches and followers with this one. Whether the
    /// person exists is not checked (a person with no objects sees an empty store); see ``PeopleStore``.
    func forPerson(_ person: PersonID) -> Self

    // MARK: Workouts

    /// Saves a workout: inserted when nothing current has its sync identity (or it has none), replacing the
    /// current one when its version is higher (the old workout's routes and series are deleted with it),
    /// ``SaveOutcome/stale(current:currentVersion:)`` otherwise.
    /// - Throws: ``RouteKitError/Code/notOwner`` never: the identity is scoped to the workout's source.
    func saveWorkout(_ workout: Workout) async throws(RouteKitError) -> SaveOutcome
    /// A current workout by uuid.
    func workout(id: UUID) async throws(RouteKitError) -> Workout?
    /// Current workouts, oldest saved first (``WorkoutFilter/newestFirst``: newest first).
    func workouts(matching filter: WorkoutFilter) async throws(RouteKitError) -> [Workout]
    /// Deletes a workout with its routes and series.
    /// - Throws: ``RouteKitError/Code/notFound``, or ``RouteKitError/Code/notOwner`` when `source` did not
    ///   write it.
    func deleteWorkout(id: UUID, as source: Source) async throws(RouteKitError)

    // MARK: Routes

    /// A route by uuid: current, or kept as provenance after it was replaced.
    func route(id: UUID) async throws(RouteKitError) -> RouteSample?
    /// Whether the route is current (not replaced, not deleted).
    func isCurrent(route id: UUID) async throws(RouteKitError) -> Bool
    /// Current routes, oldest saved first.
    func routes(matching filter: RouteFilter) async throws(RouteKitError) -> [RouteSample]
    /// Deletes a current route (its kept provenance goes with it).
    /// - Throws: ``RouteKitError/Code/notFound`` or ``RouteKitError/Code/notOwner``.
    func deleteRoute(id: UUID, as source: Source) async throws(RouteKitError)
    /// The route's chunks of one kind (`ChunkKind.locations` or `ChunkKind.extras`) by sequence number,
    /// from one consistent version, skipping chunks wholly outside `interval`.
    /// - Throws: ``RouteKitError/Code/notFound`` when there is no such route.
    @_spi(RouteKitBackend)
    func routeChunks(ofRoute id: UUID, kind: ChunkKind, interval: ClosedRange<Instant>?) async throws(RouteKitError)
        -> any ChunkCursor

    // MARK: Series

    /// Appends packed samples (or `ChunkKind.attachment` chunks) to a workout, as `source` (the backend
    /// numbers the chunks after the workout's existing ones; the chunks' own sequence numbers are ignored).
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not current.
    @_spi(RouteKitBackend)
    func appendSeries(_ chunks: [StoredChunk], toWorkout id: UUID, as source: Source) async throws(RouteKitError)
    /// The quantity types a workout has series of.
    func seriesTypes(ofWorkout id: UUID) async throws(RouteKitError) -> [QuantityType]
    /// A workout's chunks of one kind (a quantity type's series, ordered by time; or its attachments, in the
    /// order they were appended).
    @_spi(RouteKitBackend)
    func workoutChunks(ofWorkout id: UUID, kind: ChunkKind) async throws(RouteKitError) -> any ChunkCursor

    // MARK: Builders (use ``RouteBuilder``)

    /// Records a new builder.
    @_spi(RouteKitBackend)
    func createBuilder(_ builder: PendingBuilder) async throws(RouteKitError)
    /// A pending builder by id.
    func pendingBuilder(id: UUID) async throws(RouteKitError) -> PendingBuilder?
    /// Every pending builder, oldest first.
    func pendingBuilders() async throws(RouteKitError) -> [PendingBuilder]
    /// Takes over a pending builder: one transaction that sets `claim` only if the builder still has
    /// `expectedLocationCount` acknowledged locations and still holds `previous` (the claim it was listed
    /// with). `false` when another writer got there first (it added locations, or claimed it): the caller
    /// must not resume it.
    @_spi(RouteKitBackend)
    func claimBuilder(id: UUID, expectedLocationCount: Int, previous: UUID, claim: UUID) async throws(RouteKitError)
        -> Bool
    /// Adds chunks to a builder and records its progress and metadata, in one transaction: durable on return.
    /// - Throws: ``RouteKitError/Code/notFound`` when the builder is no longer pending,
    ///   ``RouteKitError/Code/builderState`` when `claim` is not the builder's (another process took it over).
    @_spi(RouteKitBackend)
    func appendToBuilder(
        id: UUID, claim: UUID, chunks: [StoredChunk], progress: BuilderProgress, metadata: [String: MetadataValue]
    ) async throws(RouteKitError)
    /// One of a builder's chunks, `nil` when there is none with that kind and sequence number.
    @_spi(RouteKitBackend)
    func builderChunk(id: UUID, kind: ChunkKind, sequence: Int) async throws(RouteKitError) -> StoredChunk?
    /// A builder's chunk bounds of one kind (`StoredChunk.bytes` left empty), by sequence number.
    @_spi(RouteKitBackend)
    func builderChunkBounds(id: UUID, kind: ChunkKind) async throws(RouteKitError) -> [StoredChunk]
    /// One transaction: deletes the builder's location chunks with the given sequence numbers and turns
    /// every staging chunk into a location chunk (the end of one merge pass).
    @_spi(RouteKitBackend)
    func promoteStaging(builder id: UUID, claim: UUID, replacing sequences: [Int]) async throws(RouteKitError)
    /// Deletes a builder's staging chunks (what an interrupted merge left).
    @_spi(RouteKitBackend)
    func dropStaging(builder id: UUID) async throws(RouteKitError)
    /// One transaction (only with the builder's `claim`): saves `route` from the builder's location chunks (taken in `sequenceOrder`, or by
    /// sequence number when `nil`) with the sync semantics of ``saveWorkout(_:)`` (a replaced route keeps
    /// its workout and is kept as provenance when it was a raw version), attaches the builder's series to the
    /// route's workout, adds the workout events it collected (`ChunkKind.events`) after the workout's events, and
    /// retires the builder. When stale, the builder is discarded and nothing is saved.
    /// With `creating`, the route's workout is not saved yet: the same transaction inserts it first (with the
    /// rules of ``saveWorkout(_:)`` for a new workout), so a finish that fails leaves no workout behind.
    /// - Throws: ``RouteKitError/Code/notFound`` when the builder is not pending or the workout is not current;
    ///   ``RouteKitError/Code/notOwner`` when the workout belongs to another source;
    ///   ``RouteKitError/Code/builderState`` when the workout to create was saved meanwhile.
    @_spi(RouteKitBackend)
    func finishBuilder(id: UUID, claim: UUID, route: RouteSample, sequenceOrder: [Int]?, creating: Workout?)
        async throws(RouteKitError) -> SaveOutcome
    // MARK: Work claims and provenance (the processing pipeline's batch job)

    /// Claims `key` for `holder` for `seconds`, in one short transaction: `true` when the holder now holds it
    /// (it was free, expired, or already the holder's: renewing), `false` when another holder's claim is live.
    /// Workers on several machines never double up, and a dead worker's claim expires.
    @_spi(RouteKitBackend)
    func claimWork(key: String, holder: UUID, seconds: Double) async throws(RouteKitError) -> Bool
    /// Claims several keys for `holder` at once, with the rules of `claimWork(key:holder:seconds:)` for each,
    /// and returns the keys the holder now holds. A backend does it in one transaction: a batch worker then pays
    /// for one short write per batch instead of one per route.
    @_spi(RouteKitBackend)
    func claimWork(keys: [String], holder: UUID, seconds: Double) async throws(RouteKitError) -> Set<String>
    /// Saves a whole route at once, its locations already packed (sequence numbers in route order), with the
    /// sync semantics of `finishBuilder(id:claim:route:sequenceOrder:creating:)`, in one transaction that also gives up
    /// `claim` when one is given. For writers that hold the whole route anyway (the processing pipeline, the
    /// importers' short tracks): one transaction instead of a builder's several. Sample chunks among `chunks` become
    /// series of the route's workout, as a finished builder's do. An interrupted save leaves nothing behind.
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not saved, ``RouteKitError/Code/notOwner``,
    ///   ``RouteKitError/Code/invalidArgument`` for a staging or attachment chunk.
    @_spi(RouteKitBackend)
    func saveRoute(_ route: RouteSample, chunks: [StoredChunk], releasing claim: WorkClaim?)
        async throws(RouteKitError) -> SaveOutcome
    /// Gives a claim up (only the holder's).
    @_spi(RouteKitBackend)
    func releaseWork(key: String, holder: UUID) async throws(RouteKitError)
    /// The raw version of a sync identity: the newest route of it that no pipeline derived (current, or kept as
    /// provenance), `nil` when there is none.
    func rawRoute(source: Source, syncIdentifier: String) async throws(RouteKitError) -> RouteSample?

    // MARK: Privacy zones

    /// A source's privacy zones, in the order they were set (empty when it has none).
    func privacyZones(of source: Source) async throws(RouteKitError) -> [PrivacyZone]
    /// Replaces a source's privacy zones in one transaction (an empty list removes them). Routes processed
    /// afterwards get the privacy stage with these zones; the change alters the pipeline's parameter hash, so the
    /// next batch job processes the source's routes again.
    func setPrivacyZones(_ zones: [PrivacyZone], of source: Source) async throws(RouteKitError)

    // MARK: Zones

    /// What the store keeps about `source`'s person for zones (empty settings when nothing).
    func zoneSettings(of source: Source) async throws(RouteKitError) -> ZoneSettings
    /// Replaces `source`'s zone settings in one transaction (empty settings remove them).
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when they do not validate (``ZoneSettings/validate()``).
    func setZoneSettings(_ settings: ZoneSettings, of source: Source) async throws(RouteKitError)
    /// The zone settings saved with one workout (HealthKit keeps an app's custom zone configuration with the workout
    /// it was used for): what that workout's statistics use before the person's (field by field; empty when none).
    func zoneSettings(ofWorkout id: UUID) async throws(RouteKitError) -> ZoneSettings
    /// Replaces the zone settings saved with a workout, as `source`, in one transaction (empty settings remove them);
    /// they go with the workout.
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not saved, ``RouteKitError/Code/notOwner`` when
    ///   another source wrote it, ``RouteKitError/Code/invalidArgument`` when they do not validate.
    func setZoneSettings(_ settings: ZoneSettings, ofWorkout id: UUID, as source: Source) async throws(RouteKitError)

    // MARK: Effort

    /// Relates an effort score to a workout.
    /// - Throws: ``RouteKitError/Code/notFound`` when the workout is not saved.
    func relateEffort(_ score: EffortScore) async throws(RouteKitError)
    /// Unrelates a score (only as the source that related it).
    /// - Throws: ``RouteKitError/Code/notFound`` or ``RouteKitError/Code/notOwner``.
    func unrelateEffort(id: UUID, as source: Source) async throws(RouteKitError)
    /// The scores related to a workout, oldest first.
    func efforts(ofWorkout id: UUID) async throws(RouteKitError) -> [EffortScore]

    // MARK: Change feed

    /// What changed since `anchor` (every current route when `nil`, and no deletions), matching `predicate`.
    ///
    /// - A change set never splits one transaction: `limit` is soft, the set is extended to the end of the
    ///   transaction of its last change. Within a set, deletions come before additions.
    /// - Paging (calling again with the returned anchor while ``ChangeSet/hasMore``) has no gaps and no repeats.
    /// - Throws: the anchor errors (``RouteKitError/Code/isAnchorError``).
    func changes(since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int)
        async throws(RouteKitError) -> ChangeSet
    /// The anchor of the newest change (what a consumer that wants only future changes starts from).
    func currentAnchor() async throws(RouteKitError) -> ChangeAnchor
    /// Drops deletion history older than `date`; anchors from before the oldest kept deletion then answer
    /// ``RouteKitError/Code/anchorExpired`` (never a wrong answer). Returns how many deletions were dropped.
    func compactChanges(before date: Date) async throws(RouteKitError) -> Int
    /// A waiter that wakes a follower when the store may have new changes.
    @_spi(RouteKitBackend)
    func makeCommitWaiter() async throws(RouteKitError) -> any CommitWaiter

    /// Drops a pending builder and its chunks.
    /// - Throws: ``RouteKitError/Code/notFound`` or ``RouteKitError/Code/notOwner``.
    func discardBuilder(id: UUID, as source: Source) async throws(RouteKitError)
}

extension RouteStore {
    /// Discards the pending builders whose last batch was acknowledged before `cutoff` (an upload or a recording
    /// that was interrupted and never resumed), each as its own source, and returns them. A builder resumed or
    /// finished meanwhile by another process is left to it.
    /// - Throws: what the store throws.
    @discardableResult
    public func discardPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PendingBuilder] {
        var discarded: [PendingBuilder] = []
        for builder in try await pendingBuilders() where builder.updated < cutoff {
            do {
                try await discardBuilder(id: builder.id, as: builder.source)
                discarded.append(builder)
            } catch  where error.code == .notFound {
                // Finished or discarded by someone else in the meantime.
            }
        }
        return discarded
    }
}

extension RouteStore {
    /// Claims each key in turn (one transaction per key); backends override it with one transaction.
    @_spi(RouteKitBackend)
    public func claimWork(keys: [String], holder: UUID, seconds: Double) async throws(RouteKitError) -> Set<String> {
        var held: Set<String> = []
        for key in keys where try await claimWork(key: key, holder: holder, seconds: seconds) { held.insert(key) }
        return held
    }

    /// A route's locations as an `AsyncSequence` of ordered batches, the last one marked done.
    ///
    /// - Parameters:
    ///   - route: the route's uuid.
    ///   - batchSize: locations per batch (at least 1; the last batch may hold fewer).
    ///   - interval: only locations whose time lies in it (a route without times then yields none).
    public func locations(
        of route: UUID, batchSize: Int = RouteQuery.defaultBatchSize, interval: ClosedRange<Instant>? = nil
    )
        -> RouteQuery
    {
        RouteQuery(store: self, route: route, batchSize: batchSize, interval: interval)
    }

    /// The samples of one type a pending builder holds, from index `from` on (indices as
    /// ``RouteBuilder/insert(samples:of:first:)`` numbers them), in the order they were acknowledged (each batch's in
    /// time order). Only the chunks that hold samples from `from` on are read.
    /// - Throws: ``RouteKitError/Code/notFound`` when the builder is not pending (or finishes while it is read).
    public func builderSamples(of type: QuantityType, builder id: UUID, from index: Int = 0)
        async throws(RouteKitError) -> [QuantitySample]
    {
        guard try await pendingBuilder(id: id) != nil else {
            throw RouteKitError(.notFound, "route builder \(id) is not pending (finished, discarded or never made)")
        }
        var out: [QuantitySample] = []
        var position = 0
        for bounds in try await builderChunkBounds(id: id, kind: .quantity(type)) {
            let start = position
            position += bounds.count
            guard position > index else { continue }
            guard let chunk = try await builderChunk(id: id, kind: .quantity(type), sequence: bounds.sequence) else {
                throw RouteKitError(.notFound, "route builder \(id) is no longer pending")
            }
            let samples = try QuantityChunk.decode(chunk.bytes)
            out += index > start ? Array(samples.dropFirst(index - start)) : samples
        }
        return out
    }

    /// A workout's samples of one type as an `AsyncSequence` of batches in time order.
    public func samples(of type: QuantityType, workout: UUID, batchSize: Int = RouteQuery.defaultBatchSize)
        -> SeriesQuery
    {
        SeriesQuery(store: self, workout: workout, type: type, batchSize: batchSize)
    }

    /// Saves a series related to a workout (sorted by time, packed in chunks).
    public func saveSeries(_ series: QuantitySeries, workout: UUID, as source: Source) async throws(RouteKitError) {
        for (i, s) in series.samples.enumerated() where !s.value.isFinite {
            throw RouteKitError(.invalidValue, "sample \(i) of \(series.type) is not a finite number", index: i)
        }
        let sorted = series.samples.sorted { $0.timestamp.instant < $1.timestamp.instant }
        var chunks: [StoredChunk] = []
        var start = 0
        while start < sorted.count {
            let end = min(start + RouteBuilder.chunkSize, sorted.count)
            chunks.append(.samples(Array(sorted[start..<end]), of: series.type, sequence: -1))
            start = end
        }
        try await appendSeries(chunks, toWorkout: workout, as: source)
    }
}
