import Foundation
import RouteKit

/// The webhook part of the conformance suite: subscriptions (`WebhookStore`) as every backend keeps them. Each check
/// takes a fresh, empty store seen as the default person, adds people A and B (``PeopleConformance``'s) and works
/// through their views:
///
/// ```swift
/// @Test func webhooks() async throws {
///     try await WebhookConformance.run { try makeTemporaryStore() }
/// }
/// ```
///
/// A failure throws ``ConformanceFailure`` naming the line and what differed.
package enum WebhookConformance {
    /// Runs every check, each on a store of its own from `makeStore` (a fresh, empty store, seen as the default
    /// person).
    /// - Throws: ``ConformanceFailure`` naming what differed, or what the store threw.
    package static func run<S: RouteStore & PeopleStore & WebhookStore>(makeStore: () async throws -> S)
        async throws
    {
        try await addAndRead(try await makeStore())
        try await perPerson(try await makeStore())
        try await rotation(try await makeStore())
        try await deliveries(try await makeStore())
        try await due(try await makeStore())
        try await erasure(try await makeStore())
        try await adminWide(try await makeStore())
        try await adminCursors(try await makeStore())
        try await adminLifecycle(try await makeStore())
        try await adminActivity(try await makeStore())
    }

    static func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        try StoreConformance.expect(condition, message(), file: file, line: line)
    }

    /// Whole seconds, so that every backend gives times back exactly.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// A subscription of `person` (admin-wide when `nil`) to `url`, made at `created`.
    static func subscription(
        _ person: PersonID?, url: String = "https://hooks.example/a", types: Set<ChangeObjectType> = [.route],
        created: Date = WebhookConformance.t0, id: UUID = UUID()
    ) -> WebhookSubscription {
        WebhookSubscription(
            id: id, person: person, url: url, types: types, secret: "whsec_" + String(repeating: "A", count: 44),
            created: created)
    }

    /// Attempt `n`: made `n` seconds after 2023-11-14T22:13:20Z, with `status` (500 unless told) or `error`, `msg_n`
    /// its id.
    package static func attempt(_ n: Int, status: Int? = 500, error: String? = nil) -> WebhookAttemptRecord {
        WebhookAttemptRecord(
            time: t0.addingTimeInterval(Double(n)), status: status, error: error, detail: "attempt \(n) — «é»",
            durationMilliseconds: n * 10, messageID: "msg_\(n)")
    }

    /// The attempts of a migration test's store, whose rows were written before the schema kept when each row's
    /// newest attempt was made: admin-wide subscription `id` with Ana's cursor (attempts 1 and 3, failing) and Ben's
    /// (attempt 2, acknowledged). They show, newest through the column the migration filled in.
    /// - Throws: ``ConformanceFailure`` naming what differed.
    package static func expectMigratedAttempts(
        _ store: some WebhookStore, id: UUID, ana: PersonID, ben: PersonID
    ) async throws {
        let activity = try await store.adminWebhookActivity(id: id, limit: 20)
        try expect(activity.recentAttempts.map(\.record) == (1...3).map { attempt($0) }, "every attempt, oldest first")
        try expect(activity.recentAttempts.map(\.person) == [ana, ben, ana], "each naming its person")
        try expect(activity.failingCursors == 1, "Ana's cursor is failing: \(activity.failingCursors)")
        let newest = try await store.adminWebhookActivity(id: id, limit: 1)
        try expect(newest.recentAttempts.map(\.record) == [attempt(3)], "the newest, through the column filled in")
    }

    // MARK: Checks

    /// A subscription reads back as added, its cursor the person's current anchor; lists are oldest first; an id is
    /// taken once; the limit holds.
    static func addAndRead<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, _) = try await PeopleConformance.twoPeople(store)
        // A change of A's first, so that the current anchor is not the empty store's.
        _ = try await StoreConformance.saved(
            a, PeopleConformance.phone, sync: SyncIdentity(identifier: "w", version: 1))
        let head = try await a.currentAnchor().text
        let first = subscription(a.person, types: [.route, .workout])
        try expect(try await a.addWebhook(first, limit: 3), "a first subscription is added")
        guard let read = try await a.webhook(id: first.id) else {
            throw ConformanceFailure(description: "a subscription added is read back")
        }
        try expect(read.cursor == head, "a subscription without a cursor starts at the person's current anchor")
        try expect(read.person == a.person, "it is the view's person's")
        try expect(read.url == first.url && read.types == [.route, .workout], "its URL and types read back")
        try expect(read.secret == first.secret && read.previousSecret == nil, "its secret reads back, no previous one")
        try expect(read.state == .active && read.attempts == 0, "it starts active with no failed attempts")
        try expect(read.nextAttempt == nil && read.pendingSince == nil, "nothing is scheduled or pending")
        try expect(read.created == t0, "its creation time reads back exactly")
        try expect(read.recentAttempts.isEmpty, "no attempts yet")
        try expect(try await a.currentAnchor().text == head, "adding a subscription records no change")

        var keyed = subscription(a.person, created: t0.addingTimeInterval(1))
        keyed.anchorKey = "a2V5"
        keyed.cursor = head
        try expect(try await a.addWebhook(keyed, limit: 3), "a second subscription is added")
        try expect(try await a.webhook(id: keyed.id)?.anchorKey == "a2V5", "its anchor key reads back")
        let ids = try await a.webhooks().map(\.id)
        try expect(ids == [first.id, keyed.id], "the list is oldest first: \(ids)")
        _ = try await StoreConformance.expectError(.invalidArgument) {
            try await a.addWebhook(subscription(a.person, id: first.id), limit: 3)
        }
        try expect(
            try await a.addWebhook(subscription(a.person, created: t0.addingTimeInterval(2)), limit: 3),
            "a third is added under a limit of 3")
        try expect(
            !(try await a.addWebhook(subscription(a.person, created: t0.addingTimeInterval(3)), limit: 3)),
            "a fourth is refused under a limit of 3")
        try expect(try await a.webhooks().count == 3, "the refused one was not added")
    }

    /// Another person's subscription is not found by any call, exactly as a missing one; each person's limit is
    /// their own.
    static func perPerson<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        let mine = subscription(a.person)
        try expect(try await a.addWebhook(mine, limit: 1), "A's subscription is added")
        try expect(try await b.addWebhook(subscription(b.person), limit: 1), "B's limit is B's own")
        try expect(try await b.webhook(id: mine.id) == nil, "B does not find A's subscription")
        try expect(try await b.webhooks().map(\.id) != [mine.id], "B's list does not hold A's")
        try expect(try await b.webhooks().count == 1, "B's list holds B's one")
        try expect(!(try await b.deleteWebhook(id: mine.id)), "B cannot delete A's")
        try expect(
            try await b.rotateWebhookSecret(id: mine.id, to: "whsec_x", previousExpires: t0) == nil,
            "B cannot rotate A's")
        try expect(try await b.resumeWebhook(id: mine.id, cursor: "x", due: t0) == nil, "B cannot resume A's")
        let before = try await a.webhook(id: mine.id)
        try expect(
            !(try await b.updateWebhookDelivery(
                id: mine.id, from: before?.cursor, WebhookDeliveryUpdate(cursor: "moved", attempt: attempt(1)))),
            "B cannot record a delivery of A's")
        let after = try await a.webhook(id: mine.id)
        try expect(after == before, "A's subscription is unchanged by B's attempts")
        try expect(try await store.webhook(id: mine.id) == nil, "the default person does not find A's either")
        try expect(try await a.deleteWebhook(id: mine.id), "A deletes theirs")
        try expect(try await a.webhook(id: mine.id) == nil, "and it is gone")
        try expect(!(try await a.deleteWebhook(id: mine.id)), "deleting again finds nothing")
    }

    /// A rotation keeps the old secret signing until its expiry; a second rotation drops the first one's.
    static func rotation<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, _) = try await PeopleConformance.twoPeople(store)
        let s = subscription(a.person)
        _ = try await a.addWebhook(s, limit: 20)
        let expires = t0.addingTimeInterval(86_400)
        guard let rotated = try await a.rotateWebhookSecret(id: s.id, to: "whsec_new", previousExpires: expires) else {
            throw ConformanceFailure(description: "a rotation answers the subscription")
        }
        try expect(rotated.secret == "whsec_new", "the new secret is current")
        try expect(rotated.previousSecret == s.secret, "the old one is kept")
        try expect(rotated.previousSecretExpires == expires, "with its expiry")
        try expect(try await a.webhook(id: s.id) == rotated, "the rotation is stored as answered")
        try expect(
            rotated.signingSecrets(at: t0) == ["whsec_new", s.secret], "both sign before the expiry, the new first")
        try expect(rotated.signingSecrets(at: expires) == ["whsec_new"], "only the new one signs from the expiry")
        let again = try await a.rotateWebhookSecret(id: s.id, to: "whsec_newer", previousExpires: expires)
        try expect(again?.previousSecret == "whsec_new", "a second rotation keeps the one it replaces, not the first")
        try expect(again?.signingSecrets(at: t0) == ["whsec_newer", "whsec_new"], "two secrets at most")
    }

    /// Deliveries are recorded only from the cursor they read at; retries, pauses and resumption; the newest 20
    /// attempts are kept, in order.
    static func deliveries<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, _) = try await PeopleConformance.twoPeople(store)
        var s = subscription(a.person)
        s.cursor = "c0"
        _ = try await a.addWebhook(s, limit: 20)
        try expect(
            !(try await a.updateWebhookDelivery(id: s.id, from: "elsewhere", WebhookDeliveryUpdate(cursor: "c1"))),
            "a delivery read from another cursor is not recorded")
        try expect(try await a.webhook(id: s.id)?.cursor == "c0", "the cursor did not move")
        let retryAt = t0.addingTimeInterval(30)
        try expect(
            try await a.updateWebhookDelivery(
                id: s.id, from: "c0",
                WebhookDeliveryUpdate(
                    attempts: 1, nextAttempt: retryAt, pendingSince: t0,
                    attempt: attempt(1, status: nil, error: "timeout"))),
            "a failed attempt is recorded")
        let failed = try await a.webhook(id: s.id)
        try expect(failed?.cursor == "c0", "a failure leaves the cursor")
        try expect(failed?.attempts == 1 && failed?.nextAttempt == retryAt, "a failure counts and schedules")
        try expect(failed?.pendingSince == t0, "the pending set's first read is kept")
        try expect(failed?.recentAttempts == [attempt(1, status: nil, error: "timeout")], "the attempt reads back")
        try expect(
            try await a.updateWebhookDelivery(
                id: s.id, from: "c0", WebhookDeliveryUpdate(cursor: "c1", attempt: attempt(2, status: 204))),
            "a delivery is recorded")
        let delivered = try await a.webhook(id: s.id)
        try expect(delivered?.cursor == "c1", "a delivery moves the cursor")
        try expect(delivered?.attempts == 0 && delivered?.nextAttempt == nil, "and clears the failures")
        try expect(delivered?.pendingSince == nil, "and the pending set")
        try expect(delivered?.recentAttempts.count == 2, "both attempts are kept")
        try expect(
            try await a.updateWebhookDelivery(
                id: s.id, from: "c1",
                WebhookDeliveryUpdate(attempts: 8, pauseReason: "8 attempts failed", attempt: attempt(3))),
            "a pause is recorded")
        let paused = try await a.webhook(id: s.id)
        try expect(paused?.state == .paused(reason: "8 attempts failed"), "the subscription is paused, saying why")
        let due = try await a.dueWebhooks(at: t0.addingTimeInterval(1e6), people: nil, after: nil, limit: 10)
        try expect(!due.contains { $0.id == s.id }, "a paused subscription is never due")
        try expect(
            try await a.updateWebhookDelivery(id: s.id, from: "c1", WebhookDeliveryUpdate(attempts: 9)),
            "an update without a reason is recorded")
        try expect(try await a.webhook(id: s.id)?.pauseReason == "8 attempts failed", "and leaves the pause")
        let resumed = try await a.resumeWebhook(id: s.id, cursor: nil, due: t0)
        try expect(resumed?.state == .active && resumed?.attempts == 0, "resuming makes it active without failures")
        try expect(resumed?.nextAttempt == t0, "resuming makes it due at the time given")
        try expect(resumed?.cursor == "c1", "resuming without a cursor keeps it")
        try expect(
            try await a.dueWebhooks(at: t0, people: [], after: nil, limit: 10).map(\.id) == [s.id],
            "a resumed subscription is due, whoever committed")
        let moved = try await a.resumeWebhook(id: s.id, cursor: "c9", due: t0)
        try expect(moved?.cursor == "c9", "resuming with a cursor replaces it")
        for n in 4..<30 {
            _ = try await a.updateWebhookDelivery(id: s.id, from: "c9", WebhookDeliveryUpdate(attempt: attempt(n)))
        }
        let kept = try await a.webhook(id: s.id)?.recentAttempts.map(\.messageID) ?? []
        try expect(kept == (10..<30).map { "msg_\($0)" }, "the newest 20 attempts are kept, oldest first: \(kept)")
    }

    /// What the dispatcher is given: active subscriptions with a retry due (anyone's), and those with none
    /// scheduled of the people asked about; by id, paged.
    static func due<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        let fresh = subscription(a.person)
        var later = subscription(b.person)
        var ready = subscription(b.person)
        _ = try await a.addWebhook(fresh, limit: 20)
        _ = try await b.addWebhook(later, limit: 20)
        _ = try await b.addWebhook(ready, limit: 20)
        later = try await b.webhook(id: later.id) ?? later
        ready = try await b.webhook(id: ready.id) ?? ready
        let now = t0.addingTimeInterval(100)
        _ = try await b.updateWebhookDelivery(
            id: later.id, from: later.cursor,
            WebhookDeliveryUpdate(attempts: 1, nextAttempt: now.addingTimeInterval(1)))
        _ = try await b.updateWebhookDelivery(
            id: ready.id, from: ready.cursor, WebhookDeliveryUpdate(attempts: 1, nextAttempt: now))
        func ids(_ people: Set<PersonID>?, after: UUID? = nil, limit: Int = 10) async throws -> Set<UUID> {
            Set(try await store.dueWebhooks(at: now, people: people, after: after, limit: limit).map(\.id))
        }
        try expect(try await ids(nil) == [fresh.id, ready.id], "everyone's: the fresh one and the retry due")
        try expect(try await ids([a.person]) == [fresh.id, ready.id], "A's fresh one, and any retry due")
        try expect(try await ids([b.person]) == [ready.id], "B's: only the retry due (B's other waits)")
        try expect(try await ids([]) == [ready.id], "nobody's: the retries due only")
        let sorted = [fresh.id, ready.id].sorted { $0.uuidString.lowercased() < $1.uuidString.lowercased() }
        let page = try await store.dueWebhooks(at: now, people: nil, after: nil, limit: 1).map(\.id)
        try expect(page == [sorted[0]], "paged by id: the first")
        let next = try await store.dueWebhooks(at: now, people: nil, after: sorted[0], limit: 1).map(\.id)
        try expect(next == [sorted[1]], "then the next after it")
        let views = try await a.dueWebhooks(at: now, people: nil, after: nil, limit: 10).count
        try expect(views == 2, "any view asks for everyone's")
    }

    /// Erasing a person removes their subscriptions and nobody else's.
    static func erasure<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        let theirs = subscription(a.person)
        let others = subscription(b.person)
        _ = try await a.addWebhook(theirs, limit: 20)
        _ = try await b.addWebhook(others, limit: 20)
        try expect(try await store.erasePerson(id: a.person), "A is erased")
        try expect(try await a.webhook(id: theirs.id) == nil, "A's subscription is gone")
        try expect(try await a.webhooks().isEmpty, "A's view lists nothing")
        let due = try await store.dueWebhooks(at: t0, people: nil, after: nil, limit: 10).map(\.id)
        try expect(due == [others.id], "only B's is left for the dispatcher")
        try expect(try await b.webhook(id: others.id) != nil, "B's subscription stays")
    }

    // MARK: Admin-wide subscriptions

    /// An admin-wide subscription reads back without a person, starting at the change log's head; no person's call
    /// finds it, and no admin-wide call finds a person's; the limit counts admin-wide ones only.
    static func adminWide<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        _ = try await StoreConformance.saved(
            a, PeopleConformance.phone, sync: SyncIdentity(identifier: "w", version: 1))
        let head = try await a.currentAnchor().text
        let mine = subscription(a.person)
        try expect(try await a.addWebhook(mine, limit: 20), "A's own subscription is added")
        let minesBefore = try await a.webhook(id: mine.id)
        let everyone = subscription(nil, url: "https://hooks.example/everyone", types: [.route, .workout])
        try expect(try await store.addAdminWebhook(everyone, limit: 2), "an admin-wide subscription is added")
        guard let read = try await b.adminWebhook(id: everyone.id) else {
            throw ConformanceFailure(description: "an admin-wide subscription is read back, from any view")
        }
        try expect(read.person == nil && read.parent == nil, "it has no person and no parent")
        try expect(read.cursor == head, "it starts at the log's head (A's newest change)")
        try expect(read.url == everyone.url && read.types == [.route, .workout], "its URL and types read back")
        try expect(read.secret == everyone.secret && read.created == t0, "its secret and creation time read back")
        try expect(read.state == .active && read.attempts == 0, "it is active, with no failed attempts")
        try expect(try await a.currentAnchor().text == head, "adding it records no change")
        try expect(try await store.adminWebhooks().map(\.id) == [everyone.id], "the admin-wide list holds it only")
        try expect(try await store.adminWebhook(id: mine.id) == nil, "an admin-wide read does not find A's")
        try expect(!(try await store.deleteAdminWebhook(id: mine.id)), "nor deletes it")
        try expect(
            try await store.rotateAdminWebhookSecret(id: mine.id, to: "whsec_x", previousExpires: t0) == nil,
            "nor rotates it")
        try expect(
            try await store.resumeAdminWebhook(id: mine.id, fromNow: true, due: t0) == nil, "nor resumes it")
        try expect(try await a.webhook(id: mine.id) == minesBefore, "A's is unchanged")
        for view in [store, a] {
            try expect(try await view.webhook(id: everyone.id) == nil, "a person's read does not find it")
            try expect(try await view.webhookToDeliver(id: everyone.id) == nil, "nor a delivery's read")
            try expect(!(try await view.webhooks().contains { $0.id == everyone.id }), "nor a person's list")
            try expect(!(try await view.deleteWebhook(id: everyone.id)), "a person cannot delete it")
            try expect(
                try await view.rotateWebhookSecret(id: everyone.id, to: "whsec_x", previousExpires: t0) == nil,
                "nor rotate it")
            try expect(try await view.resumeWebhook(id: everyone.id, cursor: "x", due: t0) == nil, "nor resume it")
        }
        try expect(try await b.adminWebhook(id: everyone.id) == read, "it is unchanged by the people's attempts")
        _ = try await StoreConformance.expectError(.invalidArgument) {
            try await store.addAdminWebhook(subscription(nil, id: mine.id), limit: 20)
        }
        try expect(
            try await store.addAdminWebhook(subscription(nil, created: t0.addingTimeInterval(1)), limit: 2),
            "a second is added under a limit of 2")
        try expect(!(try await store.addAdminWebhook(subscription(nil), limit: 2)), "a third is refused")
        try expect(try await a.addWebhook(subscription(a.person), limit: 2), "a person's limit is their own")
        try expect(try await store.adminWebhooks().count == 2, "two admin-wide subscriptions, oldest first")
    }

    /// People's cursors: one for each person who commits past an admin-wide subscription's start, made by the
    /// dispatcher's call for the people asked about (everyone when `nil`), once; delivered as a person's
    /// subscription is, read only by deliveries; a full look moves the start to the log's head, and a person added
    /// later starts there.
    static func adminCursors<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        _ = try await StoreConformance.saved(
            a, PeopleConformance.phone, sync: SyncIdentity(identifier: "before", version: 1))
        let everyone = subscription(nil, types: [.workout])
        _ = try await store.addAdminWebhook(everyone, limit: 20)
        let start = try await store.adminWebhook(id: everyone.id)?.cursor
        try expect(try await store.startAdminWebhookCursors(people: nil) == 0, "nobody committed since: no cursor")
        _ = try await StoreConformance.saved(
            a, PeopleConformance.phone, sync: SyncIdentity(identifier: "after", version: 1))
        try expect(try await store.startAdminWebhookCursors(people: [b.person]) == 0, "B has not committed")
        try expect(try await store.startAdminWebhookCursors(people: [a.person]) == 1, "A has: A's cursor is made")
        try expect(try await store.startAdminWebhookCursors(people: [a.person]) == 0, "once")
        let due = try await store.dueWebhooks(at: t0, people: [a.person], after: nil, limit: 10)
        guard due.count == 1, let cursor = due.first else {
            throw ConformanceFailure(description: "A's cursor is due, alone: \(due.count)")
        }
        try expect(cursor.person == a.person && cursor.parent == everyone.id, "it is A's, of the subscription")
        try expect(cursor.url == everyone.url && cursor.types == [.workout], "with its URL and types")
        try expect(cursor.secret == everyone.secret, "and its secret")
        try expect(cursor.cursor == start && cursor.state == .active, "active, at the subscription's start")
        let set = try await a.changes(
            since: try ChangeAnchor(text: cursor.cursor ?? ""), matching: ChangePredicate(types: [.workout]),
            limit: 10)
        try expect(set.addedObjects.count == 1, "the start is an anchor of A's: the workout saved after it only")
        try expect(try await a.webhook(id: cursor.id) == nil, "A's own reads do not find the cursor")
        try expect(try await a.webhooks().isEmpty, "nor A's list")
        try expect(!(try await a.deleteWebhook(id: cursor.id)), "A cannot delete it")
        try expect(try await a.webhookToDeliver(id: cursor.id) == cursor, "a delivery reads it as A")
        try expect(try await b.webhookToDeliver(id: cursor.id) == nil, "not as B")
        try expect(
            try await a.updateWebhookDelivery(
                id: cursor.id, from: cursor.cursor,
                WebhookDeliveryUpdate(cursor: "c1", attempt: attempt(1, status: 204))),
            "a delivery is recorded as A's")
        try expect(try await a.webhookToDeliver(id: cursor.id)?.cursor == "c1", "and moves the cursor")
        try expect(
            try await store.adminWebhook(id: everyone.id)?.cursor == start, "the subscription's start is unmoved")
        try expect(try await store.startAdminWebhookCursors(people: nil) == 0, "a full look makes no other cursor")
        let moved = try await store.adminWebhook(id: everyone.id)?.cursor
        let headNow = try await a.currentAnchor().text
        try expect(moved == headNow, "and moves the start to the log's head")
        let c = Person(name: "C", created: t0.addingTimeInterval(2))
        try await store.addPerson(c)
        let late = store.forPerson(c.id)
        _ = try await StoreConformance.saved(
            late, PeopleConformance.phone, sync: SyncIdentity(identifier: "late", version: 1))
        try expect(try await store.startAdminWebhookCursors(people: nil) == 1, "a person added later gets one")
        let theirs = try await store.dueWebhooks(at: t0, people: [c.id], after: nil, limit: 10)
        try expect(theirs.map(\.cursor) == [moved], "starting at the moved start")
        let first = try await late.changes(
            since: try ChangeAnchor(text: moved ?? ""), matching: ChangePredicate(types: [.workout]), limit: 10)
        try expect(first.addedObjects.count == 1, "which is an anchor of theirs: their workout follows it")
    }

    /// An admin-wide subscription's rotation, resumption and deletion reach its people's cursors; an erasure
    /// removes the person's; resuming from now starts again from the log's head.
    static func adminLifecycle<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        let everyone = subscription(nil, types: [.workout])
        _ = try await store.addAdminWebhook(everyone, limit: 20)
        for view in [a, b] {
            _ = try await StoreConformance.saved(
                view, PeopleConformance.phone, sync: SyncIdentity(identifier: "w", version: 1))
        }
        try expect(try await store.startAdminWebhookCursors(people: nil) == 2, "a cursor for each")
        let cursors = try await store.dueWebhooks(at: t0, people: nil, after: nil, limit: 10)
        guard let ofA = cursors.first(where: { $0.person == a.person }),
            let ofB = cursors.first(where: { $0.person == b.person })
        else { throw ConformanceFailure(description: "A's and B's cursors are due: \(cursors.count)") }
        _ = try await a.updateWebhookDelivery(
            id: ofA.id, from: ofA.cursor,
            WebhookDeliveryUpdate(attempts: 8, pauseReason: "8 attempts failed", attempt: attempt(1)))
        let paused = try await store.pausedAdminWebhookCursors(id: everyone.id, limit: 10)
        try expect(paused.map(\.id) == [ofA.id], "A's cursor is listed paused, B's not")
        try expect(paused.first?.recentAttempts == [attempt(1)], "with its attempts")
        let expires = t0.addingTimeInterval(86_400)
        let rotated = try await store.rotateAdminWebhookSecret(
            id: everyone.id, to: "whsec_new", previousExpires: expires)
        try expect(rotated?.secret == "whsec_new" && rotated?.previousSecret == everyone.secret, "a rotation")
        let signing = try await b.webhookToDeliver(id: ofB.id)?.signingSecrets(at: t0)
        try expect(signing == ["whsec_new", everyone.secret], "reaches the people's cursors")
        let resumed = try await store.resumeAdminWebhook(id: everyone.id, fromNow: false, due: t0)
        try expect(resumed?.id == everyone.id, "a resumption answers the subscription")
        let again = try await a.webhookToDeliver(id: ofA.id)
        try expect(again?.state == .active && again?.attempts == 0, "A's cursor is active, its failures forgotten")
        try expect(again?.nextAttempt == t0 && again?.cursor == ofA.cursor, "due at once, from where it was")
        try expect(try await b.webhookToDeliver(id: ofB.id)?.nextAttempt == nil, "B's, with nothing pending, is left")
        try expect(try await store.pausedAdminWebhookCursors(id: everyone.id, limit: 10).isEmpty, "none paused")
        try expect(try await store.erasePerson(id: b.person), "B is erased")
        try expect(try await b.webhookToDeliver(id: ofB.id) == nil, "B's cursor went with B")
        try expect(try await store.startAdminWebhookCursors(people: nil) == 0, "and is not made again")
        _ = try await store.resumeAdminWebhook(id: everyone.id, fromNow: true, due: t0)
        try expect(try await a.webhookToDeliver(id: ofA.id) == nil, "resuming from now drops the people's cursors")
        try expect(try await store.startAdminWebhookCursors(people: nil) == 0, "nobody committed since")
        _ = try await StoreConformance.saved(
            a, PeopleConformance.phone, sync: SyncIdentity(identifier: "next", version: 1))
        try expect(try await store.startAdminWebhookCursors(people: [a.person]) == 1, "A's next commit makes one")
        try expect(try await store.deleteAdminWebhook(id: everyone.id), "the subscription is deleted")
        let left = try await store.dueWebhooks(at: t0, people: nil, after: nil, limit: 10)
        try expect(left.isEmpty, "with every person's cursor")
        try expect(!(try await store.deleteAdminWebhook(id: everyone.id)), "deleting again finds nothing")
    }

    /// An admin-wide subscription's activity: the newest attempts over its people's cursors, oldest first, each
    /// naming its person, at most the limit asked; how many cursors are failing (paused ones included); never
    /// another subscription's attempts, nor those of a person's own subscription.
    static func adminActivity<S: RouteStore & PeopleStore & WebhookStore>(_ store: S) async throws {
        let (a, b) = try await PeopleConformance.twoPeople(store)
        let everyone = subscription(nil, types: [.workout])
        let other = subscription(nil, url: "https://hooks.example/other", types: [.workout])
        _ = try await store.addAdminWebhook(everyone, limit: 20)
        _ = try await store.addAdminWebhook(other, limit: 20)
        let own = subscription(a.person)
        _ = try await a.addWebhook(own, limit: 20)
        for view in [a, b] {
            _ = try await StoreConformance.saved(
                view, PeopleConformance.phone, sync: SyncIdentity(identifier: "w", version: 1))
        }
        try expect(
            try await store.adminWebhookActivity(id: everyone.id, limit: 20) == AdminWebhookActivity(),
            "no attempt yet: nothing shown, none failing")
        try expect(try await store.startAdminWebhookCursors(people: nil) == 4, "a cursor for each person of each")
        let due = try await store.dueWebhooks(at: t0, people: nil, after: nil, limit: 10)
        guard let ofA = due.first(where: { $0.person == a.person && $0.parent == everyone.id }),
            let ofB = due.first(where: { $0.person == b.person && $0.parent == everyone.id }),
            let othersOfA = due.first(where: { $0.person == a.person && $0.parent == other.id })
        else { throw ConformanceFailure(description: "the people's cursors are due: \(due.count)") }
        let failing = WebhookDeliveryUpdate(attempts: 1, nextAttempt: t0, pendingSince: t0)
        func record(
            _ view: S, _ cursor: WebhookSubscription, _ update: WebhookDeliveryUpdate, _ made: WebhookAttemptRecord
        )
            async throws
        {
            var update = update
            update.attempt = made
            let from = try await view.webhookToDeliver(id: cursor.id)?.cursor
            try expect(try await view.updateWebhookDelivery(id: cursor.id, from: from, update), "recorded")
        }
        try await record(a, ofA, failing, attempt(1))
        try await record(b, ofB, WebhookDeliveryUpdate(cursor: "b1"), attempt(2, status: 204))
        var twice = failing
        twice.attempts = 2
        try await record(a, ofA, twice, attempt(3))
        try await record(b, ofB, failing, attempt(4))
        try await record(a, othersOfA, WebhookDeliveryUpdate(cursor: "o1"), attempt(5, status: 204))
        _ = try await a.updateWebhookDelivery(
            id: own.id, from: try await a.webhook(id: own.id)?.cursor, WebhookDeliveryUpdate(attempt: attempt(6)))

        let all = try await store.adminWebhookActivity(id: everyone.id, limit: 20)
        try expect(
            all.recentAttempts.map(\.record) == [attempt(1), attempt(2, status: 204), attempt(3), attempt(4)],
            "every person's attempts, oldest first: \(all.recentAttempts.map(\.record.messageID))")
        try expect(
            all.recentAttempts.map(\.person) == [a.person, b.person, a.person, b.person], "each naming its person")
        try expect(all.failingCursors == 2, "both cursors are failing: \(all.failingCursors)")
        try expect(try await b.adminWebhookActivity(id: everyone.id, limit: 20) == all, "from any view")
        let three = try await store.adminWebhookActivity(id: everyone.id, limit: 3)
        try expect(
            three.recentAttempts.map(\.record.messageID) == ["msg_2", "msg_3", "msg_4"],
            "the newest 3, oldest first: \(three.recentAttempts.map(\.record.messageID))")
        try expect(three.recentAttempts.map(\.person) == [b.person, a.person, b.person], "each naming its person")
        let others = try await store.adminWebhookActivity(id: other.id, limit: 20)
        try expect(others.recentAttempts.map(\.record) == [attempt(5, status: 204)], "the other's are its own")
        try expect(others.failingCursors == 0, "none of its cursors is failing")

        try await record(b, ofB, WebhookDeliveryUpdate(cursor: "b2"), attempt(7, status: 204))
        try await record(
            a, ofA, WebhookDeliveryUpdate(attempts: 3, pauseReason: "3 attempts failed"), attempt(8))
        let later = try await store.adminWebhookActivity(id: everyone.id, limit: 2)
        try expect(later.recentAttempts.map(\.record.messageID) == ["msg_7", "msg_8"], "the newest 2")
        try expect(later.failingCursors == 1, "B's delivered: A's paused cursor is the one failing")
        _ = try await store.resumeAdminWebhook(id: everyone.id, fromNow: false, due: t0)
        let resumed = try await store.adminWebhookActivity(id: everyone.id, limit: 2)
        try expect(resumed.failingCursors == 0, "resumed: none failing")
        try expect(resumed.recentAttempts == later.recentAttempts, "the attempts stay")
        try expect(
            try await store.adminWebhookActivity(id: UUID(), limit: 20) == AdminWebhookActivity(),
            "an unknown subscription shows nothing")
        try expect(
            try await store.adminWebhookActivity(id: own.id, limit: 20) == AdminWebhookActivity(),
            "nor does a person's own")
    }
}
