public import Foundation

/// The kinds of object the change feed carries (HealthKit's anchored object query works for every sample type).
///
/// A consumer names the types it wants in ``ChangePredicate/types``; the default is routes only, what the feed
/// carried before the other types were added, so a route consumer keeps working unchanged.
public enum ChangeObjectType: String, CaseIterable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Routes (``ChangeSet/added`` and ``ChangeSet/deleted``).
    case route
    /// Workouts, with a route or without one (a treadmill run, an indoor ride, a manual entry).
    case workout
    /// Effort scores related to workouts.
    case effort
    /// A workout's samples of one quantity type (its heart rate, its power…), as a whole.
    case series

    /// The name used by the CLI and the HTTP API (`route`, `workout`, `effort`, `series`).
    public var description: String { rawValue }

    /// The types named in a comma-separated list (`workout,route`); `all` names every type.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the first name that is not a type.
    public static func parseList(_ text: String) throws(RouteKitError) -> Set<ChangeObjectType> {
        var types: Set<ChangeObjectType> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: .whitespaces)
            if name == "all" {
                types.formUnion(allCases)
            } else if let type = ChangeObjectType(rawValue: name) {
                types.insert(type)
            } else {
                throw RouteKitError(
                    .invalidArgument,
                    "'\(name)' is not a change type (route, workout, effort, series, or all)")
            }
        }
        return types
    }
}

/// A workout's samples of one quantity type, as the change feed reports them: which series changed and how big it
/// is now (read the samples with `RouteStore.samples(of:workout:batchSize:)`).
public struct SeriesSummary: Hashable, Sendable {
    /// The workout the series belongs to.
    public var workoutID: UUID
    /// The source that wrote it.
    public var source: Source
    /// What it measures.
    public var type: QuantityType
    /// How many samples it holds.
    public var count: Int
    /// Its first sample's time, when its samples have times.
    public var start: Instant?
    /// Its last sample's time, when its samples have times.
    public var end: Instant?

    /// Creates a summary.
    public init(workoutID: UUID, source: Source, type: QuantityType, count: Int, start: Instant?, end: Instant?) {
        self.workoutID = workoutID
        self.source = source
        self.type = type
        self.count = count
        self.start = start
        self.end = end
    }
}

/// An object other than a route that became current or changed, in a ``ChangeSet``.
///
/// A consumer keeps one copy per ``key``: an object that arrives again (a series that got more samples) replaces
/// the copy it holds.
public enum ChangedObject: Hashable, Sendable {
    /// A workout that was saved.
    case workout(Workout)
    /// An effort score that was related to a workout.
    case effort(EffortScore)
    /// A workout's series that was saved or grew.
    case series(SeriesSummary)

    /// Its type.
    public var type: ChangeObjectType {
        switch self {
        case .workout: .workout
        case .effort: .effort
        case .series: .series
        }
    }

    /// The workout it is or belongs to.
    public var workoutID: UUID {
        switch self {
        case .workout(let w): w.id
        case .effort(let e): e.workoutID
        case .series(let s): s.workoutID
        }
    }

    /// Its source.
    public var source: Source {
        switch self {
        case .workout(let w): w.source
        case .effort(let e): e.source
        case .series(let s): s.source
        }
    }

    /// What identifies it in the feed: a deletion with the same key removes it.
    public var key: ChangeObjectKey {
        switch self {
        case .workout(let w): ChangeObjectKey(type: .workout, id: w.id, quantityType: nil)
        case .effort(let e): ChangeObjectKey(type: .effort, id: e.id, quantityType: nil)
        case .series(let s): ChangeObjectKey(type: .series, id: s.workoutID, quantityType: s.type)
        }
    }
}

/// What identifies an object of the change feed other than a route.
public struct ChangeObjectKey: Hashable, Sendable {
    /// Its type.
    public var type: ChangeObjectType
    /// The uuid of the workout or effort score; for a series, its workout's uuid.
    public var id: UUID
    /// For a series, its quantity type; `nil` otherwise.
    public var quantityType: QuantityType?

    /// Creates a key.
    public init(type: ChangeObjectType, id: UUID, quantityType: QuantityType?) {
        self.type = type
        self.id = id
        self.quantityType = quantityType
    }
}

