#if Server
    import Foundation
    import HTTPTypes
    public import Hummingbird
    public import Logging
    import NIOCore
    public import RouteKit
    import RouteKitIngest
    public import ServiceLifecycle

    /// RouteKit's HTTP service (`routekit serve`): upload files, read workouts and routes, delete them and relate
    /// effort scores, and tail the change feed (one JSON change set, a long-poll, or Server-Sent Events), for holders
    /// of API tokens. The contract is the OpenAPI document served at `/v1/openapi.yaml`
    /// (`Sources/RouteKitServer/openapi.yaml`).
    public struct RouteKitServer: Sendable {
        /// The store served: its routes and workouts, its API tokens, and its people (whom identity-provider tokens
        /// act as).
        public let store: any RouteStore & TokenStore & PeopleStore
        /// Where it listens and its limits.
        package let configuration: ServerConfiguration
        /// Where request logs go (a request id in every line; never a token or a coordinate).
        package let logger: Logger

        /// Creates a server for `store`.
        public init(
            store: any RouteStore & TokenStore & PeopleStore, configuration: ServerConfiguration, logger: Logger
        ) {
            self.store = store
            self.configuration = configuration
            self.logger = logger
        }

        /// The OpenAPI 3.1 document of the API.
        public static let openAPIDocument: [UInt8] = PackageResources.openapi_yaml

        /// Why the server could not listen on `host`:`port`, for people, when `error` (thrown by running the
        /// application of ``makeApplication(services:onListening:)``) is the listening socket's: a port in use (another
        /// server on it), a port that needs privileges, an address that is not this machine's; `nil` for any other
        /// error. `portAtFault` says whether another port would do (else the address is at fault).
        package static func listenFailure(
            _ error: any Error, host: String, port: Int
        ) -> (reason: String, portAtFault: Bool)? {
            guard let error = error as? IOError else { return nil }
            switch error.errnoCode {
            case EADDRINUSE: return ("port \(port) is already in use (another routekit serve?)", true)
            case EACCES: return ("port \(port) needs privileges (every port below 1024 does)", true)
            case EADDRNOTAVAIL: return ("\(host) is not an address of this machine", false)
            default: return nil
            }
        }

        /// The router and its services (the feed's commit watcher), for ``makeApplication(services:onListening:)`` and tests.
        func makeRouter(hub: FeedHub) -> Router<RouteKitRequestContext> {
            let base = Router(context: RouteKitRequestContext.self)
            // Every GET path answers HEAD too (RecordingRouter.get), and a path served with other methods 405.
            let metrics = hub.metrics
            let table = MethodTable()
            base.middlewares.add(ProblemMiddleware(logger: logger, metrics: metrics, methods: table))
            base.middlewares.add(ShutdownGate())
            base.middlewares.add(
                TokenAuthenticator(store: store, identity: configuration.identityProvider, people: store))
            let router = RecordingRouter(router: base, table: table)
            let store = self.store
            WebView.add(to: router)
            WebMapRoutes(
                tiles: configuration.tiles,
                leaflet: configuration.leafletDirectory.flatMap { LeafletAssets(directory: $0) }
            ).add(to: router)
            router.get("/healthz") { _, _ in JSONBody.response(["status": "ok"]) }
            let readinessLogger = logger
            router.get("/readyz") { _, _ -> Response in
                do throws(RouteKitError) {
                    // A store that can check its writes does (a full disk, a deleted store file); any other is read.
                    if let ready = store as? any StoreReadiness {
                        try await ready.checkReady()
                    } else {
                        _ = try await store.currentAnchor()
                    }
                } catch {
                    readinessLogger.error(
                        "not ready: the store cannot be written",
                        metadata: ["code": "\(error.code)", "why": "\(error.message)"])
                    var problem = Problem(error)
                    problem.status = .serviceUnavailable
                    problem.headers[.retryAfter] = "2"
                    throw problem
                }
                return JSONBody.response(["status": "ready"])
            }
            router.get("/metrics") { _, context -> Response in
                _ = try context.require(.admin)
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4", .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.text())))
            }
            router.get("/v1/openapi.yaml") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/yaml", .cacheControl: "no-cache"],
                    body: .init(byteBuffer: ByteBuffer(bytes: Self.openAPIDocument)))
            }
            router.post("/v1/stream-tickets") { _, context -> Response in
                // For the change feed: any read scope, as the feed itself.
                let token = try context.requireSomeRead()
                // A ticket is checked against its token in the store, where an identity provider's never is.
                guard !context.tokenFromIdentityProvider else { throw Problem.ticketUnavailable }
                let (ticket, expires) = StreamTicket.make(for: token)
                return JSONBody.response(
                    ["ticket": ticket, "expires": Timestamp(expires).iso8601], status: .created)
            }
            let stores = PersonStores(base: store)
            PeopleRoutes(stores: stores).add(to: router)
            WebhookRoutes(stores: stores, configuration: configuration).add(to: router)
            let feed = FeedRoutes(stores: stores, hub: hub, configuration: configuration)
            router.get("/v1/changes", use: feed.changes)
            let figures = FiguresQueue(stores: stores)
            // Each person's storage quota, when there is one (0 or less is none).
            let quota = configuration.maxStoredBytesPerPerson.flatMap { limit -> StorageQuota? in
                guard limit > 0 else { return nil }
                return StorageQuota(
                    limit: limit, people: store, freshFor: .seconds(configuration.storageMeasureSeconds))
            }
            let uploads = UploadRoutes(
                stores: stores, configuration: configuration, metrics: metrics, figures: figures,
                rate: PersonRate(perMinute: configuration.maxUploadsPerMinutePerPerson), quota: quota)
            router.post("/v1/uploads", use: uploads.upload)
            let reads = ReadRoutes(stores: stores, configuration: configuration)
            router.get("/v1/workouts", use: reads.workouts)
            router.get("/v1/workouts/:id", use: reads.workout)
            router.get("/v1/workouts/:id/stats", use: reads.stats)
            router.get("/v1/workouts/:id/splits", use: reads.splits)
            router.get("/v1/workouts/:id/series", use: reads.seriesTypes)
            router.get("/v1/workouts/:id/series/:type", use: reads.series)
            router.get("/v1/workouts/:id/effort", use: reads.effort)
            let writes = WriteRoutes(stores: stores, quota: quota)
            router.delete("/v1/workouts/:id", use: writes.deleteWorkout)
            router.post("/v1/workouts/:id/effort", use: writes.relateEffort)
            router.delete("/v1/workouts/:id/effort/:scoreID", use: writes.unrelateEffort)
            let zones = ZoneRoutes(stores: stores)
            router.get("/v1/zones", use: zones.settings)
            router.get("/v1/zones/:quantity", use: zones.get)
            router.put("/v1/zones/:quantity", use: zones.put)
            router.delete("/v1/zones/:quantity", use: zones.delete)
            router.get("/v1/workouts/:id/zones", use: zones.workoutSettings)
            router.get("/v1/workouts/:id/zones/:quantity", use: zones.workoutGet)
            router.put("/v1/workouts/:id/zones/:quantity", use: zones.workoutPut)
            router.delete("/v1/workouts/:id/zones/:quantity", use: zones.workoutDelete)
            router.get("/v1/routes", use: reads.routes)
            router.get("/v1/routes/:id", use: reads.route)
            router.get("/v1/routes/:id/locations", use: reads.locations)
            router.get("/v1/routes/:id/export", use: reads.export)
            router.get("/v1/routes/:id/picture", use: reads.picture)
            router.get("/v1/routes/:id/profile", use: reads.profile)
            router.delete("/v1/routes/:id", use: writes.deleteRoute)
            let exports = PersonExportRoutes(stores: stores, configuration: configuration)
            router.get("/v1/export", use: exports.archive)
            let builders = BuilderRoutes(
                stores: stores, configuration: configuration, metrics: metrics, figures: figures, hub: hub,
                live: BuilderLive(), quota: quota)
            router.post("/v1/builders", use: builders.create)
            router.get("/v1/builders", use: builders.list)
            router.get("/v1/builders/:id", use: builders.get)
            router.post("/v1/builders/:id/locations", use: builders.append)
            router.post("/v1/builders/:id/samples", use: builders.appendSamples)
            router.post("/v1/builders/:id/events", use: builders.appendEvents)
            router.get("/v1/builders/:id/zones", use: builders.zones)
            router.post("/v1/builders/:id/finish", use: builders.finish)
            router.delete("/v1/builders/:id", use: builders.discard)
            var jobs = JobRoutes(stores: stores, registry: JobRegistry(), logger: logger)
            jobs.saveInterval = .seconds(configuration.jobSaveSeconds)
            router.post("/v1/jobs", use: jobs.start)
            router.get("/v1/jobs/:id", use: jobs.get)
            router.delete("/v1/jobs/:id", use: jobs.cancel)
            return base
        }

        /// The application: the router on HTTP/1.1 with the configured address, idle and header timeouts, and the feed's
        /// commit watcher and the webhook dispatcher as services, beside `services` (a store that runs as one, such as
        /// PostgreSQL's pool, which then closes at shutdown). `onListening` gets the port once the server listens (useful with port 0). Upload
        /// spool folders and export files that a stopped server left in the upload folder (a kill skips their removal)
        /// are removed first; another running server's are left alone.
        public func makeApplication(
            services: [any Service] = [], onListening: @escaping @Sendable (Int) async -> Void = { _ in }
        )
            -> some ApplicationProtocol
        {
            let removed = Spool.sweep(configuration.uploadDirectory)
            if !removed.isEmpty {
                logger.info(
                    "removed the temporary files of stopped servers",
                    metadata: ["count": "\(removed.count)", "folder": "\(configuration.uploadDirectory)"])
            }
            let hub = FeedHub(
                store: store, logger: logger, metrics: ServerMetrics(),
                heartbeatSeconds: configuration.heartbeatSeconds)
            let idleTimeout = TimeAmount.nanoseconds(Int64(configuration.idleTimeoutSeconds * 1e9))
            let headerTimeout = TimeAmount.nanoseconds(Int64(configuration.headerTimeoutSeconds * 1e9))
            let bodyWindow = TimeAmount.nanoseconds(Int64(configuration.bodyRateWindowSeconds * 1e9))
            let minimumRate = configuration.minimumBodyBytesPerSecond
            let perAddress = configuration.maxConnectionsPerAddress
            let counter = ConnectionCounter()
            let expiry: [any Service] =
                configuration.pendingBuilderExpirySeconds.map {
                    [BuilderExpiry(store: store, expirySeconds: $0, logger: logger)]
                } ?? []
            // Webhooks, when the store keeps subscriptions (both backends do), woken by every commit the hub sees.
            let webhooks: [any Service] =
                WebhookDispatcher(
                    store: store, commits: hub.commits, settings: configuration.webhooks,
                    allowPrivate: configuration.webhooksAllowPrivate, logger: logger
                ).map { [$0] } ?? []
            return Application(
                router: makeRouter(hub: hub),
                server: .http1(
                    configuration: .init(
                        additionalChannelHandlers: perAddress.map {
                            [ConnectionLimitHandler(counter: counter, limit: $0)]
                        } ?? []
                            + [
                                HeaderTimeoutHandler(headerTimeout: headerTimeout, keepAlive: idleTimeout),
                                RequestGuardHandler(minimumBytesPerSecond: minimumRate, window: bodyWindow),
                            ],
                        idleTimeout: idleTimeout)),
                configuration: .init(
                    address: .hostname(configuration.host, port: configuration.port), serverName: "RouteKit"),
                services: [hub] + expiry + webhooks + services,
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
                logger: logger)
        }
    }

    /// While the server drains at shutdown (SIGTERM), a request that arrives on a connection still open (the listening
    /// socket is closed by then, so one sent behind another on a kept-alive connection) is answered `503`
    /// `shutting-down` with `Retry-After` instead of being started: the requests in flight finish (an upload being
    /// received is imported and answered), and nothing new delays the exit. `/healthz` still answers (the process is
    /// alive); `/readyz` is refused like the rest, which takes the server out of a load balancer's rotation.
    struct ShutdownGate: RouterMiddleware {
        typealias Context = RouteKitRequestContext

        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            guard Task.isShuttingDownGracefully, request.uri.path != "/healthz" else {
                return try await next(request, context)
            }
            throw Problem(
                status: .serviceUnavailable, type: "shutting-down", title: "The server is shutting down",
                detail: "this server is stopping; send the request again in a few seconds (to it once restarted, or "
                    + "to another server of the store)",
                headers: [.retryAfter: "5"])
        }
    }

    /// Turns every error into a problem (`application/problem+json`): RouteKit's by code, Hummingbird's by status,
    /// anything else a `500` whose detail says nothing of the cause (the log has it, by request id). Every answer
    /// carries `X-Request-Id`, and is logged once: method, path, status and time to the response head (never a
    /// header, so never a token). A problem answering `HEAD` is sent without its body.
    struct ProblemMiddleware: RouterMiddleware {
        typealias Context = RouteKitRequestContext
        let logger: Logger
        let metrics: ServerMetrics
        let methods: MethodTable

        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            let started = ContinuousClock.now
            var response: Response
            var failed = true
            do {
                response = try await next(request, context)
                failed = false
            } catch let problem as Problem {
                response = try problem.response(from: request, context: context)
            } catch let error as RouteKitError {
                response = try Problem(error).response(from: request, context: context)
            } catch let error as HTTPError
                where error.status == .notFound && methods.refuses(request.method, path: request.uri.path)
            {
                // The path is served, with other methods.
                let allowed = methods.methods(for: request.uri.path).map(\.rawValue).joined(separator: ", ")
                response = try Problem(
                    status: .methodNotAllowed, type: "method-not-allowed", title: "Method Not Allowed",
                    detail: "\(request.uri.path) is served with \(allowed), not \(request.method.rawValue)",
                    headers: [.allow: allowed]
                ).response(from: request, context: context)
            } catch let error as NIOTooManyBytesError {
                // A body past what the endpoint reads (`collect(upTo:)`): too large, not a server failure.
                response = try Problem(
                    status: .contentTooLarge, type: "payload-too-large", title: "The request body is too large",
                    detail: "this endpoint reads at most \(error.maxBytes.map(InputFile.sizeText) ?? "less") of body"
                ).response(from: request, context: context)
            } catch let error as HTTPError {
                let name = error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "-")
                response = try Problem(
                    status: error.status, type: name, title: error.status.reasonPhrase,
                    detail: error.body ?? error.status.reasonPhrase, headers: error.headers
                ).response(from: request, context: context)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                context.logger.error("request failed", metadata: ["error": "\(type(of: error))"])
                response = try Problem(
                    status: .internalServerError, type: "internal", title: "The server failed",
                    detail: "the request failed inside the server; its log names request \(context.id)"
                ).response(from: request, context: context)
            }
            // A problem answering HEAD (a missing token, an unknown id, 405) is its head alone.
            if failed && request.method == .head { response = RecordingRouter.withoutBody(response) }
            response.headers[.requestID] = context.id
            let elapsed = ContinuousClock.now - started
            let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            metrics.request(
                method: request.method.rawValue, route: context.endpointPath ?? "unmatched",
                status: response.status.code, duration: elapsed)
            context.logger.info(
                "request",
                metadata: [
                    "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                    "ms": "\(Int(ms.rounded()))",
                ])
            return response
        }
    }
#endif
