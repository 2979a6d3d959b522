import Foundation
import GRDB
import RouteKit

/// Webhook subscriptions on SQLite: the `webhook` table. A view reads and writes only its person's subscriptions
/// (another person's id is as unknown as a missing one); ``dueWebhooks(at:people:after:limit:)`` is the dispatcher's
/// look over everyone's.
extension SQLiteStore: WebhookStore {
    package func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool {
        var record = subscription
        if record.cursor == nil { record.cursor = try await currentAnchor().text }
        let stored = record
        let person = personKey
        return try await write("adding webhook subscription \(stored.id)") { db in
            let count =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM webhook WHERE person = ?"), arguments: [person]) ?? 0
            guard count < limit else { return false }
            guard
                try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM webhook WHERE id = ?"), arguments: [Self.key(stored.id)])
                    == nil
            else { throw RouteKitError(.invalidArgument, "a webhook subscription with id \(stored.id) exists") }
            try db.cachedStatement(
                sql: """
                    INSERT INTO webhook(id, person, url, types, secret, previous_secret, previous_expires,
                        paused_reason, cursor, attempts, next_attempt, pending_since, anchor_key, recent, created)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                Self.key(stored.id), person, stored.url, WebhookSubscription.typesText(stored.types), stored.secret,
                stored.previousSecret, stored.previousSecretExpires?.timeIntervalSince1970, stored.pauseReason,
                stored.cursor, stored.attempts, stored.nextAttempt?.timeIntervalSince1970,
                stored.pendingSince?.timeIntervalSince1970, stored.anchorKey,
                WebhookAttemptRecord.text(of: stored.recentAttempts), stored.created.timeIntervalSince1970,
            ])
            return true
        }
    }

    package func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
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
                db.cachedStatement(sql: "SELECT * FROM webhook WHERE person = ? ORDER BY created, id"),
                arguments: [person]
            ).map(Self.webhook(from:))
        }
    }

    package func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool {
        let person = personKey
        return try await write("deleting webhook subscription \(id)") { db in
            try db.execute(
                sql: "DELETE FROM webhook WHERE id = ? AND person = ?", arguments: [Self.key(id), person])
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
                    WHERE id = ? AND person = ?
                    """,
                arguments: [previousExpires.timeIntervalSince1970, secret, Self.key(id), person])
            return try Row.fetchOne(
                db, sql: "SELECT * FROM webhook WHERE id = ? AND person = ?", arguments: [Self.key(id), person]
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
                    WHERE id = ? AND person = ?
                    """,
                arguments: [due.timeIntervalSince1970, cursor, Self.key(id), person])
            return try Row.fetchOne(
                db, sql: "SELECT * FROM webhook WHERE id = ? AND person = ?", arguments: [Self.key(id), person]
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
                        paused_reason = coalesce(?, paused_reason), recent = ?
                    WHERE id = ? AND person = ?
                    """,
                arguments: [
                    update.cursor, update.attempts, update.nextAttempt?.timeIntervalSince1970,
                    update.pendingSince?.timeIntervalSince1970, update.pauseReason,
                    WebhookAttemptRecord.text(of: recent), Self.key(id), person,
                ])
            return true
        }
    }

    package func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int)
        async throws(RouteKitError) -> [WebhookSubscription]
    {
        var sql = """
            SELECT * FROM webhook WHERE paused_reason IS NULL AND id > ?
                AND ((next_attempt IS NOT NULL AND next_attempt <= ?) OR (next_attempt IS NULL
            """
        var arguments: [(any DatabaseValueConvertible)?] = [after.map(Self.key) ?? "", now.timeIntervalSince1970]
        if let people {
            let keys = people.map { $0.uuid.lowercaseText }.sorted()
            if keys.isEmpty {
                sql += " AND 0"
            } else {
                sql += " AND person IN (" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
                arguments += keys.map { $0 as (any DatabaseValueConvertible)? }
            }
        }
        sql += ")) ORDER BY id LIMIT \(max(0, limit))"
        let query = sql
        let values = StatementArguments(arguments)
        return try await read("listing the webhook subscriptions due") { db in
            try Row.fetchAll(db, sql: query, arguments: values).map(Self.webhook(from:))
        }
    }

    /// A `webhook` row's subscription.
    static func webhook(from row: Row) throws(RouteKitError) -> WebhookSubscription {
        let idText: String = row["id"]
        let personText: String = row["person"]
        guard let id = UUID(uuidString: idText), let person = UUID(uuidString: personText) else {
            throw RouteKitError(.storage, "a stored webhook subscription has an invalid id or person")
        }
        let paused: String? = row["paused_reason"]
        let previousExpires: Double? = row["previous_expires"]
        let nextAttempt: Double? = row["next_attempt"]
        let pendingSince: Double? = row["pending_since"]
        let created: Double = row["created"]
        return WebhookSubscription(
            id: id, person: PersonID(person), url: row["url"],
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