/// An object other than a route that stopped being current (deleted, or replaced by a newer version), in a
/// ``ChangeSet``: enough to find the copy a consumer holds and to filter.
public struct DeletedObject: Hashable, Sendable {
    /// Which object.
    public var key: ChangeObjectKey
    /// The workout it was or belonged to.
    public var workoutID: UUID
    /// Its source.
    public var source: Source
    /// A workout's sync identity, when it had one.
    public var sync: SyncIdentity?

    /// Creates a record.
    public init(key: ChangeObjectKey, workoutID: UUID, source: Source, sync: SyncIdentity?) {
        self.key = key
        self.workoutID = workoutID
        self.source = source
        self.sync = sync
    }
}

/// One object's row in a backend's change log, as recorded and as read back: the same columns on every backend.
package struct FeedRecord: Hashable, Sendable {
    /// The object's type.
    package var type: ChangeObjectType
    /// Its uuid as stored (a series: its workout's).
    package var key: String
    /// A series' quantity identifier; empty otherwise.
    package var detail: String
    /// The uuid of the workout it is or belongs to, as stored.
    package var workout: String
    /// Its source's name.
    package var source: String
    /// Its sync identifier (empty when it has none).
    package var syncIdentifier: String
    /// Its sync version (0 when it has none).
    package var version: Int64
    /// Its first and last times in whole seconds, when it has times.
    package var start: Int64?
    package var end: Int64?

    /// Creates a record.
    package init(
        type: ChangeObjectType, key: String, detail: String = "", workout: String, source: String,
        syncIdentifier: String = "", version: Int64 = 0, start: Int64? = nil, end: Int64? = nil
    ) {
        self.type = type
        self.key = key
        self.detail = detail
        self.workout = workout
        self.source = source
        self.syncIdentifier = syncIdentifier
        self.version = version
        self.start = start
        self.end = end
    }

    /// A route's record.
    package static func route(_ r: RouteSample) -> FeedRecord {
        FeedRecord(
            type: .route, key: r.id.lowercaseText, workout: r.workoutID.lowercaseText, source: r.source.name,
            syncIdentifier: r.sync.identifier, version: r.sync.version, start: r.start?.instant.seconds,
            end: r.end?.instant.seconds)
    }

    /// A workout's record.
    package static func workout(_ w: Workout) -> FeedRecord {
        FeedRecord(
            type: .workout, key: w.id.lowercaseText, workout: w.id.lowercaseText, source: w.source.name,
            syncIdentifier: w.sync?.identifier ?? "", version: w.sync?.version ?? 0, start: w.start?.instant.seconds,
            end: w.end?.instant.seconds)
    }

    /// An effort score's record.
    package static func effort(id: UUID, workout: UUID, source: String) -> FeedRecord {
        FeedRecord(type: .effort, key: id.lowercaseText, workout: workout.lowercaseText, source: source)
    }

    /// A series' record (`kind` is the stored chunk kind: only quantity kinds are series of the feed).
    package static func series(workout: UUID, source: String, kind: String) -> FeedRecord? {
        guard QuantityType(identifier: kind) != nil else { return nil }
        return FeedRecord(
            type: .series, key: workout.lowercaseText, detail: kind, workout: workout.lowercaseText, source: source)
    }

    /// Whether `other` is a record of the same object.
    package func isSameObject(as other: FeedRecord) -> Bool {
        type == other.type && key == other.key && detail == other.detail
    }

    /// Whether the predicate matches (times in whole seconds, as the SQL backends compare them; objects without
    /// times never match an interval, nor objects without a sync identifier a sync identifier).
    package func matches(_ p: ChangePredicate) -> Bool {
        guard p.types.contains(type) else { return false }
        if let w = p.workout, workout != w.lowercaseText { return false }
        if let s = p.source, source != s.name { return false }
        if let id = p.syncIdentifier, syncIdentifier != id { return false }
        if let i = p.interval {
            guard let start, let end else { return false }
            return end >= i.lowerBound.seconds && start <= i.upperBound.seconds
        }
        return true
    }

    /// The record as a deleted route.
    package func deletedRoute() throws(RouteKitError) -> DeletedRoute {
        DeletedRoute(
            id: try StoredRecord.uuid(key), source: try StoredRecord.source(source),
            workoutID: try StoredRecord.uuid(workout), sync: SyncIdentity(identifier: syncIdentifier, version: version))
    }

    /// The record as a deleted object other than a route.
    package func deletedObject() throws(RouteKitError) -> DeletedObject {
        DeletedObject(
            key: try objectKey(), workoutID: try StoredRecord.uuid(workout), source: try StoredRecord.source(source),
            sync: type == .workout && !syncIdentifier.isEmpty
                ? SyncIdentity(identifier: syncIdentifier, version: version) : nil)
    }

    /// The key of the object it records.
    package func objectKey() throws(RouteKitError) -> ChangeObjectKey {
        var quantity: QuantityType?
        if type == .series {
            guard let q = QuantityType(identifier: detail) else {
                throw RouteKitError(.storage, "the change log names a series of an unknown type '\(detail)'")
            }
            quantity = q
        }
        return ChangeObjectKey(type: type, id: try StoredRecord.uuid(key), quantityType: quantity)
    }

    /// The SQL list of the predicate's types, for `kind IN (…)` (the names are fixed words, never input).
    package static func kindList(_ types: Set<ChangeObjectType>) -> String {
        types.map { "'\($0.rawValue)'" }.sorted().joined(separator: ",")
    }
}

