public import Foundation
@_spi(RouteKitBackend) public import RouteKit

/// What importing one file did (the shape of `routekit import --json`).
public struct ImportResult: Sendable, Hashable {
    /// How the file went.
    public enum Status: String, Sendable, Hashable {
        /// At least one track was stored as new.
        case imported
        /// Every track was already in the store (same source, same content).
        case unchanged
        /// The file failed part-way, after some of its tracks were stored.
        case partial
        /// Nothing was stored: the file could not be read, or failed in its first track.
        case failed
    }

    /// One `<trk>`: the workout it became, and its route (none for an empty track).
    public struct Track: Sendable, Hashable {
        /// The workout.
        public var workout: UUID
        /// The route, `nil` for a track without points.
        public var route: UUID?
        /// The route's location count.
        public var locations: Int
        /// `true` when the track was already stored (nothing was written).
        public var unchanged: Bool
        /// When a pending builder of an interrupted import of the same track was picked up: how many
        /// locations it already held.
        public var resumedFrom: Int?

        /// Creates a track outcome.
        package init(workout: UUID, route: UUID?, locations: Int, unchanged: Bool, resumedFrom: Int? = nil) {
            self.workout = workout
            self.route = route
            self.locations = locations
            self.unchanged = unchanged
            self.resumedFrom = resumedFrom
        }
    }

    /// The file, as given.
    public var file: String
    /// How it went.
    public var status: Status
    /// Its tracks, in file order.
    public var tracks: [Track]
    /// How many `<wpt>` it has.
    public var waypoints: Int
    /// Quirks and things not stored, for a person.
    public var warnings: [String]
    /// Why it failed, if it did.
    public var error: RouteKitError?

    /// Creates a result.
    package init(
        file: String, status: Status, tracks: [Track] = [], waypoints: Int = 0, warnings: [String] = [],
        error: RouteKitError? = nil
    ) {
        self.file = file
        self.status = status
        self.tracks = tracks
        self.waypoints = waypoints
        self.warnings = warnings
        self.error = error
    }
}

extension ImportResult {
    /// Runs an import that fills a result: what it throws becomes the result's error (`failed`, or `partial` when
    /// tracks were stored before it), and a result whose tracks were all stored already is `unchanged`. The
    /// importers of other formats share it.
    package static func collect(
        file: String, warnings: [String] = [], _ body: (inout ImportResult) async throws -> Void
    ) async -> ImportResult {
        var result = ImportResult(file: file, status: .imported, warnings: warnings)
        do {
            try await body(&result)
        } catch {
            let e = error as? RouteKitError ?? RouteKitError(.storage, "\(error)")
            result.error = e.file == nil ? e.inFile(file) : e
            result.status = result.tracks.isEmpty ? .failed : .partial
            return result
        }
        if result.tracks.allSatisfy(\.unchanged) { result.status = .unchanged }
        return result
    }
}

