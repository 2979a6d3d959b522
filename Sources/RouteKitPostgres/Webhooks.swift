#if Postgres
    import Foundation
    import PostgresNIO
    import RouteKit

    /// Webhook subscriptions on PostgreSQL: the `webhook` table. A view reads and writes only its person's own
    /// subscriptions (another person's id is as unknown as a missing one, and so are admin-wide subscriptions and the
    /// person's cursors of them); the admin-wide methods see only admin-wide subscriptions (rows without a person);
    /// ``dueWebhooks(at:people:after:limit:)`` is the dispatcher's look over everyone's.
    ///
    /// The writes of admin-wide subscriptions (adding, deleting, rotating, resuming, and making people's cursors)
    /// run one after the other, under one lock: a cursor is never made of a subscription being deleted, nor with a
    /// secret being replaced.
    extension PostgresStore: WebhookStore {
        package func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool {
            var record = subscription
            if record.cursor == nil { record.cursor = try await currentAnchor().text }
            let s = record
            return try await write("adding webhook subscription \(s.id)") { tx in
                // Adds of one person run one after the other, so that two at once cannot both pass the limit.
                try await Self.lock(tx, "webhooks\n" + tx.person)
                let count =
                    try await tx.value(
                        "SELECT COUNT(*) FROM webhook WHERE person = \(tx.person) AND parent IS NULL", as: Int64.self)
                    ?? 0
                guard count < Int64(limit) else { return false }
                try await Self.insertWebhook(tx, s, person: tx.person)
                return true
            }
        }

        package func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
            try await read("reading webhook subscription \(id)") { tx in
                try await tx.first(
                    """
                    SELECT * FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person) AND parent IS NULL
                    """
                ).map(Self.webhook)
            }
        }

        package func webhookToDeliver(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
            try await read("reading webhook subscription \(id)") { tx in
                try await tx.first("SELECT * FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person)")
                    .map(Self.webhook)
            }
        }

        package func webhooks() async throws(RouteKitError) -> [WebhookSubscription] {
            try await read("listing webhook subscriptions") { tx in
                try await tx.rows(
                    "SELECT * FROM webhook WHERE person = \(tx.person) AND parent IS NULL ORDER BY created, id"
                ).map(Self.webhook)
            }
        }

        package func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool {
            try await write("deleting webhook subscription \(id)") { tx in
                try await tx.first(
                    """
                    DELETE FROM webhook WHERE id = \(Self.key(id)) AND person = \(tx.person) AND parent IS NULL
                    RETURNING id
                    """) != nil
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
                    WHERE id = \(Self.key(id)) AND person = \(tx.person) AND parent IS NULL
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
                    WHERE id = \(Self.key(id)) AND person = \(tx.person) AND parent IS NULL
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
                        recent = \(WebhookAttemptRecord.text(of: recent)),
                        last_attempt = coalesce(\(update.attempt?.time.timeIntervalSince1970)::double precision,
                            last_attempt)
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
                    SELECT * FROM webhook WHERE person IS NOT NULL AND paused_reason IS NULL AND id > \(start)
                        AND ((next_attempt IS NOT NULL AND next_attempt <= \(seconds))
                            OR (next_attempt IS NULL AND (\(everyone) OR person = ANY(\(keys)))))
                    ORDER BY id LIMIT \(count)
                    """
                ).map(Self.webhook)
            }
        }

        // MARK: Admin-wide subscriptions

        package func addAdminWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError)
            -> Bool
        {
            let s = subscription
            return try await write("adding admin-wide webhook subscription \(s.id)") { tx in
                try await Self.lockAdminWebhooks(tx)
                let count = try await tx.value("SELECT COUNT(*) FROM webhook WHERE person IS NULL", as: Int64.self) ?? 0
                guard count < Int64(limit) else { return false }
                var record = s
                if record.cursor == nil { record.cursor = try await self.logHeadAnchor(tx).text }
                try await Self.insertWebhook(tx, record, person: nil)
                return true
            }
        }

        package func adminWebhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription? {
            try await read("reading admin-wide webhook subscription \(id)") { tx in
                try await Self.adminWebhook(tx, Self.key(id))
            }
        }

        package func adminWebhooks() async throws(RouteKitError) -> [WebhookSubscription] {
            try await read("listing admin-wide webhook subscriptions") { tx in
                try await tx.rows("SELECT * FROM webhook WHERE person IS NULL ORDER BY created, id").map(Self.webhook)
            }
        }

        package func deleteAdminWebhook(id: UUID) async throws(RouteKitError) -> Bool {
            let key = Self.key(id)
            return try await write("deleting admin-wide webhook subscription \(id)") { tx in
                try await Self.lockAdminWebhooks(tx)
                guard try await Self.adminWebhook(tx, key) != nil else { return false }
                try await tx.run("DELETE FROM webhook WHERE id = \(key) OR parent = \(key)")
                return true
            }
        }

        package func rotateAdminWebhookSecret(id: UUID, to secret: String, previousExpires: Date)
            async throws(RouteKitError) -> WebhookSubscription?
        {
            let key = Self.key(id)
            return try await write("rotating the secret of admin-wide webhook subscription \(id)") { tx in
                try await Self.lockAdminWebhooks(tx)
                guard try await Self.adminWebhook(tx, key) != nil else { return nil }
                // The people's cursors sign with the subscription's secrets: they move with it.
                try await tx.run(
                    """
                    UPDATE webhook SET previous_secret = secret,
                        previous_expires = \(previousExpires.timeIntervalSince1970), secret = \(secret)
                    WHERE id = \(key) OR parent = \(key)
                    """)
                return try await Self.adminWebhook(tx, key)
            }
        }

        package func resumeAdminWebhook(id: UUID, fromNow: Bool, due: Date) async throws(RouteKitError)
            -> WebhookSubscription?
        {
            let key = Self.key(id)
            return try await write("resuming admin-wide webhook subscription \(id)") { tx in
                try await Self.lockAdminWebhooks(tx)
                guard try await Self.adminWebhook(tx, key) != nil else { return nil }
                if fromNow {
                    let head = try await self.logHeadAnchor(tx).text
                    try await tx.run("DELETE FROM webhook WHERE parent = \(key)")
                    try await tx.run("UPDATE webhook SET cursor = \(head) WHERE id = \(key)")
                } else {
                    try await tx.run(
                        """
                        UPDATE webhook SET paused_reason = NULL, attempts = 0,
                            next_attempt = \(due.timeIntervalSince1970), pending_since = NULL
                        WHERE parent = \(key)
                            AND (paused_reason IS NOT NULL OR attempts > 0 OR next_attempt IS NOT NULL)
                        """)
                }
                return try await Self.adminWebhook(tx, key)
            }
        }

        package func pausedAdminWebhookCursors(id: UUID, limit: Int) async throws(RouteKitError)
            -> [WebhookSubscription]
        {
            let count = max(0, limit)
            return try await read("listing the paused cursors of admin-wide webhook subscription \(id)") { tx in
                try await tx.rows(
                    """
                    SELECT * FROM webhook WHERE parent = \(Self.key(id)) AND paused_reason IS NOT NULL
                    ORDER BY person LIMIT \(count)
                    """
                ).map(Self.webhook)
            }
        }

        package func adminWebhookActivity(id: UUID, limit: Int) async throws(RouteKitError)
            -> AdminWebhookActivity
        {
            let key = Self.key(id)
            let count = max(0, limit)
            return try await read("reading the attempts of admin-wide webhook subscription \(id)") { tx in
                // Both through partial indexes: the failing cursors only, and the newest attempts' cursors only.
                let failing =
                    try await tx.value(
                        "SELECT COUNT(*) FROM webhook WHERE parent = \(key) AND attempts > 0", as: Int64.self) ?? 0
                let cursors = try await tx.rows(
                    """
                    SELECT person, recent FROM webhook WHERE parent = \(key) AND last_attempt IS NOT NULL
                    ORDER BY last_attempt DESC LIMIT \(count)
                    """
                ).map { row in
                    try AdminWebhookActivity.cursor(person: try row.get("person"), recent: try row.get("recent"))
                }
                return AdminWebhookActivity(failingCursors: Int(failing), cursors: cursors, limit: count)
            }
        }

        package func startAdminWebhookCursors(people: Set<PersonID>?) async throws(RouteKitError) -> Int {
            let keys = people.map { $0.map(\.description).sorted() }
            if let keys, keys.isEmpty { return 0 }
            // A look first: most often there is nothing to do, and nothing is written.
            let work = try await read("looking for people new to admin-wide webhook subscriptions") { tx in
                try await self.startAdminCursors(tx, people: keys, writing: false)
            }
            guard work > 0 else { return 0 }
            return try await write("starting people's cursors of admin-wide webhook subscriptions") { tx in
                try await Self.lockAdminWebhooks(tx)
                return try await self.startAdminCursors(tx, people: keys, writing: true)
            }
        }

        /// What ``startAdminWebhookCursors(people:)`` does (`writing`) or would do: the cursors made (or to make),
        /// plus, when only looking, the subscriptions whose start would move.
        ///
        /// The log's head is read first: positions are handed out in commit order, so every person whose head is at
        /// or before it is seen by the statements that follow, and is given a cursor before the start moves past
        /// them; a person who commits meanwhile has a head past it.
        func startAdminCursors(_ tx: Transaction, people keys: [String]?, writing: Bool) async throws -> Int {
            let subscriptions = try await tx.rows("SELECT * FROM webhook WHERE person IS NULL ORDER BY id")
                .map(Self.webhook)
            if subscriptions.isEmpty { return 0 }
            var head: ChangeAnchor?
            if keys == nil { head = try await logHeadAnchor(tx) }
            let everyone = keys == nil
            let people = keys ?? []
            var work = 0
            for subscription in subscriptions {
                guard let start = subscription.startPosition else { continue }
                let key = Self.key(subscription.id)
                let newcomers = try await tx.rows(
                    """
                    SELECT person FROM person_feed WHERE head > \(start)
                        AND person NOT IN (SELECT person FROM webhook WHERE parent = \(key))
                        AND (\(everyone) OR person = ANY(\(people)))
                    ORDER BY person
                    """
                ).map { try $0.get("person") as String }
                work += newcomers.count
                if writing {
                    for person in newcomers { try await Self.insertCursor(tx, of: key, for: person, after: start) }
                }
                if let head, head.position > start {
                    if writing {
                        try await tx.run("UPDATE webhook SET cursor = \(head.text) WHERE id = \(key)")
                    } else {
                        work += 1
                    }
                }
            }
            return work
        }

        // MARK: Rows

        /// Takes the lock every write of admin-wide subscriptions takes, until the transaction ends.
        static func lockAdminWebhooks(_ tx: Transaction) async throws {
            try await lock(tx, "webhooks\neveryone")
        }

        /// Inserts subscription `s` as `person`'s (an admin-wide one when `nil`).
        /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
        static func insertWebhook(_ tx: Transaction, _ s: WebhookSubscription, person: String?) async throws {
            let added = try await tx.first(
                """
                INSERT INTO webhook(id, person, url, types, secret, previous_secret, previous_expires,
                    paused_reason, cursor, attempts, next_attempt, pending_since, anchor_key, recent, last_attempt,
                    created)
                VALUES (\(key(s.id)), \(person), \(s.url), \(WebhookSubscription.typesText(s.types)),
                    \(s.secret), \(s.previousSecret), \(s.previousSecretExpires?.timeIntervalSince1970),
                    \(s.pauseReason), \(s.cursor), \(s.attempts), \(s.nextAttempt?.timeIntervalSince1970),
                    \(s.pendingSince?.timeIntervalSince1970), \(s.anchorKey),
                    \(WebhookAttemptRecord.text(of: s.recentAttempts)),
                    \(s.recentAttempts.last?.time.timeIntervalSince1970), \(s.created.timeIntervalSince1970))
                ON CONFLICT DO NOTHING RETURNING id
                """)
            guard added != nil else {
                throw RouteKitError(.invalidArgument, "a webhook subscription with id \(s.id) exists")
            }
        }

        /// Inserts `person`'s cursor of admin-wide subscription `parent`: its URL, types, secrets, anchor key and
        /// cursor (the start), active, made now. The person's lock is taken first (shared), so that an erasure of
        /// the person under way is waited for, and then finds the cursor, or leaves no head past `start` to make it
        /// for.
        static func insertCursor(_ tx: Transaction, of parent: String, for person: String, after start: Int64)
            async throws
        {
            try await holdPerson(tx, person, exclusive: false)
            try await tx.run(
                """
                INSERT INTO webhook(id, person, parent, url, types, secret, previous_secret, previous_expires, cursor,
                    anchor_key, created)
                SELECT \(key(UUID())), \(person), id, url, types, secret, previous_secret, previous_expires, cursor,
                    anchor_key, \(Date().timeIntervalSince1970)
                FROM webhook WHERE id = \(parent) AND person IS NULL
                    AND EXISTS (SELECT 1 FROM person_feed WHERE person = \(person) AND head > \(start))
                ON CONFLICT DO NOTHING
                """)
        }

        /// The admin-wide subscription with id `key`.
        static func adminWebhook(_ tx: Transaction, _ key: String) async throws -> WebhookSubscription? {
            try await tx.first("SELECT * FROM webhook WHERE id = \(key) AND person IS NULL").map(Self.webhook)
        }

        /// The change log's head, everyone's: the newest transaction's end and token (the store's start when there
        /// is none). It is an anchor of every person whose head is at or past it.
        func logHeadAnchor(_ tx: Transaction) async throws -> ChangeAnchor {
            let state = try await feedState(tx)
            let row = try await tx.first("SELECT txn_end, token FROM change_txn ORDER BY txn_end DESC LIMIT 1")
            let position: Int64 = try row?.get("txn_end") ?? 0
            let token: Int64 = try row?.get("token") ?? 0
            return state.anchor(position: position, token: token)
        }

        /// A `webhook` row's subscription.
        @Sendable static func webhook(_ r: Row) throws -> WebhookSubscription {
            let keys = try WebhookSubscription.keys(
                id: try r.get("id"), person: try r.get("person"), parent: try r.get("parent"))
            let paused: String? = try r.get("paused_reason")
            let previousExpires: Double? = try r.get("previous_expires")
            let nextAttempt: Double? = try r.get("next_attempt")
            let pendingSince: Double? = try r.get("pending_since")
            let attempts: Int64 = try r.get("attempts")
            let created: Double = try r.get("created")
            return WebhookSubscription(
                id: keys.id, person: keys.person, parent: keys.parent, url: try r.get("url"),
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
