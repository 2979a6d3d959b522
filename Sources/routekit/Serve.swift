import ArgumentParser
import Foundation
import RouteKit

#if Server
    import Hummingbird
    import Logging
    import RouteKitServer
    import ServiceLifecycle
#endif

/// The message for a routekit built without the HTTP service.
let withoutServer = RouteKitError(
    .invalidArgument,
    "this routekit was built without the HTTP service; build it with `swift build --traits Server` "
        + "(README: \"Serving over HTTP\")")

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP: uploads, workouts and routes, and the change feed (SSE, long-poll).",
        discussion: """
            Every request but /healthz and /readyz needs an API token (`routekit tokens create`), sent as \
            `Authorization: Bearer TOKEN`. The API is described by the OpenAPI document at /v1/openapi.yaml; \
            errors are RFC 9457 problems (application/problem+json) with a stable `type`.

            Endpoints:
              POST /v1/uploads?name=FILE         a GPX/FIT/TCX file (gzip or zip too) → import results
              GET  /v1/changes?anchor=A&wait=S   change set since an anchor; long-polls up to S seconds
              GET  /v1/changes (Accept: text/event-stream)   the same as Server-Sent Events
              GET  /v1/workouts, /v1/workouts/ID, /v1/routes, /v1/routes/ID
              GET  /v1/routes/ID/locations       NDJSON, streamed
              GET  /v1/routes/ID/export?format=gpx|geojson|csv
              GET  /v1/routes/ID/picture?format=svg|png   the route's map and profiles
              GET  /tiles/Z/X/Y                  the basemap's tiles (--tiles; no token), for the web view at /
              GET  /healthz, /readyz

            SIGTERM or Ctrl-C stops accepting connections, lets requests in flight finish and closes event \
            streams (clients resume with Last-Event-ID).

            Examples:
              routekit tokens create --source my-phone --scope read,write
              routekit serve --port 8080
              curl -H "Authorization: Bearer $TOKEN" --data-binary @run.gpx 'http://127.0.0.1:8080/v1/uploads?name=run.gpx'
              curl -N -H "Authorization: Bearer $TOKEN" -H 'Accept: text/event-stream' http://127.0.0.1:8080/v1/changes
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "The address to listen on (0.0.0.0: every interface).") var host = "127.0.0.1"
    @Option(help: "The port (0: any free port; the one chosen is printed).") var port = 8080
    @Option(help: "The largest upload accepted, in MiB.") var maxUploadMb = 512
    @Option(help: "The most event streams one token may hold open.") var maxStreamsPerToken = 4
    @Option(
        help: ArgumentHelp(
            "Uploads imported at once (default: from the machine's memory, a quarter of it at 64 MiB each); more get "
                + "503 with Retry-After.", valueName: "N"))
    var maxConcurrentImports: Int?
    @Option(
        help: ArgumentHelp(
            "The most route pictures drawn at once (default: the number of cores); more get 503 with Retry-After.",
            valueName: "N"))
    var maxPictures: Int?
    @Option(
        help: ArgumentHelp(
            "Seconds a connection may wait between requests before it is closed.", valueName: "seconds"))
    var idleTimeout = 75.0
    @Option(
        help: ArgumentHelp(
            "Seconds a request's headers may take to arrive; a client still sending them is disconnected.",
            valueName: "seconds"))
    var headerTimeout = 30.0
    @Option(
        help: ArgumentHelp(
            "The slowest a request body may arrive, in bytes a second (measured over 30 s of waiting for it); a slower "
                + "one gets 408 and its connection is closed. 0: no minimum.",
            valueName: "bytes"))
    var minBodyRate = 512
    @Option(
        help: ArgumentHelp(
            "The most connections one client address may hold open; more are closed as they open (default: no "
                + "limit, as behind a reverse proxy, where every client has the proxy's address).",
            valueName: "N"))
    var maxConnectionsPerAddress: Int?
    @Option(
        help: ArgumentHelp(
            "Hours a pending route builder (an interrupted upload or recording) may go without a batch before it is "
                + "discarded; 0 keeps them.", valueName: "hours"))
    var builderExpiryHours = 24.0
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @OptionGroup var archiveOptions: ArchiveOptions
    @Option(
        help: ArgumentHelp(
            "The web view's basemap: a raster tile server's URL template (https://…/{z}/{x}/{y}.png; fetched by "
                + "this server, never by the browser, and cached) or an MBTiles file (offline). Served at "
                + "/tiles/{z}/{x}/{y}.",
            valueName: "URL-TEMPLATE|FILE.mbtiles"))
    var tiles: String?
    @Option(
        help: ArgumentHelp(
            "The attribution the tile server's terms ask for, shown on the map (an MBTiles file's own by default).",
            valueName: "text"))
    var tilesAttribution: String?
    @Option(
        help: ArgumentHelp(
            "The folder of the tile cache (default: $XDG_CACHE_HOME/routekit/tiles or ~/.cache/routekit/tiles).",
            valueName: "folder"))
    var tilesCache: String?
    @Option(
        help: ArgumentHelp(
            "The most the tile cache holds (bytes, or with K, M or G: 512M); the least recently used tiles go first.",
            valueName: "size"))
    var tilesCacheBytes = "512M"
    @Option(help: ArgumentHelp("The highest zoom asked of the tile server (0–22).", valueName: "zoom"))
    var tilesMaxZoom = 19
    @Option(
        help: ArgumentHelp(
            "Where Leaflet is installed (Debian: libjs-leaflet); without it the web view draws its own plain map.",
            valueName: "folder"))
    var leafletDir = "/usr/share/javascript/leaflet"

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535.") }
        if maxUploadMb < 1 { throw ValidationError("--max-upload-mb must be at least 1.") }
        if maxStreamsPerToken < 1 { throw ValidationError("--max-streams-per-token must be at least 1.") }
        if let n = maxConcurrentImports, n < 1 { throw ValidationError("--max-concurrent-imports must be at least 1.") }
        if let maxPictures, maxPictures < 1 { throw ValidationError("--max-pictures must be at least 1.") }
        if !(idleTimeout > 0 && idleTimeout <= 86_400) {
            throw ValidationError("--idle-timeout must be more than 0 and at most 86400 seconds.")
        }
        if !(headerTimeout > 0 && headerTimeout <= 3_600) {
            throw ValidationError("--header-timeout must be more than 0 and at most 3600 seconds.")
        }
        if minBodyRate < 0 { throw ValidationError("--min-body-rate must be 0 or more.") }
        if let n = maxConnectionsPerAddress, n < 1 {
            throw ValidationError("--max-connections-per-address must be at least 1.")
        }
        if !(builderExpiryHours >= 0 && builderExpiryHours <= 87_600) {
            throw ValidationError("--builder-expiry-hours must be from 0 to 87600.")
        }
        if !(0...22).contains(tilesMaxZoom) { throw ValidationError("--tiles-max-zoom must be from 0 to 22.") }
        guard let bytes = Self.byteCount(tilesCacheBytes), bytes >= 1 << 20 else {
            throw ValidationError("--tiles-cache-bytes must be at least 1M (a number of bytes, or with K, M or G).")
        }
        if tiles == nil && (tilesAttribution != nil || tilesCache != nil) {
            throw ValidationError("--tiles-attribution and --tiles-cache go with --tiles.")
        }
    }

    /// `512M`, `2G`, `65536`: a size in bytes (K, M, G: powers of 1024); `nil` when it is none.
    static func byteCount(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(t)
        var unit = 1
        if let last = t.last, let u = units[last] {
            unit = u
            digits = t.dropLast()
        }
        guard let n = Int(digits), n >= 0, n <= Int.max / unit else { return nil }
        return n * unit
    }

    func run() async throws {
        #if Server
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw ValidationError(
                    "--log-level must be one of trace, debug, info, notice, warning, error, critical.")
            }
            var logger = Logger(label: "routekit.serve")
            logger.logLevel = level
            let store = try await runReportingErrors { () async throws -> any RouteStore & TokenStore in
                var driverLogger = logger
                driverLogger[metadataKey: "component"] = "postgres"
                guard
                    let s = try await storeOptions.open(
                        creating: true, driverLog: Self.driverLog(driverLogger), longRunning: true)
                        as? any RouteStore & TokenStore
                else {
                    throw RouteKitError(.invalidArgument, "this store cannot hold API tokens")
                }
                return s
            }
            var configuration = ServerConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.maxUploadBytes = maxUploadMb << 20
            configuration.maxStreamsPerToken = maxStreamsPerToken
            if let maxConcurrentImports { configuration.maxConcurrentImports = maxConcurrentImports }
            if let maxPictures { configuration.maxConcurrentPictures = maxPictures }
            configuration.idleTimeoutSeconds = idleTimeout
            configuration.headerTimeoutSeconds = headerTimeout
            configuration.minimumBodyBytesPerSecond = minBodyRate
            configuration.maxConnectionsPerAddress = maxConnectionsPerAddress
            configuration.pendingBuilderExpirySeconds = builderExpiryHours > 0 ? builderExpiryHours * 3600 : nil
            configuration.archiveLimits = archiveOptions.limits
            configuration.leafletDirectory = leafletDir
            if let tiles {
                configuration.tiles = try await runReportingErrors { () -> TileProvider in
                    var settings = TileConfiguration(
                        source: try TileConfiguration.parseSource(tiles), attribution: tilesAttribution ?? "",
                        cacheDirectory: tilesCache ?? TileConfiguration.defaultCacheDirectory,
                        userAgent: TileConfiguration.userAgent(
                            version: RouteKitCommand.configuration.version))
                    settings.cacheBytes = Self.byteCount(tilesCacheBytes) ?? settings.cacheBytes
                    settings.maximumZoom = tilesMaxZoom
                    return try TileProvider(settings, logger: logger)
                }
            }
            let server = RouteKitServer(store: store, configuration: configuration, logger: logger)
            let label = storeOptions.label
            let host = self.host
            // A store that is a service (PostgreSQL's pool) runs beside the server and closes at shutdown.
            let app = server.makeApplication(services: [store as? any Service].compactMap { $0 }) { port in
                printError("routekit serve: listening on http://\(host):\(port) (store \(label))")
            }
            do {
                try await app.runService()
            } catch {
                // A port in use is a person's mistake, said as such (not the socket call's errno).
                guard let reason = RouteKitServer.listenFailure(error) else { throw error }
                printError("routekit serve: cannot listen on \(host):\(port): \(reason)")
                throw exitInputFailed
            }
        #else
            printError("error: \(withoutServer)")
            throw exitInputFailed
        #endif
    }

    #if Server
        /// The driver log for the store: the server's logger (at its level), as a component of its own.
        static func driverLog(_ logger: Logger) -> DriverLog {
            #if Postgres
                DriverLog(logger: logger)
            #else
                DriverLog()
            #endif
        }
    #endif
}

struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Create, list and revoke the API tokens of `routekit serve`.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Make an API token and print it (once: the store keeps only a hash of it).",
            discussion: """
                A token writes as one source (--source) and has scopes: read (workouts, routes, the change \
                feed), write (uploads, as its source), admin. --read-source limits what it reads to some \
                sources; it then never learns that other sources' objects exist.

                Examples:
                  routekit tokens create --source my-phone --scope read,write --name phone
                  routekit tokens create --source dashboard --scope read --read-source my-phone --expires-days 30
                """)

        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "The source the token writes as.") var source: String
        @Option(help: "Scopes, comma-separated: read, write, admin.") var scope = "read"
        @Option(help: "A name for people (shown by `tokens list`).") var name = ""
        @Option(help: "Limit reading to this source (repeat for several); default: every source.")
        var readSource: [String] = []
        @Option(help: "The token stops working after this many days.") var expiresDays: Double?

        func validate() throws {
            if let d = expiresDays, !(d > 0 && d.isFinite) { throw ValidationError("--expires-days must be above 0.") }
        }

        func run() async throws {
            #if Server
                try await runReportingErrors {
                    let store = try await tokenStore(storeOptions, creating: true)
                    let scopes = try APIToken.scopes(from: scope)
                    guard !scopes.isEmpty else { throw RouteKitError(.invalidArgument, "give at least one --scope") }
                    let readable = readSource.isEmpty ? nil : Set(try readSource.map { try Source(name: $0) })
                    let made = TokenText.make(
                        name: name, source: try Source(name: source), scopes: scopes, readableSources: readable,
                        expires: expiresDays.map { Date().addingTimeInterval($0 * 86_400) })
                    try await store.saveToken(made.token)
                    print(made.text)
                    printError(
                        "token \(made.token.id.uuidString.lowercased()) for source \(source) (\(made.token.scopesText)); "
                            + "this is the only time it is shown")
                }
            #else
                printError("error: \(withoutServer)")
                throw exitInputFailed
            #endif
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List API tokens (never their secrets).")
        @OptionGroup var storeOptions: StoreOptions
        @Flag(help: "One JSON object per token, one per line.") var json = false

        struct TokenJSON: Encodable {
            var id, name, source, scopes, created: String
            var readSources: [String]?
            var expires, revoked, lastUsed: String?
            var active: Bool
        }

        func run() async throws {
            #if Server
                try await runReportingErrors {
                    let store = try await tokenStore(storeOptions)
                    let now = Date()
                    let tokens = try await store.tokens()
                    for t in tokens {
                        let iso = { (d: Date?) in d.map { Timestamp($0).iso8601 } }
                        if json {
                            printJSONLine(
                                TokenJSON(
                                    id: t.id.uuidString.lowercased(), name: t.name, source: t.source.name,
                                    scopes: t.scopesText, created: Timestamp(t.created).iso8601,
                                    readSources: t.readableSources?.map(\.name).sorted(), expires: iso(t.expires),
                                    revoked: iso(t.revoked), lastUsed: iso(t.lastUsed), active: t.isActive(at: now)))
                        } else {
                            let state = t.revoked != nil ? "revoked" : (t.isActive(at: now) ? "active" : "expired")
                            print(
                                "\(t.id.uuidString.lowercased()) \(column(state, 8)) \(column(t.source.name, 16)) "
                                    + "\(column(t.scopesText, 16)) \(t.name)")
                        }
                    }
                    if !json { print("\(tokens.count) token(s) in \(storeOptions.label)") }
                }
            #else
                printError("error: \(withoutServer)")
                throw exitInputFailed
            #endif
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke API tokens by id: requests with them get 401 from then on.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "Token ids (from `tokens list`).") var ids: [String]

        func run() async throws {
            #if Server
                try await runReportingErrors {
                    let store = try await tokenStore(storeOptions)
                    var missing = false
                    for text in ids {
                        if try await store.revokeToken(id: try parseUUID(text), at: Date()) {
                            print("revoked \(text)")
                        } else {
                            printError("error: no token \(text)")
                            missing = true
                        }
                    }
                    if missing { throw exitInputFailed }
                }
            #else
                printError("error: \(withoutServer)")
                throw exitInputFailed
            #endif
        }
    }
}

/// The store, as a keeper of tokens (made first when `creating`: a new store's first token comes before any upload).
func tokenStore(_ options: StoreOptions, creating: Bool = false) async throws(RouteKitError)
    -> any RouteStore & TokenStore
{
    guard let store = try await options.open(creating: creating) as? any RouteStore & TokenStore else {
        throw RouteKitError(.invalidArgument, "this store cannot hold API tokens")
    }
    return store
}
