#if Server
    import AsyncHTTPClient
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitServer
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    extension RawConnection {
        /// Sends `text`, then resets the connection (SO_LINGER 0: the close sends RST, as mobile networks do).
        static func sendAndReset(port: Int, _ text: String) throws {
            let fd = try connectedSocket(port: port)
            defer { close(fd) }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
    }

    @Suite("routekit serve: hostile clients over a socket", .serialized)
    struct ServerHardeningTests {
        /// Whether `text` holds `GET /healthz`'s whole answer.
        static let healthAnswered: @Sendable (String) -> Bool = { $0.contains("\"ok\"}") }

        static let chunkedUpload =
            "POST /v1/uploads?name=x.gpx HTTP/1.1\r\nHost: routekit\r\nTransfer-Encoding: chunked\r\n"

        @Test("an upload without a token is answered 401 and its connection closed, not drained byte by byte")
        func unauthenticatedBodyIsNotDrained() async throws {
            let f = try Fixture()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let c = try RawConnection(port: port)
                #expect(await c.send(Self.chunkedUpload + "\r\n1\r\n<\r\n"))
                // Until the server closes (at once when it behaves), or 15 s of silence: the thread sanitizer's CI run
                // once took longer than 2 s to answer.
                let answer = await c.read(for: 15)
                #expect(answer.text.hasPrefix("HTTP/1.1 401"), "\(answer.text.prefix(80))")
                #expect(answer.text.lowercased().contains("connection: close"))
                #expect(answer.closed, "the server kept reading a body it had refused")
            }
        }

        @Test("a body trickling slower than the minimum rate is answered 408 and cut; a steady one is imported")
        func slowBodyIsCut() async throws {
            var f = try Fixture()
            f.configuration.minimumBodyBytesPerSecond = 200
            f.configuration.bodyRateWindowSeconds = 1
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let slow = try RawConnection(port: port)
                let started = ContinuousClock.now
                #expect(await slow.send(Self.chunkedUpload + "Authorization: Bearer \(token)\r\n\r\n"))
                var text = ""
                var closed = false
                // Generous bounds: the thread sanitizer's runs make the server several times slower.
                for _ in 0..<50 where !closed {
                    _ = await slow.send("1\r\n \r\n")
                    let r = await slow.read(for: 0.3)
                    text += r.text
                    closed = r.closed
                }
                #expect(closed, "a body of 3 bytes a second held the connection for 6 s")
                #expect(text.hasPrefix("HTTP/1.1 408"), "\(text.prefix(80))")
                #expect(text.contains("urn:routekit:problem:request-timeout"))
                #expect(ContinuousClock.now - started < .seconds(15))

                // A whole file at once is well above the rate.
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?name=ok.gpx")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                request.body = .bytes(ByteBuffer(string: gpx(name: "steady")))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                #expect(response.status == .created)
            }
        }

        @Test("10 event streams reset right after their request give their slots back: 4 new ones open at once")
        func resetStreamsReleaseSlots() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                for _ in 0..<10 {
                    try RawConnection.sendAndReset(
                        port: port,
                        "GET /v1/changes HTTP/1.1\r\nHost: routekit\r\nAccept: text/event-stream\r\n"
                            + "Authorization: Bearer \(token)\r\n\r\n")
                }
                // Within a few seconds every slot is back: four streams (the limit) open together.
                var statuses: [Int] = []
                for _ in 0..<30 {
                    statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                        for _ in 0..<4 {
                            group.addTask {
                                let response = try await HTTPClient.shared.execute(
                                    request(port, "/v1/changes", token: token), timeout: .seconds(10))
                                // Hold it until all four have their answer.
                                try await Task.sleep(for: .milliseconds(300))
                                return Int(response.status.code)
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    if statuses.allSatisfy({ $0 == 200 }) { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(statuses == [200, 200, 200, 200], "slots still held by reset streams: \(statuses)")
            }
        }

        @Test("with --max-connections-per-address 2, connections past two from the address are closed at once")
        func connectionsPerAddress() async throws {
            var f = try Fixture()
            f.configuration.maxConnectionsPerAddress = 2
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                // Four kept-alive connections, each asking once: at most two are served (the test client may hold
                // one of the two itself), the others are closed without an answer.
                var served: [RawConnection] = []
                var refused = 0
                for _ in 0..<4 {
                    let c = try RawConnection(port: port)
                    _ = await c.send("GET /healthz HTTP/1.1\r\nHost: routekit\r\n\r\n")
                    // Until the answer is whole or the server closes (15 s at most: the sanitizer's runs are slow).
                    let answer = await c.read(for: 15, until: Self.healthAnswered)
                    if answer.text.hasPrefix("HTTP/1.1 200") {
                        served.append(c)
                    } else {
                        #expect(answer.closed && answer.text.isEmpty, "\(answer.text.prefix(60))")
                        refused += 1
                    }
                }
                #expect(served.count <= 2 && served.count >= 1, "\(served.count) served")
                #expect(refused >= 2)
                // Once they close, a new one is served.
                served.removeAll()
                try await Task.sleep(for: .milliseconds(1_000))
                let next = try RawConnection(port: port)
                #expect(await next.send("GET /healthz HTTP/1.1\r\nHost: routekit\r\n\r\n"))
                #expect((await next.read(for: 15, until: Self.healthAnswered)).text.hasPrefix("HTTP/1.1 200"))
            }
        }

        @Test("oversized JSON bodies answer 413, not 500")
        func oversizedBodies() async throws {
            let f = try Fixture()
            let token = try await f.token(scopes: [.read, .write, .admin])
            try await f.app().test(.router) { client in
                let big = ByteBuffer(string: "{\"name\":\"" + String(repeating: "x", count: 70 << 10) + "\"}")
                try await client.execute(
                    uri: "/v1/builders", method: .post, headers: auth(token, [.contentType: "application/json"]),
                    body: big
                ) { r in
                    #expect(r.status == .contentTooLarge)
                    #expect(json(r.body)["type"] as? String == "urn:routekit:problem:payload-too-large")
                }
                let huge = ByteBuffer(string: "{\"routes\":\"" + String(repeating: "x", count: 5 << 20) + "\"}")
                try await client.execute(
                    uri: "/v1/jobs", method: .post, headers: auth(token, [.contentType: "application/json"]),
                    body: huge
                ) { r in
                    #expect(r.status == .contentTooLarge)
                }
            }
        }

        @Test("a method a path does not serve answers 405 with Allow; an unknown path stays 404")
        func methodNotAllowed() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/v1/workouts", method: try #require(HTTPRequest.Method("TRACE")), headers: auth(token)) {
                    r in
                    #expect(r.status == .methodNotAllowed)
                    #expect(r.headers[.allow] == "GET, HEAD")
                }
                try await client.execute(uri: "/v1/builders/abc", method: .put, headers: auth(token)) { r in
                    #expect(r.status == .methodNotAllowed)
                    #expect(r.headers[.allow] == "GET, HEAD, DELETE")
                }
                try await client.execute(uri: "/healthz", method: .delete) { r in
                    #expect(r.status == .methodNotAllowed)
                    #expect(problemType(r) == "method-not-allowed")
                }
                try await client.execute(uri: "/v1/nothing-here", method: .get, headers: auth(token)) { r in
                    #expect(r.status == .notFound)
                }
            }
        }

        /// The value of header `name` (lowercase) in a raw HTTP/1.1 answer, or `nil`.
        static func header(_ name: String, in answer: String) -> String? {
            let head = answer.components(separatedBy: "\r\n\r\n").first ?? ""
            for line in head.components(separatedBy: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 && parts[0].lowercased() == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }

        /// What follows the head of a raw HTTP/1.1 answer (`nil` when the head did not end).
        static func body(of answer: String) -> String? {
            guard let end = answer.range(of: "\r\n\r\n") else { return nil }
            return String(answer[end.upperBound...])
        }

        /// Sends `request` (one request, `Connection: close`) on a new connection and reads until the server closes.
        static func ask(_ port: Int, _ request: String) async throws -> String {
            let c = try RawConnection(port: port)
            #expect(await c.send(request + "Host: routekit\r\nConnection: close\r\n\r\n"))
            let answer = await c.read(for: 15)
            #expect(answer.closed, "the server kept a Connection: close connection open")
            return answer.text
        }

        @Test("HEAD on a GET path answers as GET without the body; HEAD on another path is 405 with Allow, a head alone")
        func headRequests() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let got = try await Self.ask(port, "GET /healthz HTTP/1.1\r\n")
                let headed = try await Self.ask(port, "HEAD /healthz HTTP/1.1\r\n")
                #expect(headed.hasPrefix("HTTP/1.1 200"), "\(headed.prefix(80))")
                #expect(Self.body(of: headed) == "", "HEAD /healthz answered with a body")
                let getLength = try #require(Self.header("content-length", in: got))
                #expect(getLength != "0")
                #expect(Self.header("content-length", in: headed) == getLength)
                #expect(Self.header("content-type", in: headed) == Self.header("content-type", in: got))

                // A read that needs a token: with it 200, without it 401, neither with a body.
                let workouts = try await Self.ask(
                    port, "HEAD /v1/workouts HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n")
                #expect(workouts.hasPrefix("HTTP/1.1 200"), "\(workouts.prefix(80))")
                #expect(Self.body(of: workouts) == "")
                let refused = try await Self.ask(port, "HEAD /v1/workouts HTTP/1.1\r\n")
                #expect(refused.hasPrefix("HTTP/1.1 401"), "\(refused.prefix(80))")
                #expect(Self.body(of: refused) == "")

                // A path served with POST only.
                let upload = try await Self.ask(port, "HEAD /v1/uploads HTTP/1.1\r\n")
                #expect(upload.hasPrefix("HTTP/1.1 405"), "\(upload.prefix(80))")
                #expect(Self.header("allow", in: upload) == "POST")
                #expect(Self.body(of: upload) == "")
            }
        }
    }
