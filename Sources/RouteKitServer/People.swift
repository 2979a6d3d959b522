#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import RouteKit
    import RouteKitApplication

    /// The store as each token sees it. Route groups hold this, never a store: the only way to a store is through a
    /// token, so a handler cannot read or write outside its token's person by forgetting to scope a call.
    struct PersonStores: Sendable {
        /// The store opened by the server (the default person's view); its people and tokens are everyone's.
        let base: any RouteStore & TokenStore & PeopleStore

        /// The store seen as `token`'s person, and through its scopes: a token narrowed to some types of object
        /// (without plain `read`) gets the view narrowed to its grant (RouteKit's `GrantedStore`), where series of the
        /// quantity types it may not read are absent wherever they are read (series, statistics, pictures, exports,
        /// archives) and workouts come without their recorded totals. The object types (workouts, routes, effort
        /// scores) are the handlers' checks (`require(.reading(.routes))`).
        /// - Throws: `403 admin-token` for an admin token (it manages people and tokens, and reads no one's data).
        func store(for token: APIToken) throws(Problem) -> any RouteStore {
            guard let person = token.person else { throw Problem.adminTokenHasNoData }
            let view: any RouteStore = base.forPerson(person)
            let grant = token.grant
            if grant.readsEverything { return view }
            return GrantedStore(view, grant: grant)
        }

        /// The store `token` imports files through: ``store(for:)``'s view, whose writes are narrowed to what the
        /// token may write too (RouteKit's `GrantedStore` with `narrowingWrites`): the samples and recorded totals of
        /// the quantity types it may not write (heart rate without `write:heartRate`) are left out of what is stored,
        /// and the store tells which it left out of each workout.
        /// - Throws: `403 admin-token` for an admin token.
        func importStore(for token: APIToken) throws(Problem) -> GrantedStore {
            guard let person = token.person else { throw Problem.adminTokenHasNoData }
            return GrantedStore(base.forPerson(person), grant: token.grant, narrowingWrites: true)
        }

        /// The store seen as `person` (for work a request queued: figures, jobs).
        func store(of person: PersonID) -> any RouteStore { base.forPerson(person) }
    }

    extension Problem {
        /// An admin token asked for a person's data.
        static let adminTokenHasNoData = Problem(
            status: .forbidden, type: "admin-token",
            title: "An admin token reads and writes no one's data",
            detail: "admin tokens manage people and tokens (/v1/people); use a token of a person for their data")

        /// A person id that is not one, or a person that does not exist.
        static func noPerson(_ text: String) -> Problem {
            Problem.notFound("person \(text) does not exist")
        }
    }

    /// A token as the admin API lists it (never its secret).
    struct TokenJSON: Encodable {
        var id: String
        var name: String
        var person: String?
        var source: String
        var scopes: [String]
        var created: String
        var expires: String?
        var revoked: String?
        var lastUsed: String?

        init(_ t: APIToken) {
            id = t.id.uuidString.lowercased()
            name = t.name
            person = t.person?.description
            source = t.source.name
            scopes = t.scopes.sorted().map(\.rawValue)
            created = Timestamp(t.created).iso8601
            expires = t.expires.map { Timestamp($0).iso8601 }
            revoked = t.revoked.map { Timestamp($0).iso8601 }
            lastUsed = t.lastUsed.map { Timestamp($0).iso8601 }
        }
    }

    /// The admin API (`admin` scope): people and their tokens.
    ///
    /// - `POST /v1/people` `{"name": …}` → `201 {"id": …, "name": …, "created": …}`
    /// - `GET /v1/people` → `{"people": […]}`; `GET /v1/people/ID` → the person; `DELETE /v1/people/ID` erases them
    ///   (every object, token and feed entry, in one transaction) → `204`
    /// - `POST /v1/people/ID/tokens` `{"name": …, "source": …, "scopes": ["read", "write"], "expiresInDays": …}`
    ///   (scopes narrowed to one type of object too: `["read:workouts", "read:routes"]`) →
    ///   `201 {"id": …, "token": "rk_…", …}` (the secret is shown once); `GET /v1/people/ID/tokens` →
    ///   `{"tokens": […]}`; `DELETE /v1/people/ID/tokens/TOKEN` revokes → `204`
    struct PeopleRoutes: Sendable {
        let stores: PersonStores
        /// Erasure ends the person's builders' live state too (their spool files are in the store).
        static let maxBodyBytes = 16 * 1024

        struct PersonBody: Decodable {
            var name: String?
        }

        struct TokenBody: Decodable {
            var name: String?
            var source: String?
            var scopes: [String]?
            var expiresInDays: Double?
        }

        func add(to router: RecordingRouter) {
            router.on(.post, "/v1/people", use: create)
            router.get("/v1/people", use: list)
            router.get("/v1/people/:person", use: get)
            router.on(.delete, "/v1/people/:person", use: erase)
            router.on(.post, "/v1/people/:person/tokens", use: createToken)
            router.get("/v1/people/:person/tokens", use: tokens)
            router.on(.delete, "/v1/people/:person/tokens/:token", use: revokeToken)
        }

        static func body<T: Decodable>(_ request: Request, _ type: T.Type) async throws -> T {
            let bytes = try await request.body.collect(upTo: maxBodyBytes)
            guard bytes.readableBytes > 0 else { throw Problem.badRequest("the body must be a JSON object") }
            do {
                return try JSONDecoder().decode(T.self, from: Data(bytes.readableBytesView))
            } catch {
                throw Problem.badRequest("the body is not the JSON object this needs")
            }
        }

        /// The person the path names; `404` when there is none (an id that is not a UUID included).
        func person(_ context: RouteKitRequestContext) async throws -> Person {
            let text = context.parameters.get("person") ?? ""
            guard let uuid = UUID(uuidString: text) else { throw Problem.noPerson(text) }
            guard let person = try await stores.base.person(id: PersonID(uuid)) else { throw Problem.noPerson(text) }
            return person
        }

        func create(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let body = try await Self.body(request, PersonBody.self)
            let name = (body.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 256 else {
                throw Problem.badRequest("'name' must be 1 to 256 characters")
            }
            let person = Person(name: name)
            try await stores.base.addPerson(person)
            var response = JSONBody.response(PersonJSON(person), status: .created)
            response.headers[.location] = "/v1/people/\(person.id)"
            return response
        }

        func list(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            return JSONBody.response(["people": try await stores.base.people().map(PersonJSON.init)])
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            return JSONBody.response(PersonJSON(try await person(context)))
        }

        func erase(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let person = try await person(context)
            guard person.id != .default else {
                throw Problem(
                    status: .conflict, type: "default-person",
                    title: "The default person cannot be erased",
                    detail:
                        "the default person holds what was stored before people existed; delete their objects instead")
            }
            guard try await stores.base.erasePerson(id: person.id) else {
                throw Problem.noPerson(person.id.description)
            }
            return Response(status: .noContent)
        }

        func createToken(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let person = try await person(context)
            let body = try await Self.body(request, TokenBody.self)
            let scopes = try Self.scopes(body.scopes ?? ["read"])
            let source: Source
            do throws(RouteKitError) {
                source = try Source(name: body.source ?? "api")
            } catch {
                throw Problem.badRequest("'source': \(error.message)")
            }
            var expires: Date?
            if let days = body.expiresInDays {
                guard days.isFinite, days > 0, days <= 36_500 else {
                    throw Problem.badRequest("'expiresInDays' must be more than 0 and at most 36500")
                }
                expires = Date().addingTimeInterval(days * 86_400)
            }
            let name = body.name ?? source.name
            guard !name.isEmpty, name.count <= 256 else {
                throw Problem.badRequest("'name' must be 1 to 256 characters")
            }
            let made = TokenText.make(name: name, person: person.id, source: source, scopes: scopes, expires: expires)
            try await stores.base.saveToken(made.token)
            struct Created: Encodable {
                var token: String
                var id: String
                var person: String?
                var name: String
                var source: String
                var scopes: [String]
                var expires: String?
            }
            let t = made.token
            return JSONBody.response(
                Created(
                    token: made.text, id: t.id.uuidString.lowercased(), person: t.person?.description, name: t.name,
                    source: t.source.name, scopes: t.scopes.sorted().map(\.rawValue),
                    expires: t.expires.map { Timestamp($0).iso8601 }),
                status: .created)
        }

        /// A person token's scopes: `read` and `write`, and scopes narrowed to one type of object (`read:routes`,
        /// `read:heartRate`, `write:workouts`); a word that is no scope is a `400` naming it, and so is `admin` (admin
        /// tokens are no one's).
        static func scopes(_ names: [String]) throws(Problem) -> Set<APIScope> {
            var out: Set<APIScope> = []
            for name in names {
                let scope: APIScope
                do throws(RouteKitError) {
                    scope = try APIScope(parsing: name)
                } catch {
                    throw Problem.badRequest("'scopes': \(error.message)")
                }
                guard scope != .admin else {
                    throw Problem.badRequest(
                        "'admin' is not a scope a person's token can have; admin tokens are made with "
                            + "`routekit tokens create --scope admin`")
                }
                out.insert(scope)
            }
            guard !out.isEmpty else {
                throw Problem.badRequest("'scopes' must name at least one scope (read, write, read:TYPE, write:TYPE)")
            }
            return out
        }

        func tokens(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let person = try await person(context)
            return JSONBody.response(["tokens": try await stores.base.tokens(of: person.id).map(TokenJSON.init)])
        }

        func revokeToken(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let person = try await person(context)
            let text = context.parameters.get("token") ?? ""
            guard let id = UUID(uuidString: text), let token = try await stores.base.token(id: id),
                token.person == person.id
            else { throw Problem.notFound("token \(text) is not one of this person's") }
            _ = try await stores.base.revokeToken(id: token.id, at: Date())
            return Response(status: .noContent)
        }
    }
#endif

#if Server
    extension PersonStores {
        /// The store seen as the person of the request's token.
        /// - Throws: `401` without a token, `403` for an admin token.
        func store(_ context: RouteKitRequestContext) throws(Problem) -> any RouteStore {
            try store(for: context.requireToken())
        }
    }
#endif
