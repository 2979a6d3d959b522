#if Server
    import Hummingbird
    import Logging
    import RouteKitServer
    import RouteKitSQLite

    /// The example of RouteKitServer's DocC catalog, compiled in the `--traits Server` build (it serves until
    /// SIGTERM, so it is not run). The `// snippet.NAME` … `// snippet.end` region is, once de-indented, a ```swift
    /// block of the catalog: scripts/docs.sh checks it.
    enum ServerDocumentationExamples {
        static func landingPage() async throws {
            // snippet.server-landing
            let store = try SQLiteStore(path: "routes.sqlite")
            var configuration = ServerConfiguration()
            configuration.port = 8080
            let server = RouteKitServer(store: store, configuration: configuration, logger: Logger(label: "routekit"))
            try await server.makeApplication().runService()  // SIGTERM and SIGINT shut it down gracefully
            // snippet.end
        }
    }
#endif
