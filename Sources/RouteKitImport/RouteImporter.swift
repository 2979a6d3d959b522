import Foundation
public import RouteKit
import RouteKitFIT
public import RouteKitGPX
import RouteKitGeoJSON
import RouteKitHealth
public import RouteKitIngest
import RouteKitTCX

/// Every way in, behind one call: a file's format is told by its content (GPX, FIT, TCX, GeoJSON; gzip decompressed), a zip
/// archive is read entry by entry in memory (one level of nested archives), and a Strava bulk export (an
/// archive or a folder with `activities.csv`) is imported activity by activity with the names and types of its
/// index.
///
/// Each input gives one `ImportResult` (an archive one per entry, named `archive.zip!path/in/archive`),
/// handed to `each` as it finishes.
public final class RouteImporter {
    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source
    /// Entries larger than this once inflated (as their header states), and gzip entries whose data announces more,
    /// are read as streams when they are GPX, TCX or FIT: memory stays the readers' window however large the entry.
    /// Smaller ones are inflated whole, up to this size (in one call to libdeflate, and read ahead while the entry
    /// before is stored).
    package var streamedEntryBytes = 16 << 20
    /// The limits for archives.
    public var archiveLimits = ArchiveLimits()
    /// How many entries of one archive or export are imported at once (each by an importer of its own; entries
    /// are read from the archive one at a time, results handed over in entry order).
    public var jobs = 1
    /// How GPX is read.
    package let readOptions: GPXReadOptions
    private let gpx: GPXImporter
    private let fit: FITImporter
    private let tcx: TCXImporter
    private let health: HealthImporter
    private let geojson: GeoJSONImporter

    /// Creates an importer.
    public init(store: any RouteStore, source: Source = .defaultImport, readOptions: GPXReadOptions = GPXReadOptions())
    {
        self.store = store
        self.source = source
        self.readOptions = readOptions
        self.gpx = GPXImporter(store: store, source: source, readOptions: readOptions)
        self.fit = FITImporter(store: store, source: source)
        self.tcx = TCXImporter(store: store, source: source)
        self.health = HealthImporter(store: store, source: source, routeFiles: .gpx)
        self.geojson = GeoJSONImporter(store: store, source: source)
    }

    /// What a path holds, from its content.
    package enum Kind: Sendable, Hashable {
        /// One activity file (GPX, FIT, TCX or GeoJSON, plain or gzip).
        case file(InputFile.Format)
        /// A zip archive.
        case archive
        /// A folder that is a Strava bulk export (`activities.csv` at its root).
        case stravaFolder
        /// A folder that is an Apple Health export (`export.xml` with root `HealthData`, and `workout-routes/`).
        case healthFolder
    }