#endif

#if Server
    @Suite("routekit serve: a finish is one transaction")
    struct FinishTransactionTests {
        @Test(
            "finishes refused for an empty builder, a sync identifier without a version or a version that is not a number leave no workout; retries neither"
        )
        func failedFinishesLeaveNothing() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                func create() async throws -> String {
                    try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) { r in
                        json(r.body)["id"] as? String ?? ""
                    }
                }
                func finish(_ id: String, _ body: String) async throws -> HTTPResponse.Status {
                    try await client.execute(
                        uri: "/v1/builders/\(id)/finish", method: .post,
                        headers: auth(token, [.contentType: "application/json"]), body: ByteBuffer(string: body)
                    ) { $0.status }
                }
                func workouts() async throws -> Int {
                    try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(token)) { r in
                        (json(r.body)["workouts"] as? [Any])?.count ?? -1
                    }
                }
                let empty = try await create()
                for _ in 0..<3 {
                    let status = try await finish(empty, #"{"activity":"running"}"#)
                    #expect(status.code >= 400 && status.code < 500, "\(status)")
                }
                let id = try await create()
                let append = try await client.execute(
                    uri: "/v1/builders/\(id)/locations?first=0", method: .post,
                    headers: auth(token, [.contentType: "application/json"]),
                    body: ByteBuffer(string: locationsJSON(from: 0, count: 5))
                ) { $0.status }
                #expect(append == .ok)
                for body in [
                    #"{"syncIdentifier":"run-1"}"#, #"{"syncIdentifier":"run-1","metadata":{"syncVersion":"abc"}}"#,
                    #"{"metadata":{"syncIdentifier":"run-1","syncVersion":"two"}}"#,
                    #"{"syncIdentifier":"run-1","syncVersion":"1"}"#,
                ] {
                    for _ in 0..<2 {
                        let status = try await finish(id, body)
                        #expect(status.code >= 400 && status.code < 500, "\(body): \(status)")
                    }
                }
                #expect(try await workouts() == 0, "a failed finish left a workout behind")
                // The same builder then finishes, and a retry of the same recording on a new builder joins it.
                #expect(try await finish(id, #"{"syncIdentifier":"run-1","syncVersion":1}"#) == .created)
                #expect(try await workouts() == 1)
                let again = try await create()
                _ = try await client.execute(
                    uri: "/v1/builders/\(again)/locations?first=0", method: .post,
                    headers: auth(token, [.contentType: "application/json"]),
                    body: ByteBuffer(string: locationsJSON(from: 0, count: 5))
                ) { $0.status }
                #expect(try await finish(again, #"{"syncIdentifier":"run-1","syncVersion":2}"#) == .created)
                #expect(try await workouts() == 1)
            }
        }
    }
