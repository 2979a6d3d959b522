import Foundation
import GRDB
import RouteKit

/// Webhook subscriptions on SQLite: the `webhook` table. A view reads and writes only its person's own
/// subscriptions (another person's id is as unknown as a missing one, and so are admin-wide subscriptions and the
/// person's cursors of them); the admin-wide methods see only admin-wide subscriptions (rows without a person);
/// ``dueWebhooks(at:people:after:limit:)`` is the dispatcher's look over everyone's.
extension SQLiteStore: WebhookStore {
    /// The condition on a view's person's own subscriptions (its one argument: the person).
    static let ownWebhooks = "person = ? AND parent IS NULL"

    package func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool {
        var record = subscription
        if record.cursor == nil { record.cursor = try await currentAnchor().text }
        let stored = record
        let person = personKey
        return try await write("adding webhook subscription \(stored.id)") { db in
            let count =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM webhook WHERE \(Self.ownWebhooks)"),
                    arguments: [person]) ?? 0
            guard count < limit else { return false }
            try Self.insertWebhook(db, stored, person: person)
            return true
        }
    }

    package func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        let person = personKey
        return try await read("reading webhook subscription \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM webhook WHERE id = ? AND \(Self.ownWebhooks)"),
                arguments: [Self.key(id), person]
            ).map(Self.webhook(from:))
        }
    }

    package func webhookToDeliver(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        let person = personKey
        return try await read("reading webhook subscription \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM webhook WHERE id = ? AND person = ?"),
                arguments: [Self.key(id), person]
            ).map(Self.webhook(from:))
        }
    }

    package func webhooks() async throws(RouteKitError) -> [WebhookSubscription] {
        let person = personKey
        return try await read("listing webhook subscriptions") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM webhook WHERE \(Self.ownWebhooks) ORDER BY created, id"),
                arguments: [person]
            ).map(Self.webhook(from:))
        }
    }

    package func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool {
        let person = personKey
        return try await write("deleting webhook subscription \(id)") { db in
            try db.execute(
                sql: "DELETE FROM webhook WHERE id = ? AND \(Self.ownWebhooks)", arguments: [Self.key(id), person])
            return db.changesCount > 0
        }
    }

    package func rotateWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
        async throws(RouteKitError) -> WebhookSubscription?
    {
        let person = personKey
        return try await write("rotating the secret of webhook subscription \(id)") { db in
            try db.execute(
                sql: """
                    UPDATE webhook SET previous_secret = secret, previous_expires = ?, secret = ?
                    WHERE id = ? AND \(Self.ownWebhooks)
                    """,
                arguments: [previousExpires.timeIntervalSince1970, secret, Self.key(id), person])
            return try Row.fetchOne(
                db, sql: "SELECT * FROM webhook WHERE id = ? AND \(Self.ownWebhooks)",
                arguments: [Self.key(id), person]
            ).map(Self.webhook(from:))
        }
    }

    package func resumeWebhook(id: UUID, cursor: String?, due: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    {
        let person = personKey
        return try await write("resuming webhook subscription \(id)") { db in
            try db.execute(
                sql: """
                    UPDATE webhook SET paused_reason = NULL, attempts = 0, next_attempt = ?, pending_since = NULL,
                        cursor = coalesce(?, cursor)
                    WHERE id = ? AND \(Self.ownWebhooks)
                    """,
                arguments: [due.timeIntervalSince1970, cursor, Self.key(id), person])
            return try Row.fetchOne(
                db, sql: "SELECT * FROM webhook WHERE id = ? AND \(Self.ownWebhooks)",
                arguments: [Self.key(id), person]
            ).map(Self.webhook(from:))
        }
    }

    package func updateWebhookDelivery(id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
        async throws(RouteKitError) -> Bool
    {
        let person = personKey
        return try await write("recording a delivery of webhook subscription \(id)") { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT cursor, recent FROM webhook WHERE id = ? AND person = ?"),
                    arguments: [Self.key(id), person])
            else { return false }
            let stored: String? = row["cursor"]
            guard stored == cursor else { return false }
            let recent = WebhookSubscription.recent(
                try WebhookAttemptRecord.list(from: row["recent"]), adding: update.attempt)
            try db.execute(
                sql: """
                    UPDATE webhook SET cursor = coalesce(?, cursor), attempts = ?, next_attempt = ?, pending_since = ?,
                        paused_reason = coalesce(?, paused_reason), recent = ?, last_attempt = coalesce(?, last_attempt)
                    WHERE id = ? AND person = ?
                    """,
                arguments: [
                    update.cursor, update.attempts, update.nextAttempt?.timeIntervalSince1970,
                    update.pendingSince?.timeIntervalSince1970, update.pauseReason,
                    WebhookAttemptRecord.text(of: recent), update.attempt?.time.timeIntervalSince1970, Self.key(id),
                    person,
                ])
            return true
        }
    }

    package func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int)
        async throws(RouteKitError) -> [WebhookSubscription]
    {
        var sql = """
            SELECT * FROM webhook WHERE person IS NOT NULL AND paused_reason IS NULL AND id > ?
                AND ((next_attempt IS NOT NULL AND next_attempt <= ?) OR (next_attempt IS NULL
            """
        var arguments: [(any DatabaseValueConvertible)?] = [after.map(Self.key) ?? "", now.timeIntervalSince1970]
        if let people {
            sql += Self.personIn(people.map(\.description).sorted(), &arguments)
        }
        sql += ")) ORDER BY id LIMIT \(max(0, limit))"
        let query = sql
        let values = StatementArguments(arguments)
        return try await read("listing the webhook subscriptions due") { db in
            try Row.fetchAll(db, sql: query, arguments: values).map(Self.webhook(from:))
        }
    }

    // MARK: Admin-wide subscriptions

    package func addAdminWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError)
        -> Bool
    {
        let stored = subscription
        return try await write("adding admin-wide webhook subscription \(stored.id)") { db in
            let count =
                try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM webhook WHERE person IS NULL")) ?? 0
            guard count < limit else { return false }
            var record = stored
            if record.cursor == nil { record.cursor = try self.logHeadAnchor(db).text }
            try Self.insertWebhook(db, record, person: nil)
            return true
        }
    }

    package func adminWebhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
        try await read("reading admin-wide webhook subscription \(id)") { db in
            try Self.adminWebhook(db, Self.key(id))
        }
    }

    package func adminWebhooks() async throws(RouteKitError) -> [WebhookSubscription] {
        try await read("listing admin-wide webhook subscriptions") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM webhook WHERE person IS NULL ORDER BY created, id")
            ).map(Self.webhook(from:))
        }
    }

    package func deleteAdminWebhook(id: UUID) async throws(RouteKitError) -> Bool {
        let key = Self.key(id)
        return try await write("deleting admin-wide webhook subscription \(id)") { db in
            guard try Self.adminWebhook(db, key) != nil else { return false }
            try db.execute(sql: "DELETE FROM webhook WHERE id = ? OR parent = ?", arguments: [key, key])
            return true
        }
    }

    package func rotateAdminWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
        async throws(RouteKitError) -> WebhookSubscription?
    {
        let key = Self.key(id)
        return try await write("rotating the secret of admin-wide webhook subscription \(id)") { db in
            guard try Self.adminWebhook(db, key) != nil else { return nil }
            // The people's cursors sign with the subscription's secrets: they move with it.
            try db.execute(
                sql: """
                    UPDATE webhook SET previous_secret = secret, previous_expires = ?, secret = ?
                    WHERE id = ? OR parent = ?
                    """,
                arguments: [previousExpires.timeIntervalSince1970, secret, key, key])
            return try Self.adminWebhook(db, key)
        }
    }

    package func resumeAdminWebhook(id: UUID, fromNow: Bool, due: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    {
        let key = Self.key(id)
        return try await write("resuming admin-wide webhook subscription \(id)") { db in
            guard try Self.adminWebhook(db, key) != nil else { return nil }
            if fromNow {
                try db.execute(sql: "DELETE FROM webhook WHERE parent = ?", arguments: [key])
                try db.execute(
                    sql: "UPDATE webhook SET cursor = ? WHERE id = ?",
                    arguments: [try self.logHeadAnchor(db).text, key])
            } else {
                try db.execute(
                    sql: """
                        UPDATE webhook SET paused_reason = NULL, attempts = 0, next_attempt = ?, pending_since = NULL
                        WHERE parent = ? AND (paused_reason IS NOT NULL OR attempts > 0 OR next_attempt IS NOT NULL)
                        """,
                    arguments: [due.timeIntervalSince1970, key])
            }
            return try Self.adminWebhook(db, key)
        }
    }

    package func pausedAdminWebhookCursors(id: UUID, limit: Int) async throws(RouteKitError)
        -> [WebhookSubscription]
    {
        try await read("listing the paused cursors of admin-wide webhook subscription \(id)") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM webhook WHERE parent = ? AND paused_reason IS NOT NULL
                    ORDER BY person LIMIT \(max(0, limit))
                    """,
                arguments: [Self.key(id)]
            ).map(Self.webhook(from:))
        }
    }

    package func adminWebhookActivity(id: UUID, limit: Int) async throws(RouteKitError) -> AdminWebhookActivity {
        let key = Self.key(id)
        let count = max(0, limit)
        return try await read("reading the attempts of admin-wide webhook subscription \(id)") { db in
            // Both through partial indexes: the failing cursors only, and the newest attempts' cursors only.
            let failing =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM webhook WHERE parent = ? AND attempts > 0"),
                    arguments: [key]) ?? 0
            let cursors = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT person, recent FROM webhook WHERE parent = ? AND last_attempt IS NOT NULL
                        ORDER BY last_attempt DESC LIMIT ?
                        """),
                arguments: [key, count]
            ).map { row in try AdminWebhookActivity.cursor(person: row["person"], recent: row["recent"]) }
            return AdminWebhookActivity(failingCursors: failing, cursors: cursors, limit: count)
        }
    }

    package func startAdminWebhookCursors(people: Set<PersonID>?) async throws(RouteKitError) -> Int {
        let keys = people.map { $0.map(\.description).sorted() }
        if let keys, keys.isEmpty { return 0 }
        // A look first: most often there is nothing to do, and nothing is written.
        let work = try await read("looking for people new to admin-wide webhook subscriptions") { db in
            try self.startAdminCursors(db, people: keys, writing: false)
        }
        guard work > 0 else { return 0 }
        return try await write("starting people's cursors of admin-wide webhook subscriptions") { db in
            try self.startAdminCursors(db, people: keys, writing: true)
        }
    }

    /// What ``startAdminWebhookCursors(people:)`` does (`writing`) or would do: the cursors made (or to make),
    /// plus, when only looking, the subscriptions whose start would move.
    func startAdminCursors(_ db: Database, people keys: [String]?, writing: Bool) throws -> Int {
        let subscriptions = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM webhook WHERE person IS NULL ORDER BY id")
        ).map(Self.webhook(from:))
        if subscriptions.isEmpty { return 0 }
        // Read before the people past each start: a person who commits later has a head past it.
        var head: ChangeAnchor?
        if keys == nil { head = try logHeadAnchor(db) }
        var work = 0
        for subscription in subscriptions {
            guard let start = subscription.startPosition else { continue }
            let key = Self.key(subscription.id)
            var arguments: [(any DatabaseValueConvertible)?] = [start, key]
            var sql = """
                SELECT person FROM person_feed WHERE head > ?
                    AND person NOT IN (SELECT person FROM webhook WHERE parent = ?)
                """
            if let keys { sql += Self.personIn(keys, &arguments) }
            let newcomers = try String.fetchAll(
                db, sql: sql + " ORDER BY person", arguments: StatementArguments(arguments))
            work += newcomers.count
            if writing {
                for person in newcomers { try Self.insertCursor(db, of: key, for: person) }
            }
            if let head, head.position > start {
                if writing {
                    try db.execute(sql: "UPDATE webhook SET cursor = ? WHERE id = ?", arguments: [head.text, key])
                } else {
                    work += 1
                }
            }
        }
        return work
    }

    // MARK: Rows

    /// ` AND person IN (…)` for `keys` (` AND 0` when there are none), their values appended to `arguments`.
    static func personIn(_ keys: [String], _ arguments: inout [(any DatabaseValueConvertible)?]) -> String {
        if keys.isEmpty { return " AND 0" }
        arguments += keys.map { $0 as (any DatabaseValueConvertible)? }
        return " AND person IN (" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
    }

    /// Inserts subscription `s` as `person`'s (an admin-wide one when `nil`).
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
    static func insertWebhook(_ db: Database, _ s: WebhookSubscription, person: String?) throws {
        guard
            try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM webhook WHERE id = ?"), arguments: [key(s.id)])
                == nil
        else { throw RouteKitError(.invalidArgument, "a webhook subscription with id \(s.id) exists") }
        try db.cachedStatement(
            sql: """
                INSERT INTO webhook(id, person, url, types, secret, previous_secret, previous_expires,
                    paused_reason, cursor, attempts, next_attempt, pending_since, anchor_key, recent, last_attempt,
                    created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            key(s.id), person, s.url, WebhookSubscription.typesText(s.types), s.secret, s.previousSecret,
            s.previousSecretExpires?.timeIntervalSince1970, s.pauseReason, s.cursor, s.attempts,
            s.nextAttempt?.timeIntervalSince1970, s.pendingSince?.timeIntervalSince1970, s.anchorKey,
            WebhookAttemptRecord.text(of: s.recentAttempts), s.recentAttempts.last?.time.timeIntervalSince1970,
            s.created.timeIntervalSince1970,
        ])
    }

    /// Inserts `person`'s cursor of admin-wide subscription `parent`: its URL, types, secrets, anchor key and
    /// cursor (the start), active, made now.
    static func insertCursor(_ db: Database, of parent: String, for person: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO webhook(id, person, parent, url, types, secret, previous_secret, previous_expires, cursor,
                    anchor_key, created)
                SELECT ?, ?, id, url, types, secret, previous_secret, previous_expires, cursor, anchor_key, ?
                FROM webhook WHERE id = ? AND person IS NULL
                """
        ).execute(arguments: [key(UUID()), person, Date().timeIntervalSince1970, parent])
    }

    /// The admin-wide subscription with id `key`.
    static func adminWebhook(_ db: Database, _ key: String) throws -> WebhookSubscription? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM webhook WHERE id = ? AND person IS NULL"), arguments: [key]
        ).map(Self.webhook(from:))
    }

    /// The change log's head, everyone's: the newest transaction's end and token (the store's start when there
    /// is none). It is an anchor of every person whose head is at or past it.
    func logHeadAnchor(_ db: Database) throws -> ChangeAnchor {
        let state = try feedState(db)
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT txn_end, token FROM change_txn ORDER BY txn_end DESC LIMIT 1"))
        let position: Int64 = row?["txn_end"] ?? 0
        let token: Int64 = row?["token"] ?? 0
        return state.anchor(position: position, token: token)
    }

    /// A `webhook` row's subscription.
    static func webhook(from row: Row) throws(RouteKitError) -> WebhookSubscription {
        let keys = try WebhookSubscription.keys(id: row["id"], person: row["person"], parent: row["parent"])
        let paused: String? = row["paused_reason"]
        let previousExpires: Double? = row["previous_expires"]
        let nextAttempt: Double? = row["next_attempt"]
        let pendingSince: Double? = row["pending_since"]
        let created: Double = row["created"]
        return WebhookSubscription(
            id: keys.id, person: keys.person, parent: keys.parent, url: row["url"],
            types: try WebhookSubscription.types(from: row["types"]), secret: row["secret"],
            previousSecret: row["previous_secret"],
            previousSecretExpires: previousExpires.map(Date.init(timeIntervalSince1970:)),
            state: paused.map { WebhookSubscription.State.paused(reason: $0) } ?? .active, cursor: row["cursor"],
            attempts: row["attempts"], nextAttempt: nextAttempt.map(Date.init(timeIntervalSince1970:)),
            pendingSince: pendingSince.map(Date.init(timeIntervalSince1970:)), anchorKey: row["anchor_key"],
            created: Date(timeIntervalSince1970: created),
            recentAttempts: try WebhookAttemptRecord.list(from: row["recent"]))
    }
}
