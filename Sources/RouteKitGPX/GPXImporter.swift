import Foundation
public import RouteKit
public import RouteKitIngest

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
/// - **The file's `<metadata>`** (name, description, author, copyright, links, time, keywords, bounds, extensions)
///   is kept in the metadata of each workout the file makes, under `gpxMetadata` (`GPXMetadataStorage` in
///   RouteKitIngest), and written back as `<metadata>` by an export of the workout or of one of its routes. It is
///   not part of a track's identity.
/// - **Waypoints and `<rte>` routes** are stored as attachments of the workout of the file's first track
///   (`GPXAttachments`); a file with only waypoints and routes becomes a workout without a route, of activity
///   `other`, identified by their content, that holds them.
/// - **Oddities** are recorded in the route's metadata, never fixed: `timeWentBackwards`, `duplicateTimes`,
///   `locationsWithoutTime` (counts).
public final class GPXImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "gpx-import"

    /// The store, the source and the workout overrides the import writes with.
    package let context: ImportContext
    /// How files are read (``GPXReadOptions/skipInvalidPoints``…). Skipped points are not part of a track's
    /// content; a file that needed `skipInvalidPoints` needs it again to be re-imported or resumed (without it,
    /// the file fails at its first out-of-range point).
    package let readOptions: GPXReadOptions

    /// Creates an importer.
    public init(store: any RouteStore, source: Source = .defaultImport, readOptions: GPXReadOptions = GPXReadOptions())
    {
        self.context = ImportContext(store: store, source: source)
        self.readOptions = readOptions
    }

    package typealias ResumeMismatch = TrackImport.ResumeMismatch

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
    /// Strava's `activities.csv`, names and types its activities): the context's.
    package var workoutOverrides: WorkoutOverrides? {
        get { context.workoutOverrides }
        set { context.workoutOverrides = newValue }
    }

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
        .malformedXML, .invalidGPX, .invalidValue, .unsupportedEncoding, .unsupportedFormat, .compression, .io,
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
        // The file's <metadata>, kept with the workouts it makes (GPXMetadataStorage).
        var documentMetadata: [String: MetadataValue] = [:]
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
                case .metadata(let m):
                    documentMetadata[GPXMetadataStorage.key] = GPXMetadataStorage.value(m)
                case .waypoint(let p):
                    result.waypoints += 1
                    attachments.add(waypoint: p)
                case .routeStart(let info): attachments.startRoute(info)
                case .routePoints(let p): attachments.add(routePoints: p)
                case .routeEnd(let info): attachments.endRoute(info)
                case .trackStart(let info):
                    let started = TrackImport(
                        context: context, label: absolutePath, info: info, creator: creator,
                        allowResume: allowResume, originKind: Self.originKind, syncPrefix: "gpx-")
                    started.workoutMetadata = documentMetadata
                    track = started
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
                try await context.store(
                    attachments, creator: creator, into: &result, syncPrefix: "gpx-", metadata: documentMetadata)
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
}
