#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import Testing

    /// A webhook receiver for the tests, on a free port of 127.0.0.1: `/hook` keeps what it gets and answers 204,
    /// `/gone` answers 410, `/moved` 302 to `/hook`, `/hang` never answers (until the client goes), `/large` answers
    /// 200 with 10 MB. It counts the requests of every path.
    struct TestWebhookReceiver {
        struct Delivery: Sendable {
            var headers: HTTPFields
            var body: [UInt8]
        }

        let deliveries = Locked<[Delivery]>([])
        let requests = Locked(0)

        /// The value of header `name` of `delivery`.
        static func field(_ delivery: Delivery, _ name: String) -> String? {
            HTTPField.Name(name).flatMap { delivery.headers[$0] }
        }

        func application() -> some ApplicationProtocol {
            let router = Router()
            let deliveries = self.deliveries
            let requests = self.requests
            router.post("/hook") { request, _ -> Response in
                requests.withLock { $0 += 1 }
                let body = try await request.body.collect(upTo: 1 << 20)
                deliveries.withLock {
                    $0.append(Delivery(headers: request.headers, body: Array(body.readableBytesView)))
                }
                return Response(status: .noContent)
            }
            router.post("/gone") { request, _ -> Response in
                requests.withLock { $0 += 1 }
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(status: .gone)
            }
            router.post("/moved") { request, _ -> Response in
                requests.withLock { $0 += 1 }
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(status: .found, headers: [.location: "/hook"])
            }
            router.post("/hang") { request, _ -> Response in
                requests.withLock { $0 += 1 }
                // Ends when the client goes away (its connection closed), so the server can stop after the test.
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await Task.sleep(for: .seconds(60))
                }
                return Response(status: .noContent)
            }
            router.post("/large") { request, _ -> Response in
                requests.withLock { $0 += 1 }
                _ = try await request.body.collect(upTo: 1 << 20)
                return Response(
                    status: .ok, headers: [.contentType: "application/octet-stream"],
                    body: ResponseBody { writer in
                        let chunk = ByteBuffer(repeating: 0x61, count: 64 << 10)
                        // 10 MiB, unless the client stops reading first (the writes then fail).
                        for _ in 0..<160 { try await writer.write(chunk) }
                        try await writer.finish(nil)
                    })
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }
    }

    /// A sender's settings for the tests: receivers on 127.0.0.1 allowed, 1 s to connect, `deadline` for a delivery.
    func testSenderConfiguration(deadline: Double = 5, allowPrivate: Bool = true) -> WebhookSenderConfiguration {
        var configuration = WebhookSenderConfiguration(version: "0.3.0")
        configuration.allowPrivate = allowPrivate
        configuration.connectTimeoutSeconds = 1
        configuration.deadlineSeconds = deadline
        return configuration
    }

    @Suite("Webhooks: the sender against a local receiver")
    struct WebhookSenderTests {
        static let body = Array(#"{"data":{"hasMore":false},"timestamp":"2024-05-01T06:00:00Z","type":"routekit.changes"}"#.utf8)

        @Test("a delivery: POST with the body, content-type, user-agent and the webhook- headers; either secret verifies it")
        func delivered() async throws {
            let receiver = TestWebhookReceiver()
            let current = WebhookSecret.generate()
            let previous = WebhookSecret.generate()
            let timestamp = Int64(Date().timeIntervalSince1970)
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                let attempt = try await WebhookSender.withSender(configuration: testSenderConfiguration()) { sender in
                    try await sender.send(
                        to: "http://127.0.0.1:\(port)/hook", id: "msg_1", timestamp: timestamp, body: Self.body,
                        secrets: [current, previous])
                }
                #expect(attempt.outcome == .delivered(204))
                #expect(attempt.duration < .seconds(30))  // against a hang, not a timing (TSan runs slower)
            }
            let deliveries = receiver.deliveries.withLock { $0 }
            #expect(deliveries.count == 1)
            let delivery = try #require(deliveries.first)
            #expect(delivery.body == Self.body)
            #expect(delivery.headers[.contentType] == "application/json")
            #expect(delivery.headers[.userAgent] == "RouteKit/0.3.0")
            let id = TestWebhookReceiver.field(delivery, "webhook-id")
            let time = TestWebhookReceiver.field(delivery, "webhook-timestamp")
            let signature = TestWebhookReceiver.field(delivery, "webhook-signature")
            #expect(id == "msg_1")
            #expect(time == String(timestamp))
            #expect(signature?.split(separator: " ").count == 2)
            for secret in [current, previous] {
                try WebhookVerifier(secrets: [secret]).verify(
                    id: id, timestamp: time, signature: signature, body: delivery.body)
            }
            let stranger = WebhookVerifier(secrets: [WebhookSecret.generate()])
            let refused1 = refuses { try stranger.verify(id: id, timestamp: time, signature: signature, body: delivery.body) }
            #expect(refused1)
        }

        @Test("410 Gone is gone; 302 is a failure and its Location is not followed")
        func goneAndRedirect() async throws {
            let receiver = TestWebhookReceiver()
            let secret = WebhookSecret.generate()
            let now = Int64(Date().timeIntervalSince1970)
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                try await WebhookSender.withSender(configuration: testSenderConfiguration()) { sender in
                    let gone = try await sender.send(
                        to: "http://127.0.0.1:\(port)/gone", id: "msg_2", timestamp: now, body: Self.body,
                        secrets: [secret])
                    #expect(gone.outcome == .gone)
                    let moved = try await sender.send(
                        to: "http://127.0.0.1:\(port)/moved", id: "msg_3", timestamp: now, body: Self.body,
                        secrets: [secret])
                    #expect(moved.outcome == .failed(302))
                }
            }
            // Two requests, and none to /hook, where the redirect pointed.
            let requests2 = receiver.requests.withLock { $0 }
            #expect(requests2 == 2)
            let deliveries3 = receiver.deliveries.withLock { $0.isEmpty }
            #expect(deliveries3)
        }

        @Test("a receiver that never answers: timedOut at the deadline, not later")
        func neverAnswers() async throws {
            let receiver = TestWebhookReceiver()
            let secret = WebhookSecret.generate()
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                let attempt = try await WebhookSender.withSender(
                    configuration: testSenderConfiguration(deadline: 1)
                ) { sender in
                    try await sender.send(
                        to: "http://127.0.0.1:\(port)/hang", id: "msg_4",
                        timestamp: Int64(Date().timeIntervalSince1970), body: Self.body, secrets: [secret])
                }
                #expect(attempt.outcome == .timedOut)
                #expect(attempt.duration >= .milliseconds(900))
                #expect(attempt.duration < .seconds(30))  // against a hang, not a timing (TSan runs slower)
            }
            let requests4 = receiver.requests.withLock { $0 }
            #expect(requests4 == 1)
        }

        @Test("a 10 MB answer: delivered by its status, and only its first 64 KiB read")
        func largeAnswer() async throws {
            let receiver = TestWebhookReceiver()
            let secret = WebhookSecret.generate()
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                let attempt = try await WebhookSender.withSender(configuration: testSenderConfiguration()) { sender in
                    try await sender.send(
                        to: "http://127.0.0.1:\(port)/large", id: "msg_5",
                        timestamp: Int64(Date().timeIntervalSince1970), body: Self.body, secrets: [secret])
                }
                #expect(attempt.outcome == .delivered(200))
                #expect(attempt.responseBytesRead == 64 << 10)
                #expect(attempt.duration < .seconds(30))  // against a hang, not a timing (TSan runs slower)
            }
        }

        @Test("without allowPrivate, a loopback receiver is refused before any connection")
        func refusedTarget() async throws {
            let receiver = TestWebhookReceiver()
            let secret = WebhookSecret.generate()
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                let attempt = try await WebhookSender.withSender(
                    configuration: testSenderConfiguration(allowPrivate: false)
                ) { sender in
                    try await sender.send(
                        to: "http://127.0.0.1:\(port)/hook?key=RECEIVER-SECRET", id: "msg_6",
                        timestamp: Int64(Date().timeIntervalSince1970), body: Self.body, secrets: [secret])
                }
                guard case .refusedTarget(let why) = attempt.outcome else {
                    Issue.record("not refused: \(attempt.outcome)")
                    return
                }
                #expect(why.contains("'127.0.0.1' is a loopback address"))
                #expect(!why.contains("RECEIVER-SECRET"))
            }
            let requests5 = receiver.requests.withLock { $0 }
            #expect(requests5 == 0)
        }

        @Test("DNS rebinding: a host checked as public whose connection reaches loopback gets no request")
        func rebinding() async throws {
            let receiver = TestWebhookReceiver()
            let secret = WebhookSecret.generate()
            try await receiver.application().test(.live) { client in
                let port = try #require(client.port)
                // The check is told the host is public; the connection (the system's resolver) reaches 127.0.0.1.
                let attempt = try await WebhookSender.withSender(
                    configuration: testSenderConfiguration(allowPrivate: false),
                    resolver: { _ in [[93, 184, 216, 34]] }
                ) { sender in
                    try await sender.send(
                        to: "http://127.0.0.1:\(port)/hook", id: "msg_7",
                        timestamp: Int64(Date().timeIntervalSince1970), body: Self.body, secrets: [secret])
                }
                // The connection is closed before anything is written: refused, or (as AsyncHTTPClient reports the
                // closed channel on Linux) unreachable. Either way the receiver gets nothing (below).
                switch attempt.outcome {
                case .refusedTarget(let why): #expect(why.contains("loopback"))
                case .unreachable: break
                default: Issue.record("delivered or failed: \(attempt.outcome)")
                }
            }
            let requests6 = receiver.requests.withLock { $0 }
            #expect(requests6 == 0)
            let deliveries7 = receiver.deliveries.withLock { $0.isEmpty }
            #expect(deliveries7)
        }

        @Test("nothing listening: unreachable within the connect timeout, without the URL in the reason")
        func unreachable() async throws {
            let secret = WebhookSecret.generate()
            // Port 1 of 127.0.0.1: nothing listens there (connections are refused).
            let attempt = try await WebhookSender.withSender(configuration: testSenderConfiguration()) { sender in
                try await sender.send(
                    to: "http://127.0.0.1:1/hook?key=RECEIVER-SECRET", id: "msg_8",
                    timestamp: Int64(Date().timeIntervalSince1970), body: Self.body, secrets: [secret])
            }
            guard case .unreachable(let why) = attempt.outcome else {
                Issue.record("not unreachable: \(attempt.outcome)")
                return
            }
            #expect(!why.contains("RECEIVER-SECRET"))
            #expect(!why.contains("/hook"))
            #expect(attempt.duration < .seconds(30))  // against a hang, not a timing (TSan runs slower)
        }

        @Test("a message id that is not letters, digits, _ and - (a dot above all), or no secret, is refused unsent")
        func badMessages() async throws {
            try await WebhookSender.withSender(configuration: testSenderConfiguration()) { sender in
                for id in ["", "msg.1", "msg 1", String(repeating: "a", count: 257), "msg_é"] {
                    do throws(RouteKitError) {
                        _ = try await sender.send(
                            to: "http://127.0.0.1:1/hook", id: id, timestamp: 0, body: [], secrets: [.generate()])
                        Issue.record("sent with id '\(id)'")
                    } catch {
                        #expect(error.code == .invalidArgument)
                    }
                }
                do throws(RouteKitError) {
                    _ = try await sender.send(to: "http://127.0.0.1:1/hook", id: "msg_9", timestamp: 0, body: [], secrets: [])
                    Issue.record("sent without a secret")
                } catch {
                    #expect(error.code == .invalidArgument)
                }
            }
            #expect(WebhookSender.isValidMessageID("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"))
            #expect(WebhookSender.isValidMessageID("0f8fad5b-d9cb-469f-a165-70867728950e"))
        }

        @Test("outcomes by status: 2xx delivered, 410 gone, everything else failed")
        func outcomes() {
            #expect(WebhookDeliveryOutcome(status: 200) == .delivered(200))
            #expect(WebhookDeliveryOutcome(status: 299) == .delivered(299))
            #expect(WebhookDeliveryOutcome(status: 410) == .gone)
            #expect(WebhookDeliveryOutcome(status: 301) == .failed(301))
            #expect(WebhookDeliveryOutcome(status: 404) == .failed(404))
            #expect(WebhookDeliveryOutcome(status: 503) == .failed(503))
            #expect(WebhookDeliveryOutcome.gone.status == 410)
            #expect(WebhookDeliveryOutcome.timedOut.status == nil)
            #expect(WebhookDeliveryOutcome.failed(500).summary == "the receiver answered 500")
        }
    }
#endif
