#if Server
    import Crypto
    public import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    public import RouteKit

    /// API tokens' text: `rk_` + the token's id (32 hex digits) + `_` + a secret of 32 random bytes (base64url).
    /// The store keeps the id and a SHA-256 hash of the secret; the text is shown once, when the token is made.
    public enum TokenText {
        /// Makes a token: its text (print it once) and the record to save.
        public static func make(
            name: String, person: PersonID? = .default, source: Source, scopes: Set<APIScope>,
            readableSources: Set<Source>? = nil, expires: Date? = nil, now: Date = Date()
        ) -> (text: String, token: APIToken) {
            var generator = SystemRandomNumberGenerator()  // getrandom(2): cryptographically secure
            let secret = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let id = UUID()
            let token = APIToken(
                id: id, name: name, person: person, source: source, scopes: scopes,
                readableSources: readableSources, secretHash: hash(secret), created: now, expires: expires)
            return ("rk_" + hex(id) + "_" + secret, token)
        }

        /// The id and secret of a token's text; `nil` when it is not one.
        public static func parse(_ text: String) -> (id: UUID, secret: String)? {
            let parts = text.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "rk", parts[1].count == 32, parts[2].count == 43 else { return nil }
            guard let id = id(hex: parts[1]) else { return nil }
            return (id, String(parts[2]))
        }

        /// A token id from its 32 lowercase hex digits (``hex(_:)``'s form); `nil` for anything else.
        static func id(hex text: Substring) -> UUID? {
            let h = Array(text.utf8)
            guard h.count == 32, h.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
            let dashed = [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map {
                String(decoding: $0, as: UTF8.self)
            }
            return UUID(text: dashed.joined(separator: "-"))
        }

        /// SHA-256 of a secret, lowercase hex.
        public static func hash(_ secret: String) -> String {
            SHA256.hash(data: Array(secret.utf8)).map { String(format: "%02x", $0) }.joined()
        }

        static func hex(_ id: UUID) -> String { id.uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

        /// Compares two strings in time that depends on their length only.
        static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
            let x = Array(a.utf8)
            let y = Array(b.utf8)
            guard x.count == y.count else { return false }
            var diff: UInt8 = 0
            for i in 0..<x.count { diff |= x[i] ^ y[i] }
            return diff == 0
        }
    }

    /// Short-lived, single-use tickets for clients that cannot send an `Authorization` header (a browser's
    /// `EventSource`): `POST /v1/stream-tickets` with a token gives `st.…`, good for 60 seconds and one
    /// `GET /v1/changes?ticket=…` (`st.` + the token's id + `.` + expiry + `.` + nonce + `.` + MAC). A ticket names its token and expiry and carries an HMAC-SHA256 keyed with the
    /// token's stored secret hash, so any server of the store can check it; its use is recorded in the store, so it
    /// is good once across every server sharing the store; revoking the token voids its tickets. Tickets never appear in logs (the request log has paths without queries).
    public enum StreamTicket {
        /// How long a ticket is good for, in seconds.
        public static let lifetime: Double = 60

        /// A ticket for `token`, good until `now + lifetime`.
        public static func make(for token: APIToken, now: Date = Date()) -> (text: String, expires: Date) {
            var generator = SystemRandomNumberGenerator()
            let nonce = Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expires = Int64((now.timeIntervalSince1970 + lifetime).rounded(.up))
            // Dots between the parts: base64url text may hold "_" and "-", never ".".
            let body = "st." + TokenText.hex(token.id) + "." + String(expires) + "." + nonce
            return (body + "." + mac(body, key: token.secretHash), Date(timeIntervalSince1970: Double(expires)))
        }

        /// The parts of a ticket's text: its token's id, its expiry, and the text its MAC covers.
        static func parse(_ text: String) -> (id: UUID, expires: Int64, body: String, mac: String)? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0] == "st", let expires = Int64(parts[2]), parts[3].count == 22,
                let id = TokenText.id(hex: parts[1])
            else { return nil }
            return (id, expires, parts[0..<4].joined(separator: "."), String(parts[4]))
        }

        static func mac(_ body: String, key: String) -> String {
            let code = HMAC<SHA256>.authenticationCode(
                for: Array(body.utf8), using: SymmetricKey(data: Array(key.utf8)))
            return Base64URL.encode(Array(code))
        }
    }

    /// When each token was last recorded as used.
    final class TouchLog: Sendable {
        let seen = Locked<[UUID: Date]>([:])
    }

    /// Authenticates requests that carry `Authorization: Bearer TOKEN`: a token that is unknown, revoked or
    /// expired is answered `401` at once; a request without one goes on unauthenticated (health checks need
    /// none; every other route asks for a scope). The token's last use is recorded at most once a minute.
    ///
    /// With an identity provider (``ServerConfiguration/identityProvider``), a bearer text that is not a RouteKit
    /// token (`rk_…`) is checked as the provider's JWT; the person of its subject is found (or made, when the
    /// provider's settings say so), and the request carries an API token made for it in memory
    /// (`IdentityTokens.apiToken(for:person:now:)`), which is never stored.
    struct TokenAuthenticator: RouterMiddleware {
        typealias Context = RouteKitRequestContext
        let store: any TokenStore
        /// The identity provider whose tokens are accepted too, if any.
        var identity: IdentityProvider?
        /// Where the people of the provider's subjects are (the server's store).
        var people: (any PeopleStore)?
        let lastTouched = TouchLog()

        func handle(
            _ request: Request, context: Context, next: (Request, Context) async throws -> Response
        ) async throws -> Response {
            guard let header = request.headers[.authorization] else {
                if let ticket = request.uri.queryParameters.get("ticket") {
                    // GET only: a HEAD (which reads nothing) must not spend it.
                    guard request.uri.path == "/v1/changes", request.method == .get else {
                        throw Problem.badRequest("a stream ticket is good for GET /v1/changes only")
                    }
                    var context = context
                    context.token = try await redeem(ticket)
                    return try await next(request, context)
                }
                return try await next(request, context)
            }
            var context = context
            guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
                throw Problem.unauthenticated
            }
            let text = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
            if let identity, let people, !text.hasPrefix("rk_") {
                context.token = try await identityToken(
                    text, identity: identity, people: people, logger: context.logger)
                context.tokenFromIdentityProvider = true
            } else {
                context.token = try await authenticate(header)
            }
            return try await next(request, context)
        }

        func redeem(_ text: String) async throws -> APIToken {
            let invalid = Problem(
                status: .unauthorized, type: "ticket-invalid", title: "The stream ticket is not good",
                detail: "stream tickets are good for 60 seconds and one use: get a new one (POST /v1/stream-tickets)")
            let now = Int64(Date().timeIntervalSince1970)
            guard let t = StreamTicket.parse(text), t.expires >= now, t.expires <= now + 3600,
                let token = try await store.token(id: t.id), token.isActive(at: Date()),
                TokenText.constantTimeEqual(StreamTicket.mac(t.body, key: token.secretHash), t.mac)
            else { throw invalid }
            // Recorded in the store (a digest, never the ticket), so that a ticket is good once across every server
            // sharing the store.
            let fresh = try await store.redeemTicket(
                key: TokenText.hash(t.body), expires: Date(timeIntervalSince1970: Double(t.expires)),
                now: Date(timeIntervalSince1970: Double(now)))
            guard fresh else { throw invalid }
            return token
        }

        func authenticate(_ header: String) async throws -> APIToken {
            guard header.count > 7, header.prefix(7).lowercased() == "bearer ",
                let (id, secret) = TokenText.parse(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            else { throw Problem.unauthenticated }
            let now = Date()
            guard let token = try await store.token(id: id), token.isActive(at: now),
                TokenText.constantTimeEqual(token.secretHash, TokenText.hash(secret))
            else { throw Problem.unauthenticated }
            let due = lastTouched.seen.withLock { seen in
                guard (seen[id].map { now.timeIntervalSince($0) >= 60 } ?? true) else { return false }
                seen[id] = now
                return true
            }
            if due { try? await store.touchToken(id: id, at: now) }
            return token
        }

        /// The API token an identity provider's JWT acts as: `401` with the check that failed when it is refused,
        /// `401 unknown-person` when its subject has no person and none may be made.
        func identityToken(
            _ text: String, identity: IdentityProvider, people: any PeopleStore, logger: Logger
        ) async throws -> APIToken {
            let verified: VerifiedIdentity
            do throws(IdentityTokenRefusal) {
                verified = try await identity.verify(text)
            } catch {
                // Which check failed, never the token.
                logger.info("an identity provider's token was refused", metadata: ["check": "\(error.problemType)"])
                throw Problem(error)
            }
            let owner = try await person(of: verified, identity: identity, people: people)
            return IdentityTokens.apiToken(for: verified, person: owner, now: Date())
        }

        /// The person of a verified token's subject, made on first use when the provider's settings say so.
        func person(
            of verified: VerifiedIdentity, identity: IdentityProvider, people: any PeopleStore
        ) async throws -> PersonID {
            if let known = try await people.person(subject: verified.subject) { return known.id }
            guard identity.settings.unknownSubjects == .create else { throw Problem.unknownPerson }
            let made = Person(name: verified.displayName, subject: verified.subject)
            do {
                try await people.addPerson(made)
                return made.id
            } catch {
                // Another request of the same subject made them first (a subject has one person).
                if let known = try await people.person(subject: verified.subject) { return known.id }
                throw error
            }
        }
    }
#endif
