#if Server && Postgres
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKitTesting
    import Testing

    @Suite(
        "two routekit serve processes on one PostgreSQL", .serialized,
        .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct ServePostgresTests {
        @Test("a follower of one server sees, within seconds, a route uploaded to the other")
        func twoServers() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let database = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(database) }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-pg2-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let made = try runChildProcess(
                binary, ["tokens", "create", "--store", database, "--source", "phone", "--scope", "read,write"])
            #expect(made.status == 0, "\(made.errorOutput)")
            let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let (first, portA) = try await startServe(binary, store: database, log: folder.appendingPathComponent("a.log"))
            defer { first.terminate() }
            let (second, portB) = try await startServe(binary, store: database, log: folder.appendingPathComponent("b.log"))
            defer { second.terminate() }
            // Follow on the second server.
            let stream = try await HTTPClient.shared.execute(
                request(portB, "/v1/changes", token: token), timeout: .seconds(60))
            #expect(stream.status == .ok)
            var reader = EventReader(stream.body)
            let upToDate = try #require(try await reader.next())
            #expect(upToDate.event == "up-to-date")
            // Upload to the first.
            var upload = HTTPClientRequest(url: "http://127.0.0.1:\(portA)/v1/uploads?name=pg.gpx")
            upload.method = .POST
            upload.headers.add(name: "Authorization", value: "Bearer \(token)")
            upload.body = .bytes(ByteBuffer(string: gpx(name: "across", points: 15)))
            let uploaded = try await HTTPClient.shared.execute(upload, timeout: .seconds(30))
            #expect(uploaded.status == .created)
            let answer = String(buffer: try await uploaded.body.collect(upTo: 1 << 20))
            let committed = ContinuousClock.now
            let event = try #require(try await reader.nextChanges())
            let delay = ContinuousClock.now - committed
            #expect(event.event == "changes")
            // The route the first server stored is the one the second server's follower received.
            let route = try #require(answer.split(separator: "\"route\":\"").dropFirst().first?.prefix(36))
            #expect(event.data.contains(String(route)))
            #expect(delay < .seconds(5), "the event took \(delay) across servers")

            // A smoothing job started on the first server is reported by the second, to its end.
            let admin = try runChildProcess(
                binary, ["tokens", "create", "--store", database, "--source", "ops", "--scope", "read,admin"])
            let adminToken = admin.output.trimmingCharacters(in: .whitespacesAndNewlines)
            var start = HTTPClientRequest(url: "http://127.0.0.1:\(portA)/v1/jobs")
            start.method = .POST
            start.headers.add(name: "Authorization", value: "Bearer \(adminToken)")
            let started = try await HTTPClient.shared.execute(start, timeout: .seconds(30))
            #expect(started.status == .accepted)
            let location = try #require(started.headers["Location"].first)
            var state = ""
            for _ in 0..<200 where state != "finished" {
                let r = try await HTTPClient.shared.execute(
                    request(portB, location, token: adminToken, stream: false), timeout: .seconds(30))
                let body = String(buffer: try await r.body.collect(upTo: 1 << 20))
                #expect(r.status == .ok, "\(body)")
                state = body.contains(#""state":"finished""#) ? "finished" : "running"
                if state != "finished" { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(state == "finished", "the second server never saw the first server's job finish")
        }
    }
#endif