    /// What `path` is; `nil` for a folder that is not an export (its files are imported one by one).
    package static func kind(of path: String) -> Kind? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            if FileManager.default.fileExists(atPath: path + "/activities.csv") { return .stravaFolder }
            return HealthImporter.isExport(path) ? .healthFolder : nil
        }
        if ZipArchive.isZip(head(of: path)) { return .archive }
        return .file((try? InputFile.format(of: path)) ?? .gpx)
    }

    /// A file's first four bytes, as stored (fewer when it is shorter or unreadable).
    private static func head(of path: String) -> [UInt8] {
        guard let stream = try? FileByteSource(path: path) else { return [] }
        var bytes = [UInt8](repeating: 0, count: 4)
        let n =
            (try? bytes.withUnsafeMutableBytes { buffer throws(RouteKitError) in try stream.read(into: buffer) }) ?? 0
        return Array(bytes.prefix(n))
    }

    /// The kind of the path named as the next one by the last ``importPath(_:readingAhead:progress:each:)``, told
    /// once.
    private var nextKind: (path: String, kind: Kind?)?

    /// ``kind(of:)``, reusing what the last call learnt of the next path.
    private func rememberedKind(of path: String) -> Kind? {
        if let known = nextKind, known.path == path { return known.kind }
        return Self.kind(of: path)
    }

    /// Imports one file or export.
    ///
    /// - Parameters:
    ///   - path: a GPX, FIT, TCX or GeoJSON file (plain or gzip), a zip archive (a Strava or Apple Health export among them),
    ///     or an export folder.
    ///   - next: the path the caller imports next, if it knows it: a GPX file is then read ahead on a thread of its
    ///     own while `path` is stored (`GPXImporter.importFile(_:readingAhead:progress:)`), so that going through a
    ///     folder keeps two cores busy with one writer.
    ///   - progress: called now and then with the bytes read (of a GPX file, or of an Apple Health export).
    ///   - each: called with each result (one per file, per archive entry or per workout of an export).
    public func importPath(
        _ path: String, readingAhead next: String? = nil, progress: ((Int) -> Void)? = nil,
        each: (ImportResult) -> Void
    ) async {
        let kind = rememberedKind(of: path)
        var gpxNext: String?
        if let next {
            let nextKind = Self.kind(of: next)
            self.nextKind = (next, nextKind)
            if case .file(.gpx)? = nextKind { gpxNext = next }
        }
        switch kind {
        case .archive?:
            do {
                let archive = try ZipArchive(path: path, limits: archiveLimits)
                if let export = ZipHealthExport.find(in: archive, path: path) {
                    // An Apple Health export.zip: progress over its export.xml, in bytes of the archive.
                    let size = Double(InputFile.status(of: path)?.size ?? 0)
                    let fraction = progress.map { progress in { (f: Double) in progress(Int(f * size)) } }
                    _ = await health.importExport(export, progress: fraction, each: each)
                } else {
                    await importArchive(archive, depth: 0, each: each)
                }
            } catch {
                each(ImportResult(file: path, status: .failed, error: error))
            }
        case .stravaFolder?:
            await importStrava(FolderFiles(root: path), each: each)
        case .healthFolder?, .file(.healthExport)?:
            _ = await health.importPath(path, progress: healthProgress(path, progress), each: each)
        case .file(.fit)?:
            each(await fit.importFile(path))
        case .file(.tcx)?:
            each(await tcx.importFile(path))
        case .file(.geojson)?:
            each(await geojson.importFile(path))
        case .file(.gpx)?, nil:
            each(await gpx.importFile(path, readingAhead: gpxNext, progress: progress))
        }
    }

    /// Progress over an export's `export.xml` (read twice) as bytes of it.
    private func healthProgress(_ path: String, _ progress: ((Int) -> Void)?) -> ((Double) -> Void)? {
        guard let progress else { return nil }
        let xml = Self.kind(of: path) == .healthFolder ? (path as NSString).appendingPathComponent("export.xml") : path
        let size = ((try? FileManager.default.attributesOfItem(atPath: xml)[.size]) as? Int) ?? 0
        return { fraction in progress(Int(fraction * Double(size))) }
    }

    /// Imports bytes held in memory (an archive's entry): gzip decompressed, the format told by content.
    public func importBytes(_ raw: [UInt8], name: String) async -> ImportResult {
        await importBytes(raw, name: name, overrides: nil, readingAhead: nil)
    }

    /// ``importBytes(_:name:)`` with workout values that win over the file's own (`nil`: none), as an export's
    /// index gives them.
    package func importBytes(_ raw: [UInt8], name: String, overrides: WorkoutOverrides?) async -> ImportResult {
        await importBytes(raw, name: name, overrides: overrides, readingAhead: nil)
    }

    /// An entry's GPX made on its reading thread, when the entry is GPX (plain or gzip, told from its first bytes);
    /// `nil` for any other format. A failure to decompress it is recorded in `failed`.
    private func gpxEntry(_ raw: [UInt8], name: String, failed: Locked<Bool>) -> GPXImporter.Entry? {
        if InputFile.isGzip(raw) {
            guard let head = InputFile.gunzipHead(raw), InputFile.format(ofHead: head) == .gpx else { return nil }
            let limit = min(archiveLimits.maxEntryBytes, streamedEntryBytes)
            // Decompressed while the entry before is read only when small (the trailer's size, a hint): two entries
            // decompressed at once must not double what an archive's limits let into memory.
            let small = InputFile.gzipSizeHint(raw, limit: limit) <= Self.readAheadBytes
            return GPXImporter.Entry(name: name, loadFirst: small) { () throws(RouteKitError) in
                do throws(RouteKitError) {
                    return try InputFile.gunzip(raw, name: name, limit: limit)
                } catch {
                    failed.withLock { $0 = true }
                    throw error
                }
            }
        }
        guard InputFile.format(ofHead: Array(raw.prefix(InputFile.headSize))) == .gpx else { return nil }
        return GPXImporter.Entry(name: name, loadFirst: true) { raw }
    }

    /// The entry read ahead by the last ``importBytes(_:name:overrides:readingAhead:)``, with its failure flag.
    private var aheadEntry: (entry: GPXImporter.Entry, failed: Locked<Bool>)?

    /// The largest decompressed entry made while the one before is still read.
    static let readAheadBytes = 64 << 20

    /// ``importBytes(_:name:overrides:)``, with the entry imported next (`next`) decompressed and parsed on a thread
    /// of its own while this one is stored, when both are GPX.
    func importBytes(
        _ raw: [UInt8], name: String, overrides: WorkoutOverrides?, readingAhead next: (bytes: [UInt8], name: String)?
    ) async -> ImportResult {
        // gzip that announces more than `streamedEntryBytes` is inflated as it is read, from memory: a small entry
        // must not become a large buffer. One that announces less is inflated whole, up to that size (a trailer that
        // lies about its size fails there).
        if InputFile.isGzip(raw), InputFile.gzipSizeHint(raw, limit: .max) > streamedEntryBytes,
            let work = Self.streamedWork(gzip: raw, name: name, overrides: overrides)
        {
            return await run(work).first ?? ImportResult(file: name, status: .unchanged)
        }
        // The entry as the last call made it to read it ahead (its reader is then the one that runs), else anew.
        let known = aheadEntry.flatMap { $0.entry.name == name ? $0 : nil }
        aheadEntry = nil
        let failed = known?.failed ?? Locked(false)
        setOverrides(overrides)
        defer { setOverrides(nil) }
        if let entry = known?.entry ?? gpxEntry(raw, name: name, failed: failed) {
            let nextFailed = Locked(false)
            let nextEntry = next.flatMap { gpxEntry($0.bytes, name: $0.name, failed: nextFailed) }
            aheadEntry = nextEntry.map { ($0, nextFailed) }
            var result = await gpx.importEntry(entry, readingAhead: nextEntry)
            // Reported alone when the entry could not be decompressed, as when it was decompressed before it was read.
            if InputFile.isGzip(raw) && !failed.withLock({ $0 }) {
                result.warnings.insert("the entry is gzip-compressed; it was decompressed in memory", at: 0)
            }
            return result
        }
        var bytes = raw
        var warnings: [String] = []
        if InputFile.isGzip(bytes) {
            // GeoJSON is read whole, up to its own limit; the other formats are inflated whole here only up to
            // `streamedEntryBytes`.
            let isGeoJSON = InputFile.gunzipHead(raw).map(InputFile.format(ofHead:)) == .geojson
            let whole = isGeoJSON ? GeoJSONReader.maxBytes : streamedEntryBytes
            do {
                bytes = try InputFile.gunzip(raw, name: name, limit: min(archiveLimits.maxEntryBytes, whole))
            } catch {
                return ImportResult(file: name, status: .failed, error: error)
            }
            warnings.append("the entry is gzip-compressed; it was decompressed in memory")
        }
        var result: ImportResult
        switch InputFile.format(ofHead: Array(bytes.prefix(4096))) {
        case .fit: result = await fit.importBytes(bytes, name: name)
        case .tcx: result = await tcx.importBytes(bytes, name: name)
        case .geojson: result = await geojson.importBytes(bytes, name: name)
        case .gpx: result = await gpx.importBytes(bytes, name: name)
        case .healthExport:
            result = ImportResult(
                file: name, status: .failed,
                error: RouteKitError(
                    .invalidArgument,
                    "an Apple Health export.xml is read from the export.zip that holds it at its root (or one folder "
                        + "down), not from inside another archive: import that export.zip, or its folder",
                    file: name))
        }
        result.warnings = warnings + result.warnings
        return result
    }

    /// Sets the workout values an export's index gives (`nil`: none) on every format's importer.
    func setOverrides(_ overrides: WorkoutOverrides?) {
        gpx.workoutOverrides = overrides
        fit.workoutOverrides = overrides
        tcx.workoutOverrides = overrides
        geojson.workoutOverrides = overrides
    }

    /// The entries of an archive that are not activity files, by reason: counted, never imported.
    static func skippable(_ path: String) -> Bool {
        let lower = path.lowercased()
        let known = [".gpx", ".fit", ".gz", ".zip", ".tcx", ".geojson"]
        return !known.contains { lower.hasSuffix($0) }
    }

    /// The work of a large entry read as a stream, its format told from its first inflated bytes; `nil` when it is
    /// neither GPX, TCX nor FIT (an archive: read whole, within the archive's limits).
    static func streamedWork(
        _ archive: ZipArchive, path: String, name: String, overrides: WorkoutOverrides? = nil, note: String? = nil
    ) -> Work? {
        do throws(RouteKitError) {
            let probe = try archive.reader(of: path, again: true)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: InputFile.headSize, alignment: 1)
            defer { buffer.deallocate() }
            var filled = 0
            while filled < buffer.count {
                let n = try probe.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                if n == 0 { break }
                filled += n
            }
            let head = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
            let gzip = InputFile.isGzip(head)
            guard let plain = gzip ? InputFile.gunzipHead(head) : head else { return nil }
            let format = InputFile.format(ofHead: plain)
            guard Self.streams(format) else { return nil }
            return .streamed(
                name: name, format: format, gzip: gzip, open: try archive.opener(of: path), overrides: overrides,
                note: note)
        } catch {
            return .done([ImportResult(file: name, status: .failed, error: error)])
        }
    }

    /// Whether entries of `format` can be read as a stream (an Apple Health `export.xml` inside an archive cannot).
    static func streams(_ format: InputFile.Format) -> Bool { format == .gpx || format == .tcx || format == .fit }

    /// The work of gzip data held in memory read as a stream (`nil` when its format cannot be streamed).
    static func streamedWork(gzip raw: [UInt8], name: String, overrides: WorkoutOverrides?) -> Work? {
        guard let head = InputFile.gunzipHead(raw) else { return nil }
        let format = InputFile.format(ofHead: head)
        guard Self.streams(format) else { return nil }
        return .streamed(
            name: name, format: format, gzip: true, open: { () throws(RouteKitError) in MemoryByteSource(raw) },
            overrides: overrides, note: nil)
    }

    /// Imports an archive: a Strava export when it holds `activities.csv`, else every activity file in it.
    package func importArchive(_ archive: ZipArchive, depth: Int, each: (ImportResult) -> Void) async {
        if let index = archive.paths.first(where: { $0 == "activities.csv" || $0.hasSuffix("/activities.csv") }),
            index.split(separator: "/").count <= 2
        {
            let prefix = String(index.dropLast("activities.csv".count))
            await importStrava(ArchiveFiles(archive: archive, prefix: prefix), each: each)
            return
        }
        var skipped = 0
        let paths = archive.paths.filter { path in
            if Self.skippable(path) { skipped += 1 }
            return !Self.skippable(path)
        }
        guard !paths.isEmpty else {
            // Nothing in it to import (a document's zip, an empty archive): a failure, said as such, not a success
            // that stored nothing.
            let e = RouteKitError(
                .unsupportedFormat,
                "not a route file: a zip archive with no GPX, FIT, TCX or GeoJSON file in it (\(skipped) "
                    + "entr\(skipped == 1 ? "y" : "ies"))", file: archive.name)
            each(ImportResult(file: archive.name, status: .failed, error: e))
            return
        }
        await inOrder(paths.count, each: each) { n in
            let path = paths[n]
            let name = "\(archive.name)!\(path)"
            if let size = archive.size(of: path), size > streamedEntryBytes,
                let streamed = Self.streamedWork(archive, path: path, name: name)
            {
                return streamed
            }
            let bytes: [UInt8]
            do throws(RouteKitError) {
                bytes = try archive.contents(of: path)
            } catch {
                return .done([ImportResult(file: name, status: .failed, error: error)])
            }
            guard ZipArchive.isZip(bytes.prefix(4)) else { return .entry(bytes, name: name, overrides: nil, note: nil) }
            guard depth == 0 else {
                let e = RouteKitError(
                    .compression, "an archive inside an archive inside an archive is not read", file: name)
                return .done([ImportResult(file: name, status: .failed, error: e)])
            }
            var results: [ImportResult] = []
            do throws(RouteKitError) {
                let inner = try ZipArchive(bytes: bytes, name: name, limits: archiveLimits)
                // An importer of its own: this one may be reading the outer archive's next entry ahead.
                let nested = RouteImporter(store: store, source: source, readOptions: readOptions)
                nested.archiveLimits = archiveLimits
                nested.streamedEntryBytes = streamedEntryBytes
                nested.jobs = jobs
                await nested.importArchive(inner, depth: depth + 1) { results.append($0) }
            } catch {
                results.append(ImportResult(file: name, status: .failed, error: error))
            }
            return .done(results)
        }
        if skipped > 0 {
            each(
                ImportResult(
                    file: archive.name, status: .unchanged,
                    warnings: [
                        "\(skipped) entr\(skipped == 1 ? "y" : "ies") that are not GPX, FIT, TCX, GeoJSON or archives skipped"
                    ]
                ))
        }
    }
}

