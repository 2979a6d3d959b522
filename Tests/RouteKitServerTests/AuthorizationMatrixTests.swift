#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import RouteKitTesting
    import Testing
    import ZIPFoundation

    /// Issue 28's authorization matrix: every operation of the OpenAPI document (read from the document the server
    /// serves, so an operation added without a row fails), and the `HEAD` of every `GET`, asked by every kind of caller
    /// about person A's objects, and by person B about A's objects and about missing ones. The callers hold RouteKit's
    /// tokens, an identity provider's JWTs (the server trusts a key set file, as `serve --jwks` does) and stream tickets.
    @Suite("routekit serve: the authorization matrix (caller × operation × own, another person's or a missing object)")
    struct AuthorizationMatrixTests {
        /// Who asks, in the order every row asks them. A caller that deletes, finishes or revokes a row's new object
        /// uses it up: the callers after it get another.
        enum Caller: String, CaseIterable, Sendable {
            case noToken = "no token"
            case malformed = "a malformed token"
            case unknown = "an unknown rk_ token"
            case erased = "an erased person's token"
            case expiredJWT = "A's expired JWT"
            case foreignJWT = "A's JWT signed by a key not in the key set"
            case admin = "an admin token"
            case reader = "A's read token"
            case narrowed = "A's read:workouts token"
            case narrowedJWT = "A's JWT with scope read:workouts"
            /// No `Authorization` header: a new ticket of A's read-and-write token in the query.
            case ticket = "a stream ticket of A's read+write token"
            case other = "B's read+write token"
            case otherJWT = "B's JWT with scope read write"
            case writerJWT = "A's JWT with scope read write"
            case writer = "A's read+write token"

            /// The API token whose answers an identity provider's JWT gets (the same person, the same scopes); the
            /// caller itself for the others.
            var acting: Caller {
                switch self {
                case .narrowedJWT: return .narrowed
                case .otherJWT: return .other
                case .writerJWT: return .writer
                default: return self
                }
            }
        }

        /// What fills a path (or query) parameter of a row.
        enum Param: Sendable {
            /// One of person A's objects, made before the rows run.
            case own(Kind)
            /// A new object of person A's, made for the row (one its request deletes, finishes or revokes).
            case fresh(Kind)
            /// The same text for every request: a quantity type, a tile's coordinates, a file's name.
            case fixed(String)

            enum Kind: Sendable {
                case person, workout, route, score, builder, webhook, job, token
            }

            /// Whether it names an object (B then gets the 404 of a missing one).
            var isObject: Bool {
                if case .fixed = self { return false }
                return true
            }

            /// Whether it is a new object, which a request that succeeds uses up.
            var isFresh: Bool {
                if case .fresh = self { return true }
                return false
            }
        }

        /// Who may do what a row asks.
        enum Access: Sendable {
            /// No token needed: this status for every caller with no token or a good one (a token sent is still
            /// checked: a bad one is 401).
            case anyone(Int)
            /// The admin API: this status for an admin token, 403 for a person's.
            case admin(Int)
            /// A person's data: these statuses for A's tokens in `allowed` (those with the scope it needs) on A's
            /// objects, 403 for A's other tokens and for an admin token. B gets 404 where the path names one of A's
            /// objects, else these statuses about B's own.
            case personal(Set<Int>, allowed: Set<Caller>)

            /// ``personal(_:allowed:)`` with one status.
            static func data(_ status: Int, _ allowed: Set<Caller>) -> Access { .personal([status], allowed: allowed) }
        }

        /// One operation of the document: how to ask it, and what each caller gets.
        struct Row: Sendable {
            var method: HTTPRequest.Method
            /// As the OpenAPI document writes it (`/v1/workouts/{id}`).
            var path: String
            var access: Access
            var params: [String: Param]
            /// Appended to the path; `{name}` is filled from ``params`` there too.
            var query: String
            var body: String?
            /// Statuses that differ from ``access``'s for one of A's tokens, for an admin token (webhooks: an admin's
            /// are admin-wide, and a person's are not found for them), or for an identity provider's JWT (no stream
            /// ticket for one).
            var overrides: [Caller: Int]

            init(
                _ method: HTTPRequest.Method, _ path: String, _ access: Access, _ params: [String: Param] = [:],
                query: String = "", body: String? = nil, overrides: [Caller: Int] = [:]
            ) {
                self.method = method
                self.path = path
                self.access = access
                self.params = params
                self.query = query
                self.body = body
                self.overrides = overrides
            }

            /// `METHOD /path`, as ``AuthorizationMatrixTests/operations(_:)`` lists the document's operations.
            var key: String { "\(method.rawValue) \(path)" }

            /// Whether the path names one of A's objects.
            var namesObject: Bool { params.values.contains { $0.isObject } }

            /// Whether a request that succeeds uses up the row's object (deletes, finishes or revokes it).
            var usesUp: Bool { params.values.contains { $0.isFresh } }

            /// The request's URI with `values` in place of the parameters.
            func uri(_ values: [String: String]) -> String {
                var text = path + query
                for (name, value) in values { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
                return text
            }

            /// The statuses `caller` may get (about A's objects, for A's tokens and B's).
            func expected(_ caller: Caller) -> Set<Int> {
                if let status = overrides[caller] { return [status] }
                switch caller {
                case .malformed, .unknown, .erased, .expiredJWT, .foreignJWT: return [401]
                case .narrowedJWT, .otherJWT, .writerJWT: return expected(caller.acting)
                // The change feed takes a ticket, as its token would be taken; any other path refuses a request
                // that carries one (400: a ticket is good for GET /v1/changes only).
                case .ticket: return path == "/v1/changes" ? expected(.writer) : [400]
                default: break
                }
                switch access {
                case .anyone(let status): return [status]
                case .admin(let status):
                    if caller == .noToken { return [401] }
                    return caller == .admin ? [status] : [403]
                case .personal(let statuses, let allowed):
                    switch caller {
                    case .noToken: return [401]
                    case .admin: return [403]
                    case .other: return namesObject ? [404] : statuses
                    default: return allowed.contains(caller) ? statuses : [403]
                    }
                }
            }
        }

        /// A's file (a run with heart rate); B's is another.
        static let fileA = PersonExportTests.heartRateGPX(name: "ana", hour: 6)
        static let fileB = PersonExportTests.heartRateGPX(name: "ben", hour: 7)
        static let zones = #"{"maximumHeartRate": 190, "restingHeartRate": 50}"#
        static let hook = #"{"url": "http://127.0.0.1:9/hook"}"#

        /// `read:workouts` (or any read scope), plain `read` (or the type's: routes, effort, heart rate), `write`.
        static let readers: Set<Caller> = [.reader, .narrowed, .writer]
        static let fullReaders: Set<Caller> = [.reader, .writer]
        static let writers: Set<Caller> = [.writer]
        static let workout: [String: Param] = ["id": .own(.workout)]
        static let route: [String: Param] = ["id": .own(.route)]
        static let builder: [String: Param] = ["id": .own(.builder)]
        static let webhook: [String: Param] = ["id": .own(.webhook)]
        static let heartRate: [String: Param] = ["quantity": .fixed("heartRate")]
        static let workoutHeartRate: [String: Param] = ["id": .own(.workout), "quantity": .fixed("heartRate")]
        static let person: [String: Param] = ["person": .own(.person)]
        static let job: [String: Param] = ["id": .own(.job), "person": .own(.person)]
        /// An identity provider's JWT gets no stream ticket: `403 ticket-unavailable`.
        static let noTicket: [Caller: Int] = [.narrowedJWT: 403, .otherJWT: 403, .writerJWT: 403]

        /// A row for every operation of the document, in its order.
        static let rows: [Row] = [
            Row(.get, "/", .anyone(200)),
            Row(.get, "/web/map.json", .anyone(200)),
            Row(.get, "/tiles/{z}/{x}/{y}", .anyone(200), ["z": .fixed("1"), "x": .fixed("0"), "y": .fixed("0")]),
            Row(.get, "/static/leaflet/{name}", .anyone(200), ["name": .fixed("leaflet.js")]),
            Row(.get, "/static/leaflet/images/{name}", .anyone(200), ["name": .fixed("marker-icon.png")]),
            Row(.get, "/healthz", .anyone(200)),
            Row(.head, "/healthz", .anyone(200)),
            Row(.get, "/readyz", .anyone(200)),
            Row(.get, "/metrics", .admin(200)),
            Row(.get, "/v1/openapi.yaml", .anyone(200)),
            Row(.post, "/v1/stream-tickets", .data(201, readers), overrides: noTicket),
            Row(.get, "/v1/changes", .data(200, readers)),
            // A's own file again: unchanged for A; new for B (whose store has nothing of A's).
            Row(.post, "/v1/uploads", .personal([200, 201], allowed: writers), query: "?name=a.gpx", body: fileA),
            Row(.get, "/v1/workouts", .data(200, readers)),
            Row(.get, "/v1/workouts/{id}", .data(200, readers), workout),
            Row(.delete, "/v1/workouts/{id}", .data(204, writers), ["id": .fresh(.workout)]),
            Row(.get, "/v1/workouts/{id}/stats", .data(200, readers), workout),
            Row(.get, "/v1/workouts/{id}/splits", .data(200, readers), workout, query: "?by=km"),
            Row(.get, "/v1/workouts/{id}/series", .data(200, readers), workout),
            // A token that may not read heart rate gets the 404 of a workout without the series.
            Row(
                .get, "/v1/workouts/{id}/series/{type}", .data(200, readers),
                ["id": .own(.workout), "type": .fixed("heartRate")], overrides: [.narrowed: 404]),
            Row(.get, "/v1/workouts/{id}/effort", .data(200, fullReaders), workout),
            Row(.post, "/v1/workouts/{id}/effort", .data(201, writers), workout, body: #"{"score": 6}"#),
            Row(
                .delete, "/v1/workouts/{id}/effort/{scoreID}", .data(204, writers),
                ["id": .own(.workout), "scoreID": .fresh(.score)]),
            Row(.get, "/v1/routes", .data(200, fullReaders)),
            Row(.get, "/v1/routes/{id}", .data(200, fullReaders), route),
            Row(.delete, "/v1/routes/{id}", .data(204, writers), ["id": .fresh(.route)]),
            Row(.get, "/v1/routes/{id}/locations", .data(200, fullReaders), route),
            Row(.get, "/v1/routes/{id}/export", .data(200, fullReaders), route),
            Row(.get, "/v1/routes/{id}/picture", .data(200, fullReaders), route, query: "?size=160x120"),
            Row(.get, "/v1/routes/{id}/profile", .data(200, fullReaders), route),
            Row(.get, "/v1/export", .data(200, readers)),
            Row(.get, "/v1/builders", .data(200, writers)),
            Row(.post, "/v1/builders", .data(201, writers)),
            Row(.get, "/v1/builders/{id}", .data(200, writers), builder),
            Row(.delete, "/v1/builders/{id}", .data(204, writers), ["id": .fresh(.builder)]),
            Row(
                .post, "/v1/builders/{id}/locations", .data(200, writers), builder, query: "?first=0",
                body: locationsJSON(from: 0, count: 5)),
            Row(
                .post, "/v1/builders/{id}/samples", .data(200, writers), builder, query: "?type=heartRate&first=0",
                body: samplesJSON(from: 0, count: 3)),
            Row(
                .post, "/v1/builders/{id}/events", .data(200, writers), builder, query: "?first=0",
                body: #"[{"kind": "lap", "start": "2024-05-01T08:00:00Z", "end": "2024-05-01T08:00:04Z"}]"#),
            // No power zones are known for A (heart rate only): a stream that never starts, and a status to check.
            Row(.get, "/v1/builders/{id}/zones", .data(409, writers), builder, query: "?type=power"),
            Row(
                .post, "/v1/builders/{id}/finish", .data(201, writers), ["id": .fresh(.builder)],
                body: #"{"activity": "running"}"#),
            Row(.get, "/v1/zones", .data(200, readers)),
            Row(.get, "/v1/zones/{quantity}", .data(200, fullReaders), heartRate),
            Row(.put, "/v1/zones/{quantity}", .data(200, writers), heartRate, body: zones),
            Row(.delete, "/v1/zones/{quantity}", .data(204, writers), heartRate),
            Row(.get, "/v1/workouts/{id}/zones", .data(200, readers), workout),
            Row(.get, "/v1/workouts/{id}/zones/{quantity}", .data(200, fullReaders), workoutHeartRate),
            Row(.put, "/v1/workouts/{id}/zones/{quantity}", .data(200, writers), workoutHeartRate, body: zones),
            Row(.delete, "/v1/workouts/{id}/zones/{quantity}", .data(204, writers), workoutHeartRate),
            Row(.post, "/v1/jobs", .admin(202), person, query: "?person={person}", body: #"{"routes": []}"#),
            Row(.get, "/v1/jobs/{id}", .admin(200), job, query: "?person={person}"),
            Row(.delete, "/v1/jobs/{id}", .admin(202), job, query: "?person={person}"),
            Row(.post, "/v1/webhooks", .data(201, writers), body: hook, overrides: [.admin: 201]),
            Row(.get, "/v1/webhooks", .data(200, fullReaders), overrides: [.admin: 200]),
            Row(.get, "/v1/webhooks/{id}", .data(200, fullReaders), webhook, overrides: [.admin: 404]),
            Row(.delete, "/v1/webhooks/{id}", .data(204, writers), ["id": .fresh(.webhook)], overrides: [.admin: 404]),
            Row(.post, "/v1/webhooks/{id}/rotate", .data(200, writers), webhook, overrides: [.admin: 404]),
            Row(.post, "/v1/webhooks/{id}/resume", .data(200, writers), webhook, overrides: [.admin: 404]),
            Row(.post, "/v1/people", .admin(201), body: #"{"name": "Dee"}"#),
            Row(.get, "/v1/people", .admin(200)),
            Row(.get, "/v1/people/{person}", .admin(200), person),
            Row(.delete, "/v1/people/{person}", .admin(204), ["person": .fresh(.person)]),
            Row(
                .post, "/v1/people/{person}/tokens", .admin(201), person,
                body: #"{"source": "phone", "scopes": ["read"]}"#),
            Row(.get, "/v1/people/{person}/tokens", .admin(200), person),
            Row(
                .delete, "/v1/people/{person}/tokens/{token}", .admin(204),
                ["person": .own(.person), "token": .fresh(.token)]),
        ]

        @Test(
            "every operation of the OpenAPI document and the HEAD of every GET: 401 without a good token or JWT, 403 for an admin token on data, for a person's on the admin API and without the scope, A's objects to A and A's JWTs, to B the 404 of a missing id, a stream ticket on the change feed only and once, never 500, never A's ids in B's answers"
        )
        func matrix() async throws {
            let folder = try PersonExportTests.folder("matrix")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            var f = try Self.fixture(in: folder)
            // An identity provider whose subjects ana and ben are A and B; it makes no one for another subject. Its
            // clock stands still: the JWTs stay good however long the rows take.
            let keys = try await TestKeys()
            let clock = MovingClock(Date())
            f.configuration.identityProvider = try await IdentityProviderTests.keySetProvider(
                keys.publicKeys(), in: folder, people: .refuse, clock: clock
            ).provider
            let issuer = IdentityProviderTests.issuer
            let a = try await personWithToken(f.store, "Ana", subject: ExternalSubject(issuer: issuer, subject: "ana"))
            let b = try await personWithToken(f.store, "Ben", subject: ExternalSubject(issuer: issuer, subject: "ben"))
            let erased = try await personWithToken(f.store, "Cy")
            #expect(try await f.store.erasePerson(id: erased.person))
            let never = TokenText.make(
                name: "never saved", person: a.person, source: try Source(name: "phone"), scopes: [.read, .write])
            let admin = try await f.adminToken()
            let reader = try await f.token(scopes: [.read], person: a.person)
            let narrowed = try await f.token(scopes: [.reading(.workouts)], person: a.person)
            // A ticket of A's read:workouts token that expired a minute ago.
            let narrowedID = try #require(TokenText.parse(narrowed)).id
            let narrowedToken = try #require(try await f.store.token(id: narrowedID))
            let expired = StreamTicket.make(for: narrowedToken, now: Date().addingTimeInterval(-2 * StreamTicket.lifetime))
            var headers: [Caller: HTTPFields] = [
                .malformed: [.authorization: "Bearer rk_not-a-token"], .unknown: auth(never.text),
                .erased: auth(erased.token), .admin: auth(admin), .reader: auth(reader), .narrowed: auth(narrowed),
                .other: auth(b.token), .writer: auth(a.token),
            ]
            let jwts = try await Self.identityTokens(keys, now: clock.now)
            for (caller, jwt) in jwts { headers[caller] = auth(jwt) }
            let callers = headers
            try await f.app().test(.router) { client in
                let document = try await client.execute(uri: "/v1/openapi.yaml", method: .get) {
                    String(buffer: $0.body)
                }
                Self.checkCoverage(Self.operations(document))
                let run = MatrixRun(client: client, headers: callers)
                let own = try await run.objects(of: a.person.description, file: Self.fileA, writer: .writer)
                let theirs = try await run.objects(of: b.person.description, file: Self.fileB, writer: .other)
                try await run.ask(Self.rows, own: own)
                try await run.tickets(own: own, theirs: theirs, expired: expired.text)
            }
        }

        /// The identity provider's JWTs of the matrix's callers, signed with `keys` at `now`: `sub` ana is A and ben
        /// is B, and the client (`azp`) is `phone`, the source of A's and B's tokens, so that their builders and
        /// workouts are the JWTs' too.
        static func identityTokens(_ keys: TestKeys, now: Date) async throws -> [Caller: String] {
            func claims(_ subject: String, _ scope: String, _ more: [String: TestClaim?] = [:]) -> TestClaims {
                var changes: [String: TestClaim?] = ["sub": .text(subject), "scope": .text(scope), "azp": .text("phone")]
                changes.merge(more) { _, new in new }
                return IdentityProviderTests.claims(now, changes)
            }
            // Past the minute of leeway.
            let late = now.timeIntervalSince1970 - 120
            var jwts: [Caller: String] = [:]
            jwts[.writerJWT] = try await keys.token(claims("ana", "read write"), kid: "ec-1")
            jwts[.narrowedJWT] = try await keys.token(claims("ana", "read:workouts"), kid: "ec-1")
            jwts[.otherJWT] = try await keys.token(claims("ben", "read write"), kid: "ec-1")
            jwts[.expiredJWT] = try await keys.token(claims("ana", "read write", ["exp": .number(late)]), kid: "ec-1")
            jwts[.foreignJWT] = try await TestKeys.forged(claims("ana", "read write"), kid: "ec-1")
            return jwts
        }

        /// A server with a basemap (a one-tile MBTiles archive), Leaflet's files, and webhooks allowed to 127.0.0.1
        /// (port 9: nothing listens, nothing is delivered).
        static func fixture(in folder: String) throws -> Fixture {
            let tiles = folder + "/one.mbtiles"
            try MBTilesArchive.create(
                path: tiles, metadata: ["name": "matrix", "format": "png", "minzoom": "1", "maxzoom": "1"],
                tiles: [(z: 1, x: 0, y: 0, data: TestPNG.tile(red: 90, green: 120, blue: 60))])
            var f = try tileFixture(.mbtiles(path: tiles)).0
            let leaflet = folder + "/leaflet"
            try FileManager.default.createDirectory(atPath: leaflet + "/images", withIntermediateDirectories: true)
            for name in ["leaflet.js", "leaflet.css", "images/marker-icon.png"] {
                #expect(FileManager.default.createFile(atPath: leaflet + "/" + name, contents: Data(name.utf8)))
            }
            f.configuration.leafletDirectory = leaflet
            f.configuration.webhooksAllowPrivate = true
            return f
        }

        /// `METHOD /path` of every operation under the document's `paths:` (a line scan: `  /path:`, then
        /// `    get:` and the other methods).
        static func operations(_ document: String) -> [String] {
            let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
            var inPaths = false
            var path: String?
            var out: [String] = []
            for line in document.split(separator: "\n") {
                if let first = line.first, first != " " {
                    inPaths = line == "paths:"
                    path = nil
                } else if inPaths, line.hasPrefix("  /"), line.hasSuffix(":") {
                    path = String(line.dropFirst(2).dropLast())
                } else if inPaths, let path, let method = methods.first(where: { line == "    " + $0 + ":" }) {
                    out.append(method.uppercased() + " " + path)
                }
            }
            return out
        }

        /// Every operation of the document has a row, and every row an operation.
        static func checkCoverage(_ operations: [String]) {
            #expect(operations.count >= 60, "the scan of the document found \(operations.count) operations")
            let keys = rows.map(\.key)
            #expect(Set(keys).count == keys.count, "a row is listed twice")
            for operation in operations where !keys.contains(operation) {
                Issue.record("no row for \(operation)")
            }
            for key in keys where !operations.contains(key) {
                Issue.record("a row for \(key), which the OpenAPI document does not list")
            }
        }

        /// The workout and route an upload's answer names.
        static func uploaded(_ r: TestResponse) -> (workout: String, route: String) {
            let results = json(r.body)["results"] as? [[String: Any]] ?? []
            let first = (results.first?["routes"] as? [[String: Any]])?.first
            return (first?["workout"] as? String ?? "", first?["route"] as? String ?? "")
        }

        /// An answer's text, lowercased; an archive's is its entries' names and contents.
        static func text(_ r: TestResponse) throws -> String {
            let data = Data(r.body.readableBytesView)
            guard r.headers[.contentType] == "application/zip" else {
                return String(decoding: data, as: UTF8.self).lowercased()
            }
            let archive = try Archive(data: data, accessMode: .read)
            var text = ""
            for entry in archive {
                text += entry.path + "\n"
                text += String(decoding: try PersonExportTests.contents(archive, entry.path), as: UTF8.self) + "\n"
            }
            return text.lowercased()
        }

        /// An answer's text, lowercased, with `ids` taken out.
        static func normalized(_ r: TestResponse, _ ids: [String]) -> String {
            var text = String(buffer: r.body).lowercased()
            for id in ids { text = text.replacingOccurrences(of: id.lowercased(), with: "<id>") }
            return text
        }

        /// The matrix's requests through one server's router.
        struct MatrixRun: Sendable {
            let client: any TestClientProtocol
            /// Each caller's `Authorization` header (none for ``Caller/noToken`` and ``Caller/ticket``).
            let headers: [Caller: HTTPFields]

            /// Sends a request as `caller`; a body is a GPX file when it starts with `<`, else JSON. As
            /// ``Caller/ticket``, a new ticket goes in the query.
            func send(_ method: HTTPRequest.Method, _ uri: String, as caller: Caller, body: String? = nil)
                async throws -> TestResponse
            {
                var uri = uri
                if caller == .ticket {
                    let ticket = try await make(.post, "/v1/stream-tickets", as: .writer, key: "ticket", status: .created)
                    uri += (uri.contains("?") ? "&" : "?") + "ticket=" + ticket
                }
                var fields = headers[caller] ?? [:]
                if let body { fields[.contentType] = body.hasPrefix("<") ? "application/gpx+xml" : "application/json" }
                return try await client.execute(
                    uri: uri, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) })
            }

            /// The string `key` of the answer to a request that makes something, which must answer `status`.
            func make(
                _ method: HTTPRequest.Method, _ uri: String, as caller: Caller, body: String? = nil, key: String,
                status: HTTPResponse.Status
            ) async throws -> String {
                let r = try await send(method, uri, as: caller, body: body)
                let id = json(r.body)[key] as? String ?? ""
                try #require(r.status == status && !id.isEmpty, "setting up: \(uri) answered \(r.status.code)")
                return id
            }

            /// A new object of `kind` of `person`, whose read-and-write token is `writer`'s (a score is related to
            /// `workout`).
            func object(_ kind: Param.Kind, of person: String, writer: Caller, workout: String) async throws -> String {
                switch kind {
                case .person:
                    return try await make(
                        .post, "/v1/people", as: .admin, body: #"{"name": "Fresh"}"#, key: "id", status: .created)
                case .token:
                    return try await make(
                        .post, "/v1/people/\(person)/tokens", as: .admin, body: #"{"source": "phone"}"#, key: "id",
                        status: .created)
                case .job:
                    return try await make(
                        .post, "/v1/jobs?person=\(person)", as: .admin, body: #"{"routes": []}"#, key: "id",
                        status: .accepted)
                case .workout, .route:
                    // A name of its own: a track imports once, and a new one is made each time a row uses one up.
                    let file = gpx(name: "fresh \(kind) \(UUID().uuidString)", hour: kind == .workout ? 2 : 3)
                    let r = try await send(.post, "/v1/uploads?name=fresh.gpx", as: writer, body: file)
                    let made = AuthorizationMatrixTests.uploaded(r)
                    let id = kind == .workout ? made.workout : made.route
                    try #require(r.status == .created && !id.isEmpty, "setting up: an upload answered \(r.status.code)")
                    return id
                case .score:
                    return try await make(
                        .post, "/v1/workouts/\(workout)/effort", as: writer, body: #"{"score": 4}"#, key: "uuid",
                        status: .created)
                case .builder:
                    let id = try await make(.post, "/v1/builders", as: writer, key: "id", status: .created)
                    _ = try await make(
                        .post, "/v1/builders/\(id)/locations?first=0", as: writer,
                        body: locationsJSON(from: 0, count: 5), key: "id", status: .ok)
                    return id
                case .webhook:
                    return try await make(
                        .post, "/v1/webhooks", as: writer, body: AuthorizationMatrixTests.hook, key: "id",
                        status: .created)
                }
            }

            /// `person`'s objects, made through the API: a workout with its route from `file`, an effort score, a
            /// route builder holding locations, a webhook subscription, a job, a token, and heart-rate zone settings.
            func objects(of person: String, file: String, writer: Caller) async throws -> [Param.Kind: String] {
                let r = try await send(.post, "/v1/uploads?name=own.gpx", as: writer, body: file)
                let (workout, route) = AuthorizationMatrixTests.uploaded(r)
                try #require(r.status == .created && !route.isEmpty, "setting up: the upload answered \(r.status.code)")
                var out: [Param.Kind: String] = [.person: person, .workout: workout, .route: route]
                for kind in [Param.Kind.score, .builder, .webhook, .job, .token] {
                    out[kind] = try await object(kind, of: person, writer: writer, workout: workout)
                }
                let zones = try await send(.put, "/v1/zones/heartRate", as: writer, body: AuthorizationMatrixTests.zones)
                try #require(zones.status == .ok, "setting up: the zone settings answered \(zones.status.code)")
                return out
            }

            /// Asks every row as every caller, about A's objects (`own`, and new ones where a row needs them), and
            /// the `HEAD` of every `GET` row.
            func ask(_ rows: [Row], own: [Param.Kind: String]) async throws {
                // A's ids, which B's answers never hold (but for those B sent).
                var secrets = Set(own.values)
                for row in rows {
                    var values = try await fill(row, own: own, secrets: &secrets)
                    var spent = false
                    for caller in Caller.allCases {
                        // A caller before deleted, finished or revoked the row's new object: another one.
                        if spent { values = try await fill(row, own: own, secrets: &secrets) }
                        let r = try await send(row.method, row.uri(values), as: caller, body: row.body)
                        let expected = row.expected(caller)
                        if !expected.contains(Int(r.status.code)) {
                            let type = json(r.body)["type"] as? String ?? ""
                            Issue.record(
                                "\(row.key) as \(caller.rawValue): got \(r.status.code) \(type), expected \(expected.sorted())"
                            )
                        }
                        if caller.acting == .other {
                            try await checkOther(row, r, as: caller, values: values, secrets: secrets)
                        }
                        if row.method == .get { try await checkHead(row, r, as: caller, values: values) }
                        spent = row.usesUp && (200..<300).contains(Int(r.status.code))
                    }
                }
            }

            /// The values of `row`'s parameters: A's objects (`own`), fixed texts, and new objects of A's, whose ids
            /// join `secrets`.
            func fill(_ row: Row, own: [Param.Kind: String], secrets: inout Set<String>) async throws -> [String: String] {
                var values: [String: String] = [:]
                for (name, param) in row.params {
                    switch param {
                    case .own(let kind): values[name] = own[kind] ?? ""
                    case .fixed(let text): values[name] = text
                    case .fresh(let kind):
                        let id = try await object(
                            kind, of: own[.person] ?? "", writer: .writer, workout: own[.workout] ?? "")
                        secrets.insert(id)
                        values[name] = id
                    }
                }
                return values
            }

            /// The `HEAD` of a `GET` row as `caller`, whose `GET` got `answer`: the same status, and no body.
            func checkHead(_ row: Row, _ answer: TestResponse, as caller: Caller, values: [String: String]) async throws {
                let r = try await send(.head, row.uri(values), as: caller)
                // A ticket is good for GET /v1/changes only: a HEAD with one is refused (and does not spend it).
                let expected = caller == .ticket ? HTTPResponse.Status.badRequest : answer.status
                if r.status != expected {
                    Issue.record("HEAD \(row.path) as \(caller.rawValue): got \(r.status.code), expected \(expected.code)")
                }
                if r.body.readableBytes > 0 {
                    Issue.record("HEAD \(row.path) as \(caller.rawValue): a body of \(r.body.readableBytes) bytes")
                }
            }

            /// B's answer `r` (as `caller`, a token or JWT of B's) about A's objects (`values`): none of A's ids it did
            /// not send; where the path names an object, the 404 of a missing one, byte for byte once the ids are
            /// taken out.
            func checkOther(
                _ row: Row, _ r: TestResponse, as caller: Caller, values: [String: String], secrets: Set<String>
            ) async throws {
                let sent = (row.uri(values) + (row.body ?? "")).lowercased()
                let text = try AuthorizationMatrixTests.text(r)
                for id in secrets.sorted() where !sent.contains(id) && text.contains(id) {
                    Issue.record("\(row.key) as \(caller.rawValue): the answer holds A's \(id)")
                }
                guard case .personal = row.access, row.namesObject else { return }
                let named = row.params.filter { $0.value.isObject }.map { $0.key }
                var missing = values
                for name in named { missing[name] = UUID().uuidString.lowercased() }
                let m = try await send(row.method, row.uri(missing), as: caller, body: row.body)
                if m.status != .notFound {
                    Issue.record("\(row.key) as \(caller.rawValue) on a missing id: got \(m.status.code), expected 404")
                }
                let answered = AuthorizationMatrixTests.normalized(r, named.compactMap { values[$0] })
                let absent = AuthorizationMatrixTests.normalized(m, named.compactMap { missing[$0] })
                if answered != absent {
                    Issue.record(
                        "\(row.key) as \(caller.rawValue): the answer about A's object \(answered) is not a missing one's \(absent)"
                    )
                }
            }

            /// Stream tickets beyond the rows (where ``Caller/ticket`` asks with a new one each time): a ticket is
            /// good once, not past its expiry (`expired`, of A's read:workouts token) nor after its token's revocation,
            /// and none is made for a JWT. Whoever holds a ticket reads what its token may (A's read:workouts: A's
            /// workouts, not A's routes or scores, nothing of B's), and one sent beside B's token adds nothing of A's.
            func tickets(own: [Param.Kind: String], theirs: [Param.Kind: String], expired: String) async throws {
                let feed = "/v1/changes?types=all&ticket="
                let ticket = try await make(.post, "/v1/stream-tickets", as: .narrowed, key: "ticket", status: .created)
                let first = try await send(.get, feed + ticket, as: .noToken)
                let read = try AuthorizationMatrixTests.text(first)
                let workout = own[.workout]?.lowercased() ?? "?"
                #expect(first.status == .ok && read.contains(workout), "a read:workouts ticket: got \(first.status.code)")
                for id in [own[.route], own[.score], theirs[.workout], theirs[.route]].compactMap({ $0?.lowercased() })
                where read.contains(id) {
                    Issue.record("a read:workouts ticket of A's: the changes hold \(id)")
                }
                let again = try await send(.get, feed + ticket, as: .noToken)
                refused(again, "a ticket used again")
                let late = try await send(.get, feed + expired, as: .noToken)
                refused(late, "a ticket past its expiry")

                // A ticket beside B's token: B's changes, none of A's.
                let beside = try await make(.post, "/v1/stream-tickets", as: .writer, key: "ticket", status: .created)
                let mixed = try await send(.get, feed + beside, as: .other)
                let seen = try AuthorizationMatrixTests.text(mixed)
                let route = theirs[.route]?.lowercased() ?? "?"
                #expect(mixed.status == .ok && seen.contains(route), "B's token beside A's ticket: got \(mixed.status.code)")
                for id in own.values.sorted() where seen.contains(id.lowercased()) {
                    Issue.record("B's token beside A's ticket: the changes hold A's \(id)")
                }

                for caller in [Caller.narrowedJWT, .otherJWT, .writerJWT] {
                    let r = try await send(.post, "/v1/stream-tickets", as: caller)
                    let type = problemType(r) ?? ""
                    #expect(
                        r.status == .forbidden && type == "ticket-unavailable",
                        "a ticket asked with \(caller.rawValue): got \(r.status.code) \(type)")
                }

                // A ticket of a token revoked since.
                let person = own[.person] ?? ""
                let token = try await make(
                    .post, "/v1/people/\(person)/tokens", as: .admin, body: #"{"source": "phone", "scopes": ["read"]}"#,
                    key: "token", status: .created)
                let asked = try await client.execute(uri: "/v1/stream-tickets", method: .post, headers: auth(token))
                let voided = json(asked.body)["ticket"] as? String ?? ""
                try #require(asked.status == .created && !voided.isEmpty, "setting up: a ticket answered \(asked.status.code)")
                let id = TokenText.parse(token)?.id.uuidString.lowercased() ?? ""
                let revoked = try await send(.delete, "/v1/people/\(person)/tokens/\(id)", as: .admin)
                try #require(revoked.status == .noContent, "setting up: the revocation answered \(revoked.status.code)")
                let after = try await send(.get, feed + voided, as: .noToken)
                refused(after, "a ticket of a revoked token")
            }

            /// `r` refused a stream ticket (`what`): `401 ticket-invalid`.
            func refused(_ r: TestResponse, _ what: String) {
                let type = problemType(r) ?? ""
                #expect(r.status == .unauthorized && type == "ticket-invalid", "\(what): got \(r.status.code) \(type)")
            }
        }
    }
#endif
