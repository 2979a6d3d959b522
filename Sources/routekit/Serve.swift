import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitImport

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
              POST /v1/webhooks {"url", "types"}  push the person's changes to a URL, signed → its secret (once)
              GET  /v1/webhooks, /v1/webhooks/ID  state, cursor, last attempts; DELETE, POST …/rotate, …/resume
              GET  /healthz, /readyz

            Settings: each option below, else its environment variable (ROUTEKIT_ and the option's name in \
            capitals: ROUTEKIT_PORT, ROUTEKIT_MAX_UPLOAD_MB, ROUTEKIT_STORE), else the configuration file \
            (--config FILE, JSON or YAML, keyed by the options' names: {"port": 8080} or port: 8080), else the \
            default. --print-config shows the settings in effect and where each comes from. A file that cannot be \
            read, an unknown key or a bad value in the file or the environment stops serve before it starts, \
            naming the file and the key or the variable (exit 78); a bad option is a usage error (exit 64).

            Identity providers: with --jwks (the provider's JSON Web Key Set, a file or an https URL), --issuer and \
            --audience, a bearer JWT signed by one of its keys (RS256, ES256, EdDSA) is accepted too, as the person \
            of its subject (iss and sub; --jwt-people create makes a person on first use, refuse answers 401 \
            unknown-person); its scope claim's read, write, read:TYPE and write:TYPE are its scopes (never admin). \
            Every refused check (expired, not yet valid, wrong issuer or audience, unknown kid, alg none, another \
            algorithm) is a 401 problem of its own type.

            Webhooks: each change set of a subscribed person's feed is POSTed to the subscription's URL following \
            the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature), at least once \
            and in order, from the store's change log (a server stopped mid-delivery loses nothing; servers sharing \
            a store deliver a subscription one at a time). Receivers on loopback and private addresses are refused \
            unless --webhooks-allow-private.

            SIGTERM or Ctrl-C drains: the server stops accepting connections, lets requests in flight finish \
            (an upload being received is imported and answered), refuses a request that arrives meanwhile on an \
            open connection with 503 and Retry-After, sends each event stream a last `shutdown` event and closes \
            it (clients resume with Last-Event-ID), then exits 0.

            Examples:
              routekit tokens create --source my-phone --scope read,write
              routekit serve --port 8080
              ROUTEKIT_PORT=9000 routekit serve --config /etc/routekit/serve.yaml --print-config
              curl -H "Authorization: Bearer $TOKEN" --data-binary @run.gpx 'http://127.0.0.1:8080/v1/uploads?name=run.gpx'
              curl -N -H "Authorization: Bearer $TOKEN" -H 'Accept: text/event-stream' http://127.0.0.1:8080/v1/changes
            """)

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: ServeSetting.host.help) var host: String?
    @Option(help: ServeSetting.port.help) var port: Int?
    @Option(help: ServeSetting.maxUploadMb.help) var maxUploadMb: Int?
    @Option(help: ServeSetting.maxStreamsPerToken.help) var maxStreamsPerToken: Int?
    @Option(help: ServeSetting.maxStreamsPerPerson.help) var maxStreamsPerPerson: Int?
    @Option(help: ServeSetting.maxUploadsPerMinute.help) var maxUploadsPerMinute: Int?
    @Option(help: ServeSetting.maxStoragePerPersonMb.help) var maxStoragePerPersonMb: Int?
    @Option(help: ServeSetting.maxConcurrentImports.help) var maxConcurrentImports: Int?
    @Option(help: ServeSetting.maxPictures.help) var maxPictures: Int?
    @Option(help: ServeSetting.idleTimeout.help) var idleTimeout: Double?
    @Option(help: ServeSetting.headerTimeout.help) var headerTimeout: Double?
    @Option(help: ServeSetting.minBodyRate.help) var minBodyRate: Int?
    @Option(help: ServeSetting.maxConnectionsPerAddress.help) var maxConnectionsPerAddress: Int?
    @Option(help: ServeSetting.builderExpiryHours.help) var builderExpiryHours: Double?
    @Option(help: ServeSetting.logLevel.help) var logLevel: String?
    @Option(help: ServeSetting.maxArchiveEntries.help) var maxArchiveEntries: Int?
    @Option(help: ServeSetting.maxEntryMb.help) var maxEntryMb: Int?
    @Option(
        help: ArgumentHelp(
            "A configuration file of settings: JSON (.json) or YAML (.yaml, .yml), one object whose keys are the "
                + "options' names without dashes (port, max-upload-mb, store). Options and ROUTEKIT_ environment "
                + "variables take precedence over it.", valueName: "FILE"))
    var config: String?
    @Flag(help: "Print the settings in effect, each with where it comes from, and exit (nothing is opened).")
    var printConfig = false
    /// The README's table of settings (`ServeSetting.markdownTable`), for the test that holds them equal.
    @Flag(help: .hidden) var settingsTable = false
    @Option(help: ServeSetting.tiles.help) var tiles: String?
    @Option(help: ServeSetting.tilesAttribution.help) var tilesAttribution: String?
    @Option(help: ServeSetting.tilesCache.help) var tilesCache: String?
    @Option(help: ServeSetting.tilesCacheBytes.help) var tilesCacheBytes: String?
    @Option(help: ServeSetting.tilesMaxZoom.help) var tilesMaxZoom: Int?
    @Option(help: ServeSetting.leafletDir.help) var leafletDir: String?
    @Option(help: ServeSetting.jwks.help) var jwks: String?
    @Option(help: ServeSetting.issuer.help) var issuer: String?
    @Option(help: ServeSetting.audience.help) var audience: String?
    @Option(help: ServeSetting.jwtPeople.help) var jwtPeople: String?
    @Flag(inversion: .prefixedNo, help: ServeSetting.webhooksAllowPrivate.help) var webhooksAllowPrivate: Bool?

    /// The settings given as options, by name.
    var givenOptions: [String: ServeValue] {
        var given: [String: ServeValue] = [:]
        func put(_ setting: ServeSetting, _ value: ServeValue?) {
            if let value { given[setting.name] = value }
        }
        put(.store, storeOptions.store.map(ServeValue.text))
        put(.host, host.map(ServeValue.text))
        put(.port, port.map(ServeValue.integer))
        put(.maxUploadMb, maxUploadMb.map(ServeValue.integer))
        put(.maxStreamsPerToken, maxStreamsPerToken.map(ServeValue.integer))
        put(.maxStreamsPerPerson, maxStreamsPerPerson.map(ServeValue.integer))
        put(.maxUploadsPerMinute, maxUploadsPerMinute.map(ServeValue.integer))
        put(.maxStoragePerPersonMb, maxStoragePerPersonMb.map(ServeValue.integer))
        put(.maxConcurrentImports, maxConcurrentImports.map(ServeValue.integer))
        put(.maxPictures, maxPictures.map(ServeValue.integer))
        put(.idleTimeout, idleTimeout.map(ServeValue.decimal))
        put(.headerTimeout, headerTimeout.map(ServeValue.decimal))
        put(.minBodyRate, minBodyRate.map(ServeValue.integer))
        put(.maxConnectionsPerAddress, maxConnectionsPerAddress.map(ServeValue.integer))
        put(.builderExpiryHours, builderExpiryHours.map(ServeValue.decimal))
        put(.logLevel, logLevel.map(ServeValue.text))
        put(.maxArchiveEntries, maxArchiveEntries.map(ServeValue.integer))
        put(.maxEntryMb, maxEntryMb.map(ServeValue.integer))
        put(.tiles, tiles.map(ServeValue.text))
        put(.tilesAttribution, tilesAttribution.map(ServeValue.text))
        put(.tilesCache, tilesCache.map(ServeValue.text))
        put(.tilesCacheBytes, tilesCacheBytes.map(ServeValue.text))
        put(.tilesMaxZoom, tilesMaxZoom.map(ServeValue.integer))
        put(.leafletDir, leafletDir.map(ServeValue.text))
        put(.jwks, jwks.map(ServeValue.text))
        put(.issuer, issuer.map(ServeValue.text))
        put(.audience, audience.map(ServeValue.text))
        put(.jwtPeople, jwtPeople.map(ServeValue.text))
        put(.webhooksAllowPrivate, webhooksAllowPrivate.map(ServeValue.flag))
        return given
    }

    /// A bad option is a usage error (64) naming it; the environment's and the file's values are checked in `run`.
    func validate() throws {
        let given = givenOptions
        for setting in ServeSetting.all {
            guard let value = given[setting.name], let problem = setting.problem(value) else { continue }
            throw ValidationError("\(setting.option) \(problem).")
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
        if settingsTable {
            print(ServeSetting.markdownTable)
            return
        }
        #if Server
            guard #available(macOS 15, *) else {
                printError("error: routekit serve needs macOS 15 or later (swift-configuration reads its settings)")
                throw exitInputFailed
            }
            let settings: ServeSettings
            do throws(RouteKitError) {
                settings = try await ServeSettings.resolve(
                    options: givenOptions, configFile: config, environment: ProcessInfo.processInfo.environment)
            } catch {
                printError("error: \(error.message)")
                throw exitConfiguration
            }
            var chosen = self.storeOptions
            chosen.store = settings.text(.store)
            let storeOptions = chosen
            var configuration = Self.serverConfiguration(settings)
            // Tests of serve as a child process (killed during webhook deliveries) need a dead server's lease and
            // the retries to last seconds, not minutes: a switch for tests, not a setting.
            if ProcessInfo.processInfo.environment["ROUTEKIT_TEST_QUICK_WEBHOOKS"] == "1" {
                configuration.webhooks = .quick
            }
            if settings.text(.tiles) == nil
                && (settings.text(.tilesAttribution) != nil || settings.text(.tilesCache) != nil)
            {
                printError("error: tiles-attribution and tiles-cache go with tiles (--tiles, ROUTEKIT_TILES)")
                throw exitConfiguration
            }
            let identitySettings: IdentityProviderSettings?
            do throws(RouteKitError) {
                identitySettings = try Self.identityProviderSettings(settings)
            } catch {
                printError("error: \(error.message)")
                throw exitConfiguration
            }
            if printConfig {
                print(Self.describe(settings, configuration, store: storeOptions.label), terminator: "")
                return
            }
            var logger = Logger(label: "routekit.serve")
            logger.logLevel = settings.text(.logLevel).flatMap { Logger.Level(rawValue: $0) } ?? .info
            let store = try await runReportingErrors {
                () async throws -> any RouteStore & TokenStore & PeopleStore in
                var driverLogger = logger
                driverLogger[metadataKey: "component"] = "postgres"
                guard
                    let s = try await storeOptions.open(
                        creating: true, driverLog: Self.driverLog(driverLogger), longRunning: true)
                        as? any RouteStore & TokenStore & PeopleStore
                else {
                    throw RouteKitError(.invalidArgument, "this store cannot hold API tokens and people")
                }
                return s
            }
            if let identitySettings {
                var identityLogger = logger
                identityLogger[metadataKey: "component"] = "identity-provider"
                let identity = IdentityProvider(settings: identitySettings, logger: identityLogger)
                do throws(RouteKitError) {
                    try await identity.load()
                } catch {
                    // A file is the operator's to fix; a URL may be down for a while, and is tried again on a token.
                    guard case .url = identitySettings.keys else {
                        printError("error: \(error.message)")
                        throw exitConfiguration
                    }
                    printError(
                        "routekit serve: warning: \(error.message); identity-provider tokens are refused until it "
                            + "answers (it is asked again on a token's unknown key, at most once a minute)")
                }
                configuration.identityProvider = identity
            }
            if let tiles = settings.text(.tiles) {
                let cacheBytes = settings.text(.tilesCacheBytes).flatMap(Self.byteCount)
                let maximumZoom = settings.integer(.tilesMaxZoom)
                let attribution = settings.text(.tilesAttribution)
                let cache = settings.text(.tilesCache)
                configuration.tiles = try await runReportingErrors { () -> TileProvider in
                    var tileSettings = TileConfiguration(
                        source: try TileConfiguration.parseSource(tiles), attribution: attribution ?? "",
                        cacheDirectory: cache ?? TileConfiguration.defaultCacheDirectory,
                        userAgent: TileConfiguration.userAgent(version: RouteKitCommand.configuration.version))
                    if let cacheBytes { tileSettings.cacheBytes = cacheBytes }
                    if let maximumZoom { tileSettings.maximumZoom = maximumZoom }
                    return try TileProvider(tileSettings, logger: logger)
                }
            }
            let server = RouteKitServer(store: store, configuration: configuration, logger: logger)
            let label = storeOptions.label
            let host = configuration.host
            let port = configuration.port
            // A store that is a service (PostgreSQL's pool) runs beside the server and closes at shutdown.
            let app = server.makeApplication(services: [store as? any Service].compactMap { $0 }) { port in
                printError("routekit serve: listening on http://\(host):\(port) (store \(label))")
            }
            do {
                try await app.runService()
            } catch {
                // A port in use is a person's mistake, said as such (not the socket call's errno), with how to choose
                // another.
                guard let failure = RouteKitServer.listenFailure(error, host: host, port: port) else { throw error }
                let hint =
                    failure.portAtFault
                    ? "choose another port with --port N or ROUTEKIT_PORT=N (--port 0 takes any free one)"
                    : "choose another address with --host (127.0.0.1: this machine only; 0.0.0.0: every interface)"
                printError("routekit serve: cannot listen on \(host):\(port): \(failure.reason); \(hint)")
                throw exitInputFailed
            }
        #else
            printError("error: \(withoutServer)")
            throw exitInputFailed
        #endif
    }

    #if Server
        /// The server's configuration from `settings` (a setting whose default is computed keeps the configuration's).
        static func serverConfiguration(_ settings: ServeSettings) -> ServerConfiguration {
            var configuration = ServerConfiguration()
            if let host = settings.text(.host) { configuration.host = host }
            if let port = settings.integer(.port) { configuration.port = port }
            if let mb = settings.integer(.maxUploadMb) { configuration.maxUploadBytes = mb << 20 }
            if let n = settings.integer(.maxStreamsPerToken) { configuration.maxStreamsPerToken = n }
            if let n = settings.integer(.maxStreamsPerPerson) { configuration.maxStreamsPerPerson = n }
            if let n = settings.integer(.maxUploadsPerMinute) { configuration.maxUploadsPerMinutePerPerson = n }
            if let mb = settings.integer(.maxStoragePerPersonMb), mb > 0 {
                configuration.maxStoredBytesPerPerson = Int64(mb) << 20
            }
            if let n = settings.integer(.maxConcurrentImports) { configuration.maxConcurrentImports = n }
            if let n = settings.integer(.maxPictures) { configuration.maxConcurrentPictures = n }
            if let seconds = settings.decimal(.idleTimeout) { configuration.idleTimeoutSeconds = seconds }
            if let seconds = settings.decimal(.headerTimeout) { configuration.headerTimeoutSeconds = seconds }
            if let rate = settings.integer(.minBodyRate) { configuration.minimumBodyBytesPerSecond = rate }
            configuration.maxConnectionsPerAddress = settings.integer(.maxConnectionsPerAddress)
            if let hours = settings.decimal(.builderExpiryHours) {
                configuration.pendingBuilderExpirySeconds = hours > 0 ? hours * 3600 : nil
            }
            var limits = ArchiveLimits()
            if let n = settings.integer(.maxArchiveEntries) { limits.maxEntries = n }
            if let mb = settings.integer(.maxEntryMb) { limits.maxEntryBytes = mb << 20 }
            configuration.archiveLimits = limits
            if let folder = settings.text(.leafletDir) { configuration.leafletDirectory = folder }
            if let on = settings.flag(.webhooksAllowPrivate) { configuration.webhooksAllowPrivate = on }
            return configuration
        }

        /// The identity provider's settings (`jwks`, `issuer`, `audience`, `jwt-people`); `nil` without `jwks`.
        ///
        /// - Throws: `RouteKitError.Code.invalidArgument` when `jwks` comes without `issuer` or `audience`, or either
        ///   without `jwks`, or `jwks` is neither a file nor an https URL.
        static func identityProviderSettings(
            _ settings: ServeSettings
        ) throws(RouteKitError) -> IdentityProviderSettings? {
            let issuer = settings.text(.issuer)
            let audience = settings.text(.audience)
            guard let jwks = settings.text(.jwks) else {
                if issuer != nil || audience != nil {
                    throw RouteKitError(.invalidArgument, "issuer and audience go with jwks (--jwks, ROUTEKIT_JWKS)")
                }
                return nil
            }
            guard let issuer, let audience else {
                throw RouteKitError(
                    .invalidArgument,
                    "jwks needs issuer and audience (--issuer, ROUTEKIT_ISSUER; --audience, ROUTEKIT_AUDIENCE): a "
                        + "token is accepted only when its iss is the identity provider's and its aud names this "
                        + "server")
            }
            let people = settings.text(.jwtPeople).flatMap { IdentityProviderSettings.UnknownSubjects(rawValue: $0) }
            return IdentityProviderSettings(
                keys: try IdentityProviderSettings.KeySet(jwks), issuer: issuer, audience: audience,
                unknownSubjects: people ?? .refuse)
        }

        /// `--print-config`: one line per setting, `name = value (where it comes from)`; the store without its
        /// password (`store`), and the computed defaults as computed on this machine.
        static func describe(_ settings: ServeSettings, _ configuration: ServerConfiguration, store: String) -> String {
            var text = ""
            for setting in ServeSetting.all {
                let entry = settings.entries[setting.name]
                let value: String
                switch setting.name {
                case ServeSetting.store.name: value = store
                case ServeSetting.maxConcurrentImports.name: value = String(configuration.maxConcurrentImports)
                case ServeSetting.maxPictures.name: value = String(configuration.maxConcurrentPictures)
                case ServeSetting.maxConnectionsPerAddress.name:
                    value = configuration.maxConnectionsPerAddress.map { String($0) } ?? "no limit"
                case ServeSetting.maxStoragePerPersonMb.name:
                    value = configuration.maxStoredBytesPerPerson.map { String($0 >> 20) } ?? "0 (no limit)"
                default: value = entry?.value?.description ?? setting.defaultText
                }
                text += "\(setting.name) = \(value) (\(entry?.source ?? "default"))\n"
            }
            return text
        }

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
                A token acts as one person (--person; the default person without it), writes as one of their \
                sources (--source) and has scopes: read (workouts, routes, effort scores, every series, the \
                change feed), write (uploads, as its source), admin. As HealthKit authorizes per data type, read \
                and write can be narrowed to one type of object: read:TYPE and write:TYPE, with TYPE one of \
                workouts, routes, effort, or a quantity type (heartRate, cadence, temperature, waterTemperature, \
                depth, power). A token without read:heartRate (nor read) never sees heart-rate series, nor heart \
                rate in statistics, zones, pictures, exports, archives or the feed. Uploads need write:workouts \
                and write:routes. --read-source limits what it reads to some sources; it then never learns that \
                other sources' objects exist. A token with only the admin scope is an admin token: it manages \
                people and tokens (/v1/people) and reads no one's data.

                Examples:
                  routekit tokens create --source my-phone --scope read,write --name phone
                  routekit tokens create --person 3f2a9c1e --source watch --scope read,write
                  routekit tokens create --scope admin --name operator
                  routekit tokens create --source dashboard --scope read --read-source my-phone --expires-days 30
                  routekit tokens create --source map --scope read:workouts,read:routes --name "map, no heart rate"
                """)

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var person: PersonOption
        @Option(help: "The source the token writes as (default: admin for an admin token).") var source: String?
        @Option(
            help:
                "Scopes, comma-separated: read, write, admin, read:TYPE, write:TYPE (TYPE: workouts, routes, effort, heartRate, power, …)."
        ) var scope = "read"
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
                    // Only `admin`: an admin token, no one's. With read or write too: a person's token that may
                    // also administer (as tokens made before people existed).
                    let isAdminToken = scopes == [.admin]
                    if isAdminToken, person.person != nil {
                        throw RouteKitError(
                            .invalidArgument, "an admin token is no one's: give --person with read or write scopes")
                    }
                    // The person it acts as: --person's (the default person without it).
                    let owner: PersonID? = isAdminToken ? nil : try await person.view(of: store).person
                    guard let sourceName = source ?? (isAdminToken ? "admin" : nil) else {
                        throw RouteKitError(.invalidArgument, "give --source: the source the token writes as")
                    }
                    let readable = readSource.isEmpty ? nil : Set(try readSource.map { try Source(name: $0) })
                    let made = TokenText.make(
                        name: name, person: owner, source: try Source(name: sourceName), scopes: scopes,
                        readableSources: readable, expires: expiresDays.map { Date().addingTimeInterval($0 * 86_400) })
                    try await store.saveToken(made.token)
                    print(made.text)
                    let whose = owner.map { "person \($0), source \(sourceName)" } ?? "admin token"
                    printError(
                        "token \(made.token.id.uuidString.lowercased()) for \(whose) (\(made.token.scopesText)); "
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
            /// The person it acts as; absent for an admin token.
            var person: String?
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
                                    person: t.person?.description,
                                    readSources: t.readableSources?.map(\.name).sorted(), expires: iso(t.expires),
                                    revoked: iso(t.revoked), lastUsed: iso(t.lastUsed), active: t.isActive(at: now)))
                        } else {
                            let state = t.revoked != nil ? "revoked" : (t.isActive(at: now) ? "active" : "expired")
                            print(
                                "\(t.id.uuidString.lowercased()) \(column(state, 8)) "
                                    + "\(column(t.person.map { String($0.description.prefix(8)) } ?? "admin", 8)) "
                                    + "\(column(t.source.name, 16)) \(column(t.scopesText, 16)) \(t.name)")
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
    -> any RouteStore & TokenStore & PeopleStore
{
    guard let store = try await options.open(creating: creating) as? any RouteStore & TokenStore & PeopleStore else {
        throw RouteKitError(.invalidArgument, "this store cannot hold API tokens")
    }
    return store
}
