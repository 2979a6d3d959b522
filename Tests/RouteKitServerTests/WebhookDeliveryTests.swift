#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    @_spi(RouteKitBackend) import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    /// A webhook receiver for the dispatcher's tests, on a free port of 127.0.0.1: `POST /hook/NAME` keeps every
    /// request (its path, headers and body) and answers with the next answer of ``plan`` (`204` once it is used up).
    final class HookReceiver: Sendable {
        struct Received: Sendable {
            var path: String
            var headers: HTTPFields
            var body: [UInt8]

            /// The value of header `name`.
            func field(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }

            /// `webhook-id`.
            var id: String? { field("webhook-id") }

            /// The change set the body carries (`data`).
            var data: [String: Any] {
                let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
                return object?["data"] as? [String: Any] ?? [:]
            }

            /// The sync identifiers of the routes the change set adds.
            var addedNames: [String] {
                (data["added"] as? [[String: Any]] ?? []).compactMap { $0["syncIdentifier"] as? String }
            }

            /// The change set's anchor.
            var anchor: String? { data["anchor"] as? String }

            /// Whose change set it is (`person`, in an admin-wide subscription's deliveries).
            var person: String? {
                let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
                return object?["person"] as? String
            }
        }

        enum Answer: Sendable {
            case status(Int)
            /// `204`, after this long.
            case slow(Duration)
        }

        let received = Locked<[Received]>([])
        let plan = Locked<[Answer]>([])

        /// Answers `answers` to the next requests, in order.
        func answer(_ answers: [Answer]) { plan.withLock { $0 = answers } }

        func application() -> some ApplicationProtocol {
            let router = Router()
            let received = self.received
            let plan = self.plan
            router.post("/hook/:name") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 4 << 20)
                received.withLock {
                    $0.append(
                        Received(
                            path: request.uri.path, headers: request.headers, body: Array(body.readableBytesView)))
                }
                let answer = plan.withLock { $0.isEmpty ? Answer.status(204) : $0.removeFirst() }
                switch answer {
                case .status(let code):
                    return Response(status: HTTPResponse.Status(code: code))
                case .slow(let delay):
                    try await Task.sleep(for: delay)
                    return Response(status: .noContent)
                }
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }

        /// What came to `path` (every path when `nil`).
        func requests(to path: String? = nil) -> [Received] {
            received.withLock { all in all.filter { path == nil || $0.path == path } }
        }

        /// Waits until `count` requests came to `path`, 10 s at most, and returns them.
        func wait(for count: Int, to path: String? = nil) async throws -> [Received] {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let got = requests(to: path)
                if got.count >= count { return got }
                try await Task.sleep(for: .milliseconds(20))
            }
            return requests(to: path)
        }
    }

    /// The settings of a server whose webhooks go to 127.0.0.1 and are retried within a fraction of a second
    /// (``WebhookSettings/quick``), paused after `maxAttempts`.
    func quickWebhooks(_ configuration: inout ServerConfiguration, maxAttempts: Int = 3) {
        configuration.webhooksAllowPrivate = true
        var settings = WebhookSettings.quick
        settings.retry.maxAttempts = maxAttempts
        configuration.webhooks = settings
    }

    /// Runs `body` with a client of `app` and the port of `receiver`'s server, both live on loopback.
    func withReceiver(
        _ receiver: HookReceiver, _ app: some ApplicationProtocol,
        _ body: @Sendable (any TestClientProtocol, Int) async throws -> Void
    ) async throws {
        try await receiver.application().test(.live) { hooks in
            let port = try #require(hooks.port)
            try await app.test(.live) { client in try await body(client, port) }
        }
    }

    /// A person of `store` (of the identity provider's `subject`, if any) and the text of a token of theirs with
    /// `scopes` (read and write unless told).
    func personWithToken(
        _ store: SQLiteStore, _ name: String, scopes: Set<APIScope> = [.read, .write], subject: ExternalSubject? = nil
    ) async throws -> (person: PersonID, token: String) {
        let person = Person(name: name, subject: subject)
        try await store.addPerson(person)
        let made = TokenText.make(name: name, person: person.id, source: try Source(name: "phone"), scopes: scopes)
        try await store.saveToken(made.token)
        return (person.id, made.text)
    }

    /// The text of an admin token (no person, the `admin` scope) of `store`.
    func adminTokenText(_ store: SQLiteStore) async throws -> String {
        let made = TokenText.make(name: "admin", person: nil, source: try Source(name: "ops"), scopes: [.admin])
        try await store.saveToken(made.token)
        return made.text
    }

    /// Makes a subscription through the API and returns the answer's JSON.
    func subscribe(
        _ client: some TestClientProtocol, _ token: String, url: String, types: [String] = ["route"]
    ) async throws -> [String: Any] {
        let typeList = types.map { "\"\($0)\"" }.joined(separator: ",")
        let response = try await client.execute(
            uri: "/v1/webhooks", method: .post, headers: auth(token),
            body: ByteBuffer(string: "{\"url\": \"\(url)\", \"types\": [\(typeList)]}"))
        #expect(response.status == .created)
        return json(response.body)
    }

    /// `POST /v1/webhooks` with `body`.
    func postWebhook(_ client: some TestClientProtocol, _ token: String, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/webhooks", method: .post, headers: auth(token), body: ByteBuffer(string: body))
    }

    /// `GET /v1/webhooks/ID` until `done` holds for its JSON (10 s at most); the last JSON and status.
    func webhookState(
        _ client: some TestClientProtocol, _ token: String, _ id: String, until done: ([String: Any]) -> Bool
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any]) {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let response = try await client.execute(uri: "/v1/webhooks/\(id)", method: .get, headers: auth(token))
            let body = json(response.body)
            if done(body) || ContinuousClock.now >= deadline { return (response.status, body) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The statuses of a subscription's last attempts, as `GET /v1/webhooks/ID` shows them.
    func attemptStatuses(_ body: [String: Any]) -> [Int] {
        (body["lastAttempts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? Int }
    }

    /// The people the last attempts of a subscription name, as `GET /v1/webhooks/ID` shows them (an admin-wide
    /// subscription's; none for a person's own).
    func attemptPeople(_ body: [String: Any]) -> Set<String> {
        Set((body["lastAttempts"] as? [[String: Any]] ?? []).compactMap { $0["person"] as? String })
    }

    @Suite("Webhooks: subscriptions and deliveries over sockets", .serialized)
    struct WebhookDeliveryTests {
        @Test("an upload reaches the receiver signed; the body's anchor resumes GET /v1/changes")
        func uploadIsDelivered() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(made["id"] as? String)
                let secretText = try #require(made["secret"] as? String)
                #expect(secretText.hasPrefix("whsec_"))
                #expect(made["state"] as? String == "active")
                let upload = try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(ana.token),
                    body: ByteBuffer(string: gpx(name: "a")))
                #expect(upload.status == .created)
                let first = try await receiver.wait(for: 1)
                #expect(first.count == 1)
                let delivery = try #require(first.first)
                let secret = try WebhookSecret(text: secretText)
                try WebhookVerifier(secrets: [secret]).verify(
                    id: delivery.id, timestamp: delivery.field("webhook-timestamp"),
                    signature: delivery.field("webhook-signature"), body: delivery.body)
                let messageID = try #require(delivery.id)
                #expect(messageID.hasPrefix("msg_"))
                let object = try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any]
                #expect(object?["type"] as? String == "routekit.changes")
                let added = delivery.data["added"] as? [[String: Any]] ?? []
                #expect(added.count == 1)
                let anchor = try #require(delivery.anchor)
                // The anchor is the person's (sealed for the token that subscribed): nothing after it yet.
                let after = try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(ana.token))
                #expect(after.status == .ok)
                let nothing = json(after.body)["added"] as? [Any]
                #expect(nothing?.isEmpty == true)
                // The next commit is the next delivery, and what the feed has after the first one's anchor.
                _ = try await saveRoute(store.forPerson(ana.person), "b")
                let two = try await receiver.wait(for: 2)
                #expect(two.count == 2)
                let second = try #require(two.last)
                #expect(second.addedNames == ["test-b"])
                #expect(second.id != messageID)
                let resumed = try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(ana.token))
                let fromFeed = (json(resumed.body)["added"] as? [[String: Any]] ?? []).compactMap {
                    $0["syncIdentifier"] as? String
                }
                #expect(fromFeed == ["test-b"])
                // The subscription's cursor is the last delivered anchor, as this token reads anchors.
                let state = try await webhookState(client, ana.token, id) { attemptStatuses($0).count == 2 }
                #expect(attemptStatuses(state.body) == [204, 204])
                let cursor = try #require(state.body["cursor"] as? String)
                let atCursor = try await client.execute(
                    uri: "/v1/changes?anchor=\(cursor)", method: .get, headers: auth(ana.token))
                #expect(atCursor.status == .ok)
                let empty = json(atCursor.body)["added"] as? [Any]
                #expect(empty?.isEmpty == true)
                #expect(state.body["secret"] == nil)
            }
        }

        @Test("a receiver that fails, then answers: the same webhook-id again until acknowledged, then the next set")
        func retriedInOrder() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            receiver.answer([.status(500), .status(503)])
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(made["id"] as? String)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                let three = try await receiver.wait(for: 3)
                #expect(three.count == 3)
                let ids = Set(three.compactMap(\.id))
                #expect(ids.count == 1)
                let names = three.map(\.addedNames)
                #expect(names == [["test-a"], ["test-a"], ["test-a"]])
                let state = try await webhookState(client, ana.token, id) { attemptStatuses($0).count == 3 }
                #expect(attemptStatuses(state.body) == [500, 503, 204])
                #expect(state.body["failedAttempts"] as? Int == 0)
                _ = try await saveRoute(store.forPerson(ana.person), "b")
                let four = try await receiver.wait(for: 4)
                #expect(four.count == 4)
                let last = try #require(four.last)
                #expect(last.addedNames == ["test-b"])
                let lastID = try #require(last.id)
                #expect(!ids.contains(lastID))
            }
        }

        @Test("410 Gone removes the subscription")
        func goneRemoves() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            receiver.answer([.status(410)])
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(made["id"] as? String)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                _ = try await receiver.wait(for: 1)
                let state = try await webhookState(client, ana.token, id) { $0["id"] == nil }
                #expect(state.status == .notFound)
                let list = try await client.execute(uri: "/v1/webhooks", method: .get, headers: auth(ana.token))
                let all = json(list.body)["webhooks"] as? [Any]
                #expect(all?.isEmpty == true)
                _ = try await saveRoute(store.forPerson(ana.person), "b")
                try await Task.sleep(for: .milliseconds(500))
                #expect(receiver.requests().count == 1)
            }
        }

        @Test("failures up to the limit pause the subscription, saying why; GET shows the attempts; resume delivers")
        func pausedAfterFailures() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration, maxAttempts: 3)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            receiver.answer(Array(repeating: .status(500), count: 3))
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(made["id"] as? String)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                let state = try await webhookState(client, ana.token, id) { $0["state"] as? String == "paused" }
                #expect(state.body["state"] as? String == "paused")
                let reason = state.body["reason"] as? String ?? ""
                #expect(reason.contains("3 attempts failed"))
                #expect(reason.contains("500"))
                #expect(attemptStatuses(state.body) == [500, 500, 500])
                #expect(attemptPeople(state.body).isEmpty, "a person's own attempts name nobody")
                #expect(state.body["failedAttempts"] as? Int == 3)
                // Paused: nothing more is sent.
                try await Task.sleep(for: .milliseconds(500))
                #expect(receiver.requests().count == 3)
                let resumed = try await client.execute(
                    uri: "/v1/webhooks/\(id)/resume", method: .post, headers: auth(ana.token))
                #expect(resumed.status == .ok)
                #expect(json(resumed.body)["state"] as? String == "active")
                #expect(json(resumed.body)["failedAttempts"] as? Int == 0)
                let four = try await receiver.wait(for: 4)
                #expect(four.count == 4)
                #expect(Set(four.compactMap(\.id)).count == 1)
                let after = try await webhookState(client, ana.token, id) { attemptStatuses($0).count == 4 }
                #expect(attemptStatuses(after.body) == [500, 500, 500, 204])
            }
        }

        @Test("a server stopped mid-delivery: the next one on the store sends the same set again, then the rest")
        func resumesAfterAStop() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            // The first delivery is answered only after the first server has stopped.
            receiver.answer([.slow(.seconds(3))])
            let first = f.app()
            let second = Fixture(sharing: f).app()
            let store = f.store
            try await receiver.application().test(.live) { hooks in
                let port = try #require(hooks.port)
                try await first.test(.live) { client in
                    _ = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                    _ = try await saveRoute(store.forPerson(ana.person), "a")
                    let sent = try await receiver.wait(for: 1)
                    #expect(sent.count == 1)
                }
                // The first server has stopped without an answer: the change set is still the subscription's next.
                try await second.test(.live) { _ in
                    let again = try await receiver.wait(for: 2)
                    #expect(again.count == 2)
                    _ = try await saveRoute(store.forPerson(ana.person), "b")
                    let all = try await receiver.wait(for: 3)
                    #expect(all.count == 3)
                    let ids = all.map { $0.id ?? "" }
                    #expect(ids.count == 3)
                    if ids.count == 3 {
                        #expect(ids[0] == ids[1])
                        #expect(ids[2] != ids[0])
                    }
                    let names = all.map(\.addedNames)
                    #expect(names == [["test-a"], ["test-a"], ["test-b"]])
                }
            }
        }

        @Test("two servers on one store deliver each change set once (the lease)")
        func twoServersDeliverOnce() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            let one = f.app()
            let two = Fixture(sharing: f).app()
            let store = f.store
            try await receiver.application().test(.live) { hooks in
                let port = try #require(hooks.port)
                try await one.test(.live) { client in
                    try await two.test(.live) { _ in
                        _ = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                        let view = store.forPerson(ana.person)
                        for n in 0..<6 {
                            _ = try await saveRoute(view, "r\(n)")
                            try await Task.sleep(for: .milliseconds(50))
                        }
                        let deadline = ContinuousClock.now + .seconds(10)
                        while ContinuousClock.now < deadline {
                            if receiver.requests().flatMap(\.addedNames).count >= 6 { break }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        // Time for a duplicate to show, if there were one.
                        try await Task.sleep(for: .seconds(1))
                        let all = receiver.requests()
                        let names = all.flatMap(\.addedNames)
                        let expected = (0..<6).map { "test-r\($0)" }
                        #expect(names == expected)
                        let ids = all.compactMap(\.id)
                        #expect(Set(ids).count == ids.count)
                    }
                }
            }
        }

        @Test("another person's token: 404 for the subscription, and never the first person's changes")
        func otherPeople() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let ben = try await personWithToken(f.store, "Ben")
            let receiver = HookReceiver()
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let anas = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(anas["id"] as? String)
                let missing = UUID().uuidString.lowercased()
                for target in [id, missing] {
                    for (method, path) in [
                        (HTTPRequest.Method.get, ""), (.delete, ""), (.post, "/rotate"), (.post, "/resume"),
                    ] {
                        let r = try await client.execute(
                            uri: "/v1/webhooks/\(target)\(path)", method: method, headers: auth(ben.token))
                        #expect(r.status == .notFound)
                        #expect(problemType(r) == "not-found")
                    }
                }
                let list = try await client.execute(uri: "/v1/webhooks", method: .get, headers: auth(ben.token))
                let bens = json(list.body)["webhooks"] as? [Any]
                #expect(bens?.isEmpty == true)
                _ = try await subscribe(client, ben.token, url: "http://127.0.0.1:\(port)/hook/ben")
                _ = try await saveRoute(store.forPerson(ana.person), "ana-1")
                _ = try await saveRoute(store.forPerson(ben.person), "ben-1")
                _ = try await receiver.wait(for: 1, to: "/hook/ana")
                _ = try await receiver.wait(for: 1, to: "/hook/ben")
                try await Task.sleep(for: .milliseconds(500))
                let toAna = receiver.requests(to: "/hook/ana").flatMap(\.addedNames)
                let toBen = receiver.requests(to: "/hook/ben").flatMap(\.addedNames)
                #expect(toAna == ["test-ana-1"])
                #expect(toBen == ["test-ben-1"])
                // Ana's subscription is as it was.
                let still = try await client.execute(
                    uri: "/v1/webhooks/\(id)", method: .get, headers: auth(ana.token))
                #expect(still.status == .ok)
            }
        }

        @Test("a rotated secret: both the new and the old one sign, each verifies alone")
        func rotation() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let receiver = HookReceiver()
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let id = try #require(made["id"] as? String)
                let oldText = try #require(made["secret"] as? String)
                let rotated = try await client.execute(
                    uri: "/v1/webhooks/\(id)/rotate", method: .post, headers: auth(ana.token))
                #expect(rotated.status == .ok)
                let body = json(rotated.body)
                let newText = try #require(body["secret"] as? String)
                #expect(newText != oldText)
                #expect(body["previousSecretExpires"] as? String != nil)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                let delivery = try #require(try await receiver.wait(for: 1).first)
                let signature = delivery.field("webhook-signature") ?? ""
                #expect(signature.split(separator: " ").count == 2)
                for text in [newText, oldText] {
                    let secret = try WebhookSecret(text: text)
                    try WebhookVerifier(secrets: [secret]).verify(
                        id: delivery.id, timestamp: delivery.field("webhook-timestamp"), signature: signature,
                        body: delivery.body)
                }
                let stranger = WebhookVerifier(secrets: [WebhookSecret.generate()])
                let refused = refuses {
                    try stranger.verify(
                        id: delivery.id, timestamp: delivery.field("webhook-timestamp"), signature: signature,
                        body: delivery.body)
                }
                #expect(refused)
            }
        }

        @Test("history compacted past the cursor pauses the subscription; resuming from now delivers again")
        func expiredCursorPauses() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let view = f.store.forPerson(ana.person)
            let receiver = HookReceiver()
            let app = f.app()
            try await receiver.application().test(.live) { hooks in
                let port = try #require(hooks.port)
                // A paused subscription whose cursor is older than a deletion that compaction then drops.
                _ = try await saveRoute(view, "first")
                let before = try await view.currentAnchor()
                let subscription = WebhookSubscription(
                    person: ana.person, url: "http://127.0.0.1:\(port)/hook/ana", types: [.route],
                    secret: WebhookSecret.generate().text, state: .paused(reason: "made paused by the test"),
                    cursor: before.text)
                #expect(try await view.addWebhook(subscription, limit: 20))
                let route = try await saveRoute(view, "gone")
                try await view.deleteRoute(id: route, as: try Source(name: "phone"))
                _ = try await view.compactChanges(before: Date().addingTimeInterval(60))
                let id = subscription.id.uuidString.lowercased()
                try await app.test(.live) { client in
                    let resumed = try await client.execute(
                        uri: "/v1/webhooks/\(id)/resume", method: .post, headers: auth(ana.token))
                    #expect(resumed.status == .ok)
                    let state = try await webhookState(client, ana.token, id) { $0["state"] as? String == "paused" }
                    let reason = state.body["reason"] as? String ?? ""
                    #expect(reason.contains("anchor-expired"))
                    #expect(receiver.requests().isEmpty)
                    let fromNow = try await client.execute(
                        uri: "/v1/webhooks/\(id)/resume", method: .post, headers: auth(ana.token),
                        body: ByteBuffer(string: #"{"from": "now"}"#))
                    #expect(fromNow.status == .ok)
                    _ = try await saveRoute(view, "after")
                    let delivered = try await receiver.wait(for: 1)
                    #expect(delivered.map(\.addedNames) == [["test-after"]])
                }
            }
        }

        @Test("refused: a private receiver without the setting (422, naming the host), bad input, scopes, the limit")
        func refusals() async throws {
            var f = try Fixture()
            f.configuration.webhooks.maxPerPerson = 2
            f.configuration.webhooks.maxAdminWide = 1
            let ana = try await personWithToken(f.store, "Ana")
            let reader = try await personWithToken(f.store, "Reader", scopes: [.read])
            let admin = try await adminTokenText(f.store)
            var allowing = Fixture(sharing: f)
            allowing.configuration.webhooksAllowPrivate = true
            try await f.app().test(.router) { client in
                let loopback = try await postWebhook(
                    client, ana.token, #"{"url": "http://127.0.0.1:9/hook?key=SECRET"}"#)
                #expect(loopback.status == .unprocessableContent)
                #expect(problemType(loopback) == "webhook-url-refused")
                let detail = json(loopback.body)["detail"] as? String ?? ""
                #expect(detail.contains("'127.0.0.1' is a loopback address"))
                #expect(!detail.contains("SECRET"))
                let scheme = try await postWebhook(client, ana.token, #"{"url": "ftp://example.com/hook"}"#)
                #expect(scheme.status == .unprocessableContent)
                let noURL = try await postWebhook(client, ana.token, #"{"types": ["route"]}"#)
                #expect(noURL.status == .badRequest)
                let badType = try await postWebhook(
                    client, ana.token, #"{"url": "https://example.com/h", "types": ["nope"]}"#)
                #expect(badType.status == .badRequest)
                let readOnly = try await postWebhook(client, reader.token, #"{"url": "https://example.com/h"}"#)
                #expect(readOnly.status == .forbidden)
                #expect(problemType(readOnly) == "insufficient-scope")
                // An admin's subscription (everyone's changes) is checked as a person's is.
                let asAdmin = try await postWebhook(client, admin, #"{"url": "http://127.0.0.1:9/hook/all"}"#)
                #expect(asAdmin.status == .unprocessableContent)
                #expect(problemType(asAdmin) == "webhook-url-refused")
                let none = try await client.execute(uri: "/v1/webhooks", method: .get)
                #expect(none.status == .unauthorized)
            }
            try await allowing.app().test(.router) { client in
                for n in 0..<2 {
                    let made = try await postWebhook(client, ana.token, "{\"url\": \"http://127.0.0.1:9/hook/\(n)\"}")
                    #expect(made.status == .created)
                    #expect(made.headers[.location]?.hasPrefix("/v1/webhooks/") == true)
                }
                let third = try await postWebhook(client, ana.token, #"{"url": "http://127.0.0.1:9/hook/3"}"#)
                #expect(third.status == .conflict)
                #expect(problemType(third) == "too-many-webhooks")
                let everyone = try await postWebhook(client, admin, #"{"url": "http://127.0.0.1:9/hook/all"}"#)
                #expect(everyone.status == .created)
                let second = try await postWebhook(client, admin, #"{"url": "http://127.0.0.1:9/hook/all2"}"#)
                #expect(second.status == .conflict)
                #expect(problemType(second) == "too-many-webhooks")
                let list = try await client.execute(uri: "/v1/webhooks", method: .get, headers: auth(reader.token))
                let readers = json(list.body)["webhooks"] as? [Any]
                #expect(readers?.isEmpty == true)
            }
        }

        @Test("an admin-wide subscription's paused person: GET names them and why; resume delivers again")
        func adminWidePaused() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration, maxAttempts: 2)
            let ana = try await personWithToken(f.store, "Ana")
            let admin = try await adminTokenText(f.store)
            let receiver = HookReceiver()
            receiver.answer([.status(500), .status(500)])
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, admin, url: "http://127.0.0.1:\(port)/hook/all")
                let id = try #require(made["id"] as? String)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                let state = try await webhookState(client, admin, id) {
                    !($0["pausedPeople"] as? [Any] ?? []).isEmpty
                }
                #expect(state.body["state"] as? String == "active")
                let paused = state.body["pausedPeople"] as? [[String: Any]] ?? []
                #expect(paused.count == 1)
                #expect(paused.first?["person"] as? String == ana.person.description)
                let pausedReason = paused.first?["reason"] as? String ?? ""
                #expect(pausedReason.contains("2 attempts failed"))
                let pausedCursor = paused.first?["cursor"] as? String ?? ""
                #expect(pausedCursor.hasPrefix("w1."))
                #expect(attemptStatuses(paused.first ?? [:]) == [500, 500])
                let resumed = try await client.execute(
                    uri: "/v1/webhooks/\(id)/resume", method: .post, headers: auth(admin))
                #expect(resumed.status == .ok)
                let three = try await receiver.wait(for: 3)
                #expect(three.map(\.addedNames) == [["test-a"], ["test-a"], ["test-a"]])
                #expect(Set(three.compactMap(\.id)).count == 1)
                let after = try await webhookState(client, admin, id) {
                    ($0["pausedPeople"] as? [Any] ?? []).isEmpty
                }
                #expect((after.body["pausedPeople"] as? [Any])?.isEmpty == true)
            }
        }

        @Test("an admin-wide subscription's failing deliveries: GET shows its people's attempts, 500, and whose")
        func adminWideAttempts() async throws {
            var f = try Fixture()
            // Far from a pause: the failures show before any person's cursor pauses.
            quickWebhooks(&f.configuration, maxAttempts: 50)
            let ana = try await personWithToken(f.store, "Ana")
            let ben = try await personWithToken(f.store, "Ben")
            let admin = try await adminTokenText(f.store)
            let receiver = HookReceiver()
            receiver.answer(Array(repeating: .status(500), count: 1000))
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                let made = try await subscribe(client, admin, url: "http://127.0.0.1:\(port)/hook/all")
                let id = try #require(made["id"] as? String)
                #expect((made["lastAttempts"] as? [Any])?.isEmpty == true)
                _ = try await saveRoute(store.forPerson(ana.person), "a")
                _ = try await saveRoute(store.forPerson(ben.person), "b")
                let both: Set<String> = [ana.person.description, ben.person.description]
                let state = try await webhookState(client, admin, id) {
                    attemptPeople($0) == both && $0["failedAttempts"] as? Int == 2
                }
                #expect(state.status == .ok)
                #expect(state.body["state"] as? String == "active")
                #expect(state.body["failedAttempts"] as? Int == 2, "two people's cursors are failing")
                #expect(attemptPeople(state.body) == both)
                let statuses = attemptStatuses(state.body)
                #expect(!statuses.isEmpty)
                #expect(statuses.count <= 20)
                #expect(Set(statuses) == [500])
                #expect((state.body["pausedPeople"] as? [Any])?.isEmpty == true)
                // The list shows them too.
                let list = try await client.execute(uri: "/v1/webhooks", method: .get, headers: auth(admin))
                let listed = (json(list.body)["webhooks"] as? [[String: Any]] ?? []).first ?? [:]
                #expect(listed["id"] as? String == id)
                #expect(Set(attemptStatuses(listed)) == [500])
                #expect(attemptPeople(listed) == both)
                // A person's token never sees it.
                let theirs = try await client.execute(uri: "/v1/webhooks/\(id)", method: .get, headers: auth(ana.token))
                #expect(theirs.status == .notFound)
            }
        }

        @Test("an admin-wide subscription: every person's change sets, signed, naming the person, resumable by them")
        func adminWide() async throws {
            var f = try Fixture()
            quickWebhooks(&f.configuration)
            let ana = try await personWithToken(f.store, "Ana")
            let ben = try await personWithToken(f.store, "Ben")
            let admin = try await adminTokenText(f.store)
            let receiver = HookReceiver()
            let app = f.app()
            let store = f.store
            try await withReceiver(receiver, app) { client, port in
                // Before the subscription: never delivered.
                _ = try await saveRoute(store.forPerson(ana.person), "before")
                let made = try await subscribe(client, admin, url: "http://127.0.0.1:\(port)/hook/all")
                let id = try #require(made["id"] as? String)
                let secret = try WebhookSecret(text: try #require(made["secret"] as? String))
                #expect(made["everyone"] as? Bool == true)
                _ = try await saveRoute(store.forPerson(ana.person), "ana-1")
                _ = try await saveRoute(store.forPerson(ben.person), "ben-1")
                let two = try await receiver.wait(for: 2, to: "/hook/all")
                #expect(two.count == 2)
                for delivery in two {
                    try WebhookVerifier(secrets: [secret]).verify(
                        id: delivery.id, timestamp: delivery.field("webhook-timestamp"),
                        signature: delivery.field("webhook-signature"), body: delivery.body)
                }
                let toAna = try #require(two.first { $0.person == ana.person.description })
                let toBen = try #require(two.first { $0.person == ben.person.description })
                #expect(toAna.addedNames == ["test-ana-1"])
                #expect(toBen.addedNames == ["test-ben-1"])
                #expect(toAna.id != toBen.id)
                // Ana's anchor resumes Ana's feed with her token, and is no anchor of Ben's.
                _ = try await saveRoute(store.forPerson(ana.person), "ana-2")
                let anchor = try #require(toAna.anchor)
                let resumed = try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(ana.token))
                #expect(resumed.status == .ok)
                let fromFeed = (json(resumed.body)["added"] as? [[String: Any]] ?? []).compactMap {
                    $0["syncIdentifier"] as? String
                }
                #expect(fromFeed == ["test-ana-2"])
                let foreign = try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(ben.token))
                #expect(foreign.status == .badRequest)
                #expect(problemType(foreign) == "anchor-malformed")
                let three = try await receiver.wait(for: 3, to: "/hook/all")
                #expect(three.last?.addedNames == ["test-ana-2"])
                #expect(three.last?.person == ana.person.description)
                // A person's token never sees it; the admin never sees a person's subscription.
                let anas = try await subscribe(client, ana.token, url: "http://127.0.0.1:\(port)/hook/ana")
                let anasID = try #require(anas["id"] as? String)
                func listed(_ token: String) async throws -> [String] {
                    let r = try await client.execute(uri: "/v1/webhooks", method: .get, headers: auth(token))
                    return (json(r.body)["webhooks"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                }
                let anasList = try await listed(ana.token)
                let adminList = try await listed(admin)
                #expect(anasList == [anasID])
                #expect(adminList == [id])
                for (token, target) in [(ana.token, id), (admin, anasID)] {
                    let r = try await client.execute(
                        uri: "/v1/webhooks/\(target)", method: .get, headers: auth(token))
                    #expect(r.status == .notFound)
                }
                let state = try await client.execute(
                    uri: "/v1/webhooks/\(id)", method: .get, headers: auth(admin))
                #expect(state.status == .ok)
                #expect(json(state.body)["everyone"] as? Bool == true)
                #expect((json(state.body)["pausedPeople"] as? [Any])?.isEmpty == true)
                // A person added later is delivered too.
                let cleo = try await personWithToken(store, "Cleo")
                _ = try await saveRoute(store.forPerson(cleo.person), "cleo-1")
                let four = try await receiver.wait(for: 4, to: "/hook/all")
                #expect(four.last?.addedNames == ["test-cleo-1"])
                #expect(four.last?.person == cleo.person.description)
                // Deleted: nothing more is delivered.
                let deleted = try await client.execute(
                    uri: "/v1/webhooks/\(id)", method: .delete, headers: auth(admin))
                #expect(deleted.status == .noContent)
                _ = try await saveRoute(store.forPerson(ben.person), "ben-2")
                // Ana's own subscription is delivered meanwhile: the dispatcher has looked since.
                _ = try await saveRoute(store.forPerson(ana.person), "ana-3")
                let own = try await receiver.wait(for: 1, to: "/hook/ana")
                #expect(own.map(\.addedNames) == [["test-ana-3"]])
                try await Task.sleep(for: .milliseconds(500))
                #expect(receiver.requests(to: "/hook/all").count == 4)
            }
        }
    }
#endif
