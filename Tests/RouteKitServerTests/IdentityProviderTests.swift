#if Server
    import AsyncHTTPClient
    import Crypto
    import CryptoExtras
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import JWTKit
    import Logging
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import RouteKitTesting
    import Testing

    /// A clock the tests move: the identity provider's `exp`, `nbf` and time between readings of its key set.
    final class MovingClock: Sendable {
        private let date: Locked<Date>

        init(_ start: Date) { date = Locked(start) }

        var now: Date { date.withLock { $0 } }

        func advance(_ seconds: Double) { date.withLock { $0 += seconds } }
    }

    /// A claim's value in a test token.
    enum TestClaim: Codable, Sendable {
        case text(String)
        case number(Double)
        case texts([String])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let text = try? c.decode(String.self) {
                self = .text(text)
            } else if let number = try? c.decode(Double.self) {
                self = .number(number)
            } else {
                self = .texts(try c.decode([String].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .text(let text): try c.encode(text)
            case .number(let number): try c.encode(number)
            case .texts(let texts): try c.encode(texts)
            }
        }
    }

    /// A test token's claims, as they are signed.
    struct TestClaims: JWTPayload {
        var fields: [String: TestClaim]

        init(_ fields: [String: TestClaim]) { self.fields = fields }

        init(from decoder: any Decoder) throws {
            fields = try decoder.singleValueContainer().decode([String: TestClaim].self)
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(fields)
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Keys made by a test, as an identity provider holds them: RSA (RS256), P-256 (ES256) and Ed25519 (EdDSA), with
    /// a jwt-kit collection that signs with them (`rsa-1`, `ec-1`, `ed-1`).
    struct TestKeys {
        let rsa: _RSA.Signing.PrivateKey
        let ec: P256.Signing.PrivateKey
        let ed: Curve25519.Signing.PrivateKey
        let signers: JWTKeyCollection

        init() async throws {
            rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            ec = P256.Signing.PrivateKey()
            ed = Curve25519.Signing.PrivateKey()
            signers = JWTKeyCollection()
            let rsaKey = try JWTKit.Insecure.RSA.PrivateKey(backing: rsa)
            let ecKey = try ES256PrivateKey(backing: ec)
            await signers.add(rsa: rsaKey, digestAlgorithm: .sha256, kid: "rsa-1")
            await signers.add(ecdsa: ecKey, kid: "ec-1")
            await signers.add(eddsa: EdDSA.PrivateKey(backing: ed), kid: "ed-1")
        }

        /// The RSA key's public JWK, with its `alg`.
        func rsaJWK() throws -> [String: String] {
            let primitives = try rsa.publicKey.getKeyPrimitives()
            return [
                "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "rsa-1",
                "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent),
            ]
        }

        /// The P-256 key's public JWK, without `alg` (the provider makes ES256 of its curve).
        func ecJWK() -> [String: String] {
            let point = Array(ec.publicKey.x963Representation)
            return [
                "kty": "EC", "crv": "P-256", "kid": "ec-1", "x": Base64URL.encode(point[1..<33]),
                "y": Base64URL.encode(point[33..<65]),
            ]
        }

        /// The Ed25519 key's public JWK.
        func edJWK() -> [String: String] {
            [
                "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "ed-1",
                "x": Base64URL.encode(ed.publicKey.rawRepresentation),
            ]
        }

        /// Every key's public JWK.
        func publicKeys() throws -> [[String: String]] { try [rsaJWK(), ecJWK(), edJWK()] }

        /// A token signed with the key `kid`.
        func token(_ claims: TestClaims, kid: String) async throws -> String {
            try await signers.sign(claims, kid: JWKIdentifier(string: kid))
        }

        /// A forgery: a token that names the key `kid` but is signed by a new P-256 key, which no key set holds.
        static func forged(_ claims: TestClaims, kid: String) async throws -> String {
            let key = try ES256PrivateKey(backing: P256.Signing.PrivateKey())
            let forger = JWTKeyCollection()
            await forger.add(ecdsa: key, kid: JWKIdentifier(string: kid))
            return try await forger.sign(claims, kid: JWKIdentifier(string: kid))
        }
    }

    @Suite("routekit serve: an identity provider's JWTs (keys made by the test, a key set file, no network)", .serialized)
    struct IdentityProviderTests {
        static let issuer = "https://id.example.org"
        static let audience = "routekit"

        /// Claims that pass every check at `now`, with `changes` (a `nil` removes the claim).
        static func claims(_ now: Date, _ changes: [String: TestClaim?] = [:]) -> TestClaims {
            let t = now.timeIntervalSince1970.rounded(.down)
            var fields: [String: TestClaim] = [
                "iss": .text(issuer), "sub": .text("user-1"), "aud": .text(audience), "iat": .number(t),
                "exp": .number(t + 600), "scope": .text("openid read write"), "name": .text("Ana"),
                "azp": .text("phone-app"),
            ]
            for (key, value) in changes { fields[key] = value }
            return TestClaims(fields)
        }

        /// A key set file of `keys`.
        static func write(_ keys: [[String: String]], to path: String) throws {
            let data = try JSONSerialization.data(withJSONObject: ["keys": keys] as [String: Any])
            try data.write(to: URL(fileURLWithPath: path))
        }

        /// base64url of a JSON text.
        static func part(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

        /// The claims part of a token made by hand.
        static func claimsPart(_ now: Date) throws -> String {
            Base64URL.encode(Array(try JSONEncoder().encode(claims(now))))
        }

        /// A server whose identity provider reads `keys` from a file in the fixture's folder.
        static func server(
            _ keys: [[String: String]], people: IdentityProviderSettings.UnknownSubjects, clock: MovingClock
        ) async throws -> (fixture: Fixture, provider: IdentityProvider, keySet: String) {
            var f = try Fixture()
            let trusted = try await keySetProvider(keys, in: f.folder, people: people, clock: clock)
            f.configuration.identityProvider = trusted.provider
            return (f, trusted.provider, trusted.keySet)
        }

        /// An identity provider of ``issuer`` and ``audience`` whose keys, `keys`, it has read from a key set file
        /// written in `folder`, on `clock`'s time.
        static func keySetProvider(
            _ keys: [[String: String]], in folder: String, people: IdentityProviderSettings.UnknownSubjects,
            clock: MovingClock
        ) async throws -> (provider: IdentityProvider, keySet: String) {
            let path = folder + "/jwks.json"
            try write(keys, to: path)
            let provider = IdentityProvider(
                settings: IdentityProviderSettings(
                    keys: .file(path), issuer: issuer, audience: audience, unknownSubjects: people),
                now: { clock.now })
            try await provider.load()
            return (provider, path)
        }

        @Test(
            "a token of each algorithm (RS256, ES256 from a key without alg, EdDSA) is accepted as its subject's person, made on first use")
        func acceptsEachAlgorithm() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, provider, _) = try await Self.server(keys.publicKeys(), people: .create, clock: clock)
            var tokens: [String] = []
            for kid in ["rsa-1", "ec-1", "ed-1"] { tokens.append(try await keys.token(Self.claims(clock.now), kid: kid)) }
            // Within the minute of leeway, and an audience among others.
            tokens.append(
                try await keys.token(
                    Self.claims(clock.now, ["exp": .number(clock.now.timeIntervalSince1970 - 30)]), kid: "ec-1"))
            tokens.append(
                try await keys.token(Self.claims(clock.now, ["aud": .texts(["other", Self.audience])]), kid: "ed-1"))
            let sent = tokens
            try await f.app().test(.live) { client in
                for token in sent {
                    let r = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(token), body: nil)
                    #expect(r.status == .ok, "\(String(buffer: r.body))")
                }
            }
            let subject = ExternalSubject(issuer: Self.issuer, subject: "user-1")
            let person = try #require(try await f.store.person(subject: subject))
            #expect(person.name == "Ana")
            let people = try await f.store.people()
            let theirs = people.filter { $0.subject == subject }
            #expect(theirs.count == 1)
            let loads = await provider.loads
            #expect(loads == 1)
        }

        @Test("each refused check is a 401 problem of its own type that never repeats the token")
        func refusals() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, provider, _) = try await Self.server(keys.publicKeys(), people: .create, clock: clock)
            let now = clock.now
            let t = now.timeIntervalSince1970
            // Another party's keys: one under the identity provider's EC key id, one of another algorithm under its
            // RSA key id, one under an id the set does not have.
            let attacker = JWTKeyCollection()
            let forged = try ES256PrivateKey(backing: P256.Signing.PrivateKey())
            await attacker.add(ecdsa: forged, kid: "ec-1")
            let stranger = JWTKeyCollection()
            await stranger.add(ecdsa: forged, kid: "rsa-1")
            let unknown = JWTKeyCollection()
            await unknown.add(ecdsa: forged, kid: "stranger-1")
            let hmacInput = Self.part(#"{"alg":"HS256","typ":"JWT","kid":"rsa-1"}"#) + "." + (try Self.claimsPart(now))
            // HS256 keyed with the RSA public key's text: what an HS/RS confusion forges.
            let mac = HMAC<SHA256>.authenticationCode(
                for: Array(hmacInput.utf8), using: SymmetricKey(data: Array(keys.rsa.publicKey.pemRepresentation.utf8)))
            let unsigned = Self.part(#"{"alg":"none","typ":"JWT"}"#) + "." + (try Self.claimsPart(now)) + "."
            var cases: [(name: String, token: String, type: String)] = []
            cases.append(("not a JWT", "not-a-jwt", "jwt-malformed"))
            cases.append(("two parts", "abc.def", "jwt-malformed"))
            cases.append(("larger than 8 KiB", "eyJ" + String(repeating: "A", count: 9000) + ".e30.c2ln", "jwt-too-large"))
            cases.append(("alg none", unsigned, "jwt-alg-none"))
            let confused = hmacInput + "." + Base64URL.encode(Array(mac))
            cases.append(("HS256 with the RSA public key", confused, "jwt-algorithm-not-allowed"))
            let mismatched = try await stranger.sign(Self.claims(now), kid: "rsa-1")
            cases.append(("ES256 under the RSA key's id", mismatched, "jwt-key-algorithm-mismatch"))
            let unknownKid = try await unknown.sign(Self.claims(now), kid: "stranger-1")
            cases.append(("an unknown kid", unknownKid, "jwt-unknown-key"))
            let forgery = try await attacker.sign(Self.claims(now), kid: "ec-1")
            cases.append(("a forged signature", forgery, "jwt-bad-signature"))
            let expired = try await keys.token(Self.claims(now, ["exp": .number(t - 120)]), kid: "rsa-1")
            cases.append(("expired", expired, "jwt-expired"))
            let early = try await keys.token(Self.claims(now, ["nbf": .number(t + 300)]), kid: "ec-1")
            cases.append(("not yet valid", early, "jwt-not-yet-valid"))
            let foreign = try await keys.token(Self.claims(now, ["iss": .text("https://evil.example")]), kid: "ed-1")
            cases.append(("another issuer", foreign, "jwt-wrong-issuer"))
            let elsewhere = try await keys.token(Self.claims(now, ["aud": .text("other")]), kid: "ed-1")
            cases.append(("another audience", elsewhere, "jwt-wrong-audience"))
            let others = try await keys.token(Self.claims(now, ["aud": .texts(["a", "b"])]), kid: "rsa-1")
            cases.append(("other audiences", others, "jwt-wrong-audience"))
            let nobody = try await keys.token(Self.claims(now, ["sub": nil]), kid: "ec-1")
            cases.append(("no sub", nobody, "jwt-missing-subject"))
            let forever = try await keys.token(Self.claims(now, ["exp": nil]), kid: "ec-1")
            cases.append(("no exp", forever, "jwt-missing-expiry"))
            let adminOnly = try await keys.token(Self.claims(now, ["scope": .text("openid admin")]), kid: "ed-1")
            cases.append(("admin and unknown words only", adminOnly, "jwt-no-scope"))
            let sent = cases
            try await f.app().test(.live) { client in
                for c in sent {
                    let r = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(c.token), body: nil)
                    #expect(r.status == .unauthorized, "\(c.name)")
                    let type = problemType(r)
                    #expect(type == c.type, "\(c.name)")
                    let body = String(buffer: r.body)
                    #expect(!body.contains(c.token), "\(c.name)")
                    let challenge = r.headers[.wwwAuthenticate] ?? ""
                    #expect(challenge.hasPrefix("Bearer"), "\(c.name)")
                }
            }
            // The unknown kid came within a minute of the first reading: the set was not read again.
            let loads = await provider.loads
            #expect(loads == 1)
            let people = try await f.store.people()
            let made = people.filter { $0.subject != nil }
            #expect(made.isEmpty)
        }

        @Test("read and write come from the scope claim; admin never does")
        func scopes() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, _, _) = try await Self.server(keys.publicKeys(), people: .create, clock: clock)
            let reader = try await keys.token(Self.claims(clock.now, ["scope": .text("read")]), kid: "ec-1")
            let admin = try await keys.token(Self.claims(clock.now, ["scope": .text("read admin")]), kid: "ec-1")
            try await f.app().test(.live) { client in
                let upload = try await client.executeRequest(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(reader),
                    body: ByteBuffer(string: gpx(name: "a")))
                #expect(upload.status == .forbidden)
                #expect(problemType(upload) == "insufficient-scope")
                let metrics = try await client.executeRequest(uri: "/metrics", method: .get, headers: auth(admin), body: nil)
                #expect(metrics.status == .forbidden)
                let read = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(admin), body: nil)
                #expect(read.status == .ok)
            }
        }

        @Test("the scope claim's read:TYPE and write:TYPE are scopes narrowed to a type; other words and admin are ignored")
        func narrowedScopes() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, provider, _) = try await Self.server(keys.publicKeys(), people: .create, clock: clock)
            let claim = "openid read:workouts read:routes write:heartRate read:speed admin:routes admin"
            let token = try await keys.token(Self.claims(clock.now, ["scope": .text(claim)]), kid: "ec-1")
            let verified = try await provider.verify(token)
            let expected: Set<APIScope> = [.reading(.workouts), .reading(.routes), .writing(.quantity(.heartRate))]
            #expect(verified.scopes == expected)
            let unknownOnly = try await keys.token(
                Self.claims(clock.now, ["scope": .text("openid read:speed admin")]), kid: "ed-1")
            try await f.app().test(.live) { client in
                let workouts = try await client.executeRequest(
                    uri: "/v1/workouts", method: .get, headers: auth(token), body: nil)
                #expect(workouts.status == .ok)
                let routes = try await client.executeRequest(uri: "/v1/routes", method: .get, headers: auth(token), body: nil)
                #expect(routes.status == .ok)
                let zones = try await client.executeRequest(
                    uri: "/v1/zones/heartRate", method: .get, headers: auth(token), body: nil)
                #expect(zones.status == .forbidden)
                #expect(problemType(zones) == "insufficient-scope")
                let upload = try await client.executeRequest(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "a")))
                #expect(upload.status == .forbidden)
                let refused = try await client.executeRequest(
                    uri: "/v1/workouts", method: .get, headers: auth(unknownOnly), body: nil)
                #expect(refused.status == .unauthorized)
                #expect(problemType(refused) == "jwt-no-scope")
            }
        }

        @Test(
            "with --jwt-people refuse, an unknown subject is 401 unknown-person and nobody is made; a person added with the subject is accepted"
        )
        func refusesUnknownPeople() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, _, _) = try await Self.server(keys.publicKeys(), people: .refuse, clock: clock)
            let token = try await keys.token(Self.claims(clock.now), kid: "rsa-1")
            let subject = ExternalSubject(issuer: Self.issuer, subject: "user-1")
            let store = f.store
            try await f.app().test(.live) { client in
                let refused = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(token), body: nil)
                #expect(refused.status == .unauthorized)
                #expect(problemType(refused) == "unknown-person")
                let nobody = try await store.person(subject: subject)
                #expect(nobody == nil)
                try await store.addPerson(Person(name: "Bo", subject: subject))
                let accepted = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(token), body: nil)
                #expect(accepted.status == .ok)
            }
            let people = try await f.store.people()
            let theirs = people.filter { $0.subject == subject }
            #expect(theirs.map(\.name) == ["Bo"])
        }

        @Test("RouteKit's own tokens still work beside the provider's; a stream ticket is refused to a provider's token")
        func beside() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, _, _) = try await Self.server(keys.publicKeys(), people: .create, clock: clock)
            let own = try await f.token(scopes: [.read])
            let jwt = try await keys.token(Self.claims(clock.now), kid: "ed-1")
            try await f.app().test(.live) { client in
                let r = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth(own), body: nil)
                #expect(r.status == .ok)
                let wrong = try await client.executeRequest(uri: "/v1/workouts", method: .get, headers: auth("rk_nonsense"), body: nil)
                #expect(wrong.status == .unauthorized)
                #expect(problemType(wrong) == "unauthenticated")
                let ticket = try await client.executeRequest(uri: "/v1/stream-tickets", method: .post, headers: auth(jwt), body: nil)
                #expect(ticket.status == .forbidden)
                #expect(problemType(ticket) == "ticket-unavailable")
                let ownTicket = try await client.executeRequest(uri: "/v1/stream-tickets", method: .post, headers: auth(own), body: nil)
                #expect(ownTicket.status == .created)
            }
        }

        @Test(
            "an unknown kid reads the key set again once (a key added to the file is accepted), not again within a minute; a failed reading keeps the keys"
        )
        func reloadsOnUnknownKid() async throws {
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            let (f, provider, path) = try await Self.server([keys.rsaJWK()], people: .create, clock: clock)
            try Self.write([keys.rsaJWK(), keys.ecJWK()], to: path)
            try await f.app().test(.live) { client in
                /// The status of a request with a token signed under `kid`, and its problem's type.
                func status(kid: String) async throws -> (HTTPResponse.Status, String?) {
                    let token = try await keys.token(Self.claims(clock.now), kid: kid)
                    let r = try await client.executeRequest(
                        uri: "/v1/workouts", method: .get, headers: auth(token), body: nil)
                    return (r.status, r.status == .ok ? nil : problemType(r))
                }
                // Read at start: a new key within the minute is not looked for.
                let early = try await status(kid: "ec-1")
                #expect(early.1 == "jwt-unknown-key")
                var loads = await provider.loads
                #expect(loads == 1)

                clock.advance(61)
                let reloaded = try await status(kid: "ec-1")
                #expect(reloaded.0 == .ok)
                loads = await provider.loads
                #expect(loads == 2)

                try Self.write([keys.rsaJWK(), keys.ecJWK(), keys.edJWK()], to: path)
                clock.advance(10)
                let tooSoon = try await status(kid: "ed-1")
                #expect(tooSoon.1 == "jwt-unknown-key")
                loads = await provider.loads
                #expect(loads == 2)

                clock.advance(51)
                let later = try await status(kid: "ed-1")
                #expect(later.0 == .ok)
                loads = await provider.loads
                #expect(loads == 3)

                // A set that cannot be read: the reading fails, and the keys read before still work.
                try Data("not a key set".utf8).write(to: URL(fileURLWithPath: path))
                clock.advance(61)
                let gone = try await status(kid: "another-1")
                #expect(gone.1 == "jwt-unknown-key")
                loads = await provider.loads
                #expect(loads == 4)
                let kept = try await status(kid: "ed-1")
                #expect(kept.0 == .ok)
                let rsa = try await status(kid: "rsa-1")
                #expect(rsa.0 == .ok)
            }
        }

        @Test("a key set over https, over http only on this machine, or a file; a set without a usable key is refused")
        func keySets() async throws {
            let https = try IdentityProviderSettings.KeySet("https://id.example.org/.well-known/jwks.json")
            let url = try #require(URL(string: "https://id.example.org/.well-known/jwks.json"))
            #expect(https == .url(url))
            let local = try IdentityProviderSettings.KeySet("http://127.0.0.1:9000/jwks")
            #expect(local.description == "http://127.0.0.1:9000/jwks")
            #expect(throws: RouteKitError.self) { try IdentityProviderSettings.KeySet("http://id.example.org/jwks") }
            #expect(throws: RouteKitError.self) { try IdentityProviderSettings.KeySet("ftp://id.example.org/jwks") }
            let file = try IdentityProviderSettings.KeySet("/etc/routekit/jwks.json")
            #expect(file == .file("/etc/routekit/jwks.json"))

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-jwks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let missing = IdentityProvider(
                settings: IdentityProviderSettings(
                    keys: .file(folder.path + "/none.json"), issuer: Self.issuer, audience: Self.audience))
            await #expect(throws: RouteKitError.self) { try await missing.load() }
            // Only keys RouteKit does not verify with: an HMAC secret, an encryption key, a P-384 key.
            let keys = try await TestKeys()
            var encryption = try keys.rsaJWK()
            encryption["use"] = "enc"
            let p384 = Array(P384.Signing.PrivateKey().publicKey.x963Representation)
            let unusable: [[String: String]] = [
                ["kty": "oct", "kid": "h", "k": Base64URL.encode(Array("secret".utf8))], encryption,
                [
                    "kty": "EC", "crv": "P-384", "kid": "p384", "x": Base64URL.encode(p384[1..<49]),
                    "y": Base64URL.encode(p384[49..<97]),
                ],
            ]
            let path = folder.path + "/unusable.json"
            try Self.write(unusable, to: path)
            let useless = IdentityProvider(
                settings: IdentityProviderSettings(keys: .file(path), issuer: Self.issuer, audience: Self.audience))
            do {
                try await useless.load()
                Issue.record("a key set without a usable key was read")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("no key RouteKit can use"))
            }
        }

        @Test("a key set URL is fetched without following redirects and within 1 MiB")
        func keySetURL() async throws {
            let keys = try await TestKeys()
            let published = try keys.publicKeys()
            let set = try JSONSerialization.data(withJSONObject: ["keys": published] as [String: Any])
            let bytes = [UInt8](set)
            let router = Router()
            router.get("/jwks") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/jwk-set+json"],
                    body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
            router.get("/moved") { _, _ in Response(status: .found, headers: [.location: "/jwks"]) }
            router.get("/huge") { _, _ in
                Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: " "), count: 2 << 20)))
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                let port = try #require(client.port)
                func provider(_ path: String) throws -> IdentityProvider {
                    IdentityProvider(
                        settings: IdentityProviderSettings(
                            keys: try IdentityProviderSettings.KeySet("http://127.0.0.1:\(port)\(path)"),
                            issuer: Self.issuer, audience: Self.audience))
                }
                let good = try provider("/jwks")
                try await good.load()
                let token = try await keys.token(Self.claims(Date()), kid: "ed-1")
                let verified = try await good.verify(token)
                let expected = ExternalSubject(issuer: Self.issuer, subject: "user-1")
                #expect(verified.subject == expected)
                #expect(verified.scopes == [.read, .write])
                #expect(verified.client == "phone-app")
                let moved = try provider("/moved")
                do throws(RouteKitError) {
                    try await moved.load()
                    Issue.record("a redirect was followed")
                } catch {
                    #expect(error.code == .unavailable)
                    #expect(error.message.contains("302"))
                }
                let huge = try provider("/huge")
                do throws(RouteKitError) {
                    try await huge.load()
                    Issue.record("a 2 MiB key set was read")
                } catch {
                    #expect(error.message.contains("1 MiB"))
                }
            }
        }

        @Test(
            "routekit serve --jwks --issuer --audience --jwt-people: checked at start (78, 64), and a child serve answers a token of the key set file"
        )
        func serveOptions() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-jwt-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keys = try await TestKeys()
            let jwks = folder.appendingPathComponent("jwks.json").path
            try Self.write(keys.publicKeys(), to: jwks)
            let store = folder.appendingPathComponent("store.sqlite").path
            let unset = ["ROUTEKIT_JWKS": "", "ROUTEKIT_ISSUER": "", "ROUTEKIT_AUDIENCE": "", "ROUTEKIT_JWT_PEOPLE": ""]
            let trust = ["--issuer", Self.issuer, "--audience", Self.audience]

            let printed = try runChildProcess(
                binary, ["serve", "--print-config", "--store", store, "--jwks", jwks] + trust, environment: unset)
            #expect(printed.status == 0, "\(printed.errorOutput)")
            #expect(printed.output.contains("jwks = \(jwks) (--jwks)"), "\(printed.output)")
            #expect(printed.output.contains("jwt-people = refuse (default)"), "\(printed.output)")
            let alone = try runChildProcess(
                binary, ["serve", "--print-config", "--store", store, "--jwks", jwks], environment: unset)
            #expect(alone.status == 78)
            #expect(alone.errorOutput.contains("jwks needs issuer and audience"), "\(alone.errorOutput)")
            var plainHTTP = unset
            plainHTTP["ROUTEKIT_JWKS"] = "http://id.example.org/jwks"
            let cleartext = try runChildProcess(
                binary, ["serve", "--print-config", "--store", store] + trust, environment: plainHTTP)
            #expect(cleartext.status == 78)
            #expect(cleartext.errorOutput.contains("must be https"), "\(cleartext.errorOutput)")
            let maybe = try runChildProcess(binary, ["serve", "--store", store, "--jwt-people", "maybe"], environment: unset)
            #expect(maybe.status == 64)
            #expect(maybe.errorOutput.contains("--jwt-people must be create or refuse"), "\(maybe.errorOutput)")
            let missing = folder.appendingPathComponent("none.json").path
            let noFile = try runChildProcess(
                binary, ["serve", "--store", store, "--port", "0", "--jwks", missing] + trust, environment: unset)
            #expect(noFile.status == 78)
            #expect(noFile.errorOutput.contains("no key set file"), "\(noFile.errorOutput)")

            let log = folder.appendingPathComponent("serve.log")
            let (process, port) = try await startServe(
                binary, store: store, log: log, extra: ["--jwks", jwks] + trust + ["--jwt-people", "create"])
            defer { if process.isRunning { process.terminate() } }
            let token = try await keys.token(Self.claims(Date()), kid: "ec-1")
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/workouts")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let answer = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(answer.status == .ok)
            let expired = try await keys.token(Self.claims(Date().addingTimeInterval(-3600)), kid: "rsa-1")
            var late = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/workouts")
            late.headers.add(name: "Authorization", value: "Bearer \(expired)")
            let refused = try await HTTPClient.shared.execute(late, timeout: .seconds(30))
            #expect(refused.status == .unauthorized)
            let body = String(buffer: try await refused.body.collect(upTo: 1 << 16))
            #expect(body.contains("urn:routekit:problem:jwt-expired"), "\(body)")

            process.terminate()  // SIGTERM
            for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            #expect(process.terminationStatus == 0)
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(!text.contains(token))
            #expect(!text.contains(expired))
        }

        @Test("the request's token is the subject's: the same id and secret hash every time, another subject's differ")
        func tokenPerSubject() throws {
            let expires = Date().addingTimeInterval(600)
            let ana = VerifiedIdentity(
                subject: ExternalSubject(issuer: Self.issuer, subject: "ana"), scopes: [.read], name: "Ana",
                client: "phone-app", expires: expires)
            var bo = ana
            bo.subject = ExternalSubject(issuer: Self.issuer, subject: "bo")
            let person = PersonID(UUID())
            let first = IdentityTokens.apiToken(for: ana, person: person, now: Date())
            let again = IdentityTokens.apiToken(for: ana, person: person, now: Date().addingTimeInterval(5))
            let other = IdentityTokens.apiToken(for: bo, person: person, now: Date())
            #expect(first.id == again.id)
            #expect(first.secretHash == again.secretHash)
            #expect(first.id != other.id)
            #expect(first.secretHash != other.secretHash)
            #expect(first.person == person)
            #expect(first.source.name == "phone-app")
            #expect(first.scopes == [.read])
            #expect(first.expires == expires)
            var anonymous = ana
            anonymous.client = nil
            let fallback = IdentityTokens.apiToken(for: anonymous, person: person, now: Date())
            #expect(fallback.source.name == "identity-provider")
        }
    }
#endif