extension StoreRules {
    /// What a change set's rows came to, in position order: deletions first, then additions, each in commit
    /// order; routes apart from the other objects.
    package struct SplitRows: Sendable {
        package var deletedRoutes: [DeletedRoute] = []
        package var addedRouteIDs: [String] = []
        package var deletedObjects: [DeletedObject] = []
        package var addedObjects: [FeedRecord] = []
    }

    /// Splits a change set's rows (`added`, record) in position order.
    package static func split(_ rows: [(added: Bool, record: FeedRecord)]) throws(RouteKitError) -> SplitRows {
        var out = SplitRows()
        for (added, record) in rows {
            switch (record.type, added) {
            case (.route, true): out.addedRouteIDs.append(record.key)
            case (.route, false): out.deletedRoutes.append(try record.deletedRoute())
            case (_, true): out.addedObjects.append(record)
            case (_, false): out.deletedObjects.append(try record.deletedObject())
            }
        }
        return out
    }

    /// The added objects in the order of `records`, from what the backend read: workouts and effort scores by
    /// uuid, series by workout uuid and quantity identifier (`"uuid/kind"`).
    /// - Throws: ``RouteKitError/Code/storage`` when the change log names an object that is not stored.
    package static func addedObjects(
        _ records: [FeedRecord], workouts: [String: Workout], efforts: [String: EffortScore],
        series: [String: SeriesSummary]
    ) throws(RouteKitError) -> [ChangedObject] {
        var out: [ChangedObject] = []
        out.reserveCapacity(records.count)
        for r in records {
            switch r.type {
            case .workout:
                guard let w = workouts[r.key] else { throw missing(r) }
                out.append(.workout(w))
            case .effort:
                guard let e = efforts[r.key] else { throw missing(r) }
                out.append(.effort(e))
            case .series:
                guard let s = series[r.key + "/" + r.detail] else { throw missing(r) }
                out.append(.series(s))
            case .route:
                continue
            }
        }
        return out
    }

    static func missing(_ r: FeedRecord) -> RouteKitError {
        RouteKitError(.storage, "the change log names \(r.type) \(r.key), which is not stored")
    }

    /// Sums a series' chunks into its summary, chunk by chunk (`count`, first and last time).
    package static func addChunk(
        to summaries: inout [String: SeriesSummary], workout: String, source: String, kind: String, count: Int,
        first: Instant?, last: Instant?
    ) throws(RouteKitError) {
        guard let type = QuantityType(identifier: kind) else { return }
        let key = workout + "/" + kind
        if var s = summaries[key] {
            s.count += count
            if let first, s.start.map({ first < $0 }) ?? true { s.start = first }
            if let last, s.end.map({ last > $0 }) ?? true { s.end = last }
            summaries[key] = s
        } else {
            summaries[key] = SeriesSummary(
                workoutID: try StoredRecord.uuid(workout), source: try StoredRecord.source(source), type: type,
                count: count, start: first, end: last)
        }
    }
}
