#if Server && Postgres
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKitTesting
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Two `routekit serve` processes on one fresh database, delivering webhooks with the timings of tests (a lease of
    /// 6 s: a killed server's runs out soon) to loopback, and scripts/webhook-receiver.py, which answers 204 to every
    /// request, subscribed through the first server to the routes of the person of ``token``.
    private struct HookedServers {
        /// A token of the default person, reading and writing.
        var token: String
        /// The receiver's log (``ReceivedWebhook/read(_:)``).
        var hooks: URL
        /// The first server, and its port.
        var first: Process
        var portA: Int
        /// The second server's port.
        var portB: Int

        /// Runs `body` with the servers and the receiver, then stops them and drops the database. Returns at once
        /// without the routekit executable (an issue) or without python's standardwebhooks (skipped, unless CI is
        /// set), as the other tests of serve and of the receiver do.
        static func run(_ body: (HookedServers) async throws -> Void) async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            guard let python = try WebhookReceiverCLITests.python() else { return }
            let database = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(database) }
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("routekit-pghooks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let made = try runChildProcess(
                binary, ["tokens", "create", "--store", database, "--source", "phone", "--scope", "read,write"])
            #expect(made.status == 0, "\(made.errorOutput)")
            let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let (receiver, hookPort, secretFile, hooks) = try await WebhookReceiverCLITests.startReceiver(
                python, in: folder)
            defer { if receiver.isRunning { receiver.terminate() } }
            let quick = ["ROUTEKIT_TEST_QUICK_WEBHOOKS": "1"]
            let (first, portA) = try await startServe(
                binary, store: database, log: folder.appendingPathComponent("a.log"),
                extra: ["--webhooks-allow-private"], environment: quick)
            defer { if first.isRunning { first.terminate() } }
            let (second, portB) = try await startServe(
                binary, store: database, log: folder.appendingPathComponent("b.log"),
                extra: ["--webhooks-allow-private"], environment: quick)
            defer { if second.isRunning { second.terminate() } }
            _ = try await WebhookReceiverCLITests.subscribe(
                port: portA, token: token, hookPort: hookPort, secretFile: secretFile)
            try await body(HookedServers(token: token, hooks: hooks, first: first, portA: portA, portB: portB))
        }

        /// Uploads GPX files `numbers` one after another, file `i` to the server on `ports[i % ports.count]`: the new
        /// routes' uuids, in the order of the uploads.
        func upload(_ numbers: Range<Int>, to ports: [Int]) async throws -> [String] {
            var routes: [String] = []
            for i in numbers {
                routes.append(try await WebhookReceiverCLITests.upload(i, port: ports[i % ports.count], token: token))
            }
            return routes
        }

        /// The receiver's log once every route of `routes` came acknowledged (30 s at most), and 1.5 s more for a
        /// repeat to show.
        func deliveries(of routes: [String]) async throws -> [ReceivedWebhook] {
            let expected = Set(routes)
            _ = try await ReceivedWebhook.wait(hooks) {
                Set($0.filter(\.acknowledged).flatMap(\.added)).isSuperset(of: expected)
            }
            try await Task.sleep(for: .milliseconds(1500))
            return ReceivedWebhook.read(hooks)
        }
    }

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

        @Test(
            "a webhook subscription on two serve processes sharing PostgreSQL, uploads to both: every route delivered once, in anchor order, each request verified by standardwebhooks with a webhook-id of its own"
        )
        func webhooksOnce() async throws {
            try await HookedServers.run { servers in
                let routes = try await servers.upload(0..<12, to: [servers.portA, servers.portB])
                let all = try await servers.deliveries(of: routes)
                ReceivedWebhook.expectVerified(all)
                // Every route once (none twice, none missing), in the order of the commits.
                let delivered = all.flatMap(\.added)
                #expect(delivered.count == routes.count, "\(all.map(\.added))")
                #expect(Set(delivered) == Set(routes))
                #expect(delivered == routes, "not in the order of the uploads: \(all.map(\.added))")
                // Every request acknowledged: none came again.
                #expect(Set(all.map(\.id)).count == all.count, "a webhook-id came twice: \(all.map(\.id))")
                let positions = try ReceivedWebhook.firstAnchorPositions(all)
                #expect(positions.count == all.count)
                #expect(Set(positions).sorted() == positions, "not in anchor order: \(positions)")
            }
        }

        @Test(
            "one of two serve processes sharing PostgreSQL SIGKILLed while webhooks are delivered: the other delivers every route, repeating only the set the killed one was sending"
        )
        func webhooksAfterKill() async throws {
            try await HookedServers.run { servers in
                var routes = try await servers.upload(0..<6, to: [servers.portA, servers.portB])
                // Deliveries under way: the first server is killed.
                _ = try await ReceivedWebhook.wait(servers.hooks) { !$0.isEmpty }
                kill(servers.first.processIdentifier, SIGKILL)
                servers.first.waitUntilExit()
                let uploadedBeforeKill = Set(routes)
                routes.append(contentsOf: try await servers.upload(6..<12, to: [servers.portB]))
                let all = try await servers.deliveries(of: routes)
                ReceivedWebhook.expectVerified(all)
                #expect(Set(all.flatMap(\.added)) == Set(routes))
                for (messageID, tries) in Dictionary(grouping: all, by: \.id) {
                    #expect(Set(tries.map(\.dataHash)).count == 1, "\(messageID) carried different change sets")
                }
                let positions = try ReceivedWebhook.firstAnchorPositions(all)
                #expect(Set(positions).sorted() == positions, "not in anchor order: \(positions)")
                // Only the set the killed server was sending can come again (the receiver's 204 came, the cursor had
                // not moved), so a set of uploads made before the kill: in the next request, which the second server
                // read from the same cursor, so with the same routes first (and the same webhook-id only if nothing
                // was committed since: a webhook-id is one change set, checked above).
                let repeats = all.indices.dropFirst().filter { index in
                    !Set(all[index].added).isDisjoint(with: all[..<index].flatMap(\.added))
                }
                let repeated = repeats.map { all[$0].number }
                #expect(repeated.count <= 1, "routes came again in requests \(repeated)")
                for index in repeats {
                    let lost = all[index - 1]
                    let again = all[index]
                    #expect(
                        Set(lost.added).isSubset(of: uploadedBeforeKill),
                        "request \(lost.number) carries routes uploaded after the kill")
                    #expect(again.added.starts(with: lost.added), "\(lost.added), then \(again.added)")
                    #expect(Set(all[..<(index - 1)].flatMap(\.added)).isDisjoint(with: again.added))
                }
            }
        }
    }
#endif
