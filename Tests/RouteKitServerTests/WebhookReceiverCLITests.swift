#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitTesting
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// One request as scripts/webhook-receiver.py logged it: a line of its `--log`.
    struct ReceivedWebhook: Sendable {
        /// The request's number at the receiver, from 1.
        var number: Int
        /// `webhook-id`.
        var id: String
        /// Whether the standardwebhooks library accepted it.
        var verified: Bool
        /// Why it did not.
        var error: String?
        /// The receiver's `--answers` item it got (`500`, `hang`, `204`).
        var answer: String
        /// The status answered; `nil` for a request held without an answer.
        var status: Int?
        /// The change set's anchor.
        var anchor: String?
        /// The uuids of the routes its change set adds.
        var added: [String]
        /// A hash of the exact body.
        var bodyHash: String
        /// A hash of the change set (`data`).
        var dataHash: String

        /// Whether the receiver acknowledged it (a 2xx status).
        var acknowledged: Bool { status.map { (200..<300).contains($0) } ?? false }

        init?(line: Substring) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let number = object["n"] as? Int
            else { return nil }
            self.number = number
            id = object["id"] as? String ?? ""
            verified = object["verified"] as? Bool ?? false
            error = object["error"] as? String
            answer = object["answer"] as? String ?? ""
            status = object["status"] as? Int
            anchor = object["anchor"] as? String
            added = (object["added"] as? [Any] ?? []).compactMap { $0 as? String }
            bodyHash = object["body_sha256"] as? String ?? ""
            dataHash = object["data_sha256"] as? String ?? ""
        }

        /// The receiver's log at `url`, in the order the requests came.
        static func read(_ url: URL) -> [ReceivedWebhook] {
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { ReceivedWebhook(line: $0) }.sorted { $0.number < $1.number }
        }

        /// The log at `url` once `done` holds for it (30 s at most: then as it is).
        static func wait(_ url: URL, until done: ([ReceivedWebhook]) -> Bool) async throws -> [ReceivedWebhook] {
            let deadline = ContinuousClock.now + .seconds(30)
            var entries = read(url)
            while !done(entries) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                entries = read(url)
            }
            return entries
        }

        /// Records an issue for each request of `entries` the standardwebhooks library refused.
        static func expectVerified(_ entries: [ReceivedWebhook]) {
            for entry in entries where !entry.verified {
                Issue.record("request \(entry.number) was refused by standardwebhooks: \(entry.error ?? "")")
            }
        }

        /// The positions of the anchors of `entries`, each `webhook-id` as first delivered, in the order they came.
        static func firstAnchorPositions(_ entries: [ReceivedWebhook]) throws -> [Int64] {
            var seen: Set<String> = []
            var positions: [Int64] = []
            for entry in entries where seen.insert(entry.id).inserted {
                positions.append(try ChangeAnchor(text: entry.anchor ?? "").position)
            }
            return positions
        }
    }

    @Suite("Webhooks of routekit serve, checked by the standardwebhooks reference library (Python)")
    struct WebhookReceiverCLITests {
        /// scripts/webhook-receiver.py.
        static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/webhook-receiver.py")

        /// python3, when the receiver can import standardwebhooks; else `nil`, and the test is skipped, saying why
        /// (it fails instead when CI is set, where everything the tests need is installed).
        static func python() throws -> URL? {
            var why = "python3 is not on PATH"
            if let python = findExecutable(["python3"]) {
                let check = try runChildProcess(python, [script.path, "--check"])
                if check.status == 0 { return python }
                why = check.errorOutput.trimmingCharacters(in: .whitespacesAndNewlines)
                guard check.status == 77 else {
                    Issue.record("webhook-receiver.py --check exited \(check.status): \(why)")
                    return nil
                }
            }
            if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("\(why); CI is set, so the webhook receiver's test must run")
            } else {
                print("WebhookReceiverCLITests skipped: \(why)")
            }
            return nil
        }

        /// `method` `url` with `token` (and `body`): the status and the answer's JSON.
        static func call(_ method: HTTPMethod, _ url: String, token: String, body: String? = nil) async throws
            -> (status: Int, json: [String: Any])
        {
            var request = HTTPClientRequest(url: url)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let object = try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
            return (Int(response.status.code), object ?? [:])
        }

        /// scripts/webhook-receiver.py started in `folder`, reading its secret from `folder/secret` and logging to
        /// `folder/hooks.jsonl`, answering `answers` in turn when given (204 to everything else): the process, its
        /// port, the secret file and the log.
        static func startReceiver(_ python: URL, in folder: URL, answers: String? = nil) async throws -> (
            process: Process, port: Int, secretFile: URL, hooks: URL
        ) {
            let secretFile = folder.appendingPathComponent("secret")
            let hooks = folder.appendingPathComponent("hooks.jsonl")
            var arguments = [script.path, "--secret-file", secretFile.path, "--log", hooks.path]
            if let answers { arguments += ["--answers", answers] }
            let (process, port) = try await startChild(
                python, arguments, log: folder.appendingPathComponent("receiver.log"),
                marker: "listening on http://127.0.0.1:")
            return (process, port, secretFile, hooks)
        }

        /// Subscribes `token`'s person to route changes on the server at `port`, delivered to the receiver at
        /// `hookPort`, and writes the new secret to `secretFile` for the receiver: the subscription as answered.
        static func subscribe(port: Int, token: String, hookPort: Int, secretFile: URL) async throws -> [String: Any] {
            let (status, subscription) = try await call(
                .POST, "http://127.0.0.1:\(port)/v1/webhooks", token: token,
                body: "{\"url\": \"http://127.0.0.1:\(hookPort)/hook\", \"types\": [\"route\"]}")
            #expect(status == 201)
            let secret = try #require(subscription["secret"] as? String)
            try Data(secret.utf8).write(to: secretFile, options: .atomic)
            return subscription
        }

        /// Uploads GPX file `i` (a route of its own) to the server on `port`: the new route's uuid.
        static func upload(_ i: Int, port: Int, token: String) async throws -> String {
            let (status, answer) = try await call(
                .POST, "http://127.0.0.1:\(port)/v1/uploads?name=hook-\(i).gpx", token: token,
                body: gpx(name: "hook-\(i)", points: 12, lat: 10 + Double(i) * 0.01))
            #expect(status == 201, "upload \(i) answered \(status)")
            let results = answer["results"] as? [[String: Any]]
            let tracks = results?.first?["routes"] as? [[String: Any]]
            return try #require(tracks?.first?["route"] as? String)
        }

        @Test(
            "a receiver that fails twice, times out and recovers, and serve SIGKILLed mid-delivery: every upload delivered, every request verified, repeats only of unacknowledged sets with their webhook-id"
        )
        func killedMidDelivery() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            guard let python = try Self.python() else { return }
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("routekit-hooks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let token = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "read,write"]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)

            // Requests 1 to 4 (the first change set): 500, 500, no answer (a timeout), 204; request 5 is held until
            // serve is killed; 204 from then on.
            let (receiver, hookPort, secretFile, hooks) = try await Self.startReceiver(
                python, in: folder, answers: "500,500,hang,204,hang")
            defer { if receiver.isRunning { receiver.terminate() } }
            // Timings of seconds: a killed server's lease, retries, a delivery's deadline (5 s).
            let quick = ["ROUTEKIT_TEST_QUICK_WEBHOOKS": "1"]
            let (server, port) = try await startServe(
                binary, store: store, log: folder.appendingPathComponent("serve-1.log"),
                extra: ["--webhooks-allow-private"], environment: quick)
            defer { if server.isRunning { server.terminate() } }
            let subscription = try await Self.subscribe(
                port: port, token: token, hookPort: hookPort, secretFile: secretFile)
            let id = try #require(subscription["id"] as? String)

            // The first upload's set: the same webhook-id and body four times, acknowledged the fourth.
            let uploads = 12
            let firstRoute = try await Self.upload(0, port: port, token: token)
            var routes = [firstRoute]
            let start = try await ReceivedWebhook.wait(hooks) { $0.count >= 4 }
            let first = Array(start.prefix(4))
            #expect(first.map(\.answer) == ["500", "500", "hang", "204"])
            #expect(Set(first.map(\.id)).count == 1)
            #expect(Set(first.map(\.bodyHash)).count == 1)
            #expect(first.allSatisfy { $0.added == [firstRoute] }, "\(first.map(\.added))")

            // The next uploads, one after another, until the receiver holds request 5: then SIGKILL.
            var next = 1
            while next < uploads && !ReceivedWebhook.read(hooks).contains(where: { $0.number == 5 }) {
                routes.append(try await Self.upload(next, port: port, token: token))
                next += 1
            }
            let held = try await ReceivedWebhook.wait(hooks) { $0.contains { $0.number == 5 } }
            #expect(held.first(where: { $0.number == 5 })?.answer == "hang")
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()

            // Restarted on the same store: the rest of the uploads, then every route reaches the receiver.
            let (again, port2) = try await startServe(
                binary, store: store, log: folder.appendingPathComponent("serve-2.log"),
                extra: ["--webhooks-allow-private"], environment: quick)
            defer { if again.isRunning { again.terminate() } }
            while next < uploads {
                routes.append(try await Self.upload(next, port: port2, token: token))
                next += 1
            }
            let expected = Set(routes)
            _ = try await ReceivedWebhook.wait(hooks) {
                Set($0.filter(\.acknowledged).flatMap(\.added)).isSuperset(of: expected)
            }
            // Time for a repeat to show, if there were one.
            try await Task.sleep(for: .milliseconds(500))
            let all = ReceivedWebhook.read(hooks)

            ReceivedWebhook.expectVerified(all)
            // None lost, nothing else.
            #expect(expected.count == uploads)
            #expect(Set(all.filter(\.acknowledged).flatMap(\.added)) == expected)
            // A set comes again only while unacknowledged, with the same webhook-id and change set.
            for (messageID, tries) in Dictionary(grouping: all, by: \.id) {
                #expect(Set(tries.map(\.dataHash)).count == 1, "\(messageID) carried different change sets")
                #expect(tries.dropLast().allSatisfy { !$0.acknowledged }, "\(messageID) came again after a 2xx")
            }
            // A route acknowledged is never sent again.
            for (index, entry) in all.enumerated() where entry.acknowledged {
                let later = Set(all[(index + 1)...].flatMap(\.added))
                #expect(
                    later.isDisjoint(with: entry.added), "routes of request \(entry.number) came again after its 2xx")
            }
            // Each set's anchor, as first delivered, is at or after the one before.
            let positions = try ReceivedWebhook.firstAnchorPositions(all)
            #expect(positions == positions.sorted())
            // The server saw the timeout as one.
            let (_, state) = try await Self.call(.GET, "http://127.0.0.1:\(port2)/v1/webhooks/\(id)", token: token)
            let errors = (state["lastAttempts"] as? [[String: Any]] ?? []).compactMap { $0["error"] as? String }
            #expect(errors.contains("timeout"), "\(errors)")
        }
    }
#endif
