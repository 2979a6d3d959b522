import Foundation

/// Metadata keys RouteKit gives a meaning to.
public enum MetadataKey {
    /// A route's or workout's sync identifier, as given to ``RouteBuilder/finish(workout:metadata:)``.
    public static let syncIdentifier = "syncIdentifier"
    /// The sync version that goes with ``syncIdentifier``.
    public static let syncVersion = "syncVersion"
    /// On a derived route (one the processing pipeline made): the uuid and version of its input. A route
    /// without it is a raw version, kept as provenance when a derived version replaces it.
    public static let derivedFrom = "derivedFrom"
    /// `true` on a route recovered from a builder whose origin was gone: it holds what was acknowledged.
    public static let partial = "partial"

    // What a file recorded for a workout, an activity or a lap (``WorkoutEvent/metadata``), in SI units.

    /// Distance in metres.
    public static let totalDistance = "totalDistance"
    /// Time from start to end in seconds, pauses included.
    public static let totalElapsedTime = "totalElapsedTime"
    /// Timer time in seconds, pauses excluded.
    public static let totalTimerTime = "totalTimerTime"
    /// Energy in kilocalories.
    public static let totalCalories = "totalCalories"
    /// Average speed in metres per second.
    public static let averageSpeed = "averageSpeed"
    /// Maximum speed in metres per second.
    public static let maximumSpeed = "maximumSpeed"
    /// Average heart rate in beats per minute.
    public static let averageHeartRate = "averageHeartRate"
    /// Maximum heart rate in beats per minute.
    public static let maximumHeartRate = "maximumHeartRate"
    /// Average cadence (revolutions or steps per minute, as the file gives it).
    public static let averageCadence = "averageCadence"
    /// Maximum cadence.
    public static let maximumCadence = "maximumCadence"
    /// Average power in watts.
    public static let averagePower = "averagePower"
    /// Maximum power in watts.
    public static let maximumPower = "maximumPower"
    /// Climb in metres.
    public static let totalAscent = "totalAscent"
    /// Descent in metres.
    public static let totalDescent = "totalDescent"
    /// A lap's intensity as the file names it (`active`, `rest`, `warmup`, … ; TCX `Active`, `Resting`).
    public static let intensity = "intensity"
    /// What ended a lap as the file names it (`manual`, `distance`, `time`, `position`, … ; TCX `Manual`).
    public static let lapTrigger = "lapTrigger"
    /// The producer's own name of an event (`user_marker`, `course_point`, `HKWorkoutEventTypeMarker`).
    public static let eventName = "eventName"

    /// `true` on a workout imported from a course (a planned route: a FIT course file, a TCX `Course`) rather
    /// than a recorded activity; its name is under `name`.
    package static let course = "course"
}

/// The result of ``RouteBuilder/finish(workout:metadata:)``.
public struct RouteFinish: Hashable, Sendable {
    /// The route as saved (or, when ``outcome`` is stale, as it would have been saved).
    public var route: RouteSample
    /// Whether it was inserted, replaced an older version, or was stale.
    public var outcome: SaveOutcome
}

/// Collects a route's locations in batches, durable as they arrive, and turns them into a ``RouteSample``
/// (HealthKit's `HKWorkoutRouteBuilder`).
///
/// ```swift
/// let builder = try await RouteBuilder(store: store, source: source)
/// try await builder.insert(batch1)          // durable when it returns
/// try await builder.insert(batch2)
/// let workout = Workout(activityType: .running, start: s, end: e, source: source)
/// _ = try await store.saveWorkout(workout)  // the workout exists first
/// let finished = try await builder.finish(workout: workout, metadata: [:])
/// ```
///
/// - Batches are atomic: one bad location refuses the whole batch, naming its index and the reason, and
///   nothing stored changes.
/// - Locations go to the store as they arrive, in packed chunks of ``chunkSize``; memory stays bounded
///   whatever the route's length (finishing a builder whose batches overlap in time merges them on disk,
///   holding at most `mergeFanIn` chunks in memory).
/// - A builder that never finishes stays in the store as a ``PendingBuilder``: ``resume(_:in:)`` picks it up
///   again; ``discard()`` drops it.
/// - Heart rate, power, cadence and other samples (``insert(samples:of:first:)``) and workout events
///   (``insert(events:first:)``) come in batches that name the index of their first item, as a resumable upload's
///   do: a batch sent again is acknowledged without being stored twice, a gap is refused
///   (``RouteKitError/Code/batchGap``). Finishing saves them with the route, in its transaction: the samples as the
///   workout's series, the events after the workout's events.
///
/// A builder is used by one task at a time.
public final class RouteBuilder {
    /// Locations (or samples) per stored chunk: also the importer's batch size.
    public static let chunkSize = 1024
    /// How many sorted runs one merge pass reads at once.
    package static let mergeFanIn = 16

