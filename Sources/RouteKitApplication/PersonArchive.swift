package import Foundation
package import RouteKit
internal import RouteKitGPX
internal import ZIPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Everything one person has, as one zip file (`routekit export --person … --archive FILE.zip`, `GET /v1/export`):
/// data portability, written by one function for both doors.
///
/// The store object given is the person's view (`RouteStore.forPerson(_:)`): the archive holds what that view
/// lists, every current workout (`RouteStore.workouts(matching:)`) with
///
/// - `workouts/<workout>/workout.json`: the workout (``ArchivedWorkoutJSON``: as `GET /v1/workouts/ID` shows it, its
///   routes and series with the entries that hold them, its effort scores, the zone settings saved with it);
/// - `workouts/<workout>/route-<route>.gpx`: each current route version as GPX 1.1 with extensions, written by the
///   export every door uses (``StoreExport``: the workout's series merged into the points, the fields the importer
///   kept, and in the first route's file the workout's waypoints and planned routes). RouteKit keeps no FIT, TCX or
///   GeoJSON file, only what was read from it, so every route is GPX;
/// - `workouts/<workout>/attachments.gpx`: a workout's waypoints and planned routes when it has no route to carry
///   them;
/// - `workouts/<workout>/series/<type>.ndjson`: each quantity series, one `{"time", "value"}` object a line
///   (``SampleJSON/line(_:)``, the lines of `GET /v1/workouts/ID/series/TYPE`);
///
/// and last `manifest.json` (``PersonArchiveManifestJSON``): the format and its version, the store, the person, when,
/// the release, counts, and every other entry with its kind, object, size and CRC-32. The checksum is CRC-32, the zip
/// format's own, because no SHA-256 is available to this module without a new dependency (swift-crypto is built only
/// with the `Server` trait): it finds damage, not tampering.
///
/// Memory stays bounded by one entry's writer, never the archive or a whole route: each GPX or NDJSON entry is
/// written to a scratch file (created beside the archive and unlinked at once: only its open descriptors keep it), then
/// deflated into the archive through ZIPFoundation's provider closure a buffer at a time. What is held whole is what
/// the existing exporters hold (a workout's series, to merge them into its points), the list of workouts with their
/// routes (the plan, for the progress total), and the manifest's entries.
package enum PersonArchive {
    /// The version of the archive's layout, in the manifest's `formatVersion`; raised when an entry changes meaning.
    package static let formatVersion = 1

    /// The manifest's `routeFormat`: every route is GPX 1.1 with extensions.
    package static let routeFormat = "gpx-1.1"

    /// The manifest's `notes`: what a reader should know about the entries.
    package static let notes = [
        "Every route is GPX 1.1 (routeFormat gpx-1.1): heart rate, cadence, temperatures, depth, speed and course as "
            + "Garmin TrackPointExtension v2, power as Garmin PowerExtension v1, accuracies in RouteKit's namespace "
            + "(https://routekit.dev/xmlns/gpx/v1). RouteKit keeps what it read from a file, not the file: a route "
            + "imported from FIT, TCX or GeoJSON is GPX here too.",
        "A workout's series are merged into its routes' points by time in the GPX files, and are whole in "
            + "series/<type>.ndjson, one {\"time\", \"value\"} object a line, in time order.",
        "crc32 is the zip format's own checksum (CRC-32) of an entry's uncompressed bytes: it finds damage, not "
            + "tampering.",
        "manifest.json is the archive's last entry and lists every other entry, in the order they were written.",
    ]

    /// Workouts asked for a page at a time while the archive is planned.
    static let pageSize = 500

    /// Writes the archive of what `store` (a person's view) holds to `path`, a new file (a temporary one, which the
    /// caller moves into place, or streams and deletes).
    ///
    /// - Parameters:
    ///   - store: The person's view of the store.
    ///   - path: Where the zip is written; no file may be there.
    ///   - readableSources: Only objects of these sources (an API token that may read only some), `nil` for all: a
    ///     workout of another source is left out with everything of it, and so is a route or an effort score of
    ///     another source. What a token's scopes allow is the store's: a view narrowed to an API token's grant
    ///     (`readGrant`) gives no routes without `read:routes` (and `null` route and location counts in its
    ///     workouts), no effort scores without `read:effort`, and only the series, point values and zone settings of
    ///     the quantity types it may read.
    ///   - routekitVersion: The release named in the manifest.
    ///   - created: The manifest's `created`, and every entry's modification time.
    ///   - scratch: The scratch file's path (see ``PersonArchive``); `path` + `.entry` by default.
    ///   - progress: Called with the entries written so far and the total (the manifest included), from 0 to the
    ///     total.
    /// - Returns: The manifest's counts.
    /// - Throws: `RouteKitError.Code.storageFull` when the disk under `path` fills up, `RouteKitError.Code.io` for
    ///   other file failures (naming the file or the entry), and the store's errors. The caller removes `path`.
    package static func write(
        from store: any RouteStore, to path: String, readableSources: Set<Source>? = nil,
        routekitVersion: String = RouteKitRelease.version, created: Date = Date(), scratch: String? = nil,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws(RouteKitError) -> PersonArchiveManifestJSON.Counts {
        do throws(RouteKitError) {
            let plan = try await Self.plan(store, readableSources: readableSources)
            let zip = try ZipWriter(path: path, scratch: scratch ?? path + ".entry", date: created)
            let run = ArchiveRun(
                store: store, zip: zip, readableSources: readableSources,
                total: plan.reduce(1) { $0 + $1.entryCount }, progress: progress)
            progress(0, run.total)
            for item in plan { try await run.write(item) }
            run.counts.entries = zip.entries.count + 1
            let manifest = PersonArchiveManifestJSON(
                formatVersion: formatVersion, routekitVersion: routekitVersion, store: store.storeID,
                person: store.person, created: created, routeFormat: routeFormat, notes: notes,
                sources: readableSources, counts: run.counts, entries: zip.entries)
            _ = try zip.add("manifest.json", bytes: try Self.json(manifest, "the manifest"))
            run.step()
            return run.counts
        } catch {
            throw Self.classified(error, path: path)
        }
    }

    // MARK: The plan

    /// One workout to archive: what it has, listed before anything is written (the total the progress counts to).
    struct PlannedWorkout {
        var workout: Workout
        /// Its current routes that may be read.
        var routes: [RouteSample]
        /// The types it has series of.
        var series: [QuantityType]
        /// Whether it has waypoints or planned routes but no route to carry them.
        var attachmentsAlone: Bool

        /// Its entries: `workout.json`, a GPX per route, an NDJSON per series, the attachments' GPX.
        var entryCount: Int { 1 + routes.count + series.count + (attachmentsAlone ? 1 : 0) }
    }

    /// What `store` holds for the archive: every current workout that may be read, oldest saved first, with its
    /// routes, its series' types and whether it has attachments alone.
    static func plan(_ store: any RouteStore, readableSources: Set<Source>?) async throws(RouteKitError)
        -> [PlannedWorkout]
    {
        // What the store's reader may read (an API token's grant): no workouts, no archive; no routes, no route files
        // (nor waypoints and planned routes). Its series are those of the types it may read already.
        let grant = store.readGrant
        guard grant.mayRead(.workouts) else { return [] }
        let readsRoutes = grant.mayRead(.routes)
        var out: [PlannedWorkout] = []
        for workout in try await allWorkouts(store) where readableSources?.contains(workout.source) ?? true {
            var routes: [RouteSample] = []
            if readsRoutes {
                routes = try await store.routes(matching: RouteFilter(workout: workout.id)).filter {
                    readableSources?.contains($0.source) ?? true
                }
            }
            var attachmentsAlone = false
            if routes.isEmpty && readsRoutes {
                let attachments = try await store.attachments(ofWorkout: workout.id)
                defer { attachments.close() }
                attachmentsAlone = try await attachments.next() != nil
            }
            let series = try await store.seriesTypes(ofWorkout: workout.id)
            out.append(
                PlannedWorkout(workout: workout, routes: routes, series: series, attachmentsAlone: attachmentsAlone))
        }
        return out
    }

    /// Every current workout of `store`, oldest saved first, a page at a time (keyset paging). When the last workout
    /// of a page is gone before the next page is read (deleted or replaced meanwhile), the rest comes from one listing
    /// of the whole store, without the workouts already listed.
    static func allWorkouts(_ store: any RouteStore) async throws(RouteKitError) -> [Workout] {
        var out: [Workout] = []
        var seen: Set<UUID> = []
        var after: UUID?
        while true {
            let page = try await store.workouts(matching: WorkoutFilter(limit: pageSize, after: after))
            for w in page {
                if seen.insert(w.id).inserted { out.append(w) }
            }
            if page.count == pageSize, let last = page.last {
                after = last.id
                continue
            }
            if page.isEmpty, let cursor = after, try await store.workout(id: cursor) == nil {
                for w in try await store.workouts(matching: WorkoutFilter()) {
                    if seen.insert(w.id).inserted { out.append(w) }
                }
            }
            return out
        }
    }

    // MARK: Helpers

    /// `value` as JSON (sorted keys, indented, slashes unescaped, a final line end); a number that is not finite, which
    /// JSON cannot hold, as the string `NaN`, `Infinity` or `-Infinity`.
    static func json(_ value: some Encodable, _ what: String) throws(RouteKitError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        do {
            return Array(try encoder.encode(value)) + [0x0A]
        } catch {
            throw RouteKitError(.invalidValue, "\(what) cannot be written as JSON")
        }
    }

    /// `error`, as `RouteKitError.Code.storageFull` when it is a file failure and the disk under `path` has less
    /// than 1 MiB left (a full disk is the server's, not the request's: 507).
    static func classified(_ error: RouteKitError, path: String) -> RouteKitError {
        guard error.code == .io else { return error }
        let folder = (path as NSString).deletingLastPathComponent
        guard let free = DiskSpace.available(in: folder.isEmpty ? "." : folder), free < 1 << 20 else { return error }
        return RouteKitError(
            .storageFull, "the disk under the archive is full (\(free) bytes free): \(error.message)", file: error.file)
    }
}

/// One archive being written: the store read, the zip written, the counts and the progress.
private final class ArchiveRun {
    let store: any RouteStore
    let zip: ZipWriter
    let readableSources: Set<Source>?
    let total: Int
    let progress: @Sendable (Int, Int) -> Void
    var done = 0
    var counts = PersonArchiveManifestJSON.Counts()

    init(
        store: any RouteStore, zip: ZipWriter, readableSources: Set<Source>?, total: Int,
        progress: @escaping @Sendable (Int, Int) -> Void
    ) {
        self.store = store
        self.zip = zip
        self.readableSources = readableSources
        self.total = total
        self.progress = progress
    }

    /// One more entry is done (written, or skipped because its object was gone).
    func step() {
        done += 1
        progress(min(done, total), total)
    }

    func mayRead(_ source: Source) -> Bool { readableSources?.contains(source) ?? true }

    /// Writes one workout's entries: its routes, its attachments when it has no route, its series, then
    /// `workout.json` (which names them, with the series' sample counts).
    func write(_ item: PersonArchive.PlannedWorkout) async throws(RouteKitError) {
        let workout = item.workout
        let folder = "workouts/\(workout.id.lowercaseText)"
        let store = self.store

        var routes: [(route: RouteSample, file: String)] = []
        for (n, route) in item.routes.enumerated() {
            let file = "\(folder)/route-\(route.id.lowercaseText).gpx"
            // The workout's waypoints and planned routes go in its first route's file, as `routekit export WORKOUT`
            // writes them.
            let attachments: UUID? = n == 0 ? workout.id : nil
            do throws(RouteKitError) {
                let written = try await zip.addStreamed(file) { (sink: OutputSink) async throws(RouteKitError) in
                    try await StoreExport.write(
                        [route], attachmentsOf: attachments, from: store, as: .gpx, to: sink)
                }
                zip.record(file, kind: "route", object: route.id, workout: workout.id, quantity: nil, written)
                routes.append((route, file))
                counts.routes += 1
                counts.locations += route.locationCount
            } catch  where error.code == .notFound {
                // Deleted or replaced since the plan listed it.
                counts.skipped += 1
            }
            step()
        }

        var attachmentsFile: String?
        if item.attachmentsAlone {
            let file = "\(folder)/attachments.gpx"
            let written = try await zip.addStreamed(file) { (sink: OutputSink) async throws(RouteKitError) in
                try await StoreExport.write([], attachmentsOf: workout.id, from: store, as: .gpx, to: sink)
            }
            zip.record(file, kind: "attachments", object: workout.id, workout: workout.id, quantity: nil, written)
            attachmentsFile = file
            step()
        }

        var series: [ArchivedWorkoutJSON.Series] = []
        for type in item.series {
            let file = "\(folder)/series/\(type.identifier).ndjson"
            var samples = 0
            var first: Timestamp?
            var last: Timestamp?
            let written = try await zip.addStreamed(file) { (sink: OutputSink) async throws(RouteKitError) in
                for try await batch in store.samples(of: type, workout: workout.id, batchSize: 4_096) {
                    for s in batch.samples {
                        sink.write(SampleJSON.line(s))
                        if first == nil { first = s.timestamp }
                        last = s.timestamp
                    }
                    samples += batch.samples.count
                    try sink.maybeFlush()
                }
            }
            zip.record(file, kind: "series", object: workout.id, workout: workout.id, quantity: type, written)
            series.append(
                ArchivedWorkoutJSON.Series(type: type, samples: samples, start: first, end: last, file: file))
            counts.series += 1
            counts.samples += samples
            step()
        }

        // A workout deleted since the plan still has its document (from what the plan read): no scores, no settings.
        var efforts: [EffortScore] = []
        var zoneSettings = ZoneSettings()
        do throws(RouteKitError) {
            let grant = store.readGrant
            if grant.mayRead(.effort) {
                efforts = try await store.efforts(ofWorkout: workout.id).filter { mayRead($0.source) }
            }
            zoneSettings = grant.redacted(try await store.zoneSettings(ofWorkout: workout.id))
        } catch  where error.code == .notFound {}
        let archived = routes.map { $0.route }
        let figures: WorkoutFigures?
        do {
            figures = try await WorkoutFigures.of([(workout, archived)], in: store)[workout.id]
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw RouteKitError(.storage, "cannot read the figures of workout \(workout.id.lowercaseText)")
        }
        let document = ArchivedWorkoutJSON(
            workout: WorkoutJSON(
                workout, routes: archived, figures: figures, countingRoutes: store.readGrant.mayRead(.routes)),
            routes: routes.map { ArchivedWorkoutJSON.Route(route: RouteJSON($0.route), file: $0.file) },
            series: series, effort: WorkoutEffortJSON(efforts),
            zoneSettings: zoneSettings.isEmpty ? nil : ZoneSettingsJSON(zoneSettings), attachments: attachmentsFile)
        let file = "\(folder)/workout.json"
        let bytes = try PersonArchive.json(document, "workout \(workout.id.lowercaseText)")
        let crc = try zip.add(file, bytes: bytes)
        zip.record(
            file, kind: "workout", object: workout.id, workout: workout.id, quantity: nil, (Int64(bytes.count), crc))
        counts.workouts += 1
        counts.efforts += efforts.count
        step()
    }
}

/// A zip file written entry by entry with ZIPFoundation, each entry deflated from a provider closure a buffer at a
/// time, with the manifest's record of each.
private final class ZipWriter {
    /// The buffer ZIPFoundation reads and deflates with.
    static let bufferSize = 64 * 1024

    private let archive: Archive
    /// The zip's path, for errors.
    let path: String
    /// Where an entry is written before it is added (unlinked as soon as it is opened).
    let scratch: String
    /// Every entry's modification time.
    let date: Date
    /// The entries added and recorded, in order.
    private(set) var entries: [PersonArchiveManifestJSON.Entry] = []

    init(path: String, scratch: String, date: Date) throws(RouteKitError) {
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        } catch {
            throw RouteKitError(.io, "cannot create the archive (\(error))", file: path)
        }
        // Everything a person has: readable by its owner alone, whatever the umask.
        _ = chmod(path, 0o600)
        self.path = path
        self.scratch = scratch
        self.date = date
    }

    /// Records an entry for the manifest.
    func record(
        _ name: String, kind: String, object: UUID, workout: UUID, quantity: QuantityType?,
        _ written: (bytes: Int64, crc: UInt32)
    ) {
        entries.append(
            PersonArchiveManifestJSON.Entry(
                path: name, kind: kind, object: object, workout: workout, quantity: quantity, bytes: written.bytes,
                crc32: written.crc))
    }

    /// Adds `bytes` (held in memory: a small document) as `name`; returns their CRC-32.
    func add(_ name: String, bytes: [UInt8]) throws(RouteKitError) -> UInt32 {
        try add(name, size: Int64(bytes.count)) { position, count in
            let start = min(bytes.count, Int(clamping: position))
            let end = min(bytes.count, start + count)
            return Data(bytes[start..<end])
        }
    }

    /// Writes an entry with `body` to the scratch file, then adds that file as `name`; returns its size and CRC-32.
    /// The scratch file is unlinked as soon as it is opened twice (to be written and read back), so nothing of it
    /// stays behind, whatever happens next.
    func addStreamed(
        _ name: String, _ body: (OutputSink) async throws(RouteKitError) -> Void
    ) async throws(RouteKitError) -> (bytes: Int64, crc: UInt32) {
        let sink = try OutputSink(path: scratch)
        let fd = open(scratch, O_RDONLY | O_CLOEXEC)
        let openError = errno
        unlink(scratch)
        guard fd >= 0 else {
            throw RouteKitError(
                .io, "cannot read back the archive's scratch file: \(String(cString: strerror(openError)))",
                file: scratch)
        }
        defer { _ = close(fd) }
        try await body(sink)
        try sink.close()
        // Its size: where its end is (reads below are positioned, `pread`, so the offset does not matter).
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else {
            throw RouteKitError(
                .io, "cannot size the archive's scratch file: \(String(cString: strerror(errno)))", file: scratch)
        }
        let size = Int64(end)
        let crc = try add(name, size: size) { position, count in
            try Self.readBack(fd, count: count, at: position, entry: name)
        }
        return (size, crc)
    }

    /// Adds an entry of `size` bytes that `provide` gives a range at a time (ZIPFoundation asks for them in order),
    /// deflated; returns their CRC-32.
    private func add(
        _ name: String, size: Int64, provide: (_ position: Int64, _ count: Int) throws -> Data
    ) throws(RouteKitError) -> UInt32 {
        var crc: CRC32 = 0
        do {
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: size, modificationDate: date,
                compressionMethod: .deflate, bufferSize: Self.bufferSize
            ) { position, count in
                let chunk = try provide(position, count)
                crc = chunk.crc32(checksum: crc)
                return chunk
            }
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw RouteKitError(.io, "cannot add \(name) to the archive (\(error))", file: path)
        }
        return crc
    }

    /// `count` bytes of the file `fd` from `offset`.
    private static func readBack(_ fd: Int32, count: Int, at offset: Int64, entry: String) throws(RouteKitError)
        -> Data
    {
        var data = Data(count: count)
        var filled = 0
        while filled < count {
            let n = data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(fd, base + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw RouteKitError(
                    .io, "cannot read back \(entry) to archive it: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw RouteKitError(.io, "\(entry) ended early while it was archived") }
            filled += n
        }
        return data
    }
}
