import Foundation
import GRDB
public import RouteKit

extension SQLiteStore: TokenStore {
    public func saveToken(_ token: APIToken) async throws(RouteKitError) {
        let person: String? = token.person.map { $0.uuid.lowercaseText }
        try await write("saving API token \(token.id)") { db in
            guard
                try Row.fetchOne(db, sql: "SELECT 1 FROM api_token WHERE id = ?", arguments: [Self.key(token.id)])
                    == nil
            else { throw RouteKitError(.invalidArgument, "an API token with id \(token.id) exists") }
            try db.execute(
                sql: """
                    INSERT INTO api_token(id, name, person, source, scopes, read_sources, secret_hash, created,
                        expires, revoked, last_used)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    Self.key(token.id), token.name, person, token.source.name, token.scopesText,
                    token.readableSourcesText,
                    token.secretHash, token.created.timeIntervalSince1970, token.expires?.timeIntervalSince1970,
                    token.revoked?.timeIntervalSince1970, token.lastUsed?.timeIntervalSince1970,
                ])
        }
    }

    public func token(id: UUID) async throws(RouteKitError) -> APIToken? {
        try await read("reading API token \(id)") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM api_token WHERE id = ?", arguments: [Self.key(id)])
                .map(Self.token(from:))
        }
    }

    /// Every token, of every person and the admin tokens (the operator's list, whatever this view's person).
    public func tokens() async throws(RouteKitError) -> [APIToken] {
        try await read("reading the API tokens") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM api_token ORDER BY created, id").map(Self.token(from:))
        }
    }

    /// The tokens of `person` (`nil`: the admin tokens), oldest first, whatever this view's person.
    public func tokens(of person: PersonID?) async throws(RouteKitError) -> [APIToken] {
        let key = person.map { $0.uuid.lowercaseText }
        let whose = key.map { "person " + $0 } ?? "the admin"
        return try await read("reading the API tokens of \(whose)") { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM api_token WHERE person IS ? ORDER BY created, id", arguments: [key]
            ).map(Self.token(from:))
        }
    }

    public func revokeToken(id: UUID, at date: Date) async throws(RouteKitError) -> Bool {
        try await write("revoking API token \(id)") { db in
            try db.execute(
                sql: "UPDATE api_token SET revoked = coalesce(revoked, ?) WHERE id = ?",
                arguments: [date.timeIntervalSince1970, Self.key(id)])
            return db.changesCount > 0
        }
    }

    public func touchToken(id: UUID, at date: Date) async throws(RouteKitError) {
        try await write("recording the use of API token \(id)") { db in
            try db.execute(
                sql: "UPDATE api_token SET last_used = ? WHERE id = ?",
                arguments: [date.timeIntervalSince1970, Self.key(id)])
        }
    }

    public func redeemTicket(key: String, expires: Date, now: Date) async throws(RouteKitError) -> Bool {
        try await write("recording the use of a stream ticket") { db in
            try db.execute(sql: "DELETE FROM used_ticket WHERE expires < ?", arguments: [now.timeIntervalSince1970])
            try db.execute(
                sql: "INSERT OR IGNORE INTO used_ticket(key, expires) VALUES (?, ?)",
                arguments: [key, expires.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    static func token(from row: Row) throws(RouteKitError) -> APIToken {
        let idText: String = row["id"]
        guard let id = UUID(uuidString: idText) else {
            throw RouteKitError(.storage, "a stored API token has an invalid id")
        }
        let personText: String? = row["person"]
        var person: PersonID?
        if let personText {
            guard let uuid = UUID(uuidString: personText) else {
                throw RouteKitError(.storage, "stored API token \(id) names an invalid person")
            }
            person = PersonID(uuid)
        }
        do {
            return APIToken(
                id: id, name: row["name"], person: person, source: try Source(name: row["source"]),
                scopes: try APIToken.scopes(from: row["scopes"]),
                readableSources: try APIToken.readableSources(from: row["read_sources"]),
                secretHash: row["secret_hash"],
                created: Date(timeIntervalSince1970: row["created"]),
                expires: (row["expires"] as Double?).map(Date.init(timeIntervalSince1970:)),
                revoked: (row["revoked"] as Double?).map(Date.init(timeIntervalSince1970:)),
                lastUsed: (row["last_used"] as Double?).map(Date.init(timeIntervalSince1970:)))
        } catch {
            throw RouteKitError(.storage, "stored API token \(id) is invalid: \(error.message)")
        }
    }
}
