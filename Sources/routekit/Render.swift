import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitGPX
import RouteKitIngest
import RouteKitProcessing
import RouteKitRender
import RouteKitSQLite

#if Server
    import Logging
    import RouteKitServer
#endif

struct Render: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Draw a route as a map with its profiles (SVG or PNG), or every route of the store as a heatmap.",
        discussion: """
            For a route, a workout (its current route), a route file (GPX, FIT, TCX or GeoJSON, plain or \
            gzip-compressed, told by content and read as import reads it: a FIT session or TCX activity is a \
            track, a course a route) or anything else import reads (a zip archive of route files, a Strava bulk \
            export, an Apple Health export.zip, export folder or export.xml, a folder of route files): a map in a \
            local projection with a scale bar and a north arrow; start (green), end (red), pause (amber) and \
            distance markers; the source's privacy zones shaded. For a processed route (routekit smooth), the raw \
            recording is drawn faint under the current version and the caption gives the processing's numbers \
            (points in and out, smoothing RMS, maximum deviation, length before and after). Below the map, profiles \
            against distance: elevation, speed, heart rate over its zone bands, power, and the time in each \
            heart-rate zone.

            --tiles draws a basemap under the route or the heatmap, at the web map zoom that fits the picture, \
            with its attribution in the corner: an MBTiles file of PNG tiles (offline), or an XYZ tile server's \
            URL template (https://…/{z}/{x}/{y}.png; fetched with RouteKit's User-Agent through the same disk \
            cache as `routekit serve --tiles`, in a routekit built with --traits Server). Profiles have axes with \
            ticks and units; --x-axis time draws them against the time from the start (h:mm) instead of distance.

            An archive, export or folder is imported as `routekit import` imports it (the same readers and \
            --max-archive-entries/--max-entry-mb limits, entries streamed, never unpacked) into a scratch store in \
            a temporary folder, removed afterwards, and the chosen route is drawn as a stored one is. With one \
            route, that one; with several, --entry N (1-based, in the order import reports them) or --entry NAME \
            (the entry's path inside the archive or folder, or its file name) picks one; without --entry, the \
            routes are listed with their dates (exit 64).

            SVG is written directly (text stays text); PNG is drawn by cairo. Lines are reduced to what the \
            pixels can show, so a million-point route gives a small file. The same input gives the same bytes.

            --heatmap draws every current route of the store (or those of --source, --activity, --from/--to) \
            into one density image (PNG): each route adds one to every pixel it crosses, on a logarithmic \
            colour ramp. Routes are streamed through the route query, twice (bounds, then lines), so memory \
            does not grow with the store.

            Examples:
              routekit render 0C1D… -o ride.svg
              routekit render 6F1C… -o ride.png --size 1600x1200 --max-hr 185
              routekit render 0C1D… -o smoothed.png --versions current
              routekit render ride.gpx -o ride.svg
              routekit render ride.fit -o ride.png
              routekit render course.tcx -o course.svg
              routekit render rides.zip --entry 2 -o second.svg
              routekit render export_12345.zip --entry activities/9876543210.fit.gz -o ride.png
              routekit render apple_health_export/ --entry 1 -o walk.svg
              routekit render --heatmap -o heat.png
              routekit render --heatmap --activity cycling --from 2025-01-01T00:00:00Z -o rides-2025.png
              routekit render 0C1D… -o ride.png --tiles ~/maps/region.mbtiles --x-axis time
              routekit render --heatmap -o heat.png --tiles 'https://tile.example.org/{z}/{x}/{y}.png' \\
                --tiles-attribution '© OpenStreetMap contributors'
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @Argument(
        help: ArgumentHelp(
            "A route's or a workout's uuid (or its first 8+ hex digits), a route file (GPX, FIT, TCX or GeoJSON, "
                + "plain or gzip-compressed), a zip archive of them, a Strava or Apple Health export (zip, folder or "
                + "export.xml) or a folder. Not with --heatmap."))
    var input: String?
    @Option(name: .shortAndLong, help: "Output file, .svg or .png (or - for SVG on standard output).")
    var output: String
    @Option(help: "svg or png (default: from the output's extension).") var format: PictureFormat?
    @Option(help: "Picture size in pixels, WIDTHxHEIGHT.") var size: String = "1200x900"
    @Option(
        help: """
            Which versions of a processed route to draw: raw,current (the raw one faint under the current), \
            current, or raw.
            """)
    var versions: String = "raw,current"
    @Option(help: "Maximum heart rate for the zone bands and the time-in-zone bar (default: the observed one).")
    var maxHr: Double?
    @Option(
        help: "For a file: which track to draw (1-based); in a file with no track (a course), which route.")
    var track: Int?
    @Option(
        help: ArgumentHelp(
            "For an archive, export or folder holding several routes: which one to draw, by number (1-based, in "
                + "the order import reports them) or by its entry's path or file name.",
            valueName: "N|NAME"))
    var entry: String?
    @OptionGroup var archiveOptions: ArchiveOptions
    @Flag(help: "Draw a heatmap of the store's current routes (PNG).") var heatmap = false
    @Option(help: "Heatmap: only routes of this source.") var source: String?
    @Option(help: "Heatmap: only routes of workouts of this activity (running, cycling, walking, hiking…).")
    var activity: String?
    @Option(help: "Heatmap: only routes that end at or after this ISO 8601 time.") var from: String?
    @Option(help: "Heatmap: only routes that start at or before this ISO 8601 time.") var to: String?
    @Option(
        help: ArgumentHelp(
            "A basemap under the map or heatmap: an MBTiles file of PNG tiles, or a tile server's URL template "
                + "(https://…/{z}/{x}/{y}.png, in a routekit built with --traits Server).",
            valueName: "FILE.mbtiles|URL-TEMPLATE"))
    var tiles: String?
    @Option(
        help: ArgumentHelp(
            "The attribution the tiles' terms ask for, drawn in the corner (an MBTiles file's own by default).",
            valueName: "text"))
    var tilesAttribution: String?
    @Option(
        help: ArgumentHelp(
            "The tile cache's folder for a tile server (default: $XDG_CACHE_HOME/routekit/tiles, as serve's).",
            valueName: "folder"))
    var tilesCache: String?
    @Option(help: "Profiles against distance (km) or time (h:mm from the start).") var xAxis: XAxis = .distance

    enum XAxis: String, ExpressibleByArgument, CaseIterable {
        case distance, time

        var profileAxis: ProfileAxis { self == .time ? .time : .distance }
    }

    enum PictureFormat: String, ExpressibleByArgument, CaseIterable {
        case svg, png
    }

    func validate() throws {
        if heatmap {
            if input != nil || entry != nil {
                throw ValidationError("--heatmap draws the whole store: give no route, workout, file or --entry")
            }
            if resolvedFormat == .svg { throw ValidationError("--heatmap writes PNG only") }
        } else {
            if input == nil {
                throw ValidationError("give a route's or a workout's uuid, or a route file (or --heatmap)")
            }
            if source != nil || activity != nil || from != nil || to != nil {
                throw ValidationError("--source, --activity, --from and --to select routes for --heatmap only")
            }
            if person.person != nil, let input, !Self.namesStoredObject(input) {
                throw ValidationError("--person picks whose route, workout or heatmap of the store: not with a file")
            }
        }
        if output == "-" && resolvedFormat == .png {
            throw ValidationError("PNG goes to a file: give -o FILE.png")
        }
        if let track, track < 1 { throw ValidationError("--track counts from 1") }
        if let entry, let n = Int(entry), n < 1 { throw ValidationError("--entry counts from 1") }
        if tiles == nil && (tilesAttribution != nil || tilesCache != nil) {
            throw ValidationError("--tiles-attribution and --tiles-cache go with --tiles")
        }
        if let maxHr, !(maxHr > 60 && maxHr < 260) { throw ValidationError("--max-hr must lie between 60 and 260") }
        _ = try parsedVersions()
    }

    var resolvedFormat: PictureFormat {
        if let format { return format }
        return output.lowercased().hasSuffix(".png") ? .png : .svg
    }

    func parsedVersions() throws -> (raw: Bool, current: Bool) {
        let parts = Set(versions.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard !parts.isEmpty, parts.isSubset(of: ["raw", "current"]) else {
            throw ValidationError("--versions takes raw, current or raw,current, not '\(versions)'")
        }
        return (parts.contains("raw"), parts.contains("current"))
    }

    func run() async throws {
        try await runReportingErrors {
            let pictureSize = try PictureSize(parsing: size)
            let bytes: [UInt8]
            if heatmap {
                bytes = try await renderHeatmap(size: pictureSize)
            } else if let input {
                let picture: RoutePictureInput
                if Self.namesStoredObject(input) {
                    try refuseEntry("a route or workout of the store")
                    picture = try await storeInput(input)
                } else if Self.readsThroughImport(input) {
                    picture = try await archiveInput(input)
                } else {
                    try refuseEntry("a single route file (--track picks its track)")
                    picture = try fileInput(input)
                }
                var basemap: Basemap?
                if let source = try tileSource(),
                    let view = RoutePicture.basemapView(picture, size: pictureSize, zoomLevels: source.zoomLevels)
                {
                    basemap = try await Basemap.load(view, from: source)
                }
                let scene = RoutePicture.scene(
                    picture, size: pictureSize, xAxis: xAxis.profileAxis, basemap: basemap)
                bytes = resolvedFormat == .png ? try PNGRasteriser.png(scene) : SVGWriter.svg(scene)
            } else {
                throw RouteKitError(.invalidArgument, "nothing to draw")
            }
            try write(bytes)
        }
    }

    func write(_ bytes: [UInt8]) throws(RouteKitError) {
        if output == "-" {
            // Not FileHandle, whose write traps on a closed pipe: the sink's error for it ends the command quietly.
            let out = OutputSink.standardOutput()
            out.write(bytes)
            try out.flush()
            return
        }
        let tmp = temporarySibling(of: output)
        guard FileManager.default.createFile(atPath: tmp, contents: Data(bytes)) else {
            throw RouteKitError(.io, "cannot write \(tmp): \(String(cString: strerror(errno)))", file: output)
        }
        guard rename(tmp, output) == 0 else {
            unlink(tmp)
            throw RouteKitError(
                .io, "cannot move the picture into place: \(String(cString: strerror(errno)))", file: output)
        }
        printError("wrote \(output) (\(resolvedFormat.rawValue), \(size), \(bytes.count) bytes)")
    }

    // MARK: The basemap

    /// Where `--tiles` takes tiles from: an MBTiles archive, or a tile server through the server's disk cache;
    /// `nil` without `--tiles`.
    func tileSource() throws(RouteKitError) -> TileSource? {
        guard let tiles else { return nil }
        if tiles.lowercased().hasSuffix(".mbtiles") {
            let archive = try MBTilesArchive(path: tiles)
            let type = archive.contentType
            return TileSource(
                attribution: tilesAttribution ?? archive.attribution, zoomLevels: archive.zoomLevels
            ) { c async throws(RouteKitError) -> TileImage? in
                try archive.tile(z: c.z, x: c.x, y: c.y).map { TileImage(bytes: $0, contentType: type) }
            }
        }
        #if Server
            let settings = TileConfiguration(
                source: try TileConfiguration.parseSource(tiles), attribution: tilesAttribution ?? "",
                cacheDirectory: tilesCache ?? TileConfiguration.defaultCacheDirectory,
                userAgent: TileConfiguration.userAgent(version: RouteKitCommand.configuration.version))
            var logger = Logger(label: "routekit.render")
            logger.logLevel = .error
            return try TileProvider(settings, logger: logger).source
        #else
            throw RouteKitError(
                .invalidArgument,
                "--tiles with a tile server's URL needs a routekit built with --traits Server; an MBTiles file "
                    + "works in any build")
        #endif
    }

    // MARK: A route or a workout of the store

    /// Whether `input` names a route or a workout of the store (a uuid, or the first 8 or more hex digits of one that
    /// is not a file's path) rather than a route file.
    static func namesStoredObject(_ input: String) -> Bool {
        if UUID(uuidString: input) != nil { return true }
        return StoredID.prefix(input) != nil && !FileManager.default.fileExists(atPath: input)
    }

    /// The store, seen as `--person` (``PersonOption/view(of:)``): where a stored route and the heatmap are read.
    func openStore() async throws -> any RouteStore {
        try await person.view(of: storeOptions.open())
    }

    func storeInput(_ text: String) async throws -> RoutePictureInput {
        let store = try await openStore()
        let id = try await resolveID(text, argument: "INPUT", in: store)
        return try await storedInput(id, in: store)
    }

    /// The picture of the route `id` of `store`, or of the workout `id`'s current route, with `--versions` and
    /// `--max-hr`: what `render ROUTE|WORKOUT` draws, and what an archive's chosen route is drawn as.
    func storedInput(_ id: UUID, in store: any RouteStore) async throws -> RoutePictureInput {
        let route: RouteSample
        if let r = try await store.route(id: id) {
            route = r
        } else if try await store.workout(id: id) != nil {
            guard let r = try await store.routes(matching: RouteFilter(workout: id)).first else {
                throw RouteKitError(.notFound, "workout \(id) has no route to draw")
            }
            route = r
        } else {
            throw RouteKitError(.notFound, "no route or workout \(id)")
        }
        let wanted = try parsedVersions()
        return try await RoutePictureInput.load(
            from: store, route: route, raw: wanted.raw, current: wanted.current, maximumHeartRate: maxHr)
    }

    // MARK: A route file

    /// One line of a file as it is drawn: its points, measured as on import, its heart rate and power, its name and
    /// type.
    struct PickedLine {
        var line = RenderTrack()
        /// Moving time for the time-in-zone bar (segment breaks as pauses, as on import).
        var accumulator = StatisticsAccumulator(options: StatisticsOptions())
        var heartRate: [QuantitySample] = []
        var power: [QuantitySample] = []
        var name: String?
        var type: String?

        mutating func add(_ points: [GPXPoint]) {
            let locations = points.map(\.location)
            line.append(locations)
            accumulator.add(locations)
            for p in points {
                guard let t = p.location.timestamp else { continue }
                if let v = p.values[.heartRate] { heartRate.append(QuantitySample(timestamp: t, value: v)) }
                if let v = p.values[.power] { power.append(QuantitySample(timestamp: t, value: v)) }
            }
        }

        mutating func end(_ info: GPXPathInfo) {
            name = info.name
            type = info.type
        }
    }

    /// A route file read as `routekit import` reads it (GPX, FIT, TCX or GeoJSON, told by content, plain or
    /// gzip-compressed: ``forEachRouteFileEvent(_:options:_:)``): its `--track`-th track, or, in a file with no track
    /// (a course, a planned route), its `--track`-th route.
    func fileInput(_ path: String) throws -> RoutePictureInput {
        var trackLine = PickedLine()
        var routeLine = PickedLine()
        var tracks = 0
        var routes = 0
        var inTrack = false
        var inRoute = false
        let wanted = track ?? 1
        try forEachRouteFileEvent(path) { (event: GPXEvent) throws(RouteKitError) -> Bool in
            switch event {
            case .routeStart:
                routes += 1
                inRoute = routes == wanted && tracks == 0
            case .routePoints(let points) where inRoute:
                routeLine.add(points)
            case .routeEnd(let info) where inRoute:
                routeLine.end(info)
                inRoute = false
            case .trackStart:
                tracks += 1
                inTrack = tracks == wanted
                // A file with a track draws a track: a route read before it is not needed.
                if tracks == 1 { routeLine = PickedLine() }
            case .segmentStart, .pause:
                if inTrack { trackLine.line.breakSegment() }
            case .trackPoints(let points) where inTrack:
                trackLine.add(points)
            case .trackEnd(let info) where inTrack:
                trackLine.end(info)
                inTrack = false
            default: break
            }
            // Past the wanted track: nothing more to read.
            return tracks <= wanted || inTrack
        }
        let usesRoute = tracks == 0
        var picked = usesRoute ? routeLine : trackLine
        guard picked.line.count > 0 else {
            let kind = usesRoute ? "route" : "track"
            let count = usesRoute ? routes : tracks
            let why =
                count == 0
                ? "the file has no track or route to draw"
                : count < wanted ? "the file has \(count) \(kind)(s), not \(wanted)" : "\(kind) \(wanted) has no points"
            throw RouteKitError(.notFound, why, file: path)
        }
        let activity = ActivityType(guessingFrom: picked.type)
        // Distance and speeds by the statistics' rules for the line's activity (told at its end).
        picked.line.measure(activity: activity)
        var input = RoutePictureInput(
            current: picked.line,
            title: ([activity.rawValue.capitalized] + [picked.name].compactMap { $0 }).joined(separator: " · "))
        input.heartRate = picked.heartRate
        input.power = picked.power
        input.setZones(maximumHeartRate: maxHr, accumulator: &picked.accumulator)
        return input
    }

    // MARK: Heatmap

    func renderHeatmap(size: PictureSize) async throws -> [UInt8] {
        let basemapSource = try tileSource()
        let store = try await openStore()
        let range = try parseTimeRange(from: from, to: to)
        let wantedActivity = activity.map { ActivityType(rawValue: $0.lowercased()) }
        let wantedSource = try source.map { name throws(RouteKitError) in try Source(name: name) }
        var routes = try await store.routes(matching: RouteFilter(source: wantedSource))
        if let wantedActivity {
            var activities: [UUID: ActivityType] = [:]
            for w in try await store.workouts(matching: WorkoutFilter(source: wantedSource)) {
                activities[w.id] = w.activityType
            }
            routes = routes.filter { activities[$0.workoutID] == wantedActivity }
        }
        if let range {
            routes = routes.filter { r in
                if let end = (r.end ?? r.start)?.instant, end < range.lowerBound { return false }
                if let start = (r.start ?? r.end)?.instant, start > range.upperBound { return false }
                return true
            }
        }
        guard !routes.isEmpty else { throw RouteKitError(.notFound, "no current route matches") }
        let progress = ProgressBar(
            enabled: stderrIsTerminal, total: max(1, routes.count * 2), unit: .items("routes"))
        var bounds = GeoBounds()
        var done = 0
        for r in routes {
            for try await batch in store.locations(of: r.id, batchSize: 16_384) { bounds.add(batch.locations) }
            done += 1
            progress.update(done, label: "heatmap bounds")
        }
        var map = Heatmap(size: size, bounds: bounds, zoomLevels: basemapSource?.zoomLevels)
        var points = 0
        for r in routes {
            map.beginRoute()
            let starts = Set(r.segmentStarts)
            for try await batch in store.locations(of: r.id, batchSize: 16_384) {
                map.add(batch.locations, segmentStarts: starts)
                points += batch.locations.count
            }
            done += 1
            progress.update(done, label: "heatmap")
        }
        progress.clear()
        printError("heatmap: \(routes.count) routes, \(points) points, at most \(map.maximumCount) routes on one pixel")
        var basemap: Basemap?
        if let basemapSource, let view = map.basemapView {
            basemap = try await Basemap.load(view, from: basemapSource)
        }
        return try map.png(basemap: basemap)
    }
}