    /// The builder's identity (what `routekit builders` lists).
    public let id: UUID
    /// Who is building: the route and its series will belong to it.
    public let source: Source
    /// How locations are ordered when the builder finishes.
    public let order: LocationOrder
    /// Where the locations come from, if recorded.
    public let origin: BuilderOrigin?
    /// The store written to.
    public let store: any RouteStore

    private enum State { case open, finished, discarded }
    private var state = State.open
    private var metadata: [String: MetadataValue]
    private var nextSequence: Int
    private let claim: UUID
    /// What has been acknowledged.
    public private(set) var progress: BuilderProgress

    /// Creates a builder and records it in the store.
    public init(
        store: any RouteStore, source: Source, order: LocationOrder = .timestamp, origin: BuilderOrigin? = nil
    ) async throws(RouteKitError) {
        let record = PendingBuilder(source: source, order: order, origin: origin)
        try await store.createBuilder(record)
        self.id = record.id
        self.source = source
        self.order = order
        self.origin = origin
        self.store = store
        self.metadata = [:]
        self.nextSequence = 0
        self.progress = record.progress
        self.claim = record.claim
    }

    private init(store: any RouteStore, pending: PendingBuilder, claim: UUID) {
        self.id = pending.id
        self.source = pending.source
        self.order = pending.order
        self.origin = pending.origin
        self.store = store
        self.metadata = pending.metadata
        self.nextSequence = pending.nextSequence
        self.progress = pending.progress
        self.claim = claim
    }

    /// Picks up a pending builder (after a crash, or from another process) where its last acknowledged batch
    /// left it, taking it over: the handle that held it before can no longer add to it.
    ///
    /// - Throws: ``RouteKitError/Code/notFound`` when it is no longer pending;
    ///   ``RouteKitError/Code/builderState`` when it changed since `pending` was read (another process is
    ///   still adding to it, or took it over first).
    public static func resume(_ pending: PendingBuilder, in store: any RouteStore) async throws(RouteKitError)
        -> RouteBuilder
    {
        let claim = UUID()
        guard
            try await store.claimBuilder(
                id: pending.id, expectedLocationCount: pending.progress.locationCount, previous: pending.claim,
                claim: claim)
        else {
            guard try await store.pendingBuilder(id: pending.id) != nil else {
                throw RouteKitError(.notFound, "route builder \(pending.id) is not pending (finished or discarded)")
            }
            throw RouteKitError(
                .builderState, "route builder \(pending.id) changed since it was listed: another process is using it")
        }
        try await store.dropStaging(builder: pending.id)
        guard let fresh = try await store.pendingBuilder(id: pending.id) else {
            throw RouteKitError(.notFound, "route builder \(pending.id) is not pending (finished or discarded)")
        }
        return RouteBuilder(store: store, pending: fresh, claim: claim)
    }

    private func checkOpen() throws(RouteKitError) {
        switch state {
        case .open: return
        case .finished: throw RouteKitError(.builderState, "route builder \(id) has finished; start a new one")
        case .discarded: throw RouteKitError(.builderState, "route builder \(id) was discarded; start a new one")
        }
    }

