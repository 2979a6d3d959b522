#if Postgres
    import Foundation
    import PostgresNIO
    import RouteKit

    /// Webhook subscriptions on PostgreSQL: the `webhook` table. A view reads and writes only its person's
    /// subscriptions (another person's id is as unknown as a missing one); ``dueWebhooks(at:people:after:limit:)`` is
    /// the dispatcher's look over everyone's.
    extension PostgresStore: WebhookStore {
        package func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool {
            var record = subscription
            if record.cursor == nil { record.cursor = try await currentAnchor().text }
            let s = record
            return try await write("adding webhook subscription \(s.id)") { tx in
                // Adds of one person run one after the other, so that two at once cannot both pass the limit.
                try await Self.lock(tx, "webhooks\n" + tx.person)
                let count =
                    try await tx.value("SELECT COUNT(*) FROM webhook WHERE person = \(tx.person)", as: Int64.self) ?? 0
                guard count < Int64(limit) else { return false }
                let added = try await tx.first(
                    """
                    INSERT INTO webhook(id, person, url, types, secret, previous_secret, previous_expires,
                        paused_reason, cursor, attempts, next_attempt, pending_since, anchor_key, recent, created)
                    VALUES (\(Self.key(s.id)), \(tx.person), \(s.url), \(WebhookSubscription.typesText(s.types)),
                        \(s.secret), \(s.previousSecret), \(s.previousSecretExpires?.timeIntervalSince1970),
                        \(s.pauseReason), \(s.cursor), \(s.attempts), \(s.nextAttempt?.timeIntervalSince1970),
                        \(s.pendingSince?.timeIntervalSince1970), \(s.anchorKey),
                        \(WebhookAttemptRecord.text(of: s.recentAttempts)), \(s.created.timeIntervalSince1970))
                    ON CONFLICT DO NOTHING RETURNING id
                    """)
                guard added != nil else {
                    throw RouteKitError(.invalidArgument, "a webhook subscription with id \(s.id) exists")
                }
                return true
            }
        }

        package func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
            try await read("reading webhook subscription \(id)") { tx in
                try await tx.first("SELECT * FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person)")
                    .map(Self.webhook)
            }
        }

        package func webhooks() async throws(RouteKitError) -> [WebhookSubscription] {
            try await read("listing webhook subscriptions") { tx in
                try await tx.rows("SELECT * FROM webhook WHERE person = \(tx.person) ORDER BY created, id")
                    .map(Self.webhook)
            }
        }

        package func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool {
            try await write("deleting webhook subscription \(id)") { tx in
                try await tx.first(
                    "DELETE FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person) RETURNING id") != nil
            }
        }

        package func rotateWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
            async throws(RouteKitError) -> WebhookSubscription?
        {
            try await write("rotating the secret of webhook subscription \(id)") { tx in
                try await tx.first(
                    """
                    UPDATE webhook SET previous_secret = secret,
                        previous_expires = \(previousExpires.timeIntervalSince1970), secret = \(secret)
                    WHERE id = \(Self.key(id)) AND person = \(tx.person)
                    RETURNING *
                    """
                ).map(Self.webhook)
            }
        }

        package func resumeWebhook(id: UUID, cursor: String?, due: Date) async throws(RouteKitError)
            -> WebhookSubscription?
        {
            try await write("resuming webhook subscription \(id)") { tx in
                try await tx.first(
                    """
                    UPDATE webhook SET paused_reason = NULL, attempts = 0,
                        next_attempt = \(due.timeIntervalSince1970), pending_since = NULL,
                        cursor = coalesce(\(cursor)::text, cursor)
                    WHERE id = \(Self.key(id)) AND person = \(tx.person)
                    RETURNING *
                    """
                ).map(Self.webhook)
            }
        }

        package func updateWebhookDelivery(id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
            async throws(RouteKitError) -> Bool
        {
            try await write("recording a delivery of webhook subscription \(id)") { tx in
                guard
                    let row = try await tx.first(
                        """
                        SELECT cursor, recent FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person)
                        FOR UPDATE
                        """)
                else { return false }
                let stored: String? = try row.get("cursor")
                guard stored == cursor else { return false }
                let recent = WebhookSubscription.recent(
                    try WebhookAttemptRecord.list(from: try row.get("recent")), adding: update.attempt)
                try await tx.run(
                    """
                    UPDATE webhook SET cursor = coalesce(\(update.cursor)::text, cursor), attempts = \(update.attempts),
                        next_attempt = \(update.nextAttempt?.timeIntervalSince1970),
                        pending_since = \(update.pendingSince?.timeIntervalSince1970),
                        paused_reason = coalesce(\(update.pauseReason)::text, paused_reason),
                        recent = \(WebhookAttemptRecord.text(of: recent))
                    WHERE id = \(Self.key(id)) AND person = \(tx.person)
                    """)
                return true
            }
        }

        package func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int)
            async throws(RouteKitError) -> [WebhookSubscription]
        {
            let everyone = people == nil
            let keys = (people ?? []).map(\.description).sorted()
            let start = after.map(Self.key) ?? ""
            let seconds = now.timeIntervalSince1970
            let count = max(0, limit)
            return try await read("listing the webhook subscriptions due") { tx in
                try await tx.rows(
                    """
                    SELECT * FROM webhook WHERE paused_reason IS NULL AND id > \(start)
                        AND ((next_attempt IS NOT NULL AND next_attempt <= \(seconds))
                            OR (next_attempt IS NULL AND (\(everyone) OR person = ANY(\(keys)))))
                    ORDER BY id LIMIT \(count)
                    """
                ).map(Self.webhook)
            }
        }

        /// A `webhook` row's subscription.
        @Sendable static func webhook(_ r: Row) throws -> WebhookSubscription {
            let idText: String = try r.get("id")
            let personText: String = try r.get("person")
            guard let id = UUID(uuidString: idText), let person = UUID(uuidString: personText) else {
                throw RouteKitError(.storage, "a stored webhook subscription has an invalid id or person")
            }
            let paused: String? = try r.get("paused_reason")
            let previousExpires: Double? = try r.get("previous_expires")
            let nextAttempt: Double? = try r.get("next_attempt")
            let pendingSince: Double? = try r.get("pending_since")
            let attempts: Int64 = try r.get("attempts")
            let created: Double = try r.get("created")
            return WebhookSubscription(
                id: id, person: PersonID(person), url: try r.get("url"),
                types: try WebhookSubscription.types(from: try r.get("types")), secret: try r.get("secret"),
                previousSecret: try r.get("previous_secret"),
                previousSecretExpires: previousExpires.map(Date.init(timeIntervalSince1970:)),
                state: paused.map { WebhookSubscription.State.paused(reason: $0) } ?? .active,
                cursor: try r.get("cursor"), attempts: Int(attempts),
                nextAttempt: nextAttempt.map(Date.init(timeIntervalSince1970:)),
                pendingSince: pendingSince.map(Date.init(timeIntervalSince1970:)), anchorKey: try r.get("anchor_key"),
                created: Date(timeIntervalSince1970: created),
                recentAttempts: try WebhookAttemptRecord.list(from: try r.get("recent")))
        }
    }
#endif
