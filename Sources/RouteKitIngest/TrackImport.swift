import Foundation
import RouteKit

/// Per-point fields stored beside the route, as `ChunkKind.extras` chunks (JSON): what a location does not hold.
package struct ExtrasEntry: Codable {
    /// Index in its batch.
    package var i: Int
    /// The point's GPX-only fields.
    package var x: GPXPointExtras?
    /// Values of a point without a time (by quantity identifier).
    package var v: [String: Double]?
}

/// The per-point state of one track: a value type, so the hot loop pays no exclusivity checks.
package struct TrackScan {
    var hasher = ContentHasher(domain: "gpx-track-v1")
    var count = 0
    var buffer: [Location] = []
    /// Series samples by ``GPXPointValues`` slot (the order of ``QuantityType/all``).
    var series: [[QuantitySample]] = Array(repeating: [], count: 6)
    var extras: [ExtrasEntry] = []
    var skipUntil = 0
    var first: Timestamp?
    var last: Timestamp?
    var segmentFirst: Timestamp?
    var segmentLast: Timestamp?
    var previous: Instant?
    var backwards = 0
    var duplicates = 0
    var withoutTime = 0
    /// Series samples not attached to a location (FIT records without a position).
    var seriesOnly = 0

    enum Stop { case end, flush, verify }

    /// Adds the values of a measurement without a position (a FIT record indoors): they become series samples
    /// only. Hashed in order with the locations, so the content identity and resume checkpoints cover them.
    mutating func consumeSeriesOnly(_ time: Timestamp, _ values: GPXPointValues) {
        hasher.combine(0x5E21_E5 as UInt64)
        hasher.combine(time)
        for slot in 0..<6 { hasher.combine(values.raw(slot)) }
        seriesOnly += 1
        // Acknowledged by a resumed builder: already stored.
        if count < skipUntil { return }
        for slot in 0..<6 {
            let v = values.raw(slot)
            if !v.isNaN { series[slot].append(QuantitySample(timestamp: time, value: v)) }
        }
    }

    /// Whether series samples are waiting to be stored.
    var hasPendingSeries: Bool { series.contains { !$0.isEmpty } }

    /// Consumes points from `start` until the buffer is full (flush), the acknowledged prefix of a resumed
    /// builder has been re-read (verify), or the batch ends; returns where it stopped.
    mutating func consume(_ points: [GPXPoint], from start: Int) -> (Int, Stop) {
        var i = start
        while i < points.count {
            let p = points[i]
            i += 1
            let l = p.location
            hasher.combine(l)
            let values = p.values
            let hasValues = !values.isEmpty
            if hasValues {
                for slot in 0..<6 { hasher.combine(values.raw(slot)) }
            } else {
                hasher.combine(0x7FF8_0000_0000_0006 as UInt64)
            }
            let x = p.extras
            if let x { TrackScan.combine(x, into: &hasher) } else { hasher.combine(0 as UInt64) }
            if let t = l.timestamp {
                if first == nil { first = t }
                last = t
                if segmentFirst == nil { segmentFirst = t }
                segmentLast = t
                if let prev = previous {
                    if t.instant < prev { backwards += 1 } else if t.instant == prev { duplicates += 1 }
                }
                previous = t.instant
            } else {
                withoutTime += 1
            }
            let index = count
            count += 1
            if index < skipUntil {
                if count == skipUntil { return (i, .verify) }
                continue
            }
            let position = buffer.count
            buffer.append(l)
            var orphanValues: [String: Double]?
            if hasValues {
                for slot in 0..<6 {
                    let v = values.raw(slot)
                    if v.isNaN { continue }
                    if let time = l.timestamp {
                        series[slot].append(QuantitySample(timestamp: time, value: v))
                    } else {
                        orphanValues = orphanValues ?? [:]
                        orphanValues?[QuantityType.all[slot].identifier] = v
                    }
                }
            }
            if x != nil || orphanValues != nil { extras.append(ExtrasEntry(i: position, x: x, v: orphanValues)) }
            if buffer.count == RouteBuilder.chunkSize { return (i, .flush) }
        }
        return (i, .end)
    }

    /// Empties the buffers, handing back what they held.
    mutating func take() -> ([Location], [QuantityType: [QuantitySample]], [ExtrasEntry]) {
        var related: [QuantityType: [QuantitySample]] = [:]
        for slot in 0..<6 where !series[slot].isEmpty {
            related[QuantityType.all[slot]] = series[slot]
            series[slot].removeAll(keepingCapacity: true)
        }
        let out = (buffer, related, extras)
        buffer.removeAll(keepingCapacity: true)
        extras.removeAll(keepingCapacity: true)
        return out
    }

    static func combine(_ x: GPXPointExtras, into hasher: inout ContentHasher) {
        hasher.combine(1 as UInt64)
        for s in [x.name, x.comment, x.description, x.source, x.symbol, x.type, x.fix] { hasher.combine(s) }
        for d in [x.hdop, x.vdop, x.pdop, x.magneticVariation, x.geoidHeight, x.ageOfDGPSData] { hasher.combine(d) }
        hasher.combine(Int64(x.satellites ?? Int.min))
        hasher.combine(Int64(x.dgpsID ?? Int.min))
        for l in x.links {
            hasher.combine(l.href)
            hasher.combine(l.text)
            hasher.combine(l.type)
        }
        for e in x.extensions { hasher.combine(e) }
        hasher.combine(UInt64(x.links.count << 32 | x.extensions.count))
    }
}