    /// Adds a batch of locations, and optionally samples related to the workout, in one transaction that is
    /// durable when this returns.
    ///
    /// - Parameters:
    ///   - batch: the locations; in ``LocationOrder/timestamp`` mode each needs a time and the batch may be
    ///     in any order; in ``LocationOrder/insertion`` mode they are kept as given.
    ///   - related: quantity samples to store beside the route (attached to the workout on finish).
    ///   - checkpoint: an origin-specific checkpoint of everything acknowledged once this batch is.
    ///   - extras: opaque annotations of this batch (the importer's GPX-only point fields), kept with the route
    ///     and read back with `RouteStore.routeChunks(ofRoute:kind:interval:)` (kind `ChunkKind.extras`),
    ///     numbered like the batch's location chunk. Only in insertion order, for a batch of at most
    ///     ``chunkSize`` locations.
    /// - Throws: ``RouteKitError/Code/invalidLocation`` naming the first bad location's index (nothing is
    ///   stored), ``RouteKitError/Code/invalidValue`` for a sample that is not a finite number,
    ///   ``RouteKitError/Code/builderState`` after ``finish(workout:metadata:)`` or ``discard()``.
    public func insert(
        _ batch: [Location], related: [QuantityType: [QuantitySample]] = [:], checkpoint: String? = nil,
        extras: [UInt8]? = nil
    ) async throws(RouteKitError) {
        try checkOpen()
        let (chunks, sequence) = try Self.pack(
            batch, related: related, extras: extras, order: order, from: nextSequence)
        var newProgress = progress
        newProgress.locationCount += batch.count
        newProgress.checkpoint = checkpoint ?? progress.checkpoint
        for (type, samples) in related where !samples.isEmpty {
            newProgress.sampleCounts[type, default: 0] += samples.count
        }
        guard !chunks.isEmpty else { return }
        try await store.appendToBuilder(id: id, claim: claim, chunks: chunks, progress: newProgress, metadata: metadata)
        nextSequence = sequence
        progress = newProgress
    }

    /// The checks ``insert(_:related:checkpoint:extras:)`` makes on a batch before packing it: valid locations, extras
    /// only with a non-empty batch of at most one chunk in insertion order, a time on every location in
    /// ``LocationOrder/timestamp`` order, finite sample values.
    package static func check(
        _ batch: [Location], related: [QuantityType: [QuantitySample]], extras: [UInt8]?, order: LocationOrder
    ) throws(RouteKitError) {
        try batch.validateBatch()
        if extras != nil && (order != .insertion || batch.count > chunkSize || batch.isEmpty) {
            throw RouteKitError(
                .invalidArgument,
                "extras go with a non-empty batch of at most \(chunkSize) locations in insertion order")
        }
        if order == .timestamp {
            for (i, l) in batch.enumerated() where l.timestamp == nil {
                throw RouteKitError(
                    .invalidLocation, "location \(i) has no time (a builder ordering by timestamp needs one)",
                    index: i)
            }
        }
        for type in related.keys.sorted(by: { $0.identifier < $1.identifier }) {
            guard let samples = related[type] else { continue }
            for (i, s) in samples.enumerated() where !s.value.isFinite {
                throw RouteKitError(.invalidValue, "sample \(i) of \(type) is not a finite number", index: i)
            }
        }
    }

