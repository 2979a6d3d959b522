#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import Logging
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

        @Test("a job is kept in the store: another server reports and cancels it; a job left running is interrupted")
        func jobsOutliveTheirServer() async throws {
            var fixture = try Fixture()
            fixture.configuration.jobSaveSeconds = 0.05
            let f = fixture
            let writer = try await f.token(source: "phone")
            let admin = try await f.token(source: "ops", scopes: [.read, .admin])
            // Two servers of one store, each with a registry of its own (as two processes, or one restarted).
            let other = Fixture(sharing: f)
            try await f.app().test(.router) { a in
                try await other.app().test(.router) { b in
                    for i in 0..<60 {
                        try await a.execute(
                            uri: "/v1/uploads?name=r\(i).gpx", method: .post, headers: auth(writer),
                            body: ByteBuffer(string: gpx(name: "r\(i)", points: 1_500, hour: 1 + i % 9, lat: 20 + Double(i))))
                    }
                    let location = try await a.execute(
                        uri: "/v1/jobs", method: .post, headers: auth(admin), body: ByteBuffer(string: #"{"workers": 1}"#)
                    ) { r in
                        #expect(r.status == .accepted)
                        return r.headers[.location] ?? ""
                    }
                    // Saved before it was answered: the other server knows it at once.
                    try await b.execute(uri: location, method: .get, headers: auth(admin)) { r in
                        #expect(r.status == .ok)
                        #expect(json(r.body)["state"] as? String == "running")
                        #expect(json(r.body)["total"] as? Int == 60)
                    }
                    // Cancelled through the other server: the one running it stops at its next save.
                    try await b.execute(uri: location, method: .delete, headers: auth(admin)) { #expect($0.status == .accepted) }
                    var job: [String: Any] = [:]
                    for _ in 0..<500 {
                        job = try await a.execute(uri: location, method: .get, headers: auth(admin)) { json($0.body) }
                        if job["state"] as? String != "running" { break }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(job["state"] as? String == "cancelled")
                    #expect((job["done"] as? Int ?? 60) < 60, "the job ran to its end before it was stopped")
                    // Its end is saved: the other server reports the same.
                    var seen: [String: Any] = [:]
                    for _ in 0..<100 {
                        seen = try await b.execute(uri: location, method: .get, headers: auth(admin)) { json($0.body) }
                        if seen["state"] as? String == "cancelled" { break }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(seen["state"] as? String == "cancelled")
                    #expect(seen["done"] as? Int == job["done"] as? Int)
                    #expect(seen["finished"] is String)

                    // A job a stopped server left running (not saved for a minute) is reported interrupted.
                    let id = UUID()
                    let document =
                        #"{"id":"\#(id.uuidString.lowercased())","state":"running","total":3,"done":1,"saved":1,"skipped":0,"failed":0,"created":"2026-01-01T00:00:00Z","outcomes":[]}"#
                    _ = try await f.store.saveJob(
                        StoredJob(
                            id: id, state: .running, document: document, created: Date().addingTimeInterval(-120),
                            updated: Date().addingTimeInterval(-60)))
                    try await b.execute(uri: "/v1/jobs/\(id)", method: .get, headers: auth(admin)) { r in
                        #expect(r.status == .ok)
                        #expect(json(r.body)["state"] as? String == "interrupted")
                        #expect(json(r.body)["done"] as? Int == 1)
                    }
                }
            }
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

        @Test("a ticket is good once across servers sharing a store (another process's store on the same file)")
        func ticketsAcrossServers() async throws {
            let a = try Fixture()
            let token = try await a.token(scopes: [.read])
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            let other = try SQLiteStore(path: a.folder + "/store.sqlite")
            let b = RouteKitServer(store: other, configuration: a.configuration, logger: logger).makeApplication()
            let ticket = try await a.app().test(.router) { client in
                let t = try await client.execute(uri: "/v1/stream-tickets", method: .post, headers: auth(token)) { r in
                    json(r.body)["ticket"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/changes?ticket=\(t)", method: .get) { #expect($0.status == .ok) }
                return t
            }
            try await b.test(.router) { client in
                try await client.execute(uri: "/v1/changes?ticket=\(ticket)", method: .get) { r in
                    #expect(r.status == .unauthorized)
                    #expect(problemType(r) == "ticket-invalid")
                }
                // A fresh ticket made on the first server is good on the second, once.
                let t = try await client.execute(uri: "/v1/stream-tickets", method: .post, headers: auth(token)) { r in
                    json(r.body)["ticket"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/changes?ticket=\(t)", method: .get) { #expect($0.status == .ok) }
            }
        }
    }
#endif
