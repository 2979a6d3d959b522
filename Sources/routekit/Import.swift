import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitImport
import RouteKitIngest
@_spi(RouteKitInternals) import RouteKitProcessing
import RouteKitSQLite

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import GPX, FIT, TCX and GeoJSON files, zip archives, Strava and Apple Health exports and folders into the store.",
        discussion: """
            A file's format is told by its content, not its name; gzip-compressed files are decompressed.

            GPX: each <trk> becomes a workout with one route holding every <trkpt> in file order; heart rate, \
            cadence, temperature and power become series of the workout; segments become workout segments; \
            an empty <trk> becomes a workout without a route (with a warning).

            FIT: an activity file becomes a workout (its session's sport, start, elapsed time, distance); \
            its records with a position become the route, and heart rate, cadence, power and temperature of \
            every record become series; timer stops and starts become pauses, laps become lap events. A \
            multisport file (several sessions: swim, transition, bike, run) is one workout whose activities are \
            its sessions, each with its sport, times and totals (the summary says "a workout of N activities"); \
            its type is multisport when the sports differ. A course \
            file becomes a workout of its own the same way (its route, its series, its course points as \
            waypoints; metadata course true, its name and sport). A damaged file (bad CRC, unfinished, truncated) is read to its last \
            complete message, with a warning. Other FIT file types (settings, monitoring…) are refused.

            TCX: each Activity becomes a workout (its Sport, its Id as start, its laps' time, distance and \
            calories summed, the device's name), and a MultiSportSession one workout whose activities are its \
            Activities; trackpoints with a position become the route (with altitude and \
            speed), and heart rate, cadence and power of every trackpoint with a time become series (trackpoints \
            without a position feed the series only); laps become segments, and a new Track within a lap a \
            pause. A Course becomes a workout of its own the same way (its route and series; its CoursePoints \
            waypoints; metadata course true and its name). Whitespace or a byte order mark \
            before <?xml (Strava) is skipped with a warning. Not kept: per-point distance, lap averages and \
            maxima, notes, workout plans.

            GeoJSON (a JSON object, read whole up to 128 MiB): each LineString or MultiLineString feature becomes \
            a workout with one route (each line a segment), its properties name, desc and type kept as a GPX \
            track's, its points' times from properties.coordTimes (togeojson's and RouteKit's; or \
            coordinateProperties.times), altitudes from the third number of each position; a line whose \
            properties say kind "route" or _gpxType "rte" becomes a planned route, Points and MultiPoints \
            waypoints. Polygons, invalid JSON, coordinates out of range and coordTimes that do not match the \
            coordinates are refused, naming the member (features[2].geometry.coordinates[0][15]) and its line \
            and column.

            Archives: a .zip (told by content) is read entry by entry in memory, never unpacked to disk: every \
            GPX, FIT, TCX and GeoJSON entry is imported (gzip entries decompressed, archives inside it one level deep), \
            each reported as archive.zip!path/in/archive. Limits refuse zip bombs: 1 GiB per entry, 32 GiB per \
            archive, 200× compression for entries over 1 MiB.

            Strava bulk export (the .zip Strava mails you, or its folder unpacked): activities.csv is read (by \
            column position, so any account language works) and each activity's file imported through its \
            Filename, its workout named and typed from the row (name, type, description, Strava's activity id); \
            a manual activity becomes a workout without a route (sync identifier strava-<Activity ID>); \
            routes/*.gpx become planned routes.

            Apple Health: export.zip as the Health app shares it (read as it is, export.xml inflated as a stream, \
            never unpacked to disk), an export folder (apple_health_export/, with export.xml and workout-routes/) \
            or its export.xml, told by the root element HealthData; read by a streaming scanner (the DTD skipped, no \
            entity expanded). Each Workout becomes a workout (activity type, times with their offsets, source, \
            device, metadata with units, statistics, pause/resume and segment events); each WorkoutRoute its \
            route through FileReference (HealthKit's sync identifier and version kept); heart-rate, cadence and \
            power records of the workout's source within its time become series; effort scores are related by \
            time overlap. Other records are counted, not imported.

            Folders are searched recursively for .gpx, .fit, .tcx, .geojson and .zip files (and .gz of them); a folder \
            with activities.csv at its root is imported as a Strava export, one with an Apple Health export.xml as \
            an Apple Health export. A folder with none of them is an error when nothing else is imported (exit 1, \
            no store made), a warning beside other inputs.

            A track's identity comes from its parsed content, not the file: importing the same track again \
            (under any file name or formatting) creates nothing and reports it `unchanged` without writing \
            anything. A track's first 8,192 locations are held in memory and written when it ends (a killed import \
            reads such a track again); from there on locations are durable batch by batch: if an import is killed, \
            running it again picks up the track where the last acknowledged batch left it (see `routekit \
            builders`).

            Ctrl-C stops the import where it is and says what was stored so far (the inputs done, routes and \
            locations saved, the inputs not finished) and how to finish, then exits 130: run the same import \
            again, and what is stored is recognised by its sync identity and reported unchanged (nothing is stored \
            twice) while a long track cut short resumes after its last stored batch (a short one is read again).

            A failed file does not stop the others: they are reported at the end, and the exit code is 1. A file \
            that is none of the formats, told by its first bytes (a PDF, a picture, an empty file), fails with \
            `not a route file: looks like a PDF document; RouteKit reads GPX, FIT, TCX and GeoJSON files …` (code \
            unsupportedFormat); so does a zip archive with no route file in it.

            What is refused and what is warned: a malformed file (XML errors, a misplaced GPX element, a value \
            that is not a number or time) fails with its line and column. A point without lat/lon (or with a \
            non-number there) is skipped, with its time and values, and counted in a warning; an unreadable \
            <bounds> is dropped with a warning. A point with a coordinate out of range fails the file unless \
            --skip-invalid-points is given, which skips and counts such points too.

            JSON (--json), one object per file (per entry of an archive or export):
              {"file": "…", "status": "imported|unchanged|partial|failed",
               "routes": [{"workout": "UUID", "route": "UUID", "locations": N}], "waypoints": N,
               "warnings": ["…"], "error": null | {"code": "…", "message": "…", "line": N, "column": N}}

            Examples:
              routekit import sample-routes/
              routekit import --source my-watch --json ride.gpx
              ROUTEKIT_STORE=/tmp/test.sqlite routekit import ~/exports
            """)

    @Argument(
        help: "GPX, FIT, TCX or GeoJSON files (plain or gzip-compressed), Apple Health export.xml files, or folders.",
        completion: .file())
    var paths: [String]

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @OptionGroup var sourceOption: SourceOption
    @OptionGroup var readingOptions: GPXReadingOptions
    @OptionGroup var archiveOptions: ArchiveOptions

    @Flag(help: "One JSON object per file, one per line.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "When a batch counts as stored: 'process' survives the process being killed (the default); 'power' "
                + "also survives power loss (an fsync per batch: slower). SQLite only: on PostgreSQL, every batch is "
                + "committed and the server's synchronous_commit decides.", valueName: "process|power"))
    var durability: SQLiteStore.Durability = .processCrash

    @Option(
        help: ArgumentHelp(
            "Inputs imported in parallel (each file or archive by one worker; a single archive or export has its "
                + "entries imported in parallel instead; the store takes one write at a time). Results are printed in "
                + "input order, the same as with --jobs 1. Every worker, even with --jobs 1, parses its next GPX file "
                + "while it stores the current one, so one job already keeps two cores busy on a folder of GPX "
                + "files; more jobs help with FIT and TCX files, archive entries and machines with more cores.",
            valueName: "N"))
    var jobs: Int = 1

    @Flag(help: "No progress bar, even on a terminal.")
    var noProgress = false

    func validate() throws {
        if jobs < 1 || jobs > 64 { throw ValidationError("--jobs must be 1 to 64.") }
        if paths.isEmpty { throw ValidationError("Give at least one GPX, FIT or TCX file, or a folder.") }
    }

    /// What a folder is searched for (messages say it).
    static let importableText = ".gpx, .fit, .tcx, .geojson, .zip and their .gz; Strava and Apple Health exports"

    /// Files under the given paths, folders expanded recursively and sorted; missing paths kept (they fail).
    /// `emptyFolders`: the folders among `paths` with no file to import in them.
    static func expand(_ paths: [String]) -> (files: [String], emptyFolders: [String]) {
        var out: [String] = []
        var emptyFolders: [String] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                out.append(path)
                continue
            }
            // A folder that is a Strava bulk export is imported as one, through its activities.csv; an Apple Health
            // export folder through its export.xml.
            if let kind = RouteImporter.kind(of: path), kind == .stravaFolder || kind == .healthFolder {
                out.append(path)
                continue
            }
            var found: [String] = []
            if let e = fm.enumerator(atPath: path) {
                while let item = e.nextObject() as? String {
                    // An Apple Health export inside the folder is imported as one, not file by file.
                    if e.fileAttributes?[.type] as? FileAttributeType == .typeDirectory,
                        RouteImporter.kind(of: (path as NSString).appendingPathComponent(item)) == .healthFolder
                    {
                        found.append((path as NSString).appendingPathComponent(item))
                        e.skipDescendants()
                        continue
                    }
                    let lower = item.lowercased()
                    if [".gpx", ".gpx.gz", ".fit", ".fit.gz", ".tcx", ".tcx.gz", ".geojson", ".geojson.gz", ".zip"]
                        .contains(where: {
                            lower.hasSuffix($0)
                        })
                    {
                        found.append((path as NSString).appendingPathComponent(item))
                    }
                }
            }
            if found.isEmpty { emptyFolders.append(path) }
            out += found.sorted()
        }
        return (out, emptyFolders)
    }

    func run() async throws {
        let (files, emptyFolders) = Self.expand(paths)
        for folder in emptyFolders {
            // Alone, an error: nothing is imported (exit 1, and no store made); beside other inputs, a warning.
            let level = files.isEmpty ? "error" : "warning"
            printError("\(level): no importable files in \(folder) (looked for \(Self.importableText))")
        }
        if files.isEmpty { throw exitInputFailed }
        // Each file's or entry's reader maps megabyte buffers; with glibc's defaults every one maps them afresh and
        // faults their pages in again (an export of 1,000 gzip entries spent 1.4 s of 3.1 in the kernel). Kept in the
        // heap, the next one reuses them.
        if files.count > 1 || files.contains(where: { RouteImporter.kind(of: $0).map { $0 != .file(.gpx) } ?? true }) {
            BatchAllocator.tuneForBatchProcessing()
        }
        let source = try await runReportingErrors { try sourceOption.resolved() }
        let sizes = files.map { f -> Int in
            guard let status = InputFile.status(of: f) else { return 0 }
            // An export folder (Apple Health): its export.xml is what is read.
            return status.isDirectory ? InputFile.status(of: f + "/export.xml")?.size ?? 0 : status.size
        }
        let totalBytes = max(1, sizes.reduce(0, +))
        let progress = ProgressBar(enabled: stderrIsTerminal && !noProgress, total: totalBytes)
        let started = Date()
        // What is done so far: the summary's at the end, and the one Ctrl-C prints.
        let tally = Locked(ImportTally())
        let label = storeOptions.label
        // Ctrl-C: what was stored so far is said, and how to finish, and the process exits 130. The import is not
        // unwound: it leaves what a killed import leaves (every acknowledged batch), which the same import run again
        // finishes.
        let interrupt = Self.onInterrupt {
            progress.clear()
            let soFar = tally.withLock { $0 }
            // The result lines printed so far reach their reader first (standard output may be a pipe or a file).
            fflush(nil)
            printError(soFar.interrupted(files: files, seconds: Date().timeIntervalSince(started), store: label))
            _exit(exitInterrupted.rawValue)
        }
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
        }
        func report(_ result: ImportResult) {
            tally.withLock { $0.add(result) }
            progress.clear()
            if json {
                printJSONLine(
                    ImportResultJSON(result))
            } else {
                let routes = result.tracks.filter { $0.route != nil }.count
                let points = result.tracks.reduce(0) { $0 + $1.locations }
                var line =
                    "\(column(result.status.rawValue, 9)) \(result.file): \(routes) route(s), \(points) location(s)"
                // A multisport workout (several activities) says so: "1 route(s), 9120 location(s), a workout of
                // 5 activities".
                for t in result.tracks where t.activities > 1 { line += ", a workout of \(t.activities) activities" }
                if let r = result.tracks.compactMap(\.resumedFrom).first {
                    line += " (resumed after \(r) acknowledged)"
                }
                print(line)
                for w in result.warnings { print("          warning: \(w)") }
                if let e = result.error { print("          error: \(e)") }
            }
        }
        if files.allSatisfy({ !FileManager.default.fileExists(atPath: $0) }) {
            // Every input is missing: each fails as the importer fails a missing file, and no store is opened, so
            // none is made for nothing.
            for file in files {
                let why = "cannot open the file: \(String(cString: strerror(ENOENT)))"
                report(ImportResult(file: file, status: .failed, error: RouteKitError(.io, why, file: file)))
            }
        } else {
            let store = try await runReportingErrors {
                try await person.view(
                    of: storeOptions.open(
                        creating: true, durability: durability, onCallingThread: true, connections: max(4, jobs + 1)))
            }
            let importer = RouteImporter(store: store, source: source, readOptions: readingOptions.readOptions)
            importer.archiveLimits = archiveOptions.limits
            // One input (an archive, an export): its entries are what runs in parallel.
            importer.jobs = jobs
            await importer.importPaths(
                files, sizes: sizes, workers: jobs,
                progress: { p in
                    tally.withLock { $0.inputsDone = max($0.inputsDone, p.inputsDone) }
                    let label = p.current.map { "\(min(p.inputsDone + 1, files.count))/\(files.count) \($0)" }
                    progress.update(p.bytesDone, label: label ?? "\(p.inputsDone)/\(files.count)")
                }, each: report)
        }
        progress.clear()
        let done = tally.withLock { $0 }
        let summary = done.summary(seconds: Date().timeIntervalSince(started), store: label)
        if json { printError(summary) } else { print(summary) }
        if !done.failed.isEmpty {
            printError("failed:")
            // An error names its file already; one without a file (a rare store error) gets it here.
            for (file, e) in done.failed { printError("  " + (e.file == nil ? "\(file): \(e)" : "\(e)")) }
            throw exitInputFailed
        }
    }

    /// Calls `handler` (on a queue of its own) when the process gets SIGINT (Ctrl-C), instead of ending it; until the
    /// returned source is cancelled.
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT)
        source.setEventHandler { handler() }
        source.resume()
        return source
    }
}

