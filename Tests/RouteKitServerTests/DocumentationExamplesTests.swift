#if Server
    import Hummingbird
    import Logging
    import RouteKitServer
    import RouteKitSQLite

    /// The examples of RouteKitServer's DocC catalog, compiled in the `--traits Server` build (they serve until
    /// SIGTERM, so they are not run). The `// snippet.NAME` … `// snippet.end` region is, once de-indented, a ```swift
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

        static func identityProvider() async throws {
            let store = try SQLiteStore(path: "routes.sqlite")
            var configuration = ServerConfiguration()
            // snippet.server-identity-provider
            let identity = IdentityProvider(
                settings: IdentityProviderSettings(
                    keys: try IdentityProviderSettings.KeySet("/etc/routekit/jwks.json"),
                    issuer: "https://id.example.org", audience: "routekit", unknownSubjects: .create))
            try await identity.load()  // reads the key set; a missing or unusable one throws, naming it
            configuration.identityProvider = identity
            // snippet.end
            let server = RouteKitServer(store: store, configuration: configuration, logger: Logger(label: "routekit"))
            try await server.makeApplication().runService()
        }

        /// The webhook article's check of a request in Swift, run by WebhookSignatureTests with a delivery's headers
        /// and body.
        static func verifyWebhook(secretText: String, headers: [String: String], body: [UInt8]) throws {
            // snippet.webhook-verify
            let secret = try WebhookSecret(text: secretText)  // "whsec_…", as the subscription gave it
            let verifier = WebhookVerifier(secrets: [secret])
            try verifier.verify(
                id: headers["webhook-id"], timestamp: headers["webhook-timestamp"],
                signature: headers["webhook-signature"], body: body)
            // snippet.end
        }
    }
#endif