/// Imports GPX files into a store: each `<trk>` becomes a workout with one route holding every `<trkpt>`
/// in file order, built through a `RouteBuilder` straight from the streaming reader, and its heart rate,
/// cadence, temperature and power become quantity series of the workout.
///
/// - **Identity:** a track's sync identifier is `gpx-` and a 128-bit hash of its parsed content (every
///   point's fields and values, the segment structure, the track's own fields), never of the file's bytes or
///   name: the same track imports once, however the file is named or formatted, and a second import reports
///   it unchanged. The version is 1; the workout carries the same identity.
/// - **Resume:** the builder's origin is a hash of the track's first 1,024 points and fields, its checkpoint
///   the running hash of what was acknowledged. Importing the same file after a crash finds the pending
///   builder, re-reads (without storing) the acknowledged points, checks the checkpoint, and goes on from
///   there. If the content differs, the pending builder is left alone and the track is built anew.
/// - **Segments** become workout segment events (and a route metadata entry `gpxSegmentStarts` with the index
///   of each segment's first point), and the gap between two segments a pause and a resume event; OpenTracks
///   pause markers become pause and resume events too.
/// - **Lossless:** GPX fields that are not location fields (names, DOP values, unknown extensions) are
///   stored with the route as `extras` chunks; values of points without a time (which cannot be series
///   samples) go there too.
/// - **Waypoints and `<rte>` routes** are stored as attachments of the workout of the file's first track
///   (`GPXAttachments`); a file with only waypoints and routes becomes a workout without a route, of activity
///   `other`, identified by their content, that holds them.
/// - **Oddities** are recorded in the route's metadata, never fixed: `timeWentBackwards`, `duplicateTimes`,
///   `locationsWithoutTime` (counts).
public final class GPXImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "gpx-import"

    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source
    /// How files are read (``GPXReadOptions/skipInvalidPoints``…). Skipped points are not part of a track's
    /// content; a file that needed `skipInvalidPoints` needs it again to be re-imported or resumed (without it,
    /// the file fails at its first out-of-range point).
    package let readOptions: GPXReadOptions

    /// Creates an importer.
    public init(store: any RouteStore, source: Source = .defaultImport, readOptions: GPXReadOptions = GPXReadOptions())
    {
        self.store = store
        self.source = source
        self.readOptions = readOptions
    }

    package struct ResumeMismatch: Error {}

    /// What to read: a file, or bytes held in memory (an archive's entry) with the name to report.
    enum Input {
        case path(String)
        case bytes([UInt8], name: String)
        /// Bytes made on the reading thread (an archive's entry decompressed there).
        case loaded(Entry)

        var name: String {
            switch self {
            case .path(let p): p
            case .bytes(_, let name): name
            case .loaded(let entry): entry.name
            }
        }
    }

    /// An archive's entry whose GPX bytes are made (decompressed) on the thread that reads them.
    package struct Entry: Sendable {
        /// The name results and errors carry (`export.zip!activities/1.gpx.gz`).
        package var name: String
        /// Makes the GPX bytes; its error is the import's.
        package var load: @Sendable () throws(RouteKitError) -> [UInt8]
        /// Whether the bytes may be made while the entry before is still read (two entries' bytes held at once:
        /// for entries small once decompressed).
        package var loadFirst: Bool
        /// Opens the entry as a stream instead (an entry too large to hold in memory): read as it is inflated.
        package var open: (@Sendable () throws(RouteKitError) -> any ByteSource)?

        /// An entry.
        package init(name: String, loadFirst: Bool, load: @escaping @Sendable () throws(RouteKitError) -> [UInt8]) {
            self.name = name
            self.load = load
            self.loadFirst = loadFirst
        }

        /// An entry read as a stream that `open` makes on the reading thread, never held whole.
        package init(name: String, streaming open: @escaping @Sendable () throws(RouteKitError) -> any ByteSource) {
            self.name = name
            self.load = { [] }
            self.loadFirst = false
            self.open = open
        }

        /// A reader of the entry, parsing once `previous` (if any) is read.
        func reader(_ options: GPXReadOptions, after previous: GPXReaderThread? = nil) -> GPXReaderThread {
            if let open {
                return GPXReaderThread(name: name, options: options, after: previous, open: open)
            }
            return GPXReaderThread(
                name: name, options: options, after: previous, loadFirst: previous == nil || loadFirst, load: load)
        }
    }

    /// What a reader read ahead reads: a file, or an archive's entry by its name.
    private enum AheadKey: Equatable {
        case path(String)
        case entry(String)
    }

    /// Values that win over the file's own for the workouts this importer creates (a bulk export's index, such as
    /// Strava's `activities.csv`, names and types its activities).
    package var workoutOverrides: WorkoutOverrides?

    /// The file or entry read ahead (`importFile(_:readingAhead:progress:)`, `importEntry(_:readingAhead:)`)
    /// and its reader.
    private var ahead: (key: AheadKey, reader: GPXReaderThread)?

    /// The reader read ahead for `key`, if that is what was read ahead; any other is stopped.
    private func takeAhead(_ key: AheadKey) -> GPXReaderThread? {
        defer { ahead = nil }
        if let ahead, ahead.key == key { return ahead.reader }
        ahead?.reader.cancel()
        return nil
    }

    /// Imports one file. Never throws: failures are in the result, naming file, line and column.
    /// - Parameters:
    ///   - path: the file (GPX, plain or gzip).
    ///   - next: the GPX file the caller imports next, if it knows it. It is read on a thread of its own from the
    ///     moment `path` has been read to its end (while `path`'s last events are stored), so that going through
    ///     many files keeps parsing and storing busy at once, with no two files parsed at once. Its reader
    ///     waits with at most a few batches queued (`GPXReaderThread.capacity`): memory stays bounded whatever
    ///     its size. The next call picks that reader up if it imports `next`, and stops it otherwise.
    ///   - progress: called now and then with the bytes of the file read so far.
    public func importFile(_ path: String, readingAhead next: String? = nil, progress: ((Int) -> Void)? = nil) async
        -> ImportResult
    {
        let reader = takeAhead(.path(path)) ?? GPXReaderThread(path: path, options: readOptions)
        ahead = next.map { (.path($0), GPXReaderThread(path: $0, options: readOptions, after: reader)) }
        return await run(.path(path), reader: reader, progress: progress)
    }

    /// Imports an archive's entry whose GPX its `load` makes (decompressing it) on the reading thread, reported as its
    /// `name`; `next`, the entry imported next, is read on a thread of its own once this one is read to its end (as
    /// `importFile(_:readingAhead:progress:)` does for files). An error `load` throws is the result's error.
    package func importEntry(_ entry: Entry, readingAhead next: Entry?) async -> ImportResult {
        let reader = takeAhead(.entry(entry.name)) ?? entry.reader(readOptions)
        ahead = next.map { (.entry($0.name), $0.reader(readOptions, after: reader)) }
        return await run(.loaded(entry), reader: reader, progress: nil)
    }

    /// Imports GPX held in memory (an archive's entry), reported and labelled as `name` (`export.zip!a/b.gpx`).
    /// An interrupted import of it resumes when the same bytes are imported again; `routekit recover` cannot
    /// re-read it.
    public func importBytes(_ bytes: [UInt8], name: String, progress: ((Int) -> Void)? = nil) async -> ImportResult {
        await run(.bytes(bytes, name: name), reader: nil, progress: progress)
    }

    private func run(_ input: Input, reader: GPXReaderThread?, progress: ((Int) -> Void)?) async -> ImportResult {
        do {
            return try await attempt(input, reader: reader, allowResume: true, progress: progress)
        } catch {
            // A pending builder with the same head but different content: build anew, leaving it alone.
            do {
                return try await attempt(input, allowResume: false, progress: progress)
            } catch {
                let e = RouteKitError(.storage, "the import could not resume and then failed", file: input.name)
                return ImportResult(file: input.name, status: .failed, error: e)
            }
        }
    }

    private static let parseErrors: Set<RouteKitError.Code> = [
        .malformedXML, .invalidGPX, .invalidValue, .unsupportedEncoding, .compression, .io,
    ]

    /// One pass over the input, with `started` as its reader when one was read ahead.
    private func attempt(
        _ input: Input, reader started: GPXReaderThread? = nil, allowResume: Bool,
        progress: ((Int) -> Void)?
    ) async throws(ResumeMismatch)
        -> ImportResult
    {
        let path = input.name
        var result = ImportResult(file: path, status: .imported, tracks: [], waypoints: 0, warnings: [], error: nil)
        var track: TrackImport?
        var attachments = GPXAttachments()
        // Builders record the file by its absolute path: `routekit recover` may run from another folder.
        let absolutePath: String
        switch input {
        case .path(let p): absolutePath = URL(fileURLWithPath: p).standardizedFileURL.path
        case .bytes(_, let name): absolutePath = name
        case .loaded(let entry): absolutePath = entry.name
        }
        var creator: String?
        var trackIndex = 0
        do {
            let reader: GPXReaderThread
            switch input {
            case .path(let p): reader = started ?? GPXReaderThread(path: p, options: readOptions)
            case .bytes(let b, let name): reader = GPXReaderThread(bytes: b, name: name, options: readOptions)
            case .loaded(let entry): reader = started ?? entry.reader(readOptions)
            }
            defer { reader.cancel() }
            var events = 0
            var bytesRead = 0
            while let (event, bytes) = try await reader.next() {
                events += 1
                bytesRead = bytes
                if events % 64 == 0 { progress?(bytes) }
                switch event {
                case .document(let info): creator = info.creator
                case .metadata: break
                case .waypoint(let p):
                    result.waypoints += 1
                    attachments.add(waypoint: p)
                case .routeStart(let info): attachments.startRoute(info)
                case .routePoints(let p): attachments.add(routePoints: p)
                case .routeEnd(let info): attachments.endRoute(info)
                case .trackStart(let info):
                    track = TrackImport(
                        importer: self, label: absolutePath, info: info, creator: creator,
                        allowResume: allowResume)
                    trackIndex += 1
                case .segmentStart: track?.segmentStart()
                case .trackPoints(let points): try await track?.add(points)
                case .pause(let t): track?.pause(t, resume: false)
                case .resume(let t): track?.pause(t, resume: true)
                case .segmentEnd(let ext):
                    if !ext.isEmpty {
                        result.warnings.append("segment extensions are not stored (\(ext.count) element(s))")
                    }
                case .trackEnd(let info):
                    if let t = track {
                        let done = try await t.finish(info: info)
                        result.tracks.append(done.track)
                        result.warnings += done.warnings
                    }
                    track = nil
                case .documentExtensions(let ext):
                    result.warnings.append("document extensions are not stored (\(ext.count) element(s))")
                case .warning(let w):
                    result.warnings.append(w.description)
                }
            }
            progress?(bytesRead)
        } catch let error as ResumeMismatch {
            throw error
        } catch {
            let e = (error as? RouteKitError) ?? RouteKitError(.storage, "\(error)")
            // A file that is not valid GPX will fail the same way again: drop what its unfinished track
            // collected. Anything else (a full disk) leaves the builder pending, to resume.
            if let builder = track?.builder, Self.parseErrors.contains(e.code) {
                try? await builder.discard()
            }
            result.error = e.file == nil ? e.inFile(path) : e
            result.status = result.tracks.isEmpty ? .failed : .partial
            return result
        }
        if !attachments.isEmpty {
            do {
                try await store(attachments, creator: creator, into: &result)
            } catch {
                result.error = (error as? RouteKitError ?? RouteKitError(.storage, "\(error)")).inFile(path)
                result.status = .partial
                return result
            }
            if attachments.dropped > 0 {
                result.warnings.append(
                    "\(attachments.dropped) waypoint or route point(s) beyond \(GPXAttachments.maxPoints) were not stored"
                )
            }
        }
        if !result.tracks.isEmpty && result.tracks.allSatisfy(\.unchanged) { result.status = .unchanged }
        if result.tracks.isEmpty { result.status = .unchanged }
        return result
    }

    package func hasAttachments(_ workout: UUID) async throws(RouteKitError) -> Bool {
        let cursor = try await store.workoutChunks(ofWorkout: workout, kind: .attachment)
        defer { cursor.close() }
        return try await cursor.next() != nil
    }

    /// Stores a file's waypoints and routes with the workout of its first track, when that workout is new;
    /// a file without tracks gets a workout of its own (identified by their content).
    package func store(
        _ attachments: GPXAttachments, creator: String?, into result: inout ImportResult,
        syncPrefix: String = "gpx-", metadata extra: [String: MetadataValue] = [:], activityType: ActivityType = .other
    )
        async throws
    {
        let chunks = try attachments.chunks()
        if let first = result.tracks.first {
            // Stored with the workout by the import that created it, unless that import stopped before.
            if try await !hasAttachments(first.workout) {
                try await store.appendSeries(chunks, toWorkout: first.workout, as: source)
            }
            return
        }
        let syncID = syncPrefix + attachments.contentHash
        if let existing = try await store.workouts(matching: WorkoutFilter(source: source, syncIdentifier: syncID))
            .first
        {
            let missing = try await !hasAttachments(existing.id)
            if missing { try await store.appendSeries(chunks, toWorkout: existing.id, as: source) }
            result.tracks.append(
                .init(workout: existing.id, route: nil, locations: 0, unchanged: !missing, resumedFrom: nil))
            return
        }
        var metadata: [String: MetadataValue] = ["gpxContent": .string("waypoints and routes")]
        metadata.merge(extra) { $1 }
        if let name = attachments.routes.first?.info.name ?? attachments.waypoints.first?.extras?.name {
            metadata["name"] = .string(name)
        }
        if let creator { metadata["gpxCreator"] = .string(creator) }
        var workout = Workout(
            activityType: activityType, start: nil, end: nil, source: source,
            sync: SyncIdentity(identifier: syncID, version: 1), metadata: metadata)
        workoutOverrides?.apply(to: &workout)
        if case .stale(let current, _) = try await store.saveWorkout(workout) {
            // Another import of the same content won the race.
            result.tracks.append(.init(workout: current, route: nil, locations: 0, unchanged: true, resumedFrom: nil))
            return
        }
        try await store.appendSeries(chunks, toWorkout: workout.id, as: source)
        result.tracks.append(.init(workout: workout.id, route: nil, locations: 0, unchanged: false, resumedFrom: nil))
    }
}