/// What an import has done so far, counted as each result is reported: the summary at the end, and the one Ctrl-C
/// prints.
struct ImportTally {
    /// Results (files, archive entries) by status.
    var counts: [ImportResult.Status: Int] = [:]
    /// The failed results' files and errors.
    var failed: [(String, RouteKitError)] = []
    /// New locations stored.
    var locations = 0
    /// New routes stored.
    var newRoutes = 0
    /// Results reported (a file, an archive's or export's entry).
    var results = 0
    /// The inputs given (after folders are expanded) that are done, in input order.
    var inputsDone = 0

    mutating func add(_ result: ImportResult) {
        results += 1
        counts[result.status, default: 0] += 1
        for t in result.tracks where !t.unchanged {
            locations += t.locations
            if t.route != nil { newRoutes += 1 }
        }
        if let e = result.error { failed.append((result.file, e)) }
    }

    /// What was imported: `1 imported, 0 unchanged, 0 partial, 0 failed; 1 new route(s), 5400 new location(s)`.
    var counted: String {
        "\(counts[.imported] ?? 0) imported, \(counts[.unchanged] ?? 0) unchanged, \(counts[.partial] ?? 0) partial, "
            + "\(counts[.failed] ?? 0) failed; \(newRoutes) new route(s), \(locations) new location(s)"
    }

    /// The summary line of an import that ran to its end.
    func summary(seconds: Double, store: String) -> String {
        "\(results) input(s): \(counted) in \(String(format: "%.2f", seconds)) s → \(store)"
    }

    /// What Ctrl-C prints: what was stored, the inputs not finished, and how to finish.
    func interrupted(files: [String], seconds: Double, store: String) -> String {
        let done = min(inputsDone, files.count)
        var lines = [
            "interrupted (Ctrl-C) after \(String(format: "%.2f", seconds)) s, \(done) of \(files.count) input(s) done: "
                + "\(counted) → \(store)"
        ]
        if done < files.count {
            let more = files.count - done - 1
            lines.append("not finished: \(files[done])" + (more > 0 ? " and \(more) more input(s)" : ""))
        }
        lines.append(
            "to finish, run the same import again: what is stored is recognised by its sync identity and reported "
                + "unchanged (nothing is stored twice), and a long track cut short resumes after its last stored "
                + "batch (a short one is read again)")
        return lines.joined(separator: "\n")
    }
}