/// One track being imported, whatever its format: a GPX `<trk>`, a FIT session, a TCX activity, an Apple Health
/// workout's route. Its points come in batches (``add(_:)``), are hashed into the track's content identity and
/// stored through a `RouteBuilder` (held in memory while the track is short), and ``finish(info:)`` saves the
/// workout and the route, or finds them already stored.
package final class TrackImport {
    /// Thrown when a pending builder of an interrupted import has the same head as the track but not the same
    /// content: the caller imports the file again without resuming.
    package struct ResumeMismatch: Error {
        package init() {}
    }

    /// Whether tracks may resume a pending builder: `false` while ``ImportResult/collect(file:warnings:_:)`` imports a
    /// file again after a ``ResumeMismatch`` (a builder with the track's head and other content, or one that another
    /// import of the same file is filling right now).
    @TaskLocal package static var resumeAllowed = true

    let context: ImportContext
    let label: String
    let startInfo: GPXPathInfo
    let creator: String?
    let allowResume: Bool
    var scan = TrackScan()
    package private(set) var builder: RouteBuilder?
    var headResolved = false
    var expectedCheckpoint: String?
    var resumeCandidate: PendingBuilder?
    var resumedFrom: Int?
    var segmentStarts: [Int] = []
    var events: [WorkoutEvent] = []
    var inSegment = false
    /// The builders' origin kind (`GPXImporter.originKind`, `gpx-import`, for GPX).
    let originKind: String
    /// The sync identifier's prefix (`gpx-` for GPX).
    let syncPrefix: String
    /// Makes the workout for a sync identifier, instead of GPX's (another format's importer).
    let makeWorkout: ((SyncIdentity) -> Workout)?
    /// More route metadata (another format's).
    package var routeMetadata: [String: MetadataValue] = [:]
    /// Workout metadata the file gives besides the track's own fields (a GPX file's `<metadata>`, under
    /// ``GPXMetadataStorage/key``): added to the workout the track's GPX fields make (not to one another format's
    /// `makeWorkout` makes), and not part of the track's identity.
    package var workoutMetadata: [String: MetadataValue] = [:]
    /// The route's sync identity when the format gives one (HealthKit's), instead of the content-derived one: a
    /// stored route of it with an equal or higher version makes the track unchanged.
    package var syncOverride: SyncIdentity?

    /// A track labelled `label` (the file, in builders' origins and warnings), whose builders' origin kind is
    /// `originKind` and whose sync identifier is `syncPrefix` and a hash of its content; `makeWorkout` makes its
    /// workout (GPX's, from the track's fields, when `nil`).
    package init(
        context: ImportContext, label: String, info: GPXPathInfo, creator: String?, allowResume: Bool,
        originKind: String, syncPrefix: String, makeWorkout: ((SyncIdentity) -> Workout)? = nil
    ) {
        self.originKind = originKind
        self.syncPrefix = syncPrefix
        self.makeWorkout = makeWorkout
        self.context = context
        self.label = label
        self.startInfo = info
        self.creator = creator
        self.allowResume = allowResume && TrackImport.resumeAllowed
        // The track's own fields are hashed at its end, where the reader hands all of them over: a file may
        // write them before or after its segments.
    }

    func combine(_ info: GPXPathInfo) {
        scan.hasher.combine(info.name)
        scan.hasher.combine(info.comment)
        scan.hasher.combine(info.description)
        scan.hasher.combine(info.source)
        scan.hasher.combine(info.type)
        scan.hasher.combine(info.number.map { Int64($0) } ?? Int64.min)
        for l in info.links {
            scan.hasher.combine(l.href)
            scan.hasher.combine(l.text)
            scan.hasher.combine(l.type)
        }
        for e in info.extensions { scan.hasher.combine(e) }
        scan.hasher.combine(UInt64(info.links.count << 32 | info.extensions.count))
    }

    /// The last time of the previous segment that had one.
    var previousSegmentEnd: Timestamp?

    func closeSegment() {
        if inSegment {
            // The gap between two segments is a pause: pause at the end of one, resume at the start of the next.
            if let end = previousSegmentEnd, let first = scan.segmentFirst, end.instant <= first.instant {
                events.append(WorkoutEvent(kind: .pause, start: end))
                events.append(WorkoutEvent(kind: .resume, start: first))
            }
            events.append(WorkoutEvent(kind: .segment, start: scan.segmentFirst, end: scan.segmentLast))
            if let last = scan.segmentLast { previousSegmentEnd = last }
            inSegment = false
        }
    }

    package func segmentStart() {
        closeSegment()
        scan.hasher.combine(0x5E6_0000 as UInt64)
        segmentStarts.append(scan.count)
        inSegment = true
        scan.segmentFirst = nil
        scan.segmentLast = nil
    }

    /// A pause (or, with `resume`, a resume) at `t`, inside a segment.
    package func pause(_ t: Timestamp?, resume: Bool) {
        scan.hasher.combine(resume ? 0x2E5_0000 as UInt64 : 0x9A5_0000 as UInt64)
        scan.hasher.combine(t)
        events.append(WorkoutEvent(kind: resume ? .resume : .pause, start: t))
    }

    /// Adds values to the track's content identity (another format's own fields).
    package func combineIdentity(_ values: [Double?]) {
        for v in values { scan.hasher.combine(v) }
    }

    /// Adds the values of a measurement without a position (see ``TrackScan/consumeSeriesOnly(_:_:)``).
    package func addSeriesOnly(_ time: Timestamp, _ values: GPXPointValues) {
        scan.consumeSeriesOnly(time, values)
    }

    package func add(_ points: [GPXPoint]) async throws {
        if !inSegment && segmentStarts.last != scan.count {
            // Points after a pause marker without a new <trkseg>: they still start a segment of their own.
            segmentStarts.append(scan.count)
            inSegment = true
        }
        var i = 0
        while i < points.count {
            let (next, stop) = scan.consume(points, from: i)
            i = next
            switch stop {
            case .end: break
            case .flush: try await flush()
            case .verify: try await verifyResume()
            }
        }
    }

    /// The first flush fixes the track's head key and looks for an interrupted import of it.
    func resolveHead() async throws {
        headResolved = true
        let key = scan.hasher.hexDigest
        let store = context.store
        if allowResume {
            let pending = try await store.pendingBuilders().first {
                $0.origin?.kind == originKind && $0.origin?.key == key && $0.source == context.source
            }
            if let pending {
                let acknowledged = pending.progress.locationCount
                if acknowledged == 0 {
                    builder = try await takeOver(pending)
                    resumedFrom = 0
                    return
                }
                // Everything up to `acknowledged` is stored: stop buffering, re-read up to there, verify.
                resumeCandidate = pending
                expectedCheckpoint = pending.progress.checkpoint
                scan.skipUntil = acknowledged
                _ = scan.take()
                if scan.count >= acknowledged { try await verifyResume() }
                return
            }
        }
        // Nothing pending: the batches wait in memory until the track proves long or new (see deferredLimit).
        headKey = key
        deferring = true
    }

    /// Batches are held in memory, not written, until the track has this many locations: a track that is already
    /// stored (known only at its end, from the content hash) then costs no writes at all, and a new one is written
    /// in fewer transactions. A longer track is written batch by batch from there on, and resumes after a crash.
    package static let deferredLimit = 8 * RouteBuilder.chunkSize

    /// The head key of a track whose builder is not created yet.
    var headKey = ""
    /// Whether batches are being held back (no builder yet).
    var deferring = false
    /// The batches held back, checked, with their checkpoints: what a short track saves in one transaction at its end
    /// (packed only then, when it proves new: a track found already stored is never packed), or what a long one hands
    /// to its builder.
    var held = HeldRoute()

    /// Creates the builder and writes the batches held back.
    func startDeferredBuilder() async throws {
        let builder = try await RouteBuilder(
            store: context.store, source: context.source, order: .insertion,
            origin: BuilderOrigin(kind: originKind, key: headKey, label: label))
        self.builder = builder
        deferring = false
        try await held.insert(into: builder)
        held = HeldRoute()
    }

    /// Resumes a pending builder; if another process is still using it (or just finished it), the track is
    /// built anew instead.
    func takeOver(_ pending: PendingBuilder) async throws -> RouteBuilder {
        let result: Result<RouteBuilder, RouteKitError>
        do {
            result = .success(try await RouteBuilder.resume(pending, in: context.store))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let b): return b
        case .failure(let e) where e.code == .builderState || e.code == .notFound: throw ResumeMismatch()
        case .failure(let e): throw e
        }
    }

    func verifyResume() async throws {
        guard scan.count == scan.skipUntil, let candidate = resumeCandidate, scan.hasher.state == expectedCheckpoint
        else {
            throw ResumeMismatch()
        }
        builder = try await takeOver(candidate)
        resumedFrom = scan.skipUntil
        resumeCandidate = nil
    }

    package func flush() async throws {
        if !headResolved { try await resolveHead() }
        guard !scan.buffer.isEmpty || scan.hasPendingSeries, deferring || builder != nil else { return }
        let checkpoint = scan.hasher.state
        let (locations, related, extras) = scan.take()
        var extrasBytes: [UInt8]?
        if !extras.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            extrasBytes = Array(try encoder.encode(extras))
        }
        if deferring {
            try held.insert(locations, related: related, checkpoint: checkpoint, extras: extrasBytes)
            if held.locationCount >= Self.deferredLimit { try await startDeferredBuilder() }
            return
        }
        try await builder?.insert(locations, related: related, checkpoint: checkpoint, extras: extrasBytes)
    }

    package struct Done {
        package var track: ImportResult.Track
        package var warnings: [String]
    }

    /// The workout a GPX track makes: its fields as metadata, its type guessed from `<type>`.
    func gpxWorkout(info end: GPXPathInfo, sync: SyncIdentity) -> Workout {
        let info = end.name == nil && end.type == nil ? startInfo : end
        var metadata: [String: MetadataValue] = [:]
        if let v = info.name { metadata["name"] = .string(v) }
        if let v = info.description { metadata["description"] = .string(v) }
        if let v = info.comment { metadata["comment"] = .string(v) }
        if let v = info.source { metadata["gpxSource"] = .string(v) }
        if let v = info.type { metadata["gpxType"] = .string(v) }
        if let v = info.number { metadata["gpxNumber"] = .integer(Int64(v)) }
        if let v = creator { metadata["gpxCreator"] = .string(v) }
        if !info.links.isEmpty, let json = try? JSONEncoder().encode(info.links) {
            metadata["gpxLinks"] = .string(String(decoding: json, as: UTF8.self))
        }
        if !info.extensions.isEmpty, let json = try? JSONEncoder().encode(info.extensions) {
            metadata["gpxExtensions"] = .string(String(decoding: json, as: UTF8.self))
        }
        metadata.merge(workoutMetadata) { own, _ in own }
        return Workout(
            activityType: ActivityType(guessingFrom: info.type), start: scan.first, end: scan.last,
            source: context.source,
            sync: sync, events: events, metadata: metadata)
    }

    /// The route's metadata: its sync identity, segments and the oddities counted while reading.
    func finalMetadata(_ syncID: String, _ syncVersion: Int64) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [
            MetadataKey.syncIdentifier: .string(syncID), MetadataKey.syncVersion: .integer(syncVersion),
        ]
        if segmentStarts != [0] && !segmentStarts.isEmpty {
            metadata["gpxSegmentStarts"] = .string(segmentStarts.map(String.init).joined(separator: ","))
        }
        if scan.backwards > 0 { metadata["timeWentBackwards"] = .integer(Int64(scan.backwards)) }
        if scan.duplicates > 0 { metadata["duplicateTimes"] = .integer(Int64(scan.duplicates)) }
        if scan.withoutTime > 0 { metadata["locationsWithoutTime"] = .integer(Int64(scan.withoutTime)) }
        metadata.merge(routeMetadata) { $1 }
        return metadata
    }

    package func finish(info: GPXPathInfo) async throws -> Done {
        closeSegment()
        let count = scan.count
        // The last batch first: every checkpoint covers points only, so a builder that acknowledged the whole
        // track (its last batch stored, not yet finished) is resumed like any other.
        if count > 0 { try await flush() }
        if scan.skipUntil > count || resumeCandidate != nil { throw ResumeMismatch() }
        combine(info)
        scan.hasher.combine(Int64(count))
        let store = context.store
        let source = context.source
        if scan.seriesOnly > 0 { scan.hasher.combine(Int64(scan.seriesOnly)) }
        let syncID = syncOverride?.identifier ?? syncPrefix + scan.hasher.hexDigest
        let syncVersion = syncOverride?.version ?? 1
        var warnings: [String] = []
        if count == 0 && makeWorkout == nil {
            warnings.append("\(label) has no points: imported as a workout without a route")
        }
        if let existing = try await store.routes(matching: RouteFilter(source: source, syncIdentifier: syncID)).first,
            existing.sync.version >= syncVersion
        {
            if let builder { try await builder.discard() }
            return Done(
                track: .init(
                    workout: existing.workoutID, route: existing.id, locations: existing.locationCount,
                    unchanged: true, resumedFrom: nil), warnings: [])
        }
        let workout: Workout
        var newWorkout = true
        if let w = try await store.workouts(matching: WorkoutFilter(source: source, syncIdentifier: syncID)).first {
            workout = w
            newWorkout = false
        } else {
            let sync = SyncIdentity(identifier: syncID, version: syncVersion)
            var candidate = makeWorkout?(sync) ?? gpxWorkout(info: info, sync: sync)
            context.workoutOverrides?.apply(to: &candidate)
            switch try await store.saveWorkout(candidate) {
            case .inserted, .replaced: workout = candidate
            case .stale(let current, _):
                // Another import of the same content won the race.
                guard let w = try await store.workout(id: current) else {
                    throw RouteKitError(.storage, "workout \(current) vanished during the import")
                }
                workout = w
                newWorkout = false
            }
        }
        if deferring && count > 0 {
            // A short track, held whole: saved in one transaction, without a builder.
            deferring = false
            let finished = try await held.save(
                workout: workout, source: source, metadata: finalMetadata(syncID, syncVersion), in: store)
            return Done(
                track: .init(
                    workout: workout.id, route: finished.outcome.savedID ?? finished.route.id, locations: count,
                    unchanged: finished.outcome.savedID == nil, resumedFrom: nil), warnings: warnings)
        }
        guard let builder, count > 0 else {
            if let builder { try await builder.discard() }
            if newWorkout && count == 0 {
                // Measurements without a position: series of the workout, without a route.
                let (_, related, _) = scan.take()
                try await store.appendSamples(related, toWorkout: workout.id, as: source)
            }
            return Done(
                track: .init(workout: workout.id, route: nil, locations: 0, unchanged: !newWorkout, resumedFrom: nil),
                warnings: warnings)
        }
        let finished = try await builder.finish(workout: workout, metadata: finalMetadata(syncID, syncVersion))
        let route = finished.outcome.savedID ?? finished.route.id
        return Done(
            track: .init(
                workout: workout.id, route: route, locations: count, unchanged: finished.outcome.savedID == nil,
                resumedFrom: resumedFrom), warnings: warnings)
    }
}
