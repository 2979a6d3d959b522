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

        /// The token when it has `scope`; `401` without a token, `403` without the scope.
        func require(_ scope: APIScope) throws(Problem) -> APIToken {
            let token = try requireToken()
            guard token.scopes.contains(scope) else {
                throw Problem(
                    status: .forbidden, type: "insufficient-scope", title: "The token lacks a scope",
                    detail: "this needs the '\(scope.rawValue)' scope; the token has: \(token.scopesText)")
            }
            return token
        }
    }
#endif
