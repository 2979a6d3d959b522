import Foundation

/// What an API token lets its holder do over HTTP (`routekit serve`).
public enum APIScope: String, Hashable, Sendable, CaseIterable, Codable, Comparable {
    /// Read workouts, routes, series and the change feed (of the sources the token may read).
    case read
    /// Upload and write, as the token's source: only objects of that source can be replaced or deleted.
    case write
    /// Start and watch processing jobs for every source.
    case admin

    private var order: Int {
        switch self {
        case .read: 0
        case .write: 1
        case .admin: 2
        }
    }

    public static func < (a: APIScope, b: APIScope) -> Bool { a.order < b.order }
}

/// An API token as a store keeps it: who it writes as, what it may do, and a hash of its secret (never the
/// secret itself, which is printed once when the token is made).
public struct APIToken: Hashable, Sendable, Identifiable {
    /// The token's identifier: the public half of the token text, shown by `routekit tokens list`.
    public var id: UUID
    /// A name for people ("phone", "grafana").
    public var name: String
    /// The person it acts as; `nil` for an admin token (scope ``APIScope/admin`` only), which manages people and
    /// tokens and reads no one's objects. Tokens made before people existed are ``PersonID/default``'s.
    public var person: PersonID?
    /// The source it writes as (a source of its person).
    public var source: Source
    /// What it may do.
    public var scopes: Set<APIScope>
    /// The sources it may read; `nil` for every source. A token limited this way never learns that other
    /// sources' objects exist.
    public var readableSources: Set<Source>?
    /// A hash of the secret (SHA-256, lowercase hex).
    public var secretHash: String
    /// When it was made.
    public var created: Date
    /// When it stops working, if ever.
    public var expires: Date?
    /// When it was revoked, if it was.
    public var revoked: Date?
    /// When it was last used (updated at most once a minute).
    public var lastUsed: Date?

    /// Creates a token record.
    public init(
        id: UUID, name: String, person: PersonID? = .default, source: Source, scopes: Set<APIScope>,
        readableSources: Set<Source>? = nil, secretHash: String, created: Date, expires: Date? = nil,
        revoked: Date? = nil, lastUsed: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.person = person
        self.source = source
        self.scopes = scopes
        self.readableSources = readableSources
        self.secretHash = secretHash
        self.created = created
        self.expires = expires
        self.revoked = revoked
        self.lastUsed = lastUsed
    }

    /// Whether it works at `date`: not revoked, not expired.
    package func isActive(at date: Date) -> Bool {
        revoked == nil && (expires.map { date < $0 } ?? true)
    }

    /// Whether it may read objects of `source`.
    package func mayRead(_ source: Source) -> Bool { readableSources?.contains(source) ?? true }

    /// The scopes as stored: comma-separated, in ``APIScope`` order.
    package var scopesText: String { scopes.sorted().map(\.rawValue).joined(separator: ",") }

    /// Reads stored scopes.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming an unknown scope.
    package static func scopes(from text: String) throws(RouteKitError) -> Set<APIScope> {
        var out: Set<APIScope> = []
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let scope = APIScope(rawValue: name) else {
                throw RouteKitError(
                    .invalidArgument,
                    "'\(name)' is not a scope (one of \(APIScope.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            out.insert(scope)
        }
        return out
    }

    /// The readable sources as stored: names, one per line (`nil`: every source).
    package var readableSourcesText: String? { readableSources.map { $0.map(\.name).sorted().joined(separator: "\n") } }

    /// Reads stored readable sources.
    package static func readableSources(from text: String?) throws(RouteKitError) -> Set<Source>? {
        guard let text else { return nil }
        var out: Set<Source> = []
        for name in text.split(separator: "\n") { out.insert(try Source(name: String(name))) }
        return out
    }
}

/// A store that keeps API tokens (`routekit tokens`, `routekit serve`). Both backends conform.
public protocol TokenStore: AnyObject, Sendable {
    /// Saves a new token.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a token with its id exists.
    func saveToken(_ token: APIToken) async throws(RouteKitError)
    /// The token with `id`, revoked and expired ones included.
    func token(id: UUID) async throws(RouteKitError) -> APIToken?
    /// Every token, oldest first.
    func tokens() async throws(RouteKitError) -> [APIToken]
    /// The tokens of one person (`nil`: the admin tokens), oldest first.
    func tokens(of person: PersonID?) async throws(RouteKitError) -> [APIToken]
    /// Revokes a token at `date`; `false` when there is none with `id` (revoking twice keeps the first date).
    func revokeToken(id: UUID, at date: Date) async throws(RouteKitError) -> Bool
    /// Records that the token was used at `date`.
    func touchToken(id: UUID, at date: Date) async throws(RouteKitError)
    /// Records the use of a single-use ticket (`key`: a digest of it, never the ticket) until `expires`, and says
    /// whether this was its first use: `false` when it was recorded before, by this process or by any other
    /// sharing the store. Records whose `expires` is before `now` are removed on the way.
    func redeemTicket(key: String, expires: Date, now: Date) async throws(RouteKitError) -> Bool
}