    /// Checks a batch (unless `checked`: ``check(_:related:extras:order:)`` passed already) and packs it as
    /// ``insert(_:related:checkpoint:extras:)`` stores it: its locations in chunks of ``chunkSize`` numbered from
    /// `sequence` (sorted by time within the batch in ``LocationOrder/timestamp`` order), its extras numbered like its
    /// first location chunk, then its samples by type; with the next free sequence number.
    package static func pack(
        _ batch: [Location], related: [QuantityType: [QuantitySample]], extras: [UInt8]?, order: LocationOrder,
        from first: Int, checked: Bool = false
    ) throws(RouteKitError) -> (chunks: [StoredChunk], next: Int) {
        if !checked { try check(batch, related: related, extras: extras, order: order) }
        var locations = batch
        if order == .timestamp && !Self.isSorted(batch) {
            locations = batch.enumerated().sorted { a, b in
                let ta = a.element.timestamp?.instant ?? Instant(seconds: .min)
                let tb = b.element.timestamp?.instant ?? Instant(seconds: .min)
                return ta < tb || (ta == tb && a.offset < b.offset)
            }.map(\.element)
        }
        var chunks: [StoredChunk] = []
        var sequence = first
        var start = 0
        while start < locations.count {
            let end = min(start + chunkSize, locations.count)
            chunks.append(.locations(Array(locations[start..<end]), sequence: sequence))
            sequence += 1
            start = end
        }
        if let extras {
            chunks.append(
                StoredChunk(
                    kind: .extras, sequence: first, count: batch.count, minTime: nil, maxTime: nil, bytes: extras
                ))
        }
        for type in related.keys.sorted(by: { $0.identifier < $1.identifier }) {
            guard let samples = related[type], !samples.isEmpty else { continue }
            let sorted = samples.sorted { $0.timestamp.instant < $1.timestamp.instant }
            var s = 0
            while s < sorted.count {
                let e = min(s + chunkSize, sorted.count)
                chunks.append(.samples(Array(sorted[s..<e]), of: type, sequence: sequence))
                sequence += 1
                s = e
            }
        }
        return (chunks, sequence)
    }

    private static func isSorted(_ batch: [Location]) -> Bool {
        var previous: Instant?
        for l in batch {
            guard let t = l.timestamp?.instant else { continue }
            if let p = previous, t < p { return false }
            previous = t
        }
        return true
    }

    // MARK: Samples and events

    /// How many workout events a builder keeps at most (``insert(events:first:)``): they are written into the
    /// workout's stored body when the builder finishes, which stays bounded.
    public static let maxEvents = 10_000

    /// Whether a value of `type` can be negative: heart rate, cadence and power cannot (a temperature or a depth
    /// can).
    package static func isNonNegative(_ type: QuantityType) -> Bool {
        type == .heartRate || type == .cadence || type == .power
    }

    /// The checks ``insert(samples:of:first:)`` makes on a batch before anything is stored: every value finite, and
    /// not negative for heart rate, cadence and power.
    /// - Throws: ``RouteKitError/Code/invalidValue`` naming the first bad sample's index in the batch.
    package static func check(samples: [QuantitySample], of type: QuantityType) throws(RouteKitError) {
        let nonNegative = isNonNegative(type)
        for (i, s) in samples.enumerated() {
            guard s.value.isFinite else {
                throw RouteKitError(.invalidValue, "sample \(i) of \(type) is not a finite number", index: i)
            }
            if nonNegative && s.value < 0 {
                throw RouteKitError(
                    .invalidValue, "sample \(i) of \(type) is negative (\(s.value) \(type.unit))", index: i)
            }
        }
    }

    /// The checks ``insert(events:first:)`` makes on a batch before anything is stored: an event that has both a
    /// start and an end does not end before it starts.
    /// - Throws: ``RouteKitError/Code/invalidValue`` naming the first bad event's index in the batch.
    package static func check(events: [WorkoutEvent]) throws(RouteKitError) {
        for (i, e) in events.enumerated() {
            if let start = e.start?.instant, let end = e.end?.instant, end < start {
                throw RouteKitError(
                    .invalidValue, "event \(i) (\(e.kind.rawValue)) ends before it starts", index: i)
            }
        }
    }

