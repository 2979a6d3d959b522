import Foundation

/// What an API token lets its holder do over HTTP (`routekit serve`): a scope word.
///
/// The plain words keep their meaning: ``read`` reads every type of object (of the sources the token may read),
/// ``write`` writes every type, as the token's source, and ``admin`` manages people, tokens and jobs. As HealthKit
/// authorizes reading and sharing per data type, a scope can also be narrowed to one type of object (a
/// ``ScopeTarget``): `read:routes`, `read:heartRate`, `write:workouts` (``reading(_:)``, ``writing(_:)``). What a set
/// of scopes allows is answered by ``TokenGrant``.
public struct APIScope: Hashable, Sendable, Comparable, CustomStringConvertible, RawRepresentable, Codable {
    /// What a scope lets its holder do.
    public enum Access: String, Hashable, Sendable, CaseIterable {
        /// Read objects (workouts, routes, effort scores, series, the change feed).
        case read
        /// Upload and write, as the token's source.
        case write
        /// Manage people, tokens and processing jobs.
        case admin

        var order: Int {
            switch self {
            case .read: 0
            case .write: 1
            case .admin: 2
            }
        }
    }

    /// What it lets its holder do.
    public let access: Access
    /// The one type of object it is narrowed to; `nil` for every type (`read`, `write`) and for `admin`.
    public let target: ScopeTarget?

    private init(access: Access, target: ScopeTarget?) {
        self.access = access
        self.target = target
    }

    /// Read workouts, routes, effort scores, series of every type and the change feed (of the sources the token may
    /// read).
    public static let read = APIScope(access: .read, target: nil)
    /// Upload and write every type of object, as the token's source: only objects of that source can be replaced or
    /// deleted.
    public static let write = APIScope(access: .write, target: nil)
    /// Start and watch processing jobs for every source; manage people and their tokens.
    public static let admin = APIScope(access: .admin, target: nil)

    /// Read one type of object (`read:routes`, `read:heartRate`).
    public static func reading(_ target: ScopeTarget) -> APIScope { APIScope(access: .read, target: target) }

    /// Write one type of object (`write:workouts`, `write:power`).
    public static func writing(_ target: ScopeTarget) -> APIScope { APIScope(access: .write, target: target) }

    /// The scope a word names: `read`, `write`, `admin`, or `read:TYPE` or `write:TYPE` with a ``ScopeTarget`` name
    /// (`workouts`, `routes`, `effort`, or a quantity type's identifier: `heartRate`, `power`, …); `nil` for any other
    /// word (`admin:routes` included).
    public init?(rawValue: String) {
        let parts = rawValue.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let head = parts.first, let access = Access(rawValue: String(head)) else { return nil }
        guard parts.count == 2 else {
            self.init(access: access, target: nil)
            return
        }
        guard access != .admin, let target = ScopeTarget(name: String(parts[1])) else { return nil }
        self.init(access: access, target: target)
    }

    /// The scope `word` names (see ``init(rawValue:)``).
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the word when it is not a scope.
    public init(parsing word: String) throws(RouteKitError) {
        guard let scope = APIScope(rawValue: word) else {
            throw RouteKitError(.invalidArgument, "'\(word)' is not a scope: \(Self.grammar)")
        }
        self = scope
    }

    /// The scope words there are, for messages.
    package static var grammar: String {
        "read, write, admin, or read:TYPE or write:TYPE with TYPE one of "
            + ScopeTarget.all.map(\.description).joined(separator: ", ")
    }

    /// The word: `read`, `write:routes`, `read:heartRate`.
    public var rawValue: String { target.map { "\(access.rawValue):\($0)" } ?? access.rawValue }

    public var description: String { rawValue }

    /// Read scopes first, then write, then admin; the plain word before the narrowed ones, which follow
    /// ``ScopeTarget/all``'s order.
    public static func < (a: APIScope, b: APIScope) -> Bool {
        if a.access != b.access { return a.access.order < b.access.order }
        return (a.target?.order ?? -1) < (b.target?.order ?? -1)
    }

    /// Decodes the word.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let scope = APIScope(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a scope"))
        }
        self = scope
    }

    /// Encodes the word.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
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
    /// What it may do: plain `read`, `write`, `admin`, and scopes narrowed to one type of object (``APIScope``).
    /// ``grant`` answers what they allow.
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

    /// What its scopes let it read and write, type by type.
    public var grant: TokenGrant { TokenGrant(scopes) }

    /// The scopes as stored: comma-separated, in ``APIScope`` order (`read,write,admin` as before narrowed scopes
    /// existed; `read:workouts,read:routes,write`).
    package var scopesText: String { scopes.sorted().map(\.rawValue).joined(separator: ",") }

    /// Reads stored scopes, or scopes given to `routekit tokens create --scope`: words separated by commas (or
    /// spaces).
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the first word that is not a scope.
    package static func scopes(from text: String) throws(RouteKitError) -> Set<APIScope> {
        var out: Set<APIScope> = []
        for part in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            let word = part.trimmingCharacters(in: .whitespaces)
            guard !word.isEmpty else { continue }
            out.insert(try APIScope(parsing: word))
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