/// Values that win over a file's own for the workouts an import creates: a bulk export's index (Strava's
/// `activities.csv`) knows an activity's name and type better than its file does. A workout that was already
/// stored is left as it is.
package struct WorkoutOverrides: Sendable, Hashable {
    /// The activity type, instead of the one the file gives or suggests.
    package var activityType: ActivityType?
    /// Metadata merged over the file's (these values win).
    package var metadata: [String: MetadataValue]

    /// Creates overrides.
    package init(activityType: ActivityType? = nil, metadata: [String: MetadataValue] = [:]) {
        self.activityType = activityType
        self.metadata = metadata
    }

    /// Applies them to a workout about to be saved.
    package func apply(to workout: inout Workout) {
        if let activityType { workout.activityType = activityType }
        workout.metadata.merge(metadata) { $1 }
    }
}

/// Per-point fields stored beside the route (see ``GPXImporter``).
struct ExtrasEntry: Codable {
    /// Index in its batch.
    var i: Int
    /// The point's GPX-only fields.
    var x: GPXPointExtras?
    /// Values of a point without a time (by quantity identifier).
    var v: [String: Double]?
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

/// One track being imported.
package final class TrackImport {
    let importer: GPXImporter
    let label: String
    let startInfo: GPXPathInfo
    let creator: String?
    let allowResume: Bool
    var scan = TrackScan()
    var builder: RouteBuilder?
    var headResolved = false
    var expectedCheckpoint: String?
    var resumeCandidate: PendingBuilder?
    var resumedFrom: Int?
    var segmentStarts: [Int] = []
    var events: [WorkoutEvent] = []
    var inSegment = false
    /// The builders' origin kind (``GPXImporter/originKind`` for GPX).
    let originKind: String
    /// The sync identifier's prefix (`gpx-` for GPX).
    let syncPrefix: String
    /// Makes the workout for a sync identifier, instead of GPX's (another format's importer).
    let makeWorkout: ((SyncIdentity) -> Workout)?
    /// More route metadata (another format's).
    package var routeMetadata: [String: MetadataValue] = [:]
    /// The route's sync identity when the format gives one (HealthKit's), instead of the content-derived one: a
    /// stored route of it with an equal or higher version makes the track unchanged.
    package var syncOverride: SyncIdentity?

    package init(
        importer: GPXImporter, label: String, info: GPXPathInfo, creator: String?, allowResume: Bool,
        originKind: String = GPXImporter.originKind, syncPrefix: String = "gpx-",
        makeWorkout: ((SyncIdentity) -> Workout)? = nil
    ) {
        self.originKind = originKind
        self.syncPrefix = syncPrefix
        self.makeWorkout = makeWorkout
        self.importer = importer
        self.label = label
        self.startInfo = info
        self.creator = creator
        self.allowResume = allowResume
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

    func pause(_ t: Timestamp?, resume: Bool) {
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
        let store = importer.store
        if allowResume {
            let pending = try await store.pendingBuilders().first {
                $0.origin?.kind == originKind && $0.origin?.key == key && $0.source == importer.source
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
            store: importer.store, source: importer.source, order: .insertion,
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
            result = .success(try await RouteBuilder.resume(pending, in: importer.store))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let b): return b
        case .failure(let e) where e.code == .builderState || e.code == .notFound: throw GPXImporter.ResumeMismatch()
        case .failure(let e): throw e
        }
    }

    func verifyResume() async throws {
        guard scan.count == scan.skipUntil, let candidate = resumeCandidate, scan.hasher.state == expectedCheckpoint
        else {
            throw GPXImporter.ResumeMismatch()
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
        return Workout(
            activityType: ActivityType(guessingFrom: info.type), start: scan.first, end: scan.last,
            source: importer.source,
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
        if scan.skipUntil > count || resumeCandidate != nil { throw GPXImporter.ResumeMismatch() }
        combine(info)
        scan.hasher.combine(Int64(count))
        let store = importer.store
        let source = importer.source
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
            importer.workoutOverrides?.apply(to: &candidate)
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
                var chunks: [StoredChunk] = []
                for type in related.keys.sorted(by: { $0.identifier < $1.identifier }) {
                    let samples = (related[type] ?? []).sorted { $0.timestamp.instant < $1.timestamp.instant }
                    var s = 0
                    while s < samples.count {
                        let e = min(s + RouteBuilder.chunkSize, samples.count)
                        chunks.append(.samples(Array(samples[s..<e]), of: type, sequence: chunks.count))
                        s = e
                    }
                }
                if !chunks.isEmpty { try await store.appendSeries(chunks, toWorkout: workout.id, as: source) }
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