    /// Adds a batch of samples of one type (heart rate, power, cadence, …), kept with the builder and saved as the
    /// workout's series of that type when it finishes; durable when this returns.
    ///
    /// Batches are numbered as a resumable upload's are: `first` is the index of the batch's first sample among all
    /// the samples of `type` sent to this builder. Samples already held (a batch sent again after its answer was
    /// lost, or one that overlaps what is held) are not stored twice; a batch that starts past what is held is
    /// refused. The count held is ``progress`` (``BuilderProgress/sampleCount(of:)``), kept in the store: a resumed
    /// builder (``resume(_:in:)``) goes on from it. Each batch's new samples are stored in time order.
    ///
    /// - Parameters:
    ///   - samples: the batch.
    ///   - type: what they measure, in its unit (``QuantityType/unit``).
    ///   - first: the index of `samples[0]` among the samples of `type`.
    /// - Returns: the samples this call stored, in the order stored (empty when the whole batch was held already).
    /// - Throws: ``RouteKitError/Code/invalidValue`` naming the first sample of the batch that is not a finite number
    ///   (or is negative, for heart rate, cadence and power), ``RouteKitError/Code/batchGap`` when `first` is past
    ///   the count held (``RouteKitError/index`` is that count), ``RouteKitError/Code/invalidArgument`` for a
    ///   negative `first`, ``RouteKitError/Code/builderState`` after ``finish(workout:metadata:)`` or
    ///   ``discard()`` or when another process took the builder over. Nothing is stored when it throws.
    @discardableResult
    public func insert(samples: [QuantitySample], of type: QuantityType, first: Int) async throws(RouteKitError)
        -> [QuantitySample]
    {
        try checkOpen()
        try Self.check(samples: samples, of: type)
        let held = progress.sampleCount(of: type)
        let skip = try Self.skip(first: first, held: held, what: "\(type) samples")
        guard skip < samples.count else { return [] }
        let fresh = samples[skip...].enumerated().sorted { a, b in
            let ta = a.element.timestamp.instant
            let tb = b.element.timestamp.instant
            return ta < tb || (ta == tb && a.offset < b.offset)
        }.map(\.element)
        var chunks: [StoredChunk] = []
        var sequence = nextSequence
        var start = 0
        while start < fresh.count {
            let end = min(start + Self.chunkSize, fresh.count)
            chunks.append(.samples(Array(fresh[start..<end]), of: type, sequence: sequence))
            sequence += 1
            start = end
        }
        var newProgress = progress
        newProgress.sampleCounts[type] = held + fresh.count
        try await store.appendToBuilder(id: id, claim: claim, chunks: chunks, progress: newProgress, metadata: metadata)
        nextSequence = sequence
        progress = newProgress
        return fresh
    }

    /// Adds a batch of workout events (laps, markers, pauses and resumes, …), kept with the builder and added after
    /// the workout's events, in the order acknowledged, when it finishes (in the finishing transaction); durable
    /// when this returns.
    ///
    /// Batches are numbered as ``insert(samples:of:first:)``'s are: `first` is the index of the batch's first event
    /// among all the events sent to this builder; events already held are not stored twice, a batch that starts past
    /// what is held is refused. A builder keeps at most ``maxEvents`` events.
    ///
    /// - Returns: the events this call stored (empty when the whole batch was held already).
    /// - Throws: ``RouteKitError/Code/invalidValue`` naming the first event of the batch that ends before it starts,
    ///   ``RouteKitError/Code/batchGap`` when `first` is past the count held (``RouteKitError/index`` is that
    ///   count), ``RouteKitError/Code/invalidArgument`` for a negative `first`, more than ``maxEvents`` events, or
    ///   metadata that cannot be stored, ``RouteKitError/Code/builderState`` as for samples. Nothing is stored when
    ///   it throws.
    @discardableResult
    public func insert(events: [WorkoutEvent], first: Int) async throws(RouteKitError) -> [WorkoutEvent] {
        try checkOpen()
        try Self.check(events: events)
        let held = progress.eventCount
        let skip = try Self.skip(first: first, held: held, what: "events")
        guard skip < events.count else { return [] }
        let fresh = Array(events[skip...])
        guard held + fresh.count <= Self.maxEvents else {
            throw RouteKitError(
                .invalidArgument,
                "route builder \(id) keeps at most \(Self.maxEvents) events; it holds \(held) and the batch adds "
                    + "\(fresh.count)")
        }
        var chunks: [StoredChunk] = []
        var sequence = nextSequence
        var start = 0
        while start < fresh.count {
            let end = min(start + Self.chunkSize, fresh.count)
            chunks.append(try .events(Array(fresh[start..<end]), sequence: sequence))
            sequence += 1
            start = end
        }
        var newProgress = progress
        newProgress.eventCount = held + fresh.count
        try await store.appendToBuilder(id: id, claim: claim, chunks: chunks, progress: newProgress, metadata: metadata)
        nextSequence = sequence
        progress = newProgress
        return fresh
    }

