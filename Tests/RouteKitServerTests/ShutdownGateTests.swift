#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import ServiceLifecycleTestKit
    import Testing

    @Suite("routekit serve: requests that arrive while the server drains")
    struct ShutdownGateTests {
        @Test("once the server shuts down, a new request is 503 shutting-down with Retry-After; /healthz still answers")
        func refusedWhileDraining() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                try await testGracefulShutdown { trigger in
                    try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(token)) { r in
                        #expect(r.status == .ok)
                    }
                    trigger.triggerGracefulShutdown()
                    try await client.execute(
                        uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token),
                        body: ByteBuffer(string: gpx(name: "late", points: 10))
                    ) { r in
                        #expect(r.status == .serviceUnavailable)
                        #expect(r.headers[.retryAfter] == "5")
                        #expect(problemType(r) == "shutting-down")
                    }
                    try await client.execute(uri: "/readyz", method: .get) { r in
                        #expect(r.status == .serviceUnavailable)
                    }
                    try await client.execute(uri: "/healthz", method: .get) { r in
                        #expect(r.status == .ok)
                    }
                }
            }
            // Nothing of the refused upload was stored.
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.isEmpty)
        }
    }
#endif