/// One unit of an archive's or export's work, prepared in order on the calling task.
enum Work: Sendable {
    /// Bytes to import (told by content), with the workout values of an export's index and a warning to add.
    case entry([UInt8], name: String, overrides: WorkoutOverrides?, note: String?)
    /// A planned route (Strava's `routes/`).
    case plannedRoute([UInt8], name: String)
    /// Already done (an error, a manual activity, a nested archive).
    case done([ImportResult])
    /// A large GPX, TCX or FIT entry (plain or gzip), read as a stream from the readers `open` makes, with the
    /// workout values of an export's index and a warning to add.
    case streamed(
        name: String, format: InputFile.Format, gzip: Bool,
        open: @Sendable () throws(RouteKitError) -> any ByteSource,
        overrides: WorkoutOverrides?, note: String?)
    /// A large file of an export folder, imported from its path as a file is (streamed), with the workout values of
    /// the export's index and a warning to add.
    case file(path: String, overrides: WorkoutOverrides?, note: String?)
}

extension RouteImporter {
    /// Prepares items 0..<count one at a time, in order (`prepare` reads the archive, which is not shared), and
    /// imports up to ``jobs`` of them at once, each with an importer of its own; `each` gets the results in item
    /// order, whatever order they finish in.
    func inOrder(_ count: Int, each: (ImportResult) -> Void, prepare: (Int) async -> Work) async {
        if jobs <= 1 {
            // One at a time, each item prepared before the one before it is imported: a GPX entry is then
            // decompressed and parsed on a thread of its own while the one before it is stored.
            var current = count > 0 ? await prepare(0) : nil
            var n = 0
            while let work = current {
                n += 1
                let next = n < count ? await prepare(n) : nil
                await run(work, readingAhead: next).forEach(each)
                current = next
            }
            return
        }
        let store = self.store
        let source = self.source
        let options = self.readOptions
        let limits = self.archiveLimits
        let streamed = self.streamedEntryBytes
        await withTaskGroup(of: (Int, [ImportResult]).self) { group in
            var next = 0
            var waiting: [Int: [ImportResult]] = [:]
            var handed = 0
            func hand(_ n: Int, _ results: [ImportResult]) {
                waiting[n] = results
                while let ready = waiting.removeValue(forKey: handed) {
                    ready.forEach(each)
                    handed += 1
                }
            }
            while next < count || handed < count {
                var running = next - handed - waiting.count
                while next < count && running < jobs {
                    let n = next
                    next += 1
                    let work = await prepare(n)
                    if case .done(let results) = work {
                        hand(n, results)
                        continue
                    }
                    running += 1
                    group.addTask {
                        let worker = RouteImporter(store: store, source: source, readOptions: options)
                        worker.archiveLimits = limits
                        worker.streamedEntryBytes = streamed
                        return (n, await worker.run(work))
                    }
                }
                guard let (n, results) = await group.next() else { break }
                hand(n, results)
            }
        }
    }

