#if Server
    import AsyncHTTPClient
    import Crypto
    public import Foundation
    import HTTPTypes
    import JWTKit
    public import Logging
    import NIOCore
    import NIOHTTP1
    public import RouteKit

    /// How the server trusts an identity provider (`routekit serve --jwks … --issuer … --audience …`): where its
    /// signing keys are, which issuer and audience its tokens must carry, and what to do with a subject that has no
    /// person yet.
    public struct IdentityProviderSettings: Sendable, Hashable {
        /// Where the identity provider's JSON Web Key Set (RFC 7517) is.
        public enum KeySet: Sendable, Hashable, CustomStringConvertible {
            /// A file holding the key set.
            case file(String)
            /// An `https` URL that answers the key set (`http` only on this machine: `localhost`, `127.0.0.1`, `::1`).
            case url(URL)

            /// Reads `--jwks`: an `https://` URL (an `http://` one only for this machine), else a file's path.
            ///
            /// - Throws: `RouteKitError.Code.invalidArgument` for an empty text, a URL that cannot be read, a plain
            ///   `http` URL of another machine (keys fetched in the clear could be replaced on the way), or another
            ///   scheme.
            public init(_ text: String) throws(RouteKitError) {
                guard !text.isEmpty else {
                    throw RouteKitError(
                        .invalidArgument, "the key set (jwks) must be a file or an https URL, not empty")
                }
                let lower = text.lowercased()
                if lower.hasPrefix("https://") || lower.hasPrefix("http://") {
                    guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
                        throw RouteKitError(
                            .invalidArgument, "the key set's URL cannot be read: it must be https://HOST/PATH")
                    }
                    if lower.hasPrefix("http://") && !Self.loopbackHosts.contains(host.lowercased()) {
                        throw RouteKitError(
                            .invalidArgument,
                            "the key set's URL must be https (http only for localhost): keys fetched in the clear "
                                + "could be replaced on the way")
                    }
                    self = .url(url)
                } else if text.contains("://") {
                    throw RouteKitError(.invalidArgument, "the key set (jwks) must be a file or an https URL")
                } else {
                    self = .file(text)
                }
            }

            /// The hosts a plain `http` key set URL may name.
            static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]

            /// The file's path, or the URL without its query (for messages and logs).
            public var description: String {
                switch self {
                case .file(let path):
                    return path
                case .url(let url):
                    var text = (url.scheme ?? "https") + "://" + (url.host ?? "")
                    if let port = url.port { text += ":\(port)" }
                    return text + url.path
                }
            }
        }

        /// What happens to a valid token whose subject (`iss` and `sub`) has no person yet.
        public enum UnknownSubjects: String, Sendable, Hashable, CaseIterable {
            /// A person is made for it, named by the token's `name` or `preferred_username` claim (else its subject).
            case create
            /// It is answered `401 unknown-person`: the operator adds people, with their subject, beforehand.
            case refuse
        }

        /// Where the keys are.
        public var keys: KeySet
        /// The `iss` every token must carry, exactly.
        public var issuer: String
        /// The `aud` every token must name (as its string, or in its array).
        public var audience: String
        /// What happens to a subject that has no person yet.
        public var unknownSubjects: UnknownSubjects
        /// The clock skew allowed when checking `exp` and `nbf`, in seconds.
        public var leewaySeconds: Double = 60
        /// The least time between two readings of the key set, in seconds: a token naming a key (`kid`) the set does
        /// not have makes the server read it again, at most this often.
        public var reloadIntervalSeconds: Double = 60

        /// Creates settings.
        public init(keys: KeySet, issuer: String, audience: String, unknownSubjects: UnknownSubjects = .refuse) {
            self.keys = keys
            self.issuer = issuer
            self.audience = audience
            self.unknownSubjects = unknownSubjects
        }
    }

    /// Why an identity provider's token was refused. Each is answered `401` with a problem of its own type
    /// (``problemType``), whose detail says which check failed and never repeats the token.
    public enum IdentityTokenRefusal: Error, Sendable, Hashable {
        /// Larger than ``IdentityProvider/maximumTokenBytes``; refused before it is parsed.
        case tooLarge
        /// Not a JWS in compact form (three base64url parts, a JSON header naming its algorithm), or its claims
        /// cannot be read.
        case malformed(String)
        /// `alg: none`: a token without a signature.
        case algorithmNone
        /// An algorithm other than RS256, ES256 and EdDSA (HS256 included: a shared-secret algorithm, which is how a
        /// public key would be passed off as an HMAC key).
        case algorithmNotAllowed(String)
        /// The key named by `kid` is for another algorithm than the token's: a key is only ever used with its own.
        case keyAlgorithmMismatch(kid: String, keyAlgorithm: String, tokenAlgorithm: String)
        /// No key of the set has the token's `kid` (also after reading the set again), or the token names no key and
        /// the set does not have exactly one for its algorithm.
        case unknownKey(String?)
        /// The signature is not the key's over the token.
        case badSignature
        /// `exp` has passed (beyond the leeway).
        case expired
        /// `nbf` has not come yet (beyond the leeway).
        case notYetValid
        /// No `exp`: a token good for ever is not accepted.
        case missingExpiry
        /// `iss` is not the configured issuer.
        case wrongIssuer(expected: String)
        /// `aud` does not name the configured audience.
        case wrongAudience(expected: String)
        /// No `sub`, or an empty one.
        case missingSubject
        /// The `scope` claim has no RouteKit scope: neither `read` nor `write`, nor a `read:TYPE` or `write:TYPE`.
        case noScope

        /// The problem's type name (after `urn:routekit:problem:`).
        public var problemType: String {
            switch self {
            case .tooLarge: "jwt-too-large"
            case .malformed: "jwt-malformed"
            case .algorithmNone: "jwt-alg-none"
            case .algorithmNotAllowed: "jwt-algorithm-not-allowed"
            case .keyAlgorithmMismatch: "jwt-key-algorithm-mismatch"
            case .unknownKey: "jwt-unknown-key"
            case .badSignature: "jwt-bad-signature"
            case .expired: "jwt-expired"
            case .notYetValid: "jwt-not-yet-valid"
            case .missingExpiry: "jwt-missing-expiry"
            case .wrongIssuer: "jwt-wrong-issuer"
            case .wrongAudience: "jwt-wrong-audience"
            case .missingSubject: "jwt-missing-subject"
            case .noScope: "jwt-no-scope"
            }
        }

        /// The problem's title, the same for every refusal of a kind.
        public var title: String {
            switch self {
            case .tooLarge: "The token is too large"
            case .malformed: "The token is not a JWT"
            case .algorithmNone: "The token is not signed"
            case .algorithmNotAllowed: "The token's algorithm is not accepted"
            case .keyAlgorithmMismatch: "The token's algorithm is not its key's"
            case .unknownKey: "The token's key is not the identity provider's"
            case .badSignature: "The token's signature is not valid"
            case .expired: "The token has expired"
            case .notYetValid: "The token is not valid yet"
            case .missingExpiry: "The token has no expiry"
            case .wrongIssuer: "The token is from another issuer"
            case .wrongAudience: "The token is for another audience"
            case .missingSubject: "The token names no subject"
            case .noScope: "The token grants no RouteKit scope"
            }
        }

        /// What failed, for the problem's detail: never the token, and of its header only a key id or algorithm name
        /// made of plain characters.
        public var detail: String {
            switch self {
            case .tooLarge:
                return "a token is at most \(IdentityProvider.maximumTokenBytes / 1024) KiB"
            case .malformed(let why):
                return "the bearer token is neither a RouteKit token (rk_…) nor a signed JWT: \(why)"
            case .algorithmNone:
                return "its header says alg: none; tokens must be signed with RS256, ES256 or EdDSA"
            case .algorithmNotAllowed(let algorithm):
                return "its header says alg: \(Self.shown(algorithm)); tokens must be signed with RS256, ES256 or EdDSA"
            case .keyAlgorithmMismatch(let kid, let keyAlgorithm, let tokenAlgorithm):
                return "its key \(Self.shown(kid)) is an \(keyAlgorithm) key, and the token says "
                    + Self.shown(tokenAlgorithm)
            case .unknownKey(let kid?):
                return "the identity provider's key set has no key \(Self.shown(kid)) (it is read again at most once "
                    + "a minute)"
            case .unknownKey(nil):
                return "the token names no key (kid), and the key set does not have exactly one key for its algorithm"
            case .badSignature:
                return "the signature does not verify with the identity provider's key"
            case .expired:
                return "its exp has passed; get a new token from the identity provider"
            case .notYetValid:
                return "its nbf has not come yet (the clocks may differ by more than a minute)"
            case .missingExpiry:
                return "it has no exp claim; tokens must expire"
            case .wrongIssuer(let expected):
                return "its iss is not \(expected), the issuer this server trusts"
            case .wrongAudience(let expected):
                return "its aud does not name \(expected), this server's audience"
            case .missingSubject:
                return "it has no sub claim, so it names no person"
            case .noScope:
                return "its scope claim has none of read, write, read:TYPE or write:TYPE (admin is never granted to "
                    + "identity-provider tokens)"
            }
        }

        /// `text` when it is short and plain (letters, digits, `.`, `_`, `-`), else a placeholder: header values come
        /// from whoever sent the token.
        static func shown(_ text: String) -> String {
            guard !text.isEmpty, text.utf8.count <= 64 else { return "(not shown)" }
            for byte in text.utf8 where !plainBytes.contains(byte) { return "(not shown)" }
            return text
        }

        /// Letters, digits, `.`, `_` and `-`, as bytes.
        static let plainBytes = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8))
    }

    /// Who a verified identity-provider token is and what it may do.
    public struct VerifiedIdentity: Sendable, Hashable {
        /// Its issuer and subject.
        public var subject: ExternalSubject
        /// The RouteKit scopes its `scope` claim grants: `read` and `write`, and the scopes narrowed to one type of
        /// object (`read:routes`, `read:heartRate`, `write:workouts`: `APIScope.reading(_:)`), never `admin`.
        public var scopes: Set<APIScope>
        /// Its `name` claim, else its `preferred_username`.
        public var name: String?
        /// The client it was issued to: its `azp` claim, else its `client_id`.
        public var client: String?
        /// Its `exp`.
        public var expires: Date

        /// A name for a person made for it: ``name``, else the subject.
        public var displayName: String { String((name ?? subject.subject).prefix(200)) }

        package init(subject: ExternalSubject, scopes: Set<APIScope>, name: String?, client: String?, expires: Date) {
            self.subject = subject
            self.scopes = scopes
            self.name = name
            self.client = client
            self.expires = expires
        }
    }

    /// An identity provider whose JWTs the server accepts beside its own tokens (`routekit serve --jwks`): it keeps
    /// the provider's signing keys from a JSON Web Key Set (a file, or an https URL), and checks a token's header,
    /// signature and claims with vapor's jwt-kit.
    ///
    /// Only RS256, ES256 and EdDSA are accepted, and the header's `alg` is checked before anything else: `none` and
    /// the HMAC algorithms are refused, so a public key can never be used as an HMAC secret. Each key of the set is
    /// used only with its own algorithm (its `alg`, or the one its type and curve make: RSA → RS256, P-256 →
    /// ES256, Ed25519 → EdDSA). A token naming a key (`kid`) the set does not have makes the provider read the set
    /// again, at most once per ``IdentityProviderSettings/reloadIntervalSeconds``; a reading that fails keeps the keys
    /// read before.
    public actor IdentityProvider {
        /// What it trusts.
        public nonisolated let settings: IdentityProviderSettings
        private let logger: Logger
        private let now: @Sendable () -> Date
        /// The keys of the last reading that succeeded.
        private var keys: [VerifyingKey] = []
        /// When the set was last read (successfully or not).
        private var lastLoad: Date?
        /// A reading of the set under way, which tokens naming an unknown key wait for.
        private var reloading: Task<Void, Never>?
        /// How many times the set was read (for tests).
        package private(set) var loads = 0

        /// The largest token accepted, in bytes; a larger one is refused before it is parsed.
        public static let maximumTokenBytes = 8 << 10
        /// The largest key set read, in bytes.
        public static let maximumKeySetBytes = 1 << 20
        /// The most keys kept from a set.
        static let maximumKeys = 100
        /// The algorithms accepted.
        static let algorithms: Set<String> = ["RS256", "ES256", "EdDSA"]

        /// Creates a provider; nothing is read until ``load()``. `now` is the clock used for `exp`, `nbf` and the
        /// time between readings (tests move it).
        public init(
            settings: IdentityProviderSettings, logger: Logger = Logger(label: "routekit.identity-provider"),
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.settings = settings
            self.logger = logger
            self.now = now
        }

        /// Reads the key set and keeps its keys (those of another algorithm, for encryption, or that cannot be read
        /// are left out, and logged).
        ///
        /// - Throws: `RouteKitError.Code.invalidArgument` naming the file or URL when it is missing, larger than
        ///   ``maximumKeySetBytes``, not a key set, or has no usable key; `RouteKitError.Code.unavailable` when the
        ///   URL cannot be reached in time or answers anything but `200`. The keys read before are kept.
        public func load() async throws(RouteKitError) {
            lastLoad = now()
            loads += 1
            let bytes = try await fetch()
            let (loaded, skipped) = try await Self.verifyingKeys(from: bytes, label: settings.keys.description)
            keys = loaded
            if skipped > 0 {
                logger.notice(
                    "keys of the identity provider's set were left out (not RS256, ES256 or EdDSA signing keys)",
                    metadata: ["skipped": "\(skipped)", "from": "\(settings.keys)"])
            }
            logger.info(
                "read the identity provider's keys", metadata: ["keys": "\(loaded.count)", "from": "\(settings.keys)"])
        }

        /// Checks a bearer token: its size, header (`alg`, `kid`), signature with the named key, `exp` and `nbf`
        /// (with ``IdentityProviderSettings/leewaySeconds``), `iss`, `aud`, `sub` and `scope`.
        ///
        /// - Throws: the ``IdentityTokenRefusal`` of the first check that fails.
        public func verify(_ token: String) async throws(IdentityTokenRefusal) -> VerifiedIdentity {
            guard token.utf8.count <= Self.maximumTokenBytes else { throw IdentityTokenRefusal.tooLarge }
            let header = try TokenHeader(token)
            let signingKey = try await key(for: header)
            let claims: IdentityClaims
            do {
                claims = try await signingKey.verifier.verify(token, as: IdentityClaims.self)
            } catch let error as JWTError where error.errorType == .malformedToken {
                throw IdentityTokenRefusal.malformed("its claims are not a JSON object of the registered types")
            } catch {
                throw IdentityTokenRefusal.badSignature
            }
            return try check(claims)
        }

        /// The key `header` names, read again once when the set does not have it.
        private func key(for header: TokenHeader) async throws(IdentityTokenRefusal) -> VerifyingKey {
            guard let kid = header.kid else {
                let fitting = keys.filter { $0.algorithm == header.algorithm }
                guard fitting.count == 1, let only = fitting.first else { throw IdentityTokenRefusal.unknownKey(nil) }
                return only
            }
            var named = keys.filter { $0.kid == kid }
            if named.isEmpty {
                await reloadIfDue()
                named = keys.filter { $0.kid == kid }
            }
            guard let first = named.first else { throw IdentityTokenRefusal.unknownKey(kid) }
            guard let fitting = named.first(where: { $0.algorithm == header.algorithm }) else {
                throw IdentityTokenRefusal.keyAlgorithmMismatch(
                    kid: kid, keyAlgorithm: first.algorithm, tokenAlgorithm: header.algorithm)
            }
            return fitting
        }

        /// Reads the set again unless it was read less than ``IdentityProviderSettings/reloadIntervalSeconds`` ago;
        /// a reading under way is waited for instead of starting another.
        private func reloadIfDue() async {
            let task: Task<Void, Never>
            if let running = reloading {
                task = running
            } else {
                if let last = lastLoad, now().timeIntervalSince(last) < settings.reloadIntervalSeconds { return }
                task = Task { await self.reloadKeepingKeys() }
                reloading = task
            }
            await task.value
            if reloading == task { reloading = nil }
        }

        private func reloadKeepingKeys() async {
            do throws(RouteKitError) {
                try await load()
            } catch {
                logger.warning(
                    "the identity provider's key set could not be read again; the keys read before are kept",
                    metadata: ["why": "\(error.message)"])
            }
        }

        /// The claims' checks, after the signature's.
        private func check(_ claims: IdentityClaims) throws(IdentityTokenRefusal) -> VerifiedIdentity {
            let now = self.now().timeIntervalSince1970
            let leeway = settings.leewaySeconds
            guard let exp = claims.exp else { throw IdentityTokenRefusal.missingExpiry }
            guard now < exp + leeway else { throw IdentityTokenRefusal.expired }
            if let nbf = claims.nbf, now + leeway < nbf { throw IdentityTokenRefusal.notYetValid }
            guard claims.iss == settings.issuer else {
                throw IdentityTokenRefusal.wrongIssuer(expected: settings.issuer)
            }
            guard claims.aud?.contains(settings.audience) == true else {
                throw IdentityTokenRefusal.wrongAudience(expected: settings.audience)
            }
            guard let subject = claims.sub, !subject.isEmpty else { throw IdentityTokenRefusal.missingSubject }
            var scopes: Set<APIScope> = []
            for word in (claims.scope ?? "").split(separator: " ") {
                // `read`, `write` and the scopes narrowed to one type of object (`read:heartRate`, `write:workouts`);
                // `admin` is never granted through a token of the identity provider, and other words (`openid`,
                // another API's scopes) are ignored.
                guard let scope = APIScope(rawValue: String(word)), scope.access != .admin else { continue }
                scopes.insert(scope)
            }
            guard !scopes.isEmpty else { throw IdentityTokenRefusal.noScope }
            return VerifiedIdentity(
                subject: ExternalSubject(issuer: settings.issuer, subject: subject), scopes: scopes,
                name: claims.name ?? claims.preferredUsername, client: claims.azp ?? claims.clientID,
                expires: Date(timeIntervalSince1970: exp))
        }

        /// The key set's bytes, from its file or URL.
        private func fetch() async throws(RouteKitError) -> [UInt8] {
            switch settings.keys {
            case .file(let path): return try Self.read(path)
            case .url(let url): return try await Self.download(url, label: settings.keys.description)
            }
        }

        /// A key set file's bytes.
        static func read(_ path: String) throws(RouteKitError) -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else {
                let exists = FileManager.default.fileExists(atPath: path)
                throw RouteKitError(
                    .invalidArgument, exists ? "cannot read the key set file \(path)" : "no key set file at \(path)")
            }
            guard data.count <= maximumKeySetBytes else {
                throw RouteKitError(.invalidArgument, "the key set file \(path) is larger than 1 MiB")
            }
            return [UInt8](data)
        }

        /// A key set URL's answer: connect within 5 s, the whole answer within 15 s, at most 1 MiB, no redirect
        /// followed.
        static func download(_ url: URL, label: String) async throws(RouteKitError) -> [UInt8] {
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(10))
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let result: Result<[UInt8], RouteKitError>
            do {
                var request = HTTPClientRequest(url: url.absoluteString)
                request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
                let response = try await client.execute(request, timeout: .seconds(15))
                if response.status.code == 200 {
                    let body = try await response.body.collect(upTo: maximumKeySetBytes)
                    result = .success(Array(body.readableBytesView))
                } else {
                    result = .failure(
                        RouteKitError(
                            .unavailable,
                            "the key set URL \(label) answered \(response.status.code), not 200 (redirects are not "
                                + "followed)"))
                }
            } catch is NIOTooManyBytesError {
                result = .failure(RouteKitError(.invalidArgument, "the key set at \(label) is larger than 1 MiB"))
            } catch {
                // The client's errors are not repeated: they are long, and the URL is said already.
                result = .failure(
                    RouteKitError(
                        .unavailable, "the key set URL \(label) could not be reached or did not answer in time"))
            }
            try? await client.shutdown()
            return try result.get()
        }

        /// The keys of a key set's JSON that verify signatures with an accepted algorithm, and how many others were
        /// left out.
        static func verifyingKeys(
            from bytes: [UInt8], label: String
        ) async throws(RouteKitError) -> (keys: [VerifyingKey], skipped: Int) {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
                let entries = object["keys"] as? [Any]
            else {
                throw RouteKitError(
                    .invalidArgument, "\(label) is not a JSON Web Key Set (a JSON object with a \"keys\" array)")
            }
            var keys: [VerifyingKey] = []
            var skipped = 0
            for (index, entry) in entries.prefix(maximumKeys).enumerated() {
                guard let key = await verifyingKey(entry, index: index) else {
                    skipped += 1
                    continue
                }
                keys.append(key)
            }
            skipped += max(0, entries.count - maximumKeys)
            guard !keys.isEmpty else {
                throw RouteKitError(
                    .invalidArgument,
                    "\(label) has no key RouteKit can use: signing keys (use: sig) for RS256 (RSA), ES256 (P-256) or "
                        + "EdDSA (Ed25519)")
            }
            return (keys, skipped)
        }

        /// One key of a set, ready to verify; `nil` when it is for encryption, for another algorithm, or cannot be
        /// read. Its private parts, if the set has them, are dropped: verifying needs the public key only.
        static func verifyingKey(_ entry: Any, index: Int) async -> VerifyingKey? {
            guard let fields = entry as? [String: Any] else { return nil }
            if let use = fields["use"] as? String, use != "sig" { return nil }
            if let operations = fields["key_ops"] as? [String], !operations.contains("verify") { return nil }
            guard let json = try? JSONSerialization.data(withJSONObject: fields),
                var jwk = try? JSONDecoder().decode(JWK.self, from: json),
                let chosen = algorithm(of: jwk)
            else { return nil }
            jwk.privateExponent = nil
            jwk.prime1 = nil
            jwk.prime2 = nil
            jwk.algorithm = JWK.Algorithm(rawValue: chosen)
            let kid = jwk.keyIdentifier?.string
            // jwt-kit keeps keys by id; a key without one gets a name of its own (its collection holds it alone).
            if kid == nil { jwk.keyIdentifier = JWKIdentifier(string: "routekit-unnamed-key-\(index)") }
            let verifier = JWTKeyCollection()
            do {
                try await verifier.add(jwk: jwk)
            } catch {
                return nil
            }
            return VerifyingKey(kid: kid, algorithm: chosen, verifier: verifier)
        }

        /// The one algorithm a key is used with: its `alg` when it declares one (and its type fits it), else the one
        /// its type and curve make; `nil` for anything but RS256, ES256 and EdDSA.
        static func algorithm(of jwk: JWK) -> String? {
            let curve = jwk.curve?.rawValue
            let made: String?
            if jwk.keyType == .rsa {
                made = "RS256"
            } else if jwk.keyType == .ecdsa {
                made = curve == "P-256" ? "ES256" : nil
            } else if jwk.keyType == .octetKeyPair {
                made = curve == "Ed25519" ? "EdDSA" : nil
            } else {
                made = nil
            }
            guard let made else { return nil }
            if let declared = jwk.algorithm?.rawValue, declared != made { return nil }
            return made
        }
    }

    /// A key of the identity provider's set, with the one algorithm it is used with, in a jwt-kit collection that
    /// holds it alone (so no other key, and no default, can ever stand in for it).
    struct VerifyingKey: Sendable {
        /// Its `kid`, if the set gives one.
        let kid: String?
        /// `RS256`, `ES256` or `EdDSA`.
        let algorithm: String
        let verifier: JWTKeyCollection
    }

    /// What the server reads of a token's header before verifying it: the algorithm, checked first, and the key id.
    struct TokenHeader {
        let algorithm: String
        let kid: String?

        /// Reads the header of a compact JWS.
        /// - Throws: ``IdentityTokenRefusal/malformed(_:)``, ``IdentityTokenRefusal/algorithmNone`` or
        ///   ``IdentityTokenRefusal/algorithmNotAllowed(_:)``.
        init(_ token: String) throws(IdentityTokenRefusal) {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3 else {
                throw IdentityTokenRefusal.malformed(
                    parts.count == 5
                        ? "an encrypted token (JWE) is not accepted" : "a JWT is three base64url parts joined by dots")
            }
            guard let bytes = Base64URL.decode(parts[0]),
                let header = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
            else { throw IdentityTokenRefusal.malformed("its header is not base64url JSON") }
            guard let algorithm = header["alg"] as? String else {
                throw IdentityTokenRefusal.malformed("its header names no algorithm (alg)")
            }
            if algorithm.lowercased() == "none" { throw IdentityTokenRefusal.algorithmNone }
            guard IdentityProvider.algorithms.contains(algorithm) else {
                throw IdentityTokenRefusal.algorithmNotAllowed(algorithm)
            }
            if let kid = header["kid"] {
                guard let text = kid as? String else {
                    throw IdentityTokenRefusal.malformed("its key id (kid) is not text")
                }
                self.kid = text
            } else {
                self.kid = nil
            }
            guard header["crit"] == nil else {
                throw IdentityTokenRefusal.malformed(
                    "its header has critical extensions (crit), which are not understood")
            }
            guard !parts[1].isEmpty, Base64URL.decode(parts[1]) != nil else {
                throw IdentityTokenRefusal.malformed("its claims are not base64url")
            }
            guard let signature = Base64URL.decode(parts[2]), !signature.isEmpty else {
                throw IdentityTokenRefusal.malformed("its signature is missing or not base64url")
            }
            self.algorithm = algorithm
        }
    }

    /// The claims the server reads. Registered claims of the wrong type make the token malformed; the names and the
    /// client are read when they are text, and left out otherwise.
    struct IdentityClaims: JWTPayload {
        var iss: String?
        var sub: String?
        /// `aud`: a string or an array of strings.
        var aud: [String]?
        var exp: Double?
        var nbf: Double?
        /// `scope`: space-separated words (an array of words is read too).
        var scope: String?
        var name: String?
        var preferredUsername: String?
        var azp: String?
        var clientID: String?

        enum CodingKeys: String, CodingKey {
            case iss, sub, aud, exp, nbf, scope, name, azp
            case preferredUsername = "preferred_username"
            case clientID = "client_id"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            iss = try c.decodeIfPresent(String.self, forKey: .iss)
            sub = try c.decodeIfPresent(String.self, forKey: .sub)
            if let one = try? c.decodeIfPresent(String.self, forKey: .aud) {
                aud = [one]
            } else {
                aud = try c.decodeIfPresent([String].self, forKey: .aud)
            }
            exp = try c.decodeIfPresent(Double.self, forKey: .exp)
            nbf = try c.decodeIfPresent(Double.self, forKey: .nbf)
            if let words = try? c.decodeIfPresent(String.self, forKey: .scope) {
                scope = words
            } else {
                scope = try c.decodeIfPresent([String].self, forKey: .scope)?.joined(separator: " ")
            }
            name = try? c.decodeIfPresent(String.self, forKey: .name)
            preferredUsername = try? c.decodeIfPresent(String.self, forKey: .preferredUsername)
            azp = try? c.decodeIfPresent(String.self, forKey: .azp)
            clientID = try? c.decodeIfPresent(String.self, forKey: .clientID)
        }

        /// The claims' own checks are the provider's (``IdentityProvider/verify(_:)``), with its clock and leeway.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The in-memory API token a verified identity-provider token acts as, for one request.
    package enum IdentityTokens {
        /// The name of the tokens made here (`APIToken.name`).
        package static let name = "identity provider"

        /// The token for `identity`, acting as `person`: its id is derived from the issuer and subject (so limits
        /// per token, such as open event streams, are per subject), its source is the client the token was issued
        /// to (`azp`, else `client_id`, else `identity-provider`), and its secret hash is derived from the issuer and
        /// subject too, so that what is keyed by it stays the same from one request to the next.
        package static func apiToken(for identity: VerifiedIdentity, person: PersonID, now: Date) -> APIToken {
            let key = identity.subject.issuer + "\u{0}" + identity.subject.subject
            var b = Array(SHA256.hash(data: Array(("routekit identity token\u{0}" + key).utf8)).prefix(16))
            b[6] = (b[6] & 0x0F) | 0x80  // version 8 (RFC 9562: made by the application)
            b[8] = (b[8] & 0x3F) | 0x80  // the RFC 9562 variant
            let id = UUID(
                uuid: (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                ))
            let source: Source
            if let client = identity.client, let named = try? Source(name: client) {
                source = named
            } else if let fallback = try? Source(name: "identity-provider") {
                source = fallback
            } else {
                source = .defaultImport
            }
            return APIToken(
                id: id, name: name, person: person, source: source, scopes: identity.scopes, readableSources: nil,
                secretHash: TokenText.hash("routekit identity secret\u{0}" + key), created: now,
                expires: identity.expires)
        }
    }

    extension Problem {
        /// The `401` for a refused identity-provider token.
        init(_ refusal: IdentityTokenRefusal) {
            self.init(
                status: .unauthorized, type: refusal.problemType, title: refusal.title, detail: refusal.detail,
                headers: [.wwwAuthenticate: "Bearer realm=\"routekit\", error=\"invalid_token\""])
        }

        /// The `401` for a valid identity-provider token whose subject has no person (`--jwt-people refuse`).
        static let unknownPerson = Problem(
            status: .unauthorized, type: "unknown-person", title: "The token's subject is no person of this server",
            detail: "the identity provider's token is valid, but no person of this server has its subject (iss and "
                + "sub), and the server does not make people on first use; the operator adds them",
            headers: [.wwwAuthenticate: "Bearer realm=\"routekit\", error=\"invalid_token\""])

        /// The `403` for a stream ticket asked with an identity-provider token.
        static let ticketUnavailable = Problem(
            status: .forbidden, type: "ticket-unavailable", title: "No stream ticket for this token",
            detail: "stream tickets are made for RouteKit's API tokens (rk_…); with an identity provider's token, send "
                + "it as 'Authorization: Bearer TOKEN' to GET /v1/changes")
    }
#endif
