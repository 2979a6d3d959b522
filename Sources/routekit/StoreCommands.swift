import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX

struct Routes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "List current routes (replaced versions and deleted routes are not listed).",
        discussion: """
            JSON (--json), one object per route:
              {"uuid": "…", "workout": "…", "source": "…", "syncIdentifier": "…", "syncVersion": N,
               "start": "ISO 8601"|null, "end": "ISO 8601"|null, "locations": N, "metadata": {…}}

            Examples:
              routekit routes
              routekit routes --workout 6F1C… --json
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Option(help: "Only routes of this workout (uuid, or its first 8+ hex digits).") var workout: String?
    @Option(help: "Only routes written by this source.") var source: String?
    @Option(help: "At most this many.") var limit: Int?
    @Flag(help: "One JSON object per route, one per line.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            var workoutID: UUID?
            if let workout { workoutID = try await resolveID(workout, argument: "--workout", .workouts, in: store) }
            let filter = RouteFilter(
                workout: workoutID, source: try source.map { try Source(name: $0) }, limit: limit)
            let routes = try await store.routes(matching: filter)
            if json {
                for r in routes { printJSONLine(RouteJSON(r)) }
                return
            }
            print(
                "\(column("ROUTE", 36)) \(column("WORKOUT", 36)) \(column("SOURCE", 16)) VER \(column("START", 29)) LOCATIONS"
            )
            for r in routes {
                print(
                    "\(r.id.uuidString.lowercased()) \(r.workoutID.uuidString.lowercased()) \(column(r.source.name, 16)) "
                        + "\(column(String(r.sync.version), 3)) \(column(r.start?.iso8601 ?? "-", 29)) \(r.locationCount)"
                )
            }
            print("\(routes.count) route(s) in \(storeOptions.label)")
        }
    }
}

struct Workouts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List workouts.",
        discussion: """
            JSON (--json), one object per workout:
              {"uuid": "…", "activity": "…", "source": "…", "syncIdentifier": "…"|null, "syncVersion": N|null,
               "start": "ISO 8601"|null, "end": "ISO 8601"|null, "routes": N, "locations": N, "metadata": {…},
               "distanceMetres": M|null, "elapsedSeconds": S|null, "movingSeconds": S|null}
            the object of GET /v1/workouts. The distance and durations are those of `routekit stats` (null without
            a route), measured once per route version and kept in the store.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Option(help: "Only workouts written by this source.") var source: String?
    @Option(help: "At most this many.") var limit: Int?
    @Flag(help: "One JSON object per workout, one per line.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let workouts = try await store.workouts(
                matching: WorkoutFilter(source: try source.map { try Source(name: $0) }, limit: limit))
            if !json {
                print(
                    "\(column("WORKOUT", 36)) \(column("ACTIVITY", 10)) \(column("SOURCE", 16)) \(column("START", 29)) ROUTES NAME"
                )
            }
            for w in workouts {
                let routes = try await store.routes(matching: RouteFilter(workout: w.id))
                if json {
                    printJSONLine(try await WorkoutJSON(w, routes: routes, in: store))
                } else {
                    var name = ""
                    if case .string(let n)? = w.metadata["name"] { name = n }
                    print(
                        "\(w.id.uuidString.lowercased()) \(column(w.activityType.rawValue, 10)) \(column(w.source.name, 16)) "
                            + "\(column(w.start?.iso8601 ?? "-", 29)) \(column(String(routes.count), 6)) \(name)")
                }
            }
            if !json { print("\(workouts.count) workout(s) in \(storeOptions.label)") }
        }
    }
}

