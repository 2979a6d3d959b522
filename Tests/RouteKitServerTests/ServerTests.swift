#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import Logging
    import NIOCore
    @_spi(RouteKitBackend) import RouteKit
    import RouteKitGPX
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    /// A server over a new SQLite store, with tokens made for the test.
    struct Fixture {
        let store: SQLiteStore
        let folder: String
        var configuration = ServerConfiguration()

        init() throws {
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("routekit-server-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            store = try SQLiteStore(path: folder + "/store.sqlite")
            configuration.uploadDirectory = folder
            configuration.heartbeatSeconds = 0.5
        }

        /// A second server's fixture on the same store (and folder), as another process or a restart would be.
        init(sharing other: Fixture) {
            store = other.store
            folder = other.folder
            configuration = other.configuration
        }

        /// Makes a token of `person` and returns its text.
        func token(
            source: String = "phone", scopes: Set<APIScope> = [.read, .write], readable: Set<String>? = nil,
            expires: Date? = nil, person: PersonID = .default
        ) async throws -> String {
            let made = TokenText.make(
                name: "test", person: person, source: try Source(name: source), scopes: scopes,
                readableSources: try readable.map { Set(try $0.map { try Source(name: $0) }) }, expires: expires)
            try await store.saveToken(made.token)
            return made.text
        }

        /// Makes an admin token (no one's: it manages people and tokens, and reads no one's data) and returns its text.
        func adminToken() async throws -> String {
            let made = TokenText.make(name: "operator", person: nil, source: try Source(name: "admin"), scopes: [.admin])
            try await store.saveToken(made.token)
            return made.text
        }

        func app() -> some ApplicationProtocol {
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            return RouteKitServer(store: store, configuration: configuration, logger: logger).makeApplication()
        }
    }

    func gpx(name: String, points: Int = 20, hour: Int = 6, lat: Double = 47.0) -> String {
        var s = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
            <trk><name>\(name)</name><type>running</type><trkseg>
            """
        for i in 0..<points {
            s +=
                "<trkpt lat=\"\(lat + Double(i) * 0.0001)\" lon=\"8.5\"><time>2024-05-01T0\(hour):\(10 + i / 60):\(10 + i % 50)Z</time></trkpt>\n"
        }
        return s + "</trkseg></trk></gpx>\n"
    }

    func auth(_ token: String, _ more: HTTPFields = [:]) -> HTTPFields {
        var h = more
        h[.authorization] = "Bearer \(token)"
        return h
    }

    /// The body as a JSON object (empty when it is not one, which the expectations then catch).
    func json(_ body: ByteBuffer) -> [String: Any] {
        let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))
        return object as? [String: Any] ?? [:]
    }

    func problemType(_ response: TestResponse) -> String? {
        #expect(response.headers[.contentType] == "application/problem+json")
        let type = json(response.body)["type"] as? String
        return type?.replacingOccurrences(of: Problem.typePrefix, with: "")
    }

    @Suite("routekit serve: health, tokens and scopes")
    struct ServerAuthTests {
        @Test("health and readiness need no token; the OpenAPI document is served")
        func health() async throws {
            let f = try Fixture()
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/v1/openapi.yaml", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(String(buffer: r.body).hasPrefix("openapi: 3.1.0"))
                }
            }
        }

        @Test("no token, a wrong token, a revoked and an expired one get 401 problems; a missing scope 403")
        func authorization() async throws {
            let f = try Fixture()
            let reader = try await f.token(scopes: [.read])
            let revoked = try await f.token()
            let expired = try await f.token(expires: Date().addingTimeInterval(-1))
            let revokedID = try #require(TokenText.parse(revoked)?.id)
            #expect(try await f.store.revokeToken(id: revokedID, at: Date()))
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/v1/changes", method: .get) { r in
                    #expect(r.status == .unauthorized)
                    #expect(problemType(r) == "unauthenticated")
                    #expect(r.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                }
                // The reader's token with one character of its secret changed.
                var tampered = Array(reader)
                tampered[tampered.count - 10] = tampered[tampered.count - 10] == "x" ? "y" : "x"
                for bad in ["rk_nonsense", revoked, expired, String(tampered)] {
                    try await client.execute(uri: "/v1/changes", method: .get, headers: auth(bad)) { r in
                        #expect(r.status == .unauthorized)
                        // The token never appears in an answer.
                        #expect(!String(buffer: r.body).contains(bad))
                    }
                }
                try await client.execute(uri: "/v1/changes", method: .get, headers: auth(reader)) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.requestID] != nil)
                }
                try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(reader),
                    body: ByteBuffer(string: gpx(name: "a"))
                ) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "insufficient-scope")
                }
                try await client.execute(uri: "/v1/no-such-thing", method: .get, headers: auth(reader)) { r in
                    #expect(r.status == .notFound)
                    #expect(r.headers[.contentType] == "application/problem+json")
                }
            }
            // The store keeps a hash, never the secret.
            let stored = try await f.store.tokens()
            #expect(stored.count == 3)
            for t in stored { #expect(![reader, revoked, expired].contains { $0.hasSuffix(t.secretHash) }) }
        }

        @Test("a token limited to some sources never sees the others: filtered lists and feed, 404 on their routes")
        func readableSources() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let onlyPhone = try await f.token(source: "viewer", scopes: [.read], readable: ["phone"])
            try await f.app().test(.router) { client in
                try await client.execute(
                    uri: "/v1/uploads?name=p.gpx", method: .post, headers: auth(phone),
                    body: ByteBuffer(string: gpx(name: "p", hour: 6)))
                let watchRoute = try await client.execute(
                    uri: "/v1/uploads?name=w.gpx", method: .post, headers: auth(watch),
                    body: ByteBuffer(string: gpx(name: "w", hour: 7))
                ) { r in
                    let results = json(r.body)["results"] as? [[String: Any]]
                    let routes = results?.first?["routes"] as? [[String: Any]]
                    return routes?.first?["route"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/changes", method: .get, headers: auth(onlyPhone)) { r in
                    let added = json(r.body)["added"] as? [[String: Any]] ?? []
                    #expect(added.map { $0["source"] as? String } == ["phone"])
                }
                try await client.execute(uri: "/v1/routes", method: .get, headers: auth(onlyPhone)) { r in
                    let routes = json(r.body)["routes"] as? [[String: Any]] ?? []
                    #expect(routes.map { $0["source"] as? String } == ["phone"])
                }
                try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(onlyPhone)) { r in
                    let workouts = json(r.body)["workouts"] as? [[String: Any]] ?? []
                    #expect(workouts.map { $0["source"] as? String } == ["phone"])
                }
                try await client.execute(uri: "/v1/routes/\(watchRoute)", method: .get, headers: auth(onlyPhone)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/v1/routes/\(watchRoute)", method: .get, headers: auth(watch)) {
                    #expect($0.status == .ok)
                }
            }
        }

        @Test("a source-limited token's anchors are sealed: they say nothing of other sources' commits and work only for it")
        func sealedAnchors() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let onlyPhone = try await f.token(source: "viewer", scopes: [.read], readable: ["phone"])
            let otherViewer = try await f.token(source: "viewer2", scopes: [.read], readable: ["phone"])
            try await f.app().test(.router) { client in
                func upload(_ token: String, _ name: String, hour: Int) async throws {
                    try await client.execute(
                        uri: "/v1/uploads?name=\(name).gpx", method: .post, headers: auth(token),
                        body: ByteBuffer(string: gpx(name: name, hour: hour))
                    ) { #expect($0.status == .created) }
                }
                func changes(_ token: String, _ query: String) async throws -> (HTTPResponse.Status, [String: Any]) {
                    try await client.execute(uri: "/v1/changes?\(query)", method: .get, headers: auth(token)) {
                        ($0.status, json($0.body))
                    }
                }
                try await upload(phone, "p1", hour: 5)
                let (_, first) = try await changes(onlyPhone, "limit=10")
                let a1 = try #require(first["anchor"] as? String)
                #expect(a1.hasPrefix("s1."))
                #expect(throws: RouteKitError.self) { try ChangeAnchor(text: a1) }
                // Other sources' commits: nothing to see, and an anchor that cannot be told from one read without them.
                let (_, quiet1) = try await changes(onlyPhone, "anchor=\(a1)")
                for hour in 6...9 { try await upload(watch, "w\(hour)", hour: hour) }
                let (_, quiet2) = try await changes(onlyPhone, "anchor=\(a1)&limit=1")
                #expect((quiet2["added"] as? [Any])?.isEmpty == true)
                #expect(quiet2["anchor"] as? String != quiet1["anchor"] as? String)
                #expect(quiet1["anchor"] as? String != a1)
                // limit=1 with four hidden commits ahead: the read goes through them and says it caught up.
                try await upload(phone, "p2", hour: 4)
                let (status, next) = try await changes(onlyPhone, "anchor=\(quiet2["anchor"] as? String ?? "")&limit=1")
                #expect(status == .ok)
                let added = next["added"] as? [[String: Any]] ?? []
                #expect(added.map { $0["syncIdentifier"] as? String }.count == 1)
                #expect(added.first?["source"] as? String == "phone")
                try await client.execute(
                    uri: "/v1/changes?anchor=\(next["anchor"] as? String ?? "")", method: .get, headers: auth(onlyPhone)
                ) { r in
                    #expect(r.headers[.routeKitUpToDate] == "true")
                    #expect((json(r.body)["added"] as? [Any])?.isEmpty == true)
                }
                // Good only for the token it was made for; a plain anchor is refused too.
                let (foreign, problem) = try await changes(otherViewer, "anchor=\(a1)")
                #expect(foreign == .badRequest)
                #expect((problem["type"] as? String)?.hasSuffix("anchor-malformed") == true)
                let (_, plainSet) = try await changes(phone, "limit=10")
                let plain = try #require(plainSet["anchor"] as? String)
                #expect(!plain.hasPrefix("s1."))
                #expect(try await changes(onlyPhone, "anchor=\(plain)").0 == .badRequest)
                #expect(try await changes(phone, "anchor=\(a1)").0 == .badRequest)
                // Lists hand out sealed anchors too, and the feed takes them.
                let listed = try await client.execute(uri: "/v1/routes", method: .get, headers: auth(onlyPhone)) {
                    json($0.body)["anchor"] as? String ?? ""
                }
                #expect(listed.hasPrefix("s1."))
                #expect(try await changes(onlyPhone, "anchor=\(listed)").0 == .ok)
            }
        }
    }

    @Suite("routekit serve: uploads")
    struct ServerUploadTests {
        @Test("an uploaded route's figures are measured after the answer and kept in the store for the lists")
        func figuresAfterAnswer() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                let body = ByteBuffer(string: gpx(name: "figures", points: 40))
                let workout = try await client.execute(
                    uri: "/v1/uploads?name=f.gpx", method: .post, headers: auth(token), body: body
                ) { r -> UUID? in
                    #expect(r.status == .created)
                    let result = (json(r.body)["results"] as? [[String: Any]])?.first
                    let text = (result?["routes"] as? [[String: Any]])?.first?["workout"] as? String
                    return text.flatMap(UUID.init(uuidString:))
                }
                let id = try #require(workout)
                // Measured in the background: the store has the summary soon after, without a list asking.
                let deadline = ContinuousClock.now + .seconds(20)
                var stored = try await f.store.summaries(ofWorkouts: [id])
                while stored[id] == nil && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    stored = try await f.store.summaries(ofWorkouts: [id])
                }
                #expect(stored[id]?.document.contains("distanceMetres") == true)
            }
        }

        @Test("an upload imports as the token's source; the same file again is unchanged; a broken one is a 422 with its line")
        func outcomes() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                let body = ByteBuffer(string: gpx(name: "morning", points: 30))
                try await client.execute(uri: "/v1/uploads?name=morning.gpx", method: .post, headers: auth(token), body: body) {
                    r in
                    #expect(r.status == .created)
                    let result = (json(r.body)["results"] as? [[String: Any]])?.first
                    #expect(result?["status"] as? String == "imported")
                    #expect(result?["file"] as? String == "morning.gpx")
                    #expect((result?["routes"] as? [[String: Any]])?.first?["locations"] as? Int == 30)
                }
                try await client.execute(uri: "/v1/uploads?name=again.gpx", method: .post, headers: auth(token), body: body) {
                    r in
                    #expect(r.status == .ok)
                    let result = (json(r.body)["results"] as? [[String: Any]])?.first
                    #expect(result?["status"] as? String == "unchanged")
                }
                let broken =
                    "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\">\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\">\n</trk>"
                try await client.execute(
                    uri: "/v1/uploads?name=../../etc/broken.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: broken)
                ) { r in
                    #expect(r.status == .unprocessableContent)
                    let problem = json(r.body)
                    #expect((problem["type"] as? String)?.hasPrefix(Problem.typePrefix) == true)
                    #expect(problem["line"] as? Int == 5)
                    let results = problem["results"] as? [[String: Any]]
                    #expect(results?.first?["file"] as? String == "broken.gpx")
                    // No coordinate of the file reaches the answer.
                    #expect(!String(buffer: r.body).contains("lat=\"1\""))
                }
            }
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.count == 1)
            #expect(routes.first?.source.name == "phone")
            // The spool folder is emptied after each upload.
            let left = try FileManager.default.contentsOfDirectory(atPath: f.folder).filter { $0.hasPrefix("routekit-") }
            #expect(left.isEmpty)
        }

        @Test("an upload over the limit is refused from Content-Length; a gzip bomb when it inflates past its limit")
        func limits() async throws {
            var f = try Fixture()
            f.configuration.maxUploadBytes = 4096
            f.configuration.maxDecompressedBytes = 100_000
            let token = try await f.token()
            // 1 MB of zeros compresses to about 1 KB.
            let folder = f.folder
            let bomb = try gzip(Array(repeating: UInt8(ascii: " "), count: 1_000_000), in: folder)
            #expect(bomb.count < 4096)
            try await f.app().test(.router) { client in
                try await client.execute(
                    uri: "/v1/uploads", method: .post, headers: auth(token),
                    body: ByteBuffer(string: String(repeating: "x", count: 5000))
                ) { r in
                    #expect(r.status == .contentTooLarge)
                    #expect(problemType(r) == "upload-too-large")
                    #expect(json(r.body)["maxBytes"] as? Int == 4096)
                }
                try await client.execute(
                    uri: "/v1/uploads?name=bomb.gpx.gz", method: .post, headers: auth(token),
                    body: ByteBuffer(bytes: bomb)
                ) { r in
                    #expect(r.status == .contentTooLarge)
                    #expect(problemType(r) == "decompressed-too-large")
                }
                // A small gzip file is fine, and keeps its name in the outcome (it is inflated while spooled).
                let small = try gzip(Array(gpx(name: "z").utf8), in: folder)
                try await client.execute(
                    uri: "/v1/uploads?name=z.gpx.gz", method: .post, headers: auth(token), body: ByteBuffer(bytes: small)
                ) { r in
                    #expect(r.status == .created)
                    let results = json(r.body)["results"] as? [[String: Any]]
                    #expect(results?.first?["file"] as? String == "z.gpx.gz")
                }
                // Cut short, or with a flipped byte: 422 naming the compression error and the upload, nothing stored.
                let other = try gzip(Array(gpx(name: "y").utf8), in: folder)
                var flipped = other
                flipped[other.count / 2] ^= 0xFF
                for (name, body) in [("cut.gpx.gz", Array(other.prefix(other.count - 6))), ("flip.gpx.gz", flipped)] {
                    try await client.execute(
                        uri: "/v1/uploads?name=\(name)", method: .post, headers: auth(token), body: ByteBuffer(bytes: body)
                    ) { r in
                        #expect(r.status == .unprocessableContent, "\(name)")
                        let results = json(r.body)["results"] as? [[String: Any]]
                        #expect(results?.first?["file"] as? String == name)
                        let error = results?.first?["error"] as? [String: Any]
                        #expect(error?["code"] as? String == "compression", "\(name): \(String(buffer: r.body))")
                    }
                }
            }
        }
    }

    func gzip(_ bytes: [UInt8], in folder: String) throws -> [UInt8] {
        let path = folder + "/gz-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-n", path]
        try p.run()
        p.waitUntilExit()
        defer { try? FileManager.default.removeItem(atPath: path + ".gz") }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path + ".gz")))
    }

    @Suite("routekit serve: reading and the change feed")
    struct ServerFeedTests {
        @Test("the feed from no anchor, then from its anchor; a long-poll with nothing new returns its anchor")
        func feed() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token), body: ByteBuffer(string: gpx(name: "a")))
                let anchor = try await client.execute(uri: "/v1/changes", method: .get, headers: auth(token)) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.cacheControl] == "no-store")
                    let body = json(r.body)
                    #expect((body["added"] as? [Any])?.count == 1)
                    #expect(body["hasMore"] as? Bool == false)
                    #expect(r.headers[.routeKitAnchor] == body["anchor"] as? String)
                    return body["anchor"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)) { r in
                    let body = json(r.body)
                    #expect((body["added"] as? [Any])?.isEmpty == true)
                    #expect(body["anchor"] as? String == anchor)
                }
                // A long-poll that nothing wakes returns the same anchor after its wait.
                try await client.execute(uri: "/v1/changes?anchor=\(anchor)&wait=1", method: .get, headers: auth(token)) {
                    r in
                    let body = json(r.body)
                    #expect((body["added"] as? [Any])?.isEmpty == true)
                    #expect(body["anchor"] as? String == anchor)
                }
                try await client.execute(
                    uri: "/v1/uploads?name=b.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "b", hour: 8)))
                try await client.execute(uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)) { r in
                    let added = json(r.body)["added"] as? [[String: Any]] ?? []
                    #expect(added.count == 1)
                    #expect(added.first?["source"] as? String == "phone")
                }
            }
        }

        @Test("anchors the store cannot answer: malformed 400, foreign 409, ahead 409, expired 410")
        func anchorErrors() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let other = try Fixture()
            let foreign = try await other.store.currentAnchor().text
            let route = try await saveRoute(f.store, "x")
            let before = try await f.store.currentAnchor()
            let ahead = ChangeAnchor(storeID: before.storeID, epoch: before.epoch, position: before.position + 50, token: 7)
            try await f.store.deleteRoute(id: route, as: try Source(name: "phone"))
            _ = try await saveRoute(f.store, "y")
            _ = try await f.store.compactChanges(before: Date().addingTimeInterval(3600))
            try await f.app().test(.router) { client in
                for (anchor, status, type) in [
                    ("not-an-anchor", HTTPResponse.Status.badRequest, "anchor-malformed"),
                    (foreign, .conflict, "anchor-foreign"),
                    (ahead.text, .conflict, "anchor-ahead"),
                    (before.text, .gone, "anchor-expired"),
                ] {
                    try await client.execute(uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)) { r in
                        #expect(r.status == status, "\(type)")
                        #expect(problemType(r) == type)
                        #expect((json(r.body)["advice"] as? String)?.contains("without an anchor") == true)
                    }
                }
                try await client.execute(uri: "/v1/changes?limit=0", method: .get, headers: auth(token)) { r in
                    #expect(r.status == .badRequest)
                    #expect(problemType(r) == "invalid-argument")
                }
            }
        }

        @Test("a route version is immutable: ETag, 304 on revalidation; locations as NDJSON; export as GPX")
        func reads() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                let route = try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "a", points: 42))
                ) { r in
                    ((json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]])?.first?["route"]
                        as? String ?? ""
                }
                let tag = try await client.execute(uri: "/v1/routes/\(route)", method: .get, headers: auth(token)) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.cacheControl]?.contains("immutable") == true)
                    #expect(json(r.body)["locations"] as? Int == 42)
                    return r.headers[.eTag] ?? ""
                }
                try await client.execute(
                    uri: "/v1/routes/\(route)", method: .get, headers: auth(token, [.ifNoneMatch: tag])
                ) { #expect($0.status == .notModified) }
                try await client.execute(uri: "/v1/routes/\(route)/locations", method: .get, headers: auth(token)) { r in
                    #expect(r.headers[.contentType] == "application/x-ndjson")
                    let lines = String(buffer: r.body).split(separator: "\n")
                    #expect(lines.count == 42)
                    let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
                    #expect(first?["latitude"] as? Double == 47.0)
                    #expect(first?["time"] as? String == "2024-05-01T06:10:10Z")
                }
                try await client.execute(uri: "/v1/routes/\(route)/export?format=gpx", method: .get, headers: auth(token)) {
                    r in
                    #expect(r.headers[.contentType] == "application/gpx+xml")
                    let text = String(buffer: r.body)
                    #expect(text.components(separatedBy: "<trkpt ").count - 1 == 42)
                }
                try await client.execute(uri: "/v1/routes/\(route)/export?format=kml", method: .get, headers: auth(token)) {
                    #expect($0.status == .badRequest)
                }
                try await client.execute(uri: "/v1/routes/\(UUID())", method: .get, headers: auth(token)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/v1/routes/nope", method: .get, headers: auth(token)) {
                    #expect($0.status == .badRequest)
                }
            }
        }
    }

    /// Saves a one-point route of source `phone` through a route builder.
    func saveRoute(_ store: SQLiteStore, _ name: String) async throws -> UUID {
        let source = try Source(name: "phone")
        let now = Timestamp(Date())
        let workout = Workout(activityType: .running, start: now, end: now, source: source, metadata: ["name": .string(name)])
        _ = try await store.saveWorkout(workout)
        let builder = try await RouteBuilder(store: store, source: source)
        try await builder.insert([Location(latitude: 47, longitude: 8, timestamp: now)])
        return try await builder.finish(
            workout: workout, metadata: ["syncIdentifier": .string("test-\(name)"), "syncVersion": .integer(1)]
        ).route.id
    }
#endif
