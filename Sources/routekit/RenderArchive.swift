import ArgumentParser
import Foundation
import RouteKit
import RouteKitImport
import RouteKitIngest
import RouteKitRender
import RouteKitSQLite

/// `routekit render` of what only `import` reads as a whole: a zip archive, a Strava or Apple Health export, a folder.
extension Render {
    /// One route an archive, export or folder gave, in the order import reported it.
    struct ArchiveEntry {
        /// Its place among the routes, from 1 (what `--entry N` gives).
        var number: Int
        /// The file it came from as import names it (`rides.zip!2025/ride.gpx`).
        var file: String
        /// That name inside the archive, export or folder (`2025/ride.gpx`).
        var name: String
        /// The workout import made of it.
        var workout: UUID
        /// Its route: what is drawn.
        var route: UUID

        /// Whether `--entry NAME` names it: its path inside the archive, its file name, or the file as import names
        /// it.
        func isNamed(_ text: String) -> Bool {
            let fileName = name.split(whereSeparator: { $0 == "/" || $0 == "!" }).last.map(String.init) ?? name
            return text == name || text == fileName || text == file
        }
    }

    /// Whether `path` is read through the importer as a whole (a zip archive, an export folder or export.xml, a
    /// folder) rather than as one route file.
    static func readsThroughImport(_ path: String) -> Bool {
        switch RouteImporter.kind(of: path) {
        case .file(let format)?: return format == .healthExport
        case .archive?, .stravaFolder?, .healthFolder?, nil: return true
        }
    }

    /// Prints `error: text` and returns the usage error's exit (64), as ``resolveID(_:argument:_:in:)`` does.
    static func usageError(_ text: String) -> ExitCode {
        printError("error: \(text)")
        return ExitCode.validationFailure
    }

    /// A usage error (exit 64) when `--entry` is given for an input that has no entries: `what` says what it is.
    func refuseEntry(_ what: String) throws {
        guard entry != nil else { return }
        throw Self.usageError("--entry picks a route of an archive, export or folder; the input is \(what)")
    }