struct Locations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locations",
        abstract: "Stream a route's locations in batches (the route query).",
        discussion: """
            Text output is CSV with the location columns of `export … .csv` (time, latitude, longitude, altitude, \
            accuracies, speed, course). With --json, one object per batch: {"batch": N, "done": true|false, \
            "locations": [{"latitude": …, "longitude": …, "time": …, …}]}, each location as GET \
            /v1/routes/ID/locations writes it (an absent value's key left out).

            Examples:
              routekit locations 0C1D… --batch-size 500 --json
              routekit locations 0C1D… --from 2024-05-01T06:00:00Z --to 2024-05-01T06:10:00Z
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Argument(help: "The route's uuid (or its first 8+ hex digits).") var route: String
    @Option(help: "Locations per batch.") var batchSize: Int = RouteQuery.defaultBatchSize
    @Option(help: "Only locations at or after this ISO 8601 time.") var from: String?
    @Option(help: "Only locations at or before this ISO 8601 time.") var to: String?
    @Flag(help: "One JSON object per batch, one per line.") var json = false

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let id = try await resolveID(route, argument: "ROUTE", .routes, in: store)
            let interval = try parseTimeRange(from: from, to: to)
            let out = OutputSink.standardOutput()
            if !json { try out.writeText(LocationWire.csvHeader + "\n") }
            var n = 0
            for try await batch in store.locations(of: id, batchSize: batchSize, interval: interval) {
                if json {
                    // The batch's keys are sorted, as every JSON line; its locations are the HTTP service's.
                    var line = "{\"batch\":\(n),\"done\":\(batch.isDone),\"locations\":["
                    line += batch.locations.map(LocationWire.json).joined(separator: ",")
                    try out.writeText(line + "]}\n")
                    try out.flush()  // a reader (a pipe, a file being followed) sees each batch when it is complete
                } else {
                    for l in batch.locations { try out.writeText(LocationWire.csvRow(l) + "\n") }
                }
                n += 1
            }
            try out.flush()
        }
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Write a route, or a workout (its routes, waypoints and planned routes), as GPX 1.1, GeoJSON or CSV; or "
            + "everything a person has as one zip (--archive).",
        discussion: """
            GPX output validates against the GPX 1.1 schema; the workout's heart rate, cadence, temperature and \
            power are merged back into each point by timestamp, and the GPX fields the importer kept are \
            written back.

            With --archive FILE.zip, everything one person has (--person; the default person without it) goes into \
            one zip, the archive GET /v1/export serves: workouts/<workout>/workout.json (the workout, its routes, \
            series, effort scores and the zone settings saved with it), workouts/<workout>/route-<route>.gpx (GPX \
            1.1 with extensions: RouteKit keeps what it read from a file, not the file, so a route imported from \
            FIT is GPX too), workouts/<workout>/series/<type>.ndjson (one {"time", "value"} object a line), and \
            last manifest.json (the store, the person, the release, counts, and every entry with its size and \
            CRC-32). The zip is written beside FILE (readable by its owner only) and moved into place when it is \
            complete; a summary line is printed.

            Examples:
              routekit export 0C1D… -o ride.gpx
              routekit export 6F1C… --format geojson > ride.geojson
              routekit export --archive everything.zip
              routekit export --person 3f2a9c1e --archive ana.zip
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "A route's or a workout's uuid (or its first 8+ hex digits); none with --archive.") var id: String?
    @Option(help: "gpx, geojson or csv (default: from the output's extension, else gpx).")
    var format: ExportFormat?
    @Option(name: .shortAndLong, help: "Output file (default: standard output).") var output: String = "-"
    @OptionGroup var person: PersonOption
    @Option(
        help: ArgumentHelp(
            "Write everything the person has to this zip file (no ID, --format or -o with it).", valueName: "FILE.zip")
    )
    var archive: String?

    func validate() throws {
        if let archive {
            if id != nil { throw ValidationError("--archive exports everything a person has: give no ID with it.") }
            if format != nil || output != "-" {
                throw ValidationError("--archive writes a zip: give no --format or -o with it.")
            }
            if archive.isEmpty || archive == "-" { throw ValidationError("--archive needs a file path.") }
        } else if id == nil {
            throw ValidationError("Give a route's or a workout's uuid, or --archive FILE.zip.")
        }
    }

    func run() async throws {
        if let archive {
            try await writeArchive(to: archive)
            return
        }
        guard let id else { throw ValidationError("Give a route's or a workout's uuid, or --archive FILE.zip.") }
        var temporary: String?
        do {
            let store = try await openPersonStore()
            let uuid = try await resolveID(id, argument: "ID", in: store)
            var routes: [RouteSample] = []
            var workout: UUID?
            if let r = try await store.route(id: uuid) {
                routes = [r]
            } else if try await store.workout(id: uuid) != nil {
                routes = try await store.routes(matching: RouteFilter(workout: uuid))
                workout = uuid
            } else {
                throw RouteKitError(.notFound, "no route or workout \(uuid)")
            }
            let fmt = format ?? ExportFormat(forOutput: output)
            let sink: OutputSink
            if output == "-" {
                sink = .standardOutput()
            } else {
                let tmp = temporarySibling(of: output)
                temporary = tmp
                sink = try OutputSink(path: tmp)
            }
            try await StoreExport.write(routes, attachmentsOf: workout, from: store, as: fmt, to: sink)
            try sink.close()
            if let tmp = temporary, rename(tmp, output) != 0 {
                throw RouteKitError(
                    .io, "cannot move the result into place: \(String(cString: strerror(errno)))", file: output)
            }
            if output != "-" {
                printError(
                    "\(routes.count) route(s), \(routes.reduce(0) { $0 + $1.locationCount }) location(s) → \(output)")
            }
        } catch {
            if let tmp = temporary { unlink(tmp) }
            // The one path from an error to its message and exit status (a reader gone: 0; no store, said plainly, and anything else: 1).
            throw reported(error)
        }
    }

    /// The store seen as `--person` (``PersonOption/view(of:)``).
    func openPersonStore() async throws -> any RouteStore {
        try await person.view(of: storeOptions.open())
    }

    /// `--archive`: the person's archive (``PersonArchive``) written beside `path`, then moved into place, with a
    /// progress bar on a terminal and a summary line.
    func writeArchive(to path: String) async throws {
        var temporary: String?
        do {
            let store = try await openPersonStore()
            let tmp = temporarySibling(of: path)
            // What a killed run left under this name: the archive is made new.
            unlink(tmp)
            temporary = tmp
            let bar = Locked<ProgressBar?>(nil)
            let show = stderrIsTerminal
            let counts = try await PersonArchive.write(
                from: store, to: tmp, routekitVersion: RouteKitRelease.version,
                progress: { done, total in
                    guard show else { return }
                    bar.withLock { b in
                        if b == nil { b = ProgressBar(enabled: true, total: total, unit: .items("entries")) }
                        b?.update(done, label: "\(done)/\(total) entries")
                    }
                })
            bar.withLock { $0?.clear() }
            guard rename(tmp, path) == 0 else {
                throw RouteKitError(
                    .io, "cannot move the archive into place: \(String(cString: strerror(errno)))", file: path)
            }
            temporary = nil
            print(
                "person \(store.person): \(counts.workouts) workout(s), \(counts.routes) route(s), \(counts.series) series, "
                    + "\(counts.efforts) effort score(s), \(counts.entries) entries → \(path)")
        } catch {
            if let tmp = temporary {
                unlink(tmp)
                unlink(tmp + ".entry")
            }
            throw reported(error)
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete routes or workouts (a workout goes with its routes and series).",
        discussion: """
            Only the source that wrote an object may delete it: give it with --source (default \
            routekit-import). Deleting a route deletes every version of it that is kept.

            Example:
              routekit delete 0C1D… --source my-watch
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @OptionGroup var sourceOption: SourceOption
    @Argument(help: "Route or workout uuids (or their first 8+ hex digits).") var ids: [String]

    func validate() throws {
        if ids.isEmpty { throw ValidationError("Give at least one route or workout uuid.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await person.view(of: storeOptions.open())
            let source = try sourceOption.resolved()
            // Every id resolved before anything is deleted: a malformed or ambiguous one deletes nothing.
            var resolved: [(String, UUID)] = []
            var failed = false
            for text in ids {
                do {
                    resolved.append((text, try await resolveID(text, argument: "ID", in: store)))
                } catch let e as RouteKitError {
                    printError("error: \(e)")
                    failed = true
                }
            }
            for (text, id) in resolved {
                do {
                    switch try await StoreDeletion.delete(id, as: source, in: store) {
                    case .route: print("deleted route \(text)")
                    case .workout: print("deleted workout \(text) with its routes and series")
                    }
                } catch let e as RouteKitError {
                    printError("error: \(e)")
                    failed = true
                }
            }
            if failed { throw exitInputFailed }
        }
    }
}