    /// How many items at the head of a batch starting at index `first` are held already (`held` items are): the
    /// batch's length or more when all are.
    /// - Throws: ``RouteKitError/Code/batchGap`` when the batch starts past `held`,
    ///   ``RouteKitError/Code/invalidArgument`` for a negative `first`.
    package static func skip(first: Int, held: Int, what: String) throws(RouteKitError) -> Int {
        guard first >= 0 else {
            throw RouteKitError(.invalidArgument, "a batch's first index is 0 or more, not \(first)")
        }
        guard first <= held else {
            throw RouteKitError(
                .batchGap,
                "the builder holds \(held) \(what): send the batch that starts at index \(held), not \(first)",
                index: held)
        }
        return held - first
    }

    /// Adds metadata to the route being built (later values for a key win); durable when this returns.
    public func addMetadata(_ more: [String: MetadataValue]) async throws(RouteKitError) {
        try checkOpen()
        let merged = metadata.merging(more) { _, new in new }
        try await store.appendToBuilder(id: id, claim: claim, chunks: [], progress: progress, metadata: merged)
        metadata = merged
    }

    /// The metadata added so far.
    package var currentMetadata: [String: MetadataValue] { metadata }

    /// Turns the collected locations into a route of `workout`, which must already be saved; the samples collected
    /// become the workout's series and the events collected are added after its events, in the same transaction.
    ///
    /// The route's sync identity comes from ``MetadataKey/syncIdentifier`` and ``MetadataKey/syncVersion`` in
    /// the metadata (a new unique identifier with version 1 when both are absent). Saving follows the store's
    /// sync semantics: an equal or higher current version makes the outcome stale and the builder's data is
    /// dropped. The builder is spent afterwards, whatever the outcome.
    ///
    /// - Throws: ``RouteKitError/Code/builderState`` when no location was inserted (the builder stays open),
    ///   ``RouteKitError/Code/missingSyncVersion`` for an identifier without a version,
    ///   ``RouteKitError/Code/notFound`` when the workout is not saved, ``RouteKitError/Code/notOwner`` when it
    ///   belongs to another source.
    public func finish(workout: Workout, metadata more: [String: MetadataValue] = [:]) async throws(RouteKitError)
        -> RouteFinish
    {
        try await finish(workout: workout, creating: false, metadata: more)
    }

    /// Finishes the route into a new workout, saved in the same transaction as the route: when anything fails
    /// (the builder is empty, its sync metadata is wrong, the claim was taken over) neither is saved.
    /// - Throws: as ``finish(workout:metadata:)``; ``RouteKitError/Code/builderState`` also when a workout with
    ///   `workout`'s uuid or sync identity was saved meanwhile.
    public func finish(creating workout: Workout, metadata more: [String: MetadataValue] = [:])
        async throws(RouteKitError) -> RouteFinish
    {
        try await finish(workout: workout, creating: true, metadata: more)
    }

    private func finish(workout: Workout, creating: Bool, metadata more: [String: MetadataValue])
        async throws(RouteKitError) -> RouteFinish
    {
        try checkOpen()
        guard progress.locationCount > 0 else {
            throw RouteKitError(
                .builderState, "route builder \(id) has no locations: insert at least one batch before finishing")
        }
        let (sync, all) = try Self.syncIdentity(in: metadata.merging(more) { _, new in new })
        if !creating, try await store.workout(id: workout.id) == nil {
            throw RouteKitError(.notFound, "workout \(workout.id) is not saved (save it before finishing its route)")
        }
        guard workout.source == source else {
            throw RouteKitError(
                .notOwner, "workout \(workout.id) belongs to source '\(workout.source)', not '\(source)'")
        }
        let order = try await finalOrder()
        let (start, end) = try await timeBounds()
        let route = RouteSample(
            workoutID: workout.id, source: source, sync: sync, start: start, end: end,
            locationCount: progress.locationCount, metadata: all)
        let outcome = try await store.finishBuilder(
            id: id, claim: claim, route: route, sequenceOrder: order, creating: creating ? workout : nil)
        state = .finished
        return RouteFinish(route: route, outcome: outcome)
    }