    /// The route `--entry` picks in `path`, imported as `routekit import` imports it (``Import/expand(_:)``, the
    /// importer with `--max-archive-entries` and `--max-entry-mb`) into a scratch store in a temporary folder of its
    /// own, which is removed when the picture's input is read (and on Ctrl-C), and drawn as a stored route is
    /// (``storedInput(_:in:)``). The archive is read as import reads it: entry by entry, never unpacked.
    func archiveInput(_ path: String) async throws -> RoutePictureInput {
        if track != nil {
            throw Self.usageError(
                "--track picks a track of a single route file; in an archive, export or folder, --entry picks the route"
            )
        }
        let (files, emptyFolders) = Import.expand([path])
        if files.isEmpty, let folder = emptyFolders.first {
            throw RouteKitError(
                .notFound, "no importable files in it (looked for \(Import.importableText))", file: folder)
        }
        let scratch = try Self.scratchFolder()
        let interrupt = Import.onInterrupt {
            try? FileManager.default.removeItem(atPath: scratch)
            _exit(exitInterrupted.rawValue)
        }
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
            try? FileManager.default.removeItem(atPath: scratch)
        }
        return try await scratchInput(files, of: path, store: scratch + "/scratch.sqlite")
    }

    /// Imports `files` into a new store at `storePath` and reads the chosen route's picture from it. The store is
    /// released when this returns, before its folder is removed.
    func scratchInput(_ files: [String], of path: String, store storePath: String) async throws -> RoutePictureInput {
        let store = try SQLiteStore(
            path: storePath, options: SQLiteStore.Options(writesOnCallingThread: true, readsOnCallingThread: true))
        let entries = try await importEntries(files, of: path, into: store)
        let chosen = try await chosenEntry(entries, of: path, in: store)
        return try await storedInput(chosen.route, in: store)
    }

    /// A folder of its own under the temporary folder, readable by its owner only.
    static func scratchFolder() throws(RouteKitError) -> String {
        let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("routekit-render-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw RouteKitError(.io, "cannot make a scratch folder for the routes to draw", file: folder)
        }
        return folder
    }

    /// Imports `files` (what `path` expanded to) into `store` and returns their routes in the order import reports
    /// them. Entries that failed are warned about; with no route at all, the first failure is the error (else: no
    /// route to draw).
    func importEntries(_ files: [String], of path: String, into store: any RouteStore) async throws(RouteKitError)
        -> [ArchiveEntry]
    {
        let importer = RouteImporter(store: store)
        importer.archiveLimits = archiveOptions.limits
        var entries: [ArchiveEntry] = []
        var failures: [RouteKitError] = []
        await importer.importPaths(files, sizes: files.map { _ in 0 }, workers: 1, progress: { _ in }) { result in
            if let error = result.error { failures.append(error.file == nil ? error.inFile(result.file) : error) }
            for track in result.tracks {
                guard let route = track.route else { continue }
                entries.append(
                    ArchiveEntry(
                        number: entries.count + 1, file: result.file, name: Self.entryName(result.file, in: path),
                        workout: track.workout, route: route))
            }
        }
        guard !entries.isEmpty else {
            throw failures.first ?? RouteKitError(.notFound, "no route to draw in it", file: path)
        }
        for failure in failures { printError("warning: not drawable: \(failure)") }
        return entries
    }

    /// `file` (as import names it) relative to the input `path`: the path inside an archive (after `path!`), or
    /// inside a folder (after `path/`, or after the folder of an export.xml).
    static func entryName(_ file: String, in path: String) -> String {
        var base = path
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        let folder = (base as NSString).deletingLastPathComponent
        for prefix in [base + "!", base + "/", folder.isEmpty ? "" : folder + "/"]
        where !prefix.isEmpty && file.hasPrefix(prefix) {
            return String(file.dropFirst(prefix.count))
        }
        return file
    }

    /// What `--entry` picks among an input's routes: one, or why none and which to list.
    enum EntryPick {
        /// The route to draw.
        case entry(ArchiveEntry)
        /// The error's text and the entries to list under it.
        case refused(String, listing: [ArchiveEntry])
    }

    /// The entry `--entry` picks, or the only one. Without `--entry` among several, an `--entry` that picks none,
    /// or a name that several have: a usage error (exit 64) listing the candidates with their dates.
    func chosenEntry(_ entries: [ArchiveEntry], of path: String, in store: any RouteStore) async throws
        -> ArchiveEntry
    {
        switch pick(entries, of: path) {
        case .entry(let chosen):
            return chosen
        case .refused(let message, let listed):
            let text = try await Self.listing(message, listed, in: store)
            throw Self.usageError(text)
        }
    }

    /// What `--entry` picks among `entries` (those of `path`).
    func pick(_ entries: [ArchiveEntry], of path: String) -> EntryPick {
        let choose = "choose one with --entry N or --entry NAME"
        guard let entry else {
            if entries.count == 1, let only = entries.first { return .entry(only) }
            return .refused("\(path) holds \(entries.count) routes: \(choose)", listing: entries)
        }
        if let n = Int(entry) {
            guard n <= entries.count else {
                return .refused("--entry \(n): \(path) holds \(entries.count) route(s); \(choose)", listing: entries)
            }
            return .entry(entries[n - 1])
        }
        let named = entries.filter { $0.isNamed(entry) }
        if named.count == 1, let only = named.first { return .entry(only) }
        if named.isEmpty {
            return .refused(
                "--entry \(entry): no route of \(path) comes from an entry so named; \(choose)", listing: entries)
        }
        return .refused(
            "--entry \(entry): \(named.count) routes come from that entry; choose one with --entry N", listing: named)
    }

    /// `message` and the entries under it (the first 20, then how many more), one a line with its number,
    /// name, start and activity.
    static func listing(_ message: String, _ entries: [ArchiveEntry], in store: any RouteStore) async throws
        -> String
    {
        var lines = [message]
        let shown = 20
        for e in entries.prefix(shown) {
            var line = "  \(e.number)  \(e.name)"
            if let workout = try await store.workout(id: e.workout) {
                var start = workout.start
                if start == nil { start = try await store.route(id: e.route)?.start }
                if let start {
                    line += "  " + String(start.iso8601.prefix(16)).replacingOccurrences(of: "T", with: " ")
                }
                line += "  \(workout.activityType.rawValue)"
            }
            lines.append(line)
        }
        if entries.count > shown { lines.append("  and \(entries.count - shown) more") }
        return lines.joined(separator: "\n")
    }
}
