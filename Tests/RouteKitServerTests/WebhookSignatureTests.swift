#if Server
    import Foundation
    import RouteKit
    import RouteKitServer
    import RouteKitTesting
    import Testing

    /// The Standard Webhooks specification's test vector, as the reference libraries' tests have it:
    /// standard-webhooks/standard-webhooks, `libraries/python/tests/test_webhooks.py` (`test_sign_function`) and
    /// `libraries/go/webhook_test.go` (`TestWebhookSign`): the same secret, message id, timestamp, payload and
    /// expected signature in both.
    enum SpecificationVector {
        static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
        static let timestamp: Int64 = 1_614_265_330
        static let payload = #"{"test": 2432232314}"#
        static let signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    }

    /// A message signed now, with its headers as a receiver gets them.
    struct SignedMessage {
        var headers: [String: String]
        var body: [UInt8]

        init(secrets: [WebhookSecret], id: String = "msg_routekit_test", timestamp: Int64? = nil, body: String) throws {
            let time = timestamp ?? Int64(Date().timeIntervalSince1970)
            self.body = Array(body.utf8)
            let signature = try WebhookSigner(secrets: secrets).signature(id: id, timestamp: time, body: self.body)
            headers = ["webhook-id": id, "webhook-timestamp": String(time), "webhook-signature": signature]
        }

        func verify(_ secrets: [WebhookSecret], now: Date = Date()) throws(RouteKitError) {
            try WebhookVerifier(secrets: secrets).verify(
                id: headers["webhook-id"], timestamp: headers["webhook-timestamp"],
                signature: headers["webhook-signature"], body: body, now: now)
        }
    }

    /// Whether `body` throws a `RouteKitError`.
    func refuses(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return error is RouteKitError
        }
    }

    @Suite("Webhooks: secrets, signatures and their verification")
    struct WebhookSignatureTests {
        @Test("the specification's test vector: the secret, id, timestamp and payload sign to its signature")
        func specificationVector() throws {
            let secret = try WebhookSecret(text: SpecificationVector.secret)
            let body = Array(SpecificationVector.payload.utf8)
            let signer = try WebhookSigner(secrets: [secret])
            let signature = signer.signature(
                id: SpecificationVector.id, timestamp: SpecificationVector.timestamp, body: body)
            #expect(signature == SpecificationVector.signature)
            #expect(secret.text == SpecificationVector.secret)
            // It verifies at the time it was made, and the reference tests' wrong signature (one character off) does
            // not.
            let then = Date(timeIntervalSince1970: Double(SpecificationVector.timestamp))
            let verifier = WebhookVerifier(secrets: [secret])
            try verifier.verify(
                id: SpecificationVector.id, timestamp: String(SpecificationVector.timestamp),
                signature: SpecificationVector.signature, body: body, now: then)
            let wrong = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="
            let wrongRefused = refuses {
                try verifier.verify(
                    id: SpecificationVector.id, timestamp: String(SpecificationVector.timestamp),
                    signature: wrong, body: body, now: then)
            }
            #expect(wrongRefused)
        }

        @Test("a new secret: whsec_ and 32 random bytes, read back from its text; sizes clamped to 24–64 bytes")
        func generate() throws {
            let first = WebhookSecret.generate()
            let second = WebhookSecret.generate()
            #expect(first.text.hasPrefix("whsec_"))
            #expect(first.text.count == 6 + 44)
            #expect(first.text != second.text)
            let read = try WebhookSecret(text: first.text)
            #expect(read.text == first.text)
            let decoded = Data(base64Encoded: String(first.text.dropFirst(6)))
            #expect(decoded?.count == 32)
            let small = WebhookSecret.generate(byteCount: 3)
            let large = WebhookSecret.generate(byteCount: 1000)
            let smallBytes = Data(base64Encoded: String(small.text.dropFirst(6)))
            let largeBytes = Data(base64Encoded: String(large.text.dropFirst(6)))
            #expect(smallBytes?.count == 24)
            #expect(largeBytes?.count == 64)
        }

        @Test(
            "texts that are not secrets are refused, and the error never repeats them",
            arguments: [
                "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",  // no prefix
                "whsec_",
                "whsec_MfKQ9r8GKYqrTwjUPD8I LPZIo2LaLaSw",
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La!aSw",
                "whsec_" + Data(repeating: 7, count: 23).base64EncodedString(),
                "whsec_" + Data(repeating: 7, count: 65).base64EncodedString(),
                "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            ])
        func malformed(text: String) {
            do throws(RouteKitError) {
                _ = try WebhookSecret(text: text)
                Issue.record("accepted as a secret")
            } catch {
                #expect(error.code == .invalidArgument)
                let secretPart = text.hasPrefix("whsec_") ? String(text.dropFirst(6)) : text
                if secretPart.count >= 8 {
                    #expect(!error.description.contains(secretPart))
                    #expect(!error.description.contains(String(secretPart.prefix(12))))
                }
            }
        }

        @Test("a secret is never printed: description, debugDescription and dump show no part of it")
        func neverPrinted() throws {
            let secret = WebhookSecret.generate()
            let encoded = String(secret.text.dropFirst(6))
            let part = String(encoded.prefix(10))
            let described = String(describing: secret)
            let reflected = String(reflecting: secret)
            let interpolated = "\(secret)"
            #expect(!described.contains(part))
            #expect(!reflected.contains(part))
            #expect(!interpolated.contains(part))
            var dumped = ""
            dump(secret, to: &dumped)
            #expect(!dumped.contains(part))
            #expect(!dumped.contains("bytes: ["))
        }

        @Test("rotation: two secrets give two v1 signatures, and either secret alone verifies the message")
        func rotation() throws {
            let new = WebhookSecret.generate()
            let old = WebhookSecret.generate(byteCount: 24)
            let message = try SignedMessage(secrets: [new, old], body: #"{"type":"routekit.changes"}"#)
            let parts = (message.headers["webhook-signature"] ?? "").split(separator: " ")
            #expect(parts.count == 2)
            let allVersion1 = parts.allSatisfy { $0.hasPrefix("v1,") }
            #expect(allVersion1)
            try message.verify([new])
            try message.verify([old])
            try message.verify([WebhookSecret.generate(), old])
            let refused1 = refuses { try message.verify([WebhookSecret.generate()]) }
            #expect(refused1)
            let refused2 = refuses { try message.verify([]) }
            #expect(refused2)
            // No secrets to sign with is an error, not an unsigned message.
            let refused3 = refuses { _ = try WebhookSigner(secrets: []) }
            #expect(refused3)
        }

        @Test("a changed body, id or timestamp, an old or future timestamp, or missing headers are refused")
        func tampered() throws {
            let secret = WebhookSecret.generate()
            let message = try SignedMessage(secrets: [secret], body: #"{"data":{"hasMore":false}}"#)
            try message.verify([secret])

            var body = message
            body.body[body.body.count - 2] = UInt8(ascii: "1")
            let refused4 = refuses { try body.verify([secret]) }
            #expect(refused4)

            var id = message
            id.headers["webhook-id"] = "msg_other"
            let refused5 = refuses { try id.verify([secret]) }
            #expect(refused5)

            var timestamp = message
            let sent = Int64(message.headers["webhook-timestamp"] ?? "") ?? 0
            timestamp.headers["webhook-timestamp"] = String(sent + 1)
            let refused6 = refuses { try timestamp.verify([secret]) }
            #expect(refused6)
            timestamp.headers["webhook-timestamp"] = "hello"
            let refused7 = refuses { try timestamp.verify([secret]) }
            #expect(refused7)

            for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
                var missing = message
                missing.headers[name] = nil
                let refused8 = refuses { try missing.verify([secret]) }
                #expect(refused8, "without \(name)")
            }

            // Five minutes either way: 299 s old passes, 301 s old and 301 s ahead do not.
            let now = Date()
            let nowSeconds = Int64(now.timeIntervalSince1970)
            let recent = try SignedMessage(secrets: [secret], timestamp: nowSeconds - 299, body: "{}")
            try recent.verify([secret], now: now)
            let old = try SignedMessage(secrets: [secret], timestamp: nowSeconds - 301, body: "{}")
            let refused9 = refuses { try old.verify([secret], now: now) }
            #expect(refused9)
            let ahead = try SignedMessage(secrets: [secret], timestamp: nowSeconds + 301, body: "{}")
            let refused10 = refuses { try ahead.verify([secret], now: now) }
            #expect(refused10)
        }

        @Test("other signatures beside the good one (other versions, wrong ones) are skipped, as the reference does")
        func otherSignatures() throws {
            let secret = WebhookSecret.generate()
            var message = try SignedMessage(secrets: [secret], body: #"{"test": 2432232314}"#)
            let good = message.headers["webhook-signature"] ?? ""
            message.headers["webhook-signature"] = [
                "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
                "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", good,
                "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
            ].joined(separator: " ")
            try message.verify([secret])
            // The right MAC under another version is not a v1 signature.
            message.headers["webhook-signature"] = "v2," + good.dropFirst(3)
            let refused11 = refuses { try message.verify([secret]) }
            #expect(refused11)
        }

        @Test("a refusal says which check failed and never repeats a signature")
        func refusalText() throws {
            let secret = WebhookSecret.generate()
            let message = try SignedMessage(secrets: [secret], body: "{}")
            let signature = message.headers["webhook-signature"] ?? ""
            do throws(RouteKitError) {
                try message.verify([WebhookSecret.generate()])
                Issue.record("verified with the wrong secret")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("signature"))
                #expect(!error.description.contains(String(signature.dropFirst(3).prefix(12))))
            }
        }

        @Test("the Swift check of the Webhooks article accepts a signed message and refuses a changed one")
        func articleSwift() throws {
            let secret = WebhookSecret.generate()
            let message = try SignedMessage(secrets: [secret], body: #"{"type":"routekit.changes"}"#)
            try ServerDocumentationExamples.verifyWebhook(
                secretText: secret.text, headers: message.headers, body: message.body)
            let changedRefused = refuses {
                try ServerDocumentationExamples.verifyWebhook(
                    secretText: secret.text, headers: message.headers, body: message.body + [0x20])
            }
            #expect(changedRefused)
        }
    }

    /// The Webhooks article's Python and JavaScript checks, run as written (python3, node) on messages RouteKit
    /// signed: an implementation of the scheme that shares no code with RouteKit's.
    enum WebhookArticle {
        static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/RouteKitServer/Documentation.docc/Webhooks.md")

        /// The first ```language block of the article.
        static func block(_ language: String) throws -> String {
            let text = try String(contentsOf: path, encoding: .utf8)
            guard let start = text.range(of: "```\(language)\n"),
                let end = text[start.upperBound...].range(of: "\n```")
            else { throw CocoaError(.fileReadCorruptFile) }
            return String(text[start.upperBound..<end.lowerBound])
        }

        static func executable(_ name: String) -> URL? {
            for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
                let url = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            return nil
        }

        static let python = executable("python3")
        static let node = executable("node")

        static let pythonHarness = """

            import json, sys
            request = json.load(open(sys.argv[1]))
            try:
                verify_webhook(request["secret"], request["headers"], base64.b64decode(request["body"]))
            except ValueError as error:
                print("refused:", error)
                sys.exit(1)
            print("ok")

            """

        static let nodeHarness = """

            import { readFileSync } from "node:fs";
            const request = JSON.parse(readFileSync(process.argv[2], "utf8"));
            try {
              verifyWebhook(request.secret, request.headers, Buffer.from(request.body, "base64"));
              console.log("ok");
            } catch (error) {
              console.log("refused:", error.message);
              process.exit(1);
            }

            """

        /// Runs the article's `language` block (with `harness` after it, in a file ending in `suffix`) on `message`
        /// checked with `secret`: whether it accepted it.
        static func accepts(
            _ interpreter: URL, _ language: String, harness: String, suffix: String, secret: WebhookSecret,
            _ message: SignedMessage
        ) throws -> Bool {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-webhook-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let script = folder.appendingPathComponent("verify" + suffix)
            try Data((try block(language) + harness).utf8).write(to: script)
            let request: [String: Any] = [
                "secret": secret.text, "headers": message.headers, "body": Data(message.body).base64EncodedString(),
            ]
            let input = folder.appendingPathComponent("request.json")
            try JSONSerialization.data(withJSONObject: request).write(to: input)
            let result = try runChildProcess(interpreter, [script.path, input.path])
            let accepted = result.status == 0 && result.output.contains("ok")
            let refused = result.status == 1 && result.output.contains("refused")
            #expect(accepted || refused, "\(result.output) \(result.errorOutput)")
            return accepted
        }
    }

    @Suite("Webhooks: the article's receivers, in other languages")
    struct WebhookArticleTests {
        /// Rotation (two signatures, either secret), a changed body, an old timestamp.
        func check(_ run: (WebhookSecret, SignedMessage) throws -> Bool) throws {
            let new = WebhookSecret.generate()
            let old = WebhookSecret.generate(byteCount: 24)
            let message = try SignedMessage(
                secrets: [new, old], body: #"{"data":{"anchor":"1.AAAA","hasMore":false},"type":"routekit.changes"}"#)
            let withNew = try run(new, message)
            let withOld = try run(old, message)
            let withOther = try run(WebhookSecret.generate(), message)
            #expect(withNew)
            #expect(withOld)
            #expect(!withOther)
            var changed = message
            changed.body[changed.body.count - 3] = UInt8(ascii: "X")
            let changedAccepted = try run(new, changed)
            #expect(!changedAccepted)
            let stale = try SignedMessage(
                secrets: [new], timestamp: Int64(Date().timeIntervalSince1970) - 600, body: "{}")
            let staleAccepted = try run(new, stale)
            #expect(!staleAccepted)
        }

        @Test(
            "Python (the standard library's hmac, hashlib, base64)",
            .enabled(if: WebhookArticle.python != nil, "python3 is not on PATH"))
        func python() throws {
            let python = try #require(WebhookArticle.python)
            try check { secret, message in
                try WebhookArticle.accepts(
                    python, "python", harness: WebhookArticle.pythonHarness, suffix: ".py", secret: secret, message)
            }
        }

        @Test(
            "JavaScript (Node's node:crypto)", .enabled(if: WebhookArticle.node != nil, "node is not on PATH"))
        func javaScript() throws {
            let node = try #require(WebhookArticle.node)
            try check { secret, message in
                try WebhookArticle.accepts(
                    node, "javascript", harness: WebhookArticle.nodeHarness, suffix: ".mjs", secret: secret, message)
            }
        }
    }
#endif
