#if Server
    import Crypto
    public import Foundation
    public import RouteKit

    /// A webhook subscription's signing secret, as the Standard Webhooks specification defines it: 24 to 64 random
    /// bytes, written `whsec_` followed by their base64 text (`whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`).
    ///
    /// The text is a credential, shown once, when a subscription is made. Neither ``description``,
    /// ``debugDescription``, a mirror (`dump`) nor an error about a secret ever contains it.
    public struct WebhookSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// `whsec_`, the prefix that tells a symmetric Standard Webhooks secret.
        public static let prefix = "whsec_"
        /// How many bytes a secret has: from 24 (192 bits, the specification's minimum) to 64.
        public static let byteCounts = 24...64

        /// The key: the bytes the base64 text decodes to.
        let bytes: [UInt8]

        private init(checked bytes: [UInt8]) { self.bytes = bytes }

        /// A new secret of `byteCount` bytes (32 by default; clamped to ``byteCounts``) from the system's
        /// cryptographically secure generator (`getrandom(2)`).
        public static func generate(byteCount: Int = 32) -> WebhookSecret {
            let count = min(max(byteCount, byteCounts.lowerBound), byteCounts.upperBound)
            var generator = SystemRandomNumberGenerator()
            return WebhookSecret(checked: (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }

        /// The secret whose text (``text``) is `text`.
        /// - Throws: `RouteKitError.Code.invalidArgument` when it is not `whsec_` followed by the base64 text of 24
        ///   to 64 bytes; the error never repeats the text.
        public init(text: String) throws(RouteKitError) {
            guard text.hasPrefix(Self.prefix) else {
                throw RouteKitError(.invalidArgument, "a webhook secret starts with 'whsec_'")
            }
            let encoded = String(text.dropFirst(Self.prefix.count))
            // 64 bytes are 88 characters of base64; anything much longer is not a secret.
            guard encoded.utf8.count <= 128, let data = Data(base64Encoded: encoded) else {
                throw RouteKitError(.invalidArgument, "a webhook secret is 'whsec_' followed by base64 text")
            }
            guard Self.byteCounts.contains(data.count) else {
                throw RouteKitError(
                    .invalidArgument, "a webhook secret holds 24 to 64 bytes, this one \(data.count)")
            }
            bytes = [UInt8](data)
        }

        /// `whsec_` and the base64 text of the bytes: what a subscriber is given (once) and passes to its
        /// verifier.
        public var text: String { Self.prefix + Data(bytes).base64EncodedString() }

        /// A placeholder that says how long the secret is, never the secret.
        public var description: String { "whsec_… (\(bytes.count) bytes, not shown)" }

        /// The same placeholder as ``description``.
        public var debugDescription: String { description }

        /// A mirror without children: `dump` and debuggers show no bytes.
        public var customMirror: Mirror { Mirror(self, children: [:]) }
    }

    /// Signs webhook messages as the Standard Webhooks specification says: the `webhook-signature` value for a
    /// message is `v1,` followed by the base64 text of HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with a
    /// secret's bytes; with several secrets (a rotation: the new one first, the old ones until receivers have
    /// the new one) one such signature per secret, separated by spaces. A receiver accepts the message when any of
    /// them verifies (``WebhookVerifier``).
    ///
    /// The specification's published test vector (the secret `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`, the message
    /// `msg_p5jXN8AQM9LWM0D4loKWxJek` at 1614265330 with the body `{"test": 2432232314}`, signed
    /// `v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=`) is checked by RouteKit's tests.
    public struct WebhookSigner: Sendable {
        /// The secrets signed with, in the order of the signatures.
        public let secrets: [WebhookSecret]

        /// A signer with `secrets` (at least one).
        /// - Throws: `RouteKitError.Code.invalidArgument` when `secrets` is empty.
        public init(secrets: [WebhookSecret]) throws(RouteKitError) {
            guard !secrets.isEmpty else {
                throw RouteKitError(.invalidArgument, "a webhook is signed with at least one secret")
            }
            self.secrets = secrets
        }

        /// The `webhook-signature` header's value for the message `id`, sent at `timestamp` (seconds since 1970)
        /// with `body` (the exact bytes sent): `v1,…`, one per secret, separated by spaces.
        public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
            let time = String(timestamp)
            return secrets.map { "v1," + Self.base64MAC(id: id, timestamp: time, body: body, secret: $0) }
                .joined(separator: " ")
        }

        /// The base64 text of HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with `secret` (`timestamp` as the header
        /// carries it: what is signed is the text, not the number).
        static func base64MAC(id: String, timestamp: String, body: [UInt8], secret: WebhookSecret) -> String {
            let dot: [UInt8] = [0x2E]
            var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.bytes))
            hmac.update(data: Array(id.utf8))
            hmac.update(data: dot)
            hmac.update(data: Array(timestamp.utf8))
            hmac.update(data: dot)
            hmac.update(data: body)
            return Data(Array(hmac.finalize())).base64EncodedString()
        }
    }

    /// Checks a webhook request as a receiver does: its `webhook-id` is there, its `webhook-timestamp` is within
    /// ``tolerance`` of now (either way: an old message replayed, or a clock far off), and one of the `v1`
    /// signatures of its `webhook-signature` header is the body's under one of ``secrets``, compared in constant
    /// time. Signatures of other versions (`v1a`, `v2`) are skipped.
    public struct WebhookVerifier: Sendable {
        /// The secrets a signature may be made with (during a rotation, the new one and the old one).
        public var secrets: [WebhookSecret]
        /// How far the timestamp may be from now, in seconds: 5 minutes by default, as the specification's libraries
        /// have it.
        public var tolerance: Double

        /// A verifier of signatures made with any of `secrets`.
        public init(secrets: [WebhookSecret], tolerance: Double = 300) {
            self.secrets = secrets
            self.tolerance = tolerance
        }

        /// Checks one request: its headers' values as received (`nil` when a header is missing) and its body's exact
        /// bytes (before any JSON parsing). Returns when the request is authentic.
        /// - Throws: `RouteKitError.Code.invalidArgument` naming the check that failed (a header missing, a
        ///   timestamp too old or in the future, no signature that matches); it never repeats a signature.
        public func verify(
            id: String?, timestamp: String?, signature: String?, body: [UInt8], now: Date = Date()
        ) throws(RouteKitError) {
            guard let id, !id.isEmpty else { throw Self.refused("the webhook-id header is missing") }
            guard let timestamp, let seconds = Self.seconds(timestamp) else {
                throw Self.refused("the webhook-timestamp header is not a whole number of seconds since 1970")
            }
            let limit = tolerance.isFinite ? min(max(0, tolerance), 1e9) : 300
            let nowSeconds = now.timeIntervalSince1970
            if Double(seconds) < nowSeconds - limit {
                throw Self.refused("the webhook-timestamp is more than \(Int(limit)) seconds old")
            }
            if Double(seconds) > nowSeconds + limit {
                throw Self.refused("the webhook-timestamp is more than \(Int(limit)) seconds in the future")
            }
            guard let signature, !signature.isEmpty else {
                throw Self.refused("the webhook-signature header is missing")
            }
            let expected = secrets.map {
                WebhookSigner.base64MAC(id: id, timestamp: timestamp, body: body, secret: $0)
            }
            var matched = false
            for candidate in signature.split(separator: " ") where candidate.hasPrefix("v1,") {
                let given = String(candidate.dropFirst(3))
                // Every pair is compared, the first match does not end the loop: the time taken says nothing.
                for mac in expected where TokenText.constantTimeEqual(given, mac) { matched = true }
            }
            guard matched else {
                throw Self.refused("no v1 signature in the webhook-signature header matches the body")
            }
        }

        /// The whole seconds of a `webhook-timestamp` value: digits only, at most 15 of them.
        static func seconds(_ text: String) -> Int64? {
            guard !text.isEmpty, text.utf8.count <= 15, text.utf8.allSatisfy({ (48...57).contains($0) }) else {
                return nil
            }
            return Int64(text)
        }

        static func refused(_ why: String) -> RouteKitError {
            RouteKitError(.invalidArgument, "webhook refused: " + why)
        }
    }
#endif