    /// A finished route's sync identity, taken out of its metadata (``MetadataKey/syncIdentifier`` and
    /// ``MetadataKey/syncVersion``; a new unique identifier with version 1 when both are absent), and the metadata
    /// left.
    package static func syncIdentity(in metadata: [String: MetadataValue]) throws(RouteKitError)
        -> (SyncIdentity, [String: MetadataValue])
    {
        var all = metadata
        let identifier: String?
        switch all[MetadataKey.syncIdentifier] {
        case .string(let s)?: identifier = s
        case nil: identifier = nil
        case let other?: identifier = "\(other)"
        }
        let version: Int64?
        switch all[MetadataKey.syncVersion] {
        case .integer(let v)?: version = v
        case nil: version = nil
        default: throw RouteKitError(.invalidArgument, "the sync version must be an integer")
        }
        all[MetadataKey.syncIdentifier] = nil
        all[MetadataKey.syncVersion] = nil
        let sync = try SyncIdentity.from(identifier: identifier, version: version)
        return (sync ?? SyncIdentity(identifier: UUID().uuidString.lowercased(), version: 1), all)
    }

    /// Drops the builder and everything it collected.
    public func discard() async throws(RouteKitError) {
        try checkOpen()
        try await store.discardBuilder(id: id, as: source)
        state = .discarded
    }

    // MARK: Ordering on finish

    /// The location chunks' sequence numbers in final order, merging on disk when timestamp order needs it.
    private func finalOrder() async throws(RouteKitError) -> [Int] {
        var chunks = try await store.builderChunkBounds(id: id, kind: .locations)
        if order == .insertion { return chunks.map(\.sequence) }
        while true {
            let runs = Self.sortedRuns(chunks)
            if runs.count <= 1 { return runs.first ?? [] }
            // Merge the first `mergeFanIn` runs into one; repeat until one run is left.
            try await mergeRuns(Array(runs.prefix(Self.mergeFanIn)))
            chunks = try await store.builderChunkBounds(id: id, kind: .locations)
        }
    }

    /// Groups chunks (each sorted inside) into runs that follow one another in time: each chunk goes to the
    /// first run whose last time is not after its first.
    package static func sortedRuns(_ chunks: [StoredChunk]) -> [[Int]] {
        let sorted = chunks.sorted {
            let a = $0.minTime ?? Instant(seconds: .min)
            let b = $1.minTime ?? Instant(seconds: .min)
            return a < b || (a == b && $0.sequence < $1.sequence)
        }
        var runs: [[Int]] = []
        // The runs' last times in a tree of minimums: the first run that fits is found in O(log runs), not by a
        // scan of every run (chunks in reverse time order made that O(chunks²)).
        var lastTimes = FirstFit()
        for c in sorted {
            let lo = c.minTime ?? Instant(seconds: .min)
            let hi = c.maxTime ?? lo
            if let r = lastTimes.first(atMost: lo) {
                runs[r].append(c.sequence)
                lastTimes[r] = hi
            } else {
                runs.append([c.sequence])
                lastTimes.append(hi)
            }
        }
        return runs
    }

    /// Values by index, answering "the first index whose value is at most x" in O(log n): a segment tree of
    /// minimums over a power-of-two number of leaves (empty leaves hold the largest instant).
    struct FirstFit {
        private var tree: [Instant] = []
        private var leaves = 0
        private(set) var count = 0

        /// The value at `index` (below ``count``).
        subscript(index: Int) -> Instant {
            get { tree[leaves + index] }
            set {
                var i = leaves + index
                tree[i] = newValue
                while i > 1 {
                    i /= 2
                    tree[i] = Swift.min(tree[2 * i], tree[2 * i + 1])
                }
            }
        }