    /// Does one unit of work; `next` is the one done after it, read ahead when both are GPX entries.
    func run(_ work: Work, readingAhead next: Work? = nil) async -> [ImportResult] {
        switch work {
        case .entry(let bytes, let name, let overrides, let note):
            var ahead: (bytes: [UInt8], name: String)?
            if case .entry(let b, let n, _, _)? = next { ahead = (b, n) }
            var result = await importBytes(bytes, name: name, overrides: overrides, readingAhead: ahead)
            if let note { result.warnings.append(note) }
            return [result]
        case .plannedRoute(let bytes, let name): return [await importPlannedRoute(bytes, name: name)]
        case .done(let results): return results
        case .file(let path, let overrides, let note):
            var result: ImportResult
            setOverrides(overrides)
            switch Self.kind(of: path) {
            case .file(.fit)?: result = await fit.importFile(path)
            case .file(.tcx)?: result = await tcx.importFile(path)
            case .file(.geojson)?: result = await geojson.importFile(path)
            default: result = await gpx.importFile(path, readingAhead: nil, progress: nil)
            }
            setOverrides(nil)
            if let note { result.warnings.append(note) }
            return [result]
        case .streamed(let name, let format, let gzip, let open, let overrides, let note):
            setOverrides(overrides)
            defer { setOverrides(nil) }
            var result: ImportResult
            // The entry opened, gzip inside it inflated as it streams.
            let limit = archiveLimits.maxEntryBytes
            let inflated = { () throws(RouteKitError) -> StreamingFile in
                let reader = try open()
                return StreamingFile(name: name, limit: limit) {
                    (b: UnsafeMutableRawBufferPointer) throws(RouteKitError) in try reader.read(into: b)
                }
            }
            if format == .fit {
                // Opened again for each of the importer's passes.
                result = await fit.importInput(FITInput { () throws(RouteKitError) in try inflated() }, name: name)
            } else if format == .tcx {
                do throws(RouteKitError) {
                    let stream = try inflated()
                    result = await tcx.importStream(name: name) {
                        (b: UnsafeMutableRawBufferPointer) throws(RouteKitError) in
                        try stream.read(into: b)
                    }
                } catch {
                    result = ImportResult(file: name, status: .failed, error: error)
                }
            } else {
                result = await gpx.importEntry(
                    GPXImporter.Entry(name: name, streaming: { () throws(RouteKitError) in try open() }),
                    readingAhead: nil)
            }
            if gzip {
                result.warnings.insert("the entry is gzip-compressed; it was decompressed as it was read", at: 0)
            }
            if let note { result.warnings.append(note) }
            return [result]
        }
    }
}

