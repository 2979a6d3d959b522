#if Postgres
    import Foundation
    import PostgresNIO
    public import RouteKit

    /// People on PostgreSQL: the `person` table (the operator's, whichever view is asked), and the erasure of
    /// everything a person owns.
    extension PostgresStore: PeopleStore {
        /// The tables whose rows carry a person, in the order an erasure deletes them (chunks go first, through the
        /// route, series and builder rows that hold their containers; `person` last).
        static let personTables = [
            "route", "series", "effort", "workout_summary", "workout_zone_settings", "workout", "builder",
            "privacy_zone", "zone_settings", "job", "api_token", "webhook", "change", "person_feed",
        ]

        public func addPerson(_ person: Person) async throws(RouteKitError) {
            let id = person.id.description
            try await write("adding person \(id)", personal: false) { tx in
                // Any unique key refuses it: the id, or the (issuer, subject) pair.
                let added = try await tx.first(
                    """
                    INSERT INTO person(id, name, issuer, subject, created)
                    VALUES (\(id), \(person.name), \(person.subject?.issuer), \(person.subject?.subject),
                        \(person.created.timeIntervalSince1970))
                    ON CONFLICT DO NOTHING RETURNING id
                    """)
                if added != nil { return }
                if try await tx.first("SELECT 1 FROM person WHERE id = \(id)") != nil {
                    throw RouteKitError(.invalidArgument, "a person with id \(id) exists")
                }
                let subject = person.subject.map { "subject '\($0.subject)' of issuer '\($0.issuer)'" } ?? "its subject"
                throw RouteKitError(.invalidArgument, "a person with \(subject) exists")
            }
        }

        public func person(id: PersonID) async throws(RouteKitError) -> Person? {
            let key = id.description
            return try await read("reading person \(key)") { tx in
                try await tx.first("SELECT * FROM person WHERE id = \(key)").map(Self.personRecord)
            }
        }

        public func person(subject: ExternalSubject) async throws(RouteKitError) -> Person? {
            try await read("reading the person of an identity provider's subject") { tx in
                try await tx.first(
                    "SELECT * FROM person WHERE issuer = \(subject.issuer) AND subject = \(subject.subject)"
                ).map(Self.personRecord)
            }
        }

        public func people() async throws(RouteKitError) -> [Person] {
            let defaultKey = PersonID.default.description
            return try await read("listing people") { tx in
                try await tx.rows("SELECT * FROM person ORDER BY (id = \(defaultKey)) DESC, created, id")
                    .map(Self.personRecord)
            }
        }

        /// Erases a person in one transaction, under their lock taken exclusively (`holdPerson(_:exclusive:)`):
        /// it waits for that person's writes under way, and writes that start meanwhile wait for it, so none leaves a
        /// row of theirs behind it. Every row of theirs goes (chunks through the rows that hold their containers),
        /// their tokens, webhook subscriptions, change rows and feed head, then the person.
        ///
        /// The rows' space is left to autovacuum: a `VACUUM` cannot run inside the transaction, needs the tables'
        /// owner, and even then does not guarantee that the bytes are overwritten on disk (nor can it reach the
        /// write-ahead log or backups); only `VACUUM FULL` rewrites a table, under a lock that stops every reader.
        /// The transactions' positions, tokens and commit times (`change_txn`, which names no person) stay.
        /// Objects written as a person who was never added (``forPerson(_:)`` does not check) are erased too, and
        /// the answer is then `false`.
        public func erasePerson(id: PersonID) async throws(RouteKitError) -> Bool {
            guard id != .default else {
                throw RouteKitError(
                    .invalidArgument, "the default person cannot be erased (their objects can be deleted)")
            }
            return try await forPerson(id).write("erasing person \(id)", personal: false) { tx in
                try await Self.holdPerson(tx, exclusive: true)
                let person = tx.person
                // A builder's batch is one statement of its own (no person lock): with the builders' rows locked, a
                // batch under way has committed before the chunks are deleted (they are deleted with it), and one
                // that comes after finds no builder.
                try await tx.run("SELECT 1 FROM builder WHERE person = \(person) FOR UPDATE")
                try await tx.run(
                    """
                    DELETE FROM chunk WHERE container IN (
                        SELECT container FROM route WHERE person = \(person)
                        UNION SELECT container FROM series WHERE person = \(person)
                        UNION SELECT uuid FROM builder WHERE person = \(person))
                    """)
                for table in Self.personTables {
                    // The table names are fixed words, never input.
                    var sql = SQL("DELETE FROM \(table) WHERE person = ")
                    sql.append(sql.bind(person))
                    try await tx.run(sql.query)
                }
                return try await tx.first("DELETE FROM person WHERE id = \(person) RETURNING id") != nil
            }
        }

        /// The bytes the store keeps for `person`'s data: the `octet_length` of the chunks in the containers of
        /// their routes, series and pending builders (each chunk once, as an erasure finds them), and of their
        /// workouts' and routes' bodies, in one statement (a chunk's length is read from its varlena header, without
        /// detoasting it).
        public func storageUsed(by person: PersonID) async throws(RouteKitError) -> Int64 {
            let key = person.description
            return try await read("measuring the storage of person \(key)") { tx in
                try await tx.value(
                    """
                    SELECT (
                        (SELECT COALESCE(SUM(octet_length(data)), 0) FROM chunk WHERE container IN (
                            SELECT container FROM route WHERE person = \(key)
                            UNION SELECT container FROM series WHERE person = \(key)
                            UNION SELECT uuid FROM builder WHERE person = \(key)))
                        + (SELECT COALESCE(SUM(octet_length(body)), 0) FROM workout WHERE person = \(key))
                        + (SELECT COALESCE(SUM(octet_length(body)), 0) FROM route WHERE person = \(key))
                    )::BIGINT AS bytes
                    """, as: Int64.self) ?? 0
            }
        }

        public func feedHeads(after position: Int64) async throws(RouteKitError) -> FeedHeads {
            // One statement (one snapshot): the log's head, and the people whose heads are past `position`.
            let (head, keys) = try await read("reading where the change log stands") { tx in
                let rows = try await tx.rows(
                    """
                    SELECT h.head, p.person
                    FROM (SELECT COALESCE(MAX(txn_end), 0) AS head FROM change_txn) AS h
                    LEFT JOIN person_feed AS p ON h.head > \(position) AND p.head > \(position)
                    """)
                let head: Int64 = try rows.first?.get("head") ?? 0
                return (head, try rows.compactMap { try $0.get("person") as String? })
            }
            return FeedHeads(head: head, people: Set(keys.compactMap { UUID(uuidString: $0).map(PersonID.init) }))
        }

        public func peopleWithPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PersonID] {
            let keys = try await read("listing the people with pending route builders") { tx in
                try await tx.rows(
                    """
                    SELECT DISTINCT person FROM builder WHERE updated < \(cutoff.timeIntervalSince1970)
                    ORDER BY person
                    """
                ).map { try $0.get("person") as String }
            }
            var people: [PersonID] = []
            for key in keys {
                guard let uuid = UUID(uuidString: key) else {
                    throw RouteKitError(.storage, "a stored route builder has an invalid person")
                }
                people.append(PersonID(uuid))
            }
            return people
        }

        /// A `person` row's record.
        @Sendable static func personRecord(_ r: Row) throws -> Person {
            let id: String = try r.get("id")
            guard let uuid = UUID(uuidString: id) else {
                throw RouteKitError(.storage, "a stored person has an invalid id")
            }
            let issuer: String? = try r.get("issuer")
            let subject: String? = try r.get("subject")
            var external: ExternalSubject?
            if let issuer, let subject { external = ExternalSubject(issuer: issuer, subject: subject) }
            return Person(
                id: PersonID(uuid), name: try r.get("name"), subject: external,
                created: Date(timeIntervalSince1970: try r.get("created")))
        }
    }
#endif
