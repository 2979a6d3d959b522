#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    @Suite("routekit serve: smoothing jobs")
    struct ServerJobTests {
        @Test("a job answers 202, reports progress and outcomes, saves new versions; the same job again skips them")
        func smoothingJob() async throws {
            let f = try Fixture()
            let writer = try await f.token(source: "phone")
            let admin = try await f.token(source: "ops", scopes: [.read, .admin])
            try await f.app().test(.router) { client in
                for (i, name) in ["a", "b"].enumerated() {
                    try await client.execute(
                        uri: "/v1/uploads?name=\(name).gpx", method: .post, headers: auth(writer),
                        body: ByteBuffer(string: gpx(name: name, points: 200, hour: 6 + i)))
                }
                try await client.execute(uri: "/v1/jobs", method: .post, headers: auth(writer)) { r in
                    #expect(r.status == .forbidden)
                }
                func run() async throws -> [String: Any] {
                    let location = try await client.execute(
                        uri: "/v1/jobs", method: .post, headers: auth(admin), body: ByteBuffer(string: #"{"workers": 2}"#)
                    ) { r in
                        #expect(r.status == .accepted)
                        #expect(json(r.body)["total"] as? Int == 2)
                        return r.headers[.location] ?? ""
                    }
                    var job: [String: Any] = [:]
                    for _ in 0..<600 {
                        job = try await client.execute(uri: location, method: .get, headers: auth(admin)) { json($0.body) }
                        if job["state"] as? String == "finished" { break }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    return job
                }
                let first = try await run()
                #expect(first["state"] as? String == "finished")
                #expect(first["saved"] as? Int == 2)
                #expect((first["outcomes"] as? [[String: Any]])?.allSatisfy { $0["syncVersion"] as? Int == 2 } == true)
                let second = try await run()
                #expect(second["saved"] as? Int == 0)
                #expect(second["skipped"] as? Int == 2)
                try await client.execute(uri: "/v1/jobs/\(UUID())", method: .get, headers: auth(admin)) {
                    #expect($0.status == .notFound)
                }
            }
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.map(\.sync.version) == [2, 2])
        }
    }
#endif

#if Server
    @Suite("routekit serve: metrics")
    struct ServerMetricsTests {
        @Test("/metrics (admin) counts requests by route template and status, and the locations stored")
        func metrics() async throws {
            let f = try Fixture()
            let writer = try await f.token(source: "phone")
            let admin = try await f.token(source: "ops", scopes: [.admin])
            try await f.app().test(.router) { client in
                try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(writer),
                    body: ByteBuffer(string: gpx(name: "a", points: 20)))
                try await client.execute(uri: "/v1/routes/\(UUID())", method: .get, headers: auth(writer))
                try await client.execute(uri: "/metrics", method: .get, headers: auth(writer)) {
                    #expect($0.status == .forbidden)
                }
                try await client.execute(uri: "/metrics", method: .get, headers: auth(admin)) { r in
                    #expect(r.status == .ok)
                    let text = String(buffer: r.body)
                    #expect(text.contains("routekit_locations_stored_total 20"))
                    #expect(text.contains(#"routekit_http_requests_total{method="POST",route="/v1/uploads",status="201"} 1"#))
                    // Ids never become labels: the template does.
                    #expect(text.contains(#"route="/v1/routes/{id}",status="404"} 1"#))
                    #expect(text.contains("routekit_http_request_duration_seconds_bucket"))
                    #expect(text.contains("routekit_open_event_streams 0"))
                }
            }
        }
    }
#endif

#if Server
    @Suite("routekit serve: stream tickets for browsers")
    struct StreamTicketTests {
        @Test("a ticket from a read token opens the feed once; reuse, tampering, other paths and revocation fail")
        func tickets() async throws {
            let f = try Fixture()
            let token = try await f.token(scopes: [.read])
            let revokedToken = try await f.token(scopes: [.read])
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/v1/stream-tickets", method: .post) { #expect($0.status == .unauthorized) }
                func ticket(_ t: String) async throws -> String {
                    try await client.execute(uri: "/v1/stream-tickets", method: .post, headers: auth(t)) { r in
                        #expect(r.status == .created)
                        return json(r.body)["ticket"] as? String ?? ""
                    }
                }
                let t1 = try await ticket(token)
                #expect(t1.hasPrefix("st."))
                try await client.execute(uri: "/v1/changes?ticket=\(t1)", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/v1/changes?ticket=\(t1)", method: .get) { r in
                    #expect(r.status == .unauthorized)
                    #expect(problemType(r) == "ticket-invalid")
                }
                let t2 = try await ticket(token)
                try await client.execute(uri: "/v1/routes?ticket=\(t2)", method: .get) { #expect($0.status == .badRequest) }
                // A later expiry with the same MAC does not pass.
                var parts = t2.split(separator: ".").map(String.init)
                parts[2] = String((Int(parts[2]) ?? 0) + 30)
                try await client.execute(uri: "/v1/changes?ticket=\(parts.joined(separator: "."))", method: .get) {
                    #expect($0.status == .unauthorized)
                }
                let t3 = try await ticket(revokedToken)
                let id = try #require(TokenText.parse(revokedToken)?.id)
                _ = try await f.store.revokeToken(id: id, at: Date())
                try await client.execute(uri: "/v1/changes?ticket=\(t3)", method: .get) { #expect($0.status == .unauthorized) }
            }
        }
    }
#endif