/// The files of a bulk export: a folder or an archive.
protocol ExportFiles {
    /// The export's name (folder or archive path).
    var name: String { get }
    /// The name of a file in results (`export.zip!activities/1.gpx`, `export/activities/1.gpx`).
    func label(_ path: String) -> String
    /// Whether the export has this file.
    func contains(_ path: String) -> Bool
    /// The file's bytes (as stored: gzip stays gzip).
    func contents(of path: String) throws(RouteKitError) -> [UInt8]
    /// Files whose path starts with `folder/`.
    func files(in folder: String) -> [String]
    /// The work of a file larger than `bytes`, read as a stream instead of whole; `nil` for a smaller file (or one
    /// that cannot be streamed), which ``contents(of:)`` reads.
    func streamedWork(_ path: String, above bytes: Int, overrides: WorkoutOverrides?, note: String?) -> Work?
}

struct FolderFiles: ExportFiles {
    let root: String
    var name: String { root }
    func label(_ path: String) -> String { (root as NSString).appendingPathComponent(path) }
    func contains(_ path: String) -> Bool { FileManager.default.fileExists(atPath: label(path)) }
    func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: label(path)) else {
            throw RouteKitError(.io, "cannot read the file", file: label(path))
        }
        return Array(data)
    }
    func files(in folder: String) -> [String] {
        let dir = label(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.sorted().map { folder + "/" + $0 }
    }
    func streamedWork(_ path: String, above bytes: Int, overrides: WorkoutOverrides?, note: String?) -> Work? {
        guard let size = InputFile.status(of: label(path))?.size, size > bytes else { return nil }
        return .file(path: label(path), overrides: overrides, note: note)
    }
}

struct ArchiveFiles: ExportFiles {
    let archive: ZipArchive
    /// The folder the export sits in inside the archive (`export_123/`), or empty.
    let prefix: String
    var name: String { archive.name }
    func label(_ path: String) -> String { "\(archive.name)!\(prefix)\(path)" }
    func contains(_ path: String) -> Bool { archive.contains(prefix + path) }
    func contents(of path: String) throws(RouteKitError) -> [UInt8] { try archive.contents(of: prefix + path) }
    func files(in folder: String) -> [String] {
        archive.paths.filter { $0.hasPrefix(prefix + folder + "/") }.map { String($0.dropFirst(prefix.count)) }
    }
    func streamedWork(_ path: String, above bytes: Int, overrides: WorkoutOverrides?, note: String?) -> Work? {
        guard let size = archive.size(of: prefix + path), size > bytes else { return nil }
        return RouteImporter.streamedWork(
            archive, path: prefix + path, name: label(path), overrides: overrides, note: note)
    }
}