#endif

#if Server
    import RouteKitSQLite
    import RouteKitTesting

    extension Fixture {
        /// A fixture whose store lives in `storeFolder` and whose uploads are spooled in `spool`.
        init(storeFolder: String, spool: String) throws {
            folder = storeFolder
            store = try SQLiteStore(path: storeFolder + "/store.sqlite")
            configuration = ServerConfiguration()
            configuration.uploadDirectory = spool
            configuration.heartbeatSeconds = 0.5
        }
    }

    /// A GPX text of `points` points (a few hundred kilobytes for 20,000).
    func bigGPX(points: Int, hour: Int = 7) -> String {
        var s = #"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"#
        for i in 0..<points {
            let t = Timestamp(Date(timeIntervalSince1970: 1_714_550_400 + Double(hour * 3600 + i)))
            s +=
                #"<trkpt lat="\#(47.0 + Double(i) * 0.00001)" lon="\#(8.5 + Double(i % 97) * 0.00001)"><ele>\#(400 + i % 50)</ele><time>\#(t.iso8601)</time></trkpt>"#
        }
        return s + "</trkseg></trk></gpx>"
    }

    @Suite(
        "routekit serve: storage failures tell the truth", .serialized,
        .enabled(if: SmallDisk.unavailableReason == nil, "\(SmallDisk.unavailableReason ?? "")"))
    struct StorageFailureTests {
        static func upload(_ port: Int, _ token: String, _ text: String, name: String) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?name=\(name)")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.body = .bytes(ByteBuffer(string: text))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: body))
        }

        static func get(_ port: Int, _ path: String, token: String? = nil) async throws -> Int {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return Int(response.status.code)
        }

        @Test("a full disk under the upload spool and the store: 507 and /readyz 503; room again: 201 and ready")
        func fullSpool() async throws {
            let disk = try SmallDisk.mount(megabytes: 8)
            defer { disk.unmount() }
            let f = try Fixture(storeFolder: disk.path, spool: disk.path)
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                #expect(try await Self.get(port, "/readyz") == 200)
                disk.fill()
                let (status, body) = try await Self.upload(port, token, gpx(name: "full"), name: "full.gpx")
                #expect(status == 507, "\(body)")
                #expect(body.contains("urn:routekit:problem:insufficient-storage"), "\(body)")
                #expect(!body.contains("47.0"), "a coordinate in a problem")
                #expect(try await Self.get(port, "/readyz") == 503)
                disk.free()
                #expect(try await Self.get(port, "/readyz") == 200)
                let (again, _) = try await Self.upload(port, token, gpx(name: "full"), name: "full.gpx")
                #expect(again == 201)
            }
        }

        @Test("a full disk under the store alone: an upload answers 507 (not 422), and what was stored before stays")
        func fullStore() async throws {
            let disk = try SmallDisk.mount(megabytes: 8)
            defer { disk.unmount() }
            let spool = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-spool-\(UUID())").path
            try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: spool) }
            let f = try Fixture(storeFolder: disk.path, spool: spool)
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let (first, _) = try await Self.upload(port, token, gpx(name: "before"), name: "before.gpx")
                #expect(first == 201)
                disk.fill()
                let big = bigGPX(points: 40_000)
                let (status, body) = try await Self.upload(port, token, big, name: "big.gpx")
                #expect(status == 507 || status == 503, "\(status) \(body.prefix(300))")
                #expect(status != 422 && status != 500)
                disk.free()
                #expect(try await f.store.workouts(matching: WorkoutFilter()).count == 1, "the earlier upload was lost")
                let (again, _) = try await Self.upload(port, token, big, name: "big.gpx")
                #expect(again == 201)
            }
        }
    }

    @Suite("routekit serve: a store file deleted while serving")
    struct DeletedStoreTests {
        @Test("uploads answer 503 instead of 201s that a restart would lose, and /readyz says so")
        func deletedStoreFile() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                #expect(try await StorageFailureTests.get(port, "/readyz") == 200)
                for suffix in ["", "-wal", "-shm"] { unlink(f.folder + "/store.sqlite" + suffix) }
                let (status, body) = try await StorageFailureTests.upload(port, token, gpx(name: "lost"), name: "l.gpx")
                #expect(status == 503, "\(status) \(body.prefix(300))")
                #expect(try await StorageFailureTests.get(port, "/readyz") == 503)
            }
        }
    }
