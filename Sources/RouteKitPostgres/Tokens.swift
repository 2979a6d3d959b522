#if Postgres
    import Foundation
    import PostgresNIO
    public import RouteKit

    extension PostgresStore: TokenStore {
        public func saveToken(_ token: APIToken) async throws(RouteKitError) {
            try await write("saving API token \(token.id)") { tx in
                // The token's person's writes and erasure exclude each other, whichever view saves it.
                if let person = token.person, person != .default {
                    try await Self.holdPerson(tx, person.description, exclusive: false)
                }
                guard try await tx.first("SELECT 1 FROM api_token WHERE id = \(Self.key(token.id))") == nil else {
                    throw RouteKitError(.invalidArgument, "an API token with id \(token.id) exists")
                }
                try await tx.run(
                    """
                    INSERT INTO api_token(id, name, person, source, scopes, read_sources, secret_hash, created, expires,
                        revoked, last_used)
                    VALUES (\(Self.key(token.id)), \(token.name), \(token.person?.description), \(token.source.name),
                        \(token.scopesText), \(token.readableSourcesText), \(token.secretHash),
                        \(token.created.timeIntervalSince1970), \(token.expires?.timeIntervalSince1970),
                        \(token.revoked?.timeIntervalSince1970), \(token.lastUsed?.timeIntervalSince1970))
                    """)
            }
        }

        public func token(id: UUID) async throws(RouteKitError) -> APIToken? {
            let rows = try await read("reading API token \(id)") { tx in
                try await tx.rows("SELECT * FROM api_token WHERE id = \(Self.key(id))").map(Self.tokenFields)
            }
            return try rows.first.map(Self.token(from:))
        }

        public func tokens() async throws(RouteKitError) -> [APIToken] {
            let rows = try await read("reading the API tokens") { tx in
                try await tx.rows("SELECT * FROM api_token ORDER BY created, id").map(Self.tokenFields)
            }
            var out: [APIToken] = []
            for row in rows { out.append(try Self.token(from: row)) }
            return out
        }

        public func tokens(of person: PersonID?) async throws(RouteKitError) -> [APIToken] {
            let key = person?.description
            let what = key.map { "reading the API tokens of person " + $0 } ?? "reading the admin API tokens"
            let rows: [TokenFields] = try await read(what) { tx in
                if let key {
                    return try await tx.rows("SELECT * FROM api_token WHERE person = \(key) ORDER BY created, id")
                        .map(Self.tokenFields)
                }
                return try await tx.rows("SELECT * FROM api_token WHERE person IS NULL ORDER BY created, id")
                    .map(Self.tokenFields)
            }
            var out: [APIToken] = []
            for row in rows { out.append(try Self.token(from: row)) }
            return out
        }

        public func revokeToken(id: UUID, at date: Date) async throws(RouteKitError) -> Bool {
            try await write("revoking API token \(id)") { tx in
                try await tx.first(
                    """
                    UPDATE api_token SET revoked = coalesce(revoked, \(date.timeIntervalSince1970))
                    WHERE id = \(Self.key(id)) RETURNING id
                    """) != nil
            }
        }

        public func touchToken(id: UUID, at date: Date) async throws(RouteKitError) {
            try await write("recording the use of API token \(id)") { tx in
                try await tx.run(
                    "UPDATE api_token SET last_used = \(date.timeIntervalSince1970) WHERE id = \(Self.key(id))")
            }
        }

        public func redeemTicket(key: String, expires: Date, now: Date) async throws(RouteKitError) -> Bool {
            try await write("recording the use of a stream ticket") { tx in
                try await tx.run("DELETE FROM used_ticket WHERE expires < \(now.timeIntervalSince1970)")
                return try await tx.first(
                    """
                    INSERT INTO used_ticket(key, expires) VALUES (\(key), \(expires.timeIntervalSince1970))
                    ON CONFLICT (key) DO NOTHING RETURNING key
                    """) != nil
            }
        }

        /// A token row's columns, read inside the transaction.
        struct TokenFields: Sendable {
            var id, name, source, scopes, secretHash: String
            var person, readSources: String?
            var created: Double
            var expires, revoked, lastUsed: Double?
        }

        @Sendable static func tokenFields(_ row: Row) throws -> TokenFields {
            TokenFields(
                id: try row.get("id"), name: try row.get("name"), source: try row.get("source"),
                scopes: try row.get("scopes"), secretHash: try row.get("secret_hash"), person: try row.get("person"),
                readSources: try row.get("read_sources"), created: try row.get("created"),
                expires: try row.get("expires"), revoked: try row.get("revoked"), lastUsed: try row.get("last_used"))
        }

        static func token(from f: TokenFields) throws(RouteKitError) -> APIToken {
            guard let id = UUID(uuidString: f.id) else {
                throw RouteKitError(.storage, "a stored API token has an invalid id")
            }
            var person: PersonID?
            if let text = f.person {
                guard let uuid = UUID(uuidString: text) else {
                    throw RouteKitError(.storage, "stored API token \(id) has an invalid person")
                }
                person = PersonID(uuid)
            }
            do {
                return APIToken(
                    id: id, name: f.name, person: person, source: try Source(name: f.source),
                    scopes: try APIToken.scopes(from: f.scopes),
                    readableSources: try APIToken.readableSources(from: f.readSources), secretHash: f.secretHash,
                    created: Date(timeIntervalSince1970: f.created),
                    expires: f.expires.map(Date.init(timeIntervalSince1970:)),
                    revoked: f.revoked.map(Date.init(timeIntervalSince1970:)),
                    lastUsed: f.lastUsed.map(Date.init(timeIntervalSince1970:)))
            } catch {
                throw RouteKitError(.storage, "stored API token \(id) is invalid: \(error.message)")
            }
        }
    }
#endif
