#if Server
    import Hummingbird
    import RouteKit

    /// What a request carries through the server: Hummingbird's core context and the API token that
    /// authenticated it (set by the authentication middleware).
    package struct RouteKitRequestContext: RequestContext {
        package var coreContext: CoreRequestContextStorage
        /// The token of the request, once authenticated.
        package var token: APIToken?
        /// Whether ``token`` was made for an identity provider's JWT (it is in no store).
        package var tokenFromIdentityProvider = false

        package init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            token = nil
        }

        /// The token, or `401`.
        func requireToken() throws(Problem) -> APIToken {
            guard let token else { throw Problem.unauthenticated }
            return token
        }

        /// The token when it holds every one of `scopes` (`TokenGrant.allows(_:)`: plain `read`, `write` and `admin`
        /// only with that very scope, `read:TYPE` with `read` or `read:TYPE`, `write:TYPE` with `write` or
        /// `write:TYPE`); `401` without a token, `403` naming the first scope it lacks.
        func require(_ scopes: APIScope...) throws(Problem) -> APIToken {
            let token = try requireToken()
            let grant = token.grant
            for scope in scopes where !grant.allows(scope) {
                throw Problem.insufficientScope(scope.rawValue, token)
            }
            return token
        }

        /// The token when it may read some type of object (`read`, or any `read:TYPE`): for answers that leave out,
        /// type by type, what it may not read (the change feed, the zone settings).
        func requireSomeRead() throws(Problem) -> APIToken {
            let token = try requireToken()
            guard token.grant.readsAnything else { throw Problem.insufficientScope("read (or a read:TYPE)", token) }
            return token
        }
    }

    extension Problem {
        /// The `403` for a token without the scope `needed`.
        static func insufficientScope(_ needed: String, _ token: APIToken) -> Problem {
            Problem(
                status: .forbidden, type: "insufficient-scope", title: "The token lacks a scope",
                detail: "this needs the '\(needed)' scope; the token has: \(token.scopesText)")
        }
    }
#endif