        /// Adds a value at index ``count``.
        mutating func append(_ value: Instant) {
            if count == leaves {
                let old = (0..<count).map { tree[leaves + $0] }
                leaves = Swift.max(1, leaves * 2)
                tree = Array(repeating: Instant(seconds: .max), count: 2 * leaves)
                for (i, v) in old.enumerated() { tree[leaves + i] = v }
                for i in stride(from: leaves - 1, through: 1, by: -1) {
                    tree[i] = Swift.min(tree[2 * i], tree[2 * i + 1])
                }
            }
            count += 1
            self[count - 1] = value
        }

        /// The first index whose value is at most `x`, or `nil`.
        func first(atMost x: Instant) -> Int? {
            guard count > 0, tree[1] <= x else { return nil }
            var i = 1
            while i < leaves { i = tree[2 * i] <= x ? 2 * i : 2 * i + 1 }
            return i - leaves
        }
    }

    private func mergeRuns(_ runs: [[Int]]) async throws(RouteKitError) {
        try await store.dropStaging(builder: id)
        // One decoded chunk per run in memory.
        var heads: [[Location]] = []
        var positions: [Int] = []
        var nextChunk: [Int] = []
        for run in runs {
            heads.append(try await load(run[0]))
            positions.append(0)
            nextChunk.append(1)
        }
        var out: [Location] = []
        out.reserveCapacity(Self.chunkSize)
        var sequence = nextSequence
        while true {
            var best = -1
            var bestTime = Instant(seconds: .max)
            for r in 0..<runs.count where positions[r] < heads[r].count {
                let t = heads[r][positions[r]].timestamp?.instant ?? Instant(seconds: .min)
                if best < 0 || t < bestTime {
                    best = r
                    bestTime = t
                }
            }
            if best < 0 { break }
            out.append(heads[best][positions[best]])
            positions[best] += 1
            if positions[best] == heads[best].count && nextChunk[best] < runs[best].count {
                heads[best] = try await load(runs[best][nextChunk[best]])
                positions[best] = 0
                nextChunk[best] += 1
            }
            if out.count == Self.chunkSize {
                try await store.appendToBuilder(
                    id: id, claim: claim, chunks: [.locations(out, sequence: sequence, kind: .staging)],
                    progress: progress,
                    metadata: metadata)
                sequence += 1
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty {
            try await store.appendToBuilder(
                id: id, claim: claim, chunks: [.locations(out, sequence: sequence, kind: .staging)], progress: progress,
                metadata: metadata)
            sequence += 1
        }
        try await store.promoteStaging(builder: id, claim: claim, replacing: runs.flatMap { $0 })
        nextSequence = sequence
    }

    private func load(_ sequence: Int) async throws(RouteKitError) -> [Location] {
        guard let chunk = try await store.builderChunk(id: id, kind: .locations, sequence: sequence) else {
            throw RouteKitError(.storage, "route builder \(id) lost its chunk \(sequence)")
        }
        return try LocationChunk.decode(chunk.bytes)
    }

    /// The earliest and latest timestamps acknowledged so far (with their written offsets), reading only the
    /// two chunks that hold them; `nil` when no location has a time.
    public func timeBounds() async throws(RouteKitError) -> (Timestamp?, Timestamp?) {
        let chunks = try await store.builderChunkBounds(id: id, kind: .locations)
        let mins = chunks.compactMap { c in c.minTime.map { (c.sequence, $0) } }
        let maxes = chunks.compactMap { c in c.maxTime.map { (c.sequence, $0) } }
        guard let lo = mins.min(by: { $0.1 < $1.1 }), let hi = maxes.max(by: { $0.1 < $1.1 }) else {
            return (nil, nil)
        }
        let first = try await load(lo.0).compactMap(\.timestamp).min { $0.instant < $1.instant }
        let last = try await load(hi.0).compactMap(\.timestamp).max { $0.instant < $1.instant }
        return (first, last)
    }
}
