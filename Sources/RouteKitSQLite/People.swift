public import Foundation
import GRDB
public import RouteKit

/// People on SQLite: the `person` table, and erasure of everything a person owns.
///
/// These are the operator's operations: they act on the whole store, whatever this view's ``SQLiteStore/person``.
extension SQLiteStore: PeopleStore {
    /// Adds a person.
    /// - Throws: `RouteKitError.Code.invalidArgument` when a person with its id, or its subject, exists.
    public func addPerson(_ person: Person) async throws(RouteKitError) {
        let key = person.id.uuid.lowercaseText
        let subject = person.subject
        try await write("adding person \(person.id)") { db in
            guard
                try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM person WHERE id = ?"), arguments: [key]) == nil
            else { throw RouteKitError(.invalidArgument, "a person with id \(person.id) exists") }
            if let subject,
                try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM person WHERE issuer = ? AND subject = ?"),
                    arguments: [subject.issuer, subject.subject]) != nil
            {
                throw RouteKitError(
                    .invalidArgument,
                    "a person with subject '\(subject.subject)' of issuer '\(subject.issuer)' exists")
            }
            try db.cachedStatement(
                sql: "INSERT INTO person(id, name, issuer, subject, created) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [
                key, person.name, subject?.issuer, subject?.subject, person.created.timeIntervalSince1970,
            ])
        }
    }

    /// The person with `id` (`PersonID.default` always exists).
    public func person(id: PersonID) async throws(RouteKitError) -> Person? {
        let key = id.uuid.lowercaseText
        return try await read("reading person \(id)") { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?"), arguments: [key])
                .map(Self.personRecord(from:))
        }
    }

    /// The person created for an identity provider's subject.
    public func person(subject: ExternalSubject) async throws(RouteKitError) -> Person? {
        try await read("reading the person of an identity provider's subject") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM person WHERE issuer = ? AND subject = ?"),
                arguments: [subject.issuer, subject.subject]
            ).map(Self.personRecord(from:))
        }
    }

    /// Every person, oldest first (the default person first).
    public func people() async throws(RouteKitError) -> [Person] {
        try await read("listing people") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM person ORDER BY id <> ?, created, rowid"),
                arguments: [Self.defaultPersonKey]
            ).map(Self.personRecord(from:))
        }
    }

    /// Erases a person in one transaction: every row of theirs in every table (workouts, routes, the chunks of their
    /// routes, series and builders, series, effort scores, summaries, zone settings, privacy zones, builders, jobs,
    /// API tokens, webhook subscriptions, change-log rows and their feed head), then the person. Returns `false` when
    /// there is no such person (anything stored under that id is erased all the same).
    ///
    /// The transaction runs with SQLite's `secure_delete` on (set on the writer connection before it, and back to
    /// `FAST`, the store's setting for every other write, after it), so the freed cells and pages are overwritten
    /// with zeros; then a `wal_checkpoint(TRUNCATE)` copies the zeroed pages into the database file and empties the
    /// write-ahead log. (When another connection holds a read open for more than 2 s, that checkpoint cannot finish;
    /// a later one copies the pages.) Nothing is recorded in the change log: the erased person's followers find
    /// their anchors gone.
    /// - Throws: `RouteKitError.Code.invalidArgument` for `PersonID.default` (it can be emptied, not erased).
    public func erasePerson(id: PersonID) async throws(RouteKitError) -> Bool {
        guard id != .default else {
            throw RouteKitError(
                .invalidArgument, "the default person (\(id)) cannot be erased; delete their objects instead")
        }
        try checkFile()
        let key = id.uuid.lowercaseText
        let busy = busyMilliseconds
        let erase = { @Sendable (db: Database) throws -> Bool in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            var existed = false
            do {
                try db.inTransaction(.immediate) {
                    existed = try Self.eraseRows(db, person: key)
                    return .commit
                }
            } catch {
                try? db.execute(sql: "PRAGMA secure_delete = FAST")
                throw error
            }
            try db.execute(sql: "PRAGMA secure_delete = FAST")
            // The erasure is committed: a checkpoint that cannot finish (a reader holds an old snapshot) is left to a
            // later one, after waiting 2 s at most rather than the store's whole busy timeout with the writer held.
            try db.execute(sql: "PRAGMA busy_timeout = 2000")
            _ = try? Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute(sql: "PRAGMA busy_timeout = \(busy)")
            return existed
        }
        do {
            let existed =
                writesOnCallingThread ? try syncWrite(pool, erase) : try await pool.writeWithoutTransaction(erase)
            // The person's followers wake, and find their anchors gone.
            commitSignal.fire()
            return existed
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw Self.storeError("erasing person \(id) in the store at \(path)", error, path: path)
        }
    }

    /// Deletes every row of `person` (inside the caller's transaction); whether their `person` row existed.
    static func eraseRows(_ db: Database, person: String) throws -> Bool {
        let workouts = "SELECT uuid FROM workout WHERE person = ?1"
        // Chunks first, while the rows that name their containers are still there.
        try db.execute(
            sql: """
                DELETE FROM chunk WHERE container IN (
                    SELECT container FROM route WHERE person = ?1
                    UNION SELECT container FROM series WHERE workout_uuid IN (\(workouts))
                    UNION SELECT 'series-' || uuid FROM workout WHERE person = ?1
                    UNION SELECT uuid FROM builder WHERE person = ?1)
                """, arguments: [person])
        for table in ["series", "effort", "workout_summary", "workout_zone_settings"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE workout_uuid IN (\(workouts))", arguments: [person])
        }
        for table in [
            "route", "workout", "builder", "privacy_zone", "zone_settings", "job", "api_token", "webhook", "change",
            "person_feed",
        ] {
            try db.execute(sql: "DELETE FROM \(table) WHERE person = ?1", arguments: [person])
        }
        try db.execute(sql: "DELETE FROM person WHERE id = ?1", arguments: [person])
        return db.changesCount > 0
    }

    /// The bytes the store keeps for `person`'s data: the lengths of the chunks in the containers of their routes,
    /// series (appended to a workout directly or collected by a builder) and pending builders (each chunk once, as
    /// an erasure finds them), and of their workouts' and routes' bodies, in one statement. SQLite reads a blob's
    /// length from its record header without loading its pages.
    public func storageUsed(by person: PersonID) async throws(RouteKitError) -> Int64 {
        let key = person.uuid.lowercaseText
        return try await read("measuring the storage of person \(person)") { db in
            try Int64.fetchOne(db.cachedStatement(sql: Self.storageUsedSQL), arguments: [key]) ?? 0
        }
    }

    /// The statement of ``storageUsed(by:)``: `?1` is the person's key.
    static let storageUsedSQL = """
        SELECT
            (SELECT COALESCE(SUM(length(data)), 0) FROM chunk WHERE container IN (
                SELECT container FROM route WHERE person = ?1
                UNION SELECT container FROM series WHERE workout_uuid IN (SELECT uuid FROM workout WHERE person = ?1)
                UNION SELECT 'series-' || uuid FROM workout WHERE person = ?1
                UNION SELECT uuid FROM builder WHERE person = ?1))
            + (SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM workout WHERE person = ?1)
            + (SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM route WHERE person = ?1)
        """

    /// The people who have a pending builder whose last batch was acknowledged before `cutoff`.
    public func feedHeads(after position: Int64) async throws(RouteKitError) -> FeedHeads {
        try await read("reading where the change log stands") { db in
            let head =
                try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(txn_end) FROM change_txn")) ?? 0
            var people: Set<PersonID> = []
            guard head > position else { return FeedHeads(head: head, people: []) }
            for text in try String.fetchAll(
                db.cachedStatement(sql: "SELECT person FROM person_feed WHERE head > ?"), arguments: [position])
            {
                if let uuid = UUID(uuidString: text) { people.insert(PersonID(uuid)) }
            }
            return FeedHeads(head: head, people: people)
        }
    }

    public func peopleWithPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PersonID] {
        let texts = try await read("listing the people with abandoned route builders") { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT person FROM builder WHERE updated < ? ORDER BY person"),
                arguments: [cutoff.timeIntervalSince1970])
        }
        var people: [PersonID] = []
        for text in texts {
            guard let uuid = UUID(uuidString: text) else {
                throw RouteKitError(.storage, "a stored route builder names an invalid person")
            }
            people.append(PersonID(uuid))
        }
        return people
    }

    /// A `person` row's person.
    static func personRecord(from row: Row) throws(RouteKitError) -> Person {
        let idText: String = row["id"]
        guard let uuid = UUID(uuidString: idText) else {
            throw RouteKitError(.storage, "a stored person has an invalid id")
        }
        let issuer: String? = row["issuer"]
        let subject: String? = row["subject"]
        var external: ExternalSubject?
        if let issuer, let subject { external = ExternalSubject(issuer: issuer, subject: subject) }
        return Person(
            id: PersonID(uuid), name: row["name"], subject: external,
            created: Date(timeIntervalSince1970: row["created"]))
    }
}