#endif

#if Server
    @Suite("routekit serve: pending builders expire")
    struct BuilderExpiryTests {
        @Test("a builder without a batch for longer than the expiry is discarded by the server")
        func expires() async throws {
            var f = try Fixture()
            f.configuration.pendingBuilderExpirySeconds = 1
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/builders")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                #expect(response.status == .created)
                let id = json(try await response.body.collect(upTo: 1 << 16))["id"] as? String ?? ""
                // Gone within a generous deadline (checked every quarter of the expiry; the machine may be busy).
                var status = 200
                for _ in 0..<60 where status == 200 {
                    try await Task.sleep(for: .milliseconds(250))
                    status = try await StorageFailureTests.get(port, "/v1/builders/\(id)", token: token)
                }
                #expect(status == 404)
            }
            #expect(try await f.store.pendingBuilders().isEmpty)
        }

        @Test("the library's sweep discards only builders untouched since the cutoff")
        func sweep() async throws {
            let f = try Fixture()
            let builder = try await RouteBuilder(store: f.store, source: try Source(name: "phone"))
            _ = builder
            #expect(try await f.store.discardPendingBuilders(updatedBefore: Date(timeIntervalSinceNow: -60)).isEmpty)
            let gone = try await f.store.discardPendingBuilders(updatedBefore: Date(timeIntervalSinceNow: 1))
            #expect(gone.count == 1)
            #expect(try await f.store.pendingBuilders().isEmpty)
        }
    }
#endif

#if Server
    @Suite("routekit serve: concurrent imports are bounded")
    struct ConcurrentImportTests {
        @Test("past --max-concurrent-imports an upload gets 503 with Retry-After before its body is read")
        func bounded() async throws {
            var f = try Fixture()
            f.configuration.maxConcurrentImports = 1
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                // One upload held open mid-body.
                let slow = try RawConnection(port: port)
                #expect(
                    await slow.send(
                        ServerHardeningTests.chunkedUpload + "Authorization: Bearer \(token)\r\n\r\n"
                            + "10\r\n<?xml version=\"1\r\n"))
                try await Task.sleep(for: .milliseconds(1_500))
                let (busy, body) = try await StorageFailureTests.upload(port, token, gpx(name: "second"), name: "b.gpx")
                #expect(busy == 503, "\(body)")
                #expect(body.contains("urn:routekit:problem:busy-importing"))
                // The first one ends; the next upload is taken.
                #expect(await slow.send("0\r\n\r\n"))
                _ = await slow.read(for: 1)
                let (ok, _) = try await StorageFailureTests.upload(port, token, gpx(name: "third"), name: "c.gpx")
                #expect(ok == 201)
            }
        }
    }
#endif
