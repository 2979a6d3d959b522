import Foundation

/// A webhook subscription as a store keeps it (`routekit serve`'s `/v1/webhooks`): one person's request to have the
/// changes of their feed pushed to a URL, and where the deliveries stand.
///
/// An admin-wide subscription (an admin token's) has no person (``person`` is `nil`): it delivers every person's
/// change sets, each person's on a cursor of their own. The store keeps that cursor as a subscription of the person
/// whose ``parent`` is the admin-wide one (with its URL, types, secrets and anchor key, which follow it): the
/// dispatcher delivers it as any other, and only the dispatcher sees it (the person's own calls never do). The
/// admin-wide subscription's own cursor is where its people's cursors start: the change log's head when it was made
/// (moved on as the dispatcher looks at everyone, so that a person who commits much later starts from a recent
/// position).
///
/// The store's change log is the outbox: a subscription holds a cursor (the anchor of the last change set its
/// receiver acknowledged), and each delivery reads the person's feed after it. The cursor moves only when a
/// delivery is acknowledged, so a server that stops mid-delivery loses nothing: the next one (or another server of
/// the store) reads from the same cursor and sends the same change set again.
///
/// The signing secrets are kept as given (they must be usable to sign): whoever can read the store can read them, as
/// they can read everything the deliveries carry.
package struct WebhookSubscription: Hashable, Sendable, Identifiable {
    /// Whether deliveries are made.
    package enum State: Hashable, Sendable {
        /// Deliveries are made.
        case active
        /// No deliveries until the subscription is resumed: why (too many failed attempts, a receiver's address that
        /// is not allowed, history compacted past the cursor).
        case paused(reason: String)
    }

    /// The most attempts a subscription keeps (``recentAttempts``): the newest 20.
    package static let recentLimit = 20

    /// The subscription's id.
    package var id: UUID
    /// Whose changes it delivers (a store saves it as its view's person, whatever this says); `nil` for an
    /// admin-wide subscription.
    package var person: PersonID?
    /// For a person's cursor of an admin-wide subscription, that subscription's id; `nil` otherwise.
    package var parent: UUID?
    /// Where the deliveries go (`http` or `https`).
    package var url: String
    /// The types of object whose changes it delivers (as `GET /v1/changes?types=` names them).
    package var types: Set<ChangeObjectType>
    /// The secret every delivery is signed with (`whsec_…`).
    package var secret: String
    /// The secret it had before the last rotation, which still signs until ``previousSecretExpires``.
    package var previousSecret: String?
    /// When ``previousSecret`` stops signing.
    package var previousSecretExpires: Date?
    /// Whether deliveries are made.
    package var state: State
    /// The anchor text (the store's, not sealed) of the last change set the receiver acknowledged: deliveries read
    /// the feed after it. `nil` when adding: the store sets it to its person's current anchor, so the first delivery
    /// is of the changes after the subscription was made.
    package var cursor: String?
    /// Failed attempts of the change set being delivered (0 when none is pending).
    package var attempts: Int
    /// When the next attempt is due after a failure; `nil`: as soon as there is something to deliver.
    package var nextAttempt: Date?
    /// When the change set being delivered was first read (its body's `timestamp`, the same on every retry); `nil`
    /// when none is pending.
    package var pendingSince: Date?
    /// How the server seals the anchors it delivers, for the token that made the subscription (opaque to the store;
    /// `nil`: anchors are delivered as the store's text).
    package var anchorKey: String?
    /// When it was made.
    package var created: Date
    /// The newest attempts, oldest first, at most ``recentLimit``.
    package var recentAttempts: [WebhookAttemptRecord]

    /// A subscription record.
    package init(
        id: UUID = UUID(), person: PersonID?, parent: UUID? = nil, url: String, types: Set<ChangeObjectType>,
        secret: String, previousSecret: String? = nil, previousSecretExpires: Date? = nil, state: State = .active,
        cursor: String? = nil, attempts: Int = 0, nextAttempt: Date? = nil, pendingSince: Date? = nil,
        anchorKey: String? = nil, created: Date = Date(), recentAttempts: [WebhookAttemptRecord] = []
    ) {
        self.id = id
        self.person = person
        self.parent = parent
        self.url = url
        self.types = types
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretExpires = previousSecretExpires
        self.state = state
        self.cursor = cursor
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.pendingSince = pendingSince
        self.anchorKey = anchorKey
        self.created = created
        self.recentAttempts = recentAttempts
    }

    /// The secrets that sign a delivery made at `date`: the current one, then the previous one until it expires.
    package func signingSecrets(at date: Date) -> [String] {
        guard let previousSecret, let expires = previousSecretExpires, date < expires else { return [secret] }
        return [secret, previousSecret]
    }

    /// Why it is paused, `nil` when it is active.
    package var pauseReason: String? {
        if case .paused(let reason) = state { return reason }
        return nil
    }

    /// `list` with `attempt` appended (when there is one), keeping the newest ``recentLimit``.
    package static func recent(_ list: [WebhookAttemptRecord], adding attempt: WebhookAttemptRecord?)
        -> [WebhookAttemptRecord]
    {
        guard let attempt else { return list }
        return Array((list + [attempt]).suffix(recentLimit))
    }

    /// A stored subscription's id, person and parent, from their text.
    /// - Throws: ``RouteKitError/Code/storage`` when one is not a uuid.
    package static func keys(id: String, person: String?, parent: String?) throws(RouteKitError)
        -> (id: UUID, person: PersonID?, parent: UUID?)
    {
        let invalid = RouteKitError(.storage, "a stored webhook subscription has an invalid id, person or parent")
        guard let uuid = UUID(uuidString: id) else { throw invalid }
        var owner: PersonID?
        if let person {
            guard let personUUID = UUID(uuidString: person) else { throw invalid }
            owner = PersonID(personUUID)
        }
        var parentID: UUID?
        if let parent {
            guard let parentUUID = UUID(uuidString: parent) else { throw invalid }
            parentID = parentUUID
        }
        return (uuid, owner, parentID)
    }

    /// Where an admin-wide subscription's people's cursors start: the position of its cursor; `nil` when it has
    /// none that is an anchor.
    package var startPosition: Int64? {
        guard let cursor, let anchor = try? ChangeAnchor(text: cursor) else { return nil }
        return anchor.position
    }

    /// The types as stored: their names, sorted, comma-separated.
    package static func typesText(_ types: Set<ChangeObjectType>) -> String {
        types.map(\.rawValue).sorted().joined(separator: ",")
    }

    /// Stored types.
    /// - Throws: ``RouteKitError/Code/storage`` when the text names something that is not a type.
    package static func types(from text: String) throws(RouteKitError) -> Set<ChangeObjectType> {
        do {
            return try ChangeObjectType.parseList(text)
        } catch {
            throw RouteKitError(.storage, "a stored webhook subscription has unknown change types")
        }
    }
}

/// One delivery attempt as a subscription keeps it: when, how it ended (a status, or an error kind), how long it
/// took, and the message it carried.
package struct WebhookAttemptRecord: Hashable, Sendable, Codable {
    /// When it was made.
    package var time: Date
    /// The receiver's status, when it answered.
    package var status: Int?
    /// Why there was no status: `timeout`, `unreachable` or `refused` (the address is not allowed).
    package var error: String?
    /// One line on how it ended (never the URL).
    package var detail: String
    /// How long it took, in milliseconds.
    package var durationMilliseconds: Int
    /// The message's `webhook-id`.
    package var messageID: String

    /// An attempt record.
    package init(
        time: Date, status: Int?, error: String?, detail: String, durationMilliseconds: Int, messageID: String
    ) {
        self.time = time
        self.status = status
        self.error = error
        self.detail = detail
        self.durationMilliseconds = durationMilliseconds
        self.messageID = messageID
    }

    /// A list as stored: JSON, times in seconds since 1970.
    package static func text(of list: [WebhookAttemptRecord]) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(list) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A stored list.
    /// - Throws: ``RouteKitError/Code/storage`` when it is not one.
    package static func list(from text: String) throws(RouteKitError) -> [WebhookAttemptRecord] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode([WebhookAttemptRecord].self, from: Data(text.utf8))
        } catch {
            throw RouteKitError(.storage, "a stored webhook subscription's attempts cannot be read")
        }
    }
}

/// What the people's cursors of an admin-wide subscription show of its deliveries
/// (``WebhookStore/adminWebhookActivity(id:limit:)``): how many of them are failing, and the newest attempts over
/// all of them, each naming its person.
package struct AdminWebhookActivity: Hashable, Sendable {
    /// An attempt of one person's cursor.
    package struct Attempt: Hashable, Sendable {
        /// Whose cursor made it.
        package var person: PersonID
        /// The attempt.
        package var record: WebhookAttemptRecord

        /// An attempt of `person`'s cursor.
        package init(person: PersonID, record: WebhookAttemptRecord) {
            self.person = person
            self.record = record
        }
    }

    /// How many of the people's cursors have failed attempts of the change set they are delivering (those paused
    /// after too many included).
    package var failingCursors: Int
    /// The newest attempts over all the people's cursors, oldest first.
    package var recentAttempts: [Attempt]

    /// An activity.
    package init(failingCursors: Int = 0, recentAttempts: [Attempt] = []) {
        self.failingCursors = failingCursors
        self.recentAttempts = recentAttempts
    }

    /// The activity of `cursors` (each person's newest attempts, oldest first, as a subscription keeps them): the
    /// newest `limit` of all their attempts, oldest first (at the same time, by person, each person's in their
    /// order).
    package init(
        failingCursors: Int, cursors: [(person: PersonID, attempts: [WebhookAttemptRecord])], limit: Int
    ) {
        // Each attempt with its place in its cursor's list: at the same time, a person's keep their order.
        var all: [(place: Int, attempt: Attempt)] = []
        for cursor in cursors {
            for (place, record) in cursor.attempts.enumerated() {
                all.append((place: place, attempt: Attempt(person: cursor.person, record: record)))
            }
        }
        all.sort { a, b in
            if a.attempt.record.time != b.attempt.record.time { return a.attempt.record.time > b.attempt.record.time }
            if a.attempt.person != b.attempt.person { return a.attempt.person < b.attempt.person }
            return a.place > b.place
        }
        self.init(
            failingCursors: failingCursors, recentAttempts: all.prefix(max(0, limit)).reversed().map { $0.attempt })
    }

    /// A stored cursor's person and attempts, from their text.
    /// - Throws: ``RouteKitError/Code/storage`` when the person is not a uuid, or the attempts cannot be read.
    package static func cursor(person: String?, recent: String) throws(RouteKitError)
        -> (person: PersonID, attempts: [WebhookAttemptRecord])
    {
        guard let person, let uuid = UUID(uuidString: person) else {
            throw RouteKitError(.storage, "a stored webhook cursor has an invalid person")
        }
        return (PersonID(uuid), try WebhookAttemptRecord.list(from: recent))
    }
}

/// What recording a delivery changes in a subscription (``WebhookStore/updateWebhookDelivery(id:from:_:)``).
package struct WebhookDeliveryUpdate: Hashable, Sendable {
    /// The new cursor (a change set was acknowledged, or held nothing to deliver); `nil` leaves it.
    package var cursor: String?
    /// Failed attempts of the pending change set.
    package var attempts: Int
    /// When the next attempt is due; `nil`: as soon as there is something to deliver.
    package var nextAttempt: Date?
    /// When the pending change set was first read; `nil` when none is pending.
    package var pendingSince: Date?
    /// Pauses the subscription, saying why; `nil` leaves its state.
    package var pauseReason: String?
    /// The attempt made, appended to the newest ones.
    package var attempt: WebhookAttemptRecord?

    /// An update.
    package init(
        cursor: String? = nil, attempts: Int = 0, nextAttempt: Date? = nil, pendingSince: Date? = nil,
        pauseReason: String? = nil, attempt: WebhookAttemptRecord? = nil
    ) {
        self.cursor = cursor
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.pendingSince = pendingSince
        self.pauseReason = pauseReason
        self.attempt = attempt
    }
}

/// A store that keeps webhook subscriptions (``WebhookSubscription``). Both backends and the in-memory store conform.
///
/// A store object's methods are its person's (``RouteStore/person``): another person's subscription is not found,
/// exactly as a missing one, and neither is an admin-wide subscription or a person's cursor of one. The admin-wide
/// methods (`…AdminWebhook…`) are the operator's, whichever view is asked, and see only admin-wide subscriptions.
/// ``dueWebhooks(at:people:after:limit:)``, ``startAdminWebhookCursors(people:)`` and the recording of deliveries
/// are the dispatcher's. Erasing a person (``PeopleStore/erasePerson(id:)``) removes their subscriptions and their
/// cursors of the admin-wide ones.
package protocol WebhookStore: AnyObject, Sendable {
    /// Adds a subscription of this view's person, unless they have `limit` already (then `false`, and nothing is
    /// added). A subscription without a cursor gets the person's current anchor.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
    func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool
    /// The person's subscription with `id`, or `nil`.
    func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription?
    /// The subscription with `id` as the dispatcher delivers it: the person's own, or their cursor of an admin-wide
    /// subscription (``WebhookSubscription/parent``); `nil` when there is neither.
    func webhookToDeliver(id: UUID) async throws(RouteKitError) -> WebhookSubscription?
    /// The person's subscriptions, oldest first.
    func webhooks() async throws(RouteKitError) -> [WebhookSubscription]
    /// Deletes the person's subscription; `false` when there is none with `id`.
    func deleteWebhook(id: UUID) async throws(RouteKitError) -> Bool
    /// Replaces the subscription's secret with `secret`; the one it replaces still signs until `previousExpires` (a
    /// secret rotated before is dropped). `nil` when there is none with `id`.
    func rotateWebhookSecret(id: UUID, to secret: String, previousExpires: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    /// Makes the subscription active, with no failed attempts and its next attempt due at `due` (the dispatcher
    /// looks at it then, whether or not its person commits); `cursor`, when given, replaces its cursor. `nil` when
    /// there is none with `id`.
    func resumeWebhook(id: UUID, cursor: String?, due: Date) async throws(RouteKitError) -> WebhookSubscription?
    /// Records a delivery (or a read that had nothing to deliver) of the person's subscription, or of their cursor
    /// of an admin-wide one, in one transaction, only while its cursor is still `cursor`: `false` when it is gone,
    /// or when its cursor moved (another server delivered meanwhile), and nothing is changed.
    func updateWebhookDelivery(id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
        async throws(RouteKitError) -> Bool
    /// The dispatcher's work, of every person: the active subscriptions (people's cursors of admin-wide ones
    /// included, admin-wide ones themselves never) whose retry is due at `now`, and those with no retry scheduled
    /// of `people` (every person when `nil`), by id, at most `limit` of those after `after`.
    func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int) async throws(RouteKitError)
        -> [WebhookSubscription]

    // MARK: Admin-wide subscriptions

    /// Adds an admin-wide subscription (its ``WebhookSubscription/person`` and ``WebhookSubscription/parent`` are
    /// saved as `nil`, whatever they say), unless there are `limit` already (then `false`, and nothing is added). A
    /// subscription without a cursor gets the change log's head, everyone's: its people's cursors start there.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
    func addAdminWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool
    /// The admin-wide subscription with `id`, or `nil` (a person's subscription is not one).
    func adminWebhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription?
    /// The admin-wide subscriptions, oldest first.
    func adminWebhooks() async throws(RouteKitError) -> [WebhookSubscription]
    /// Deletes an admin-wide subscription with every person's cursor of it; `false` when there is none with `id`.
    func deleteAdminWebhook(id: UUID) async throws(RouteKitError) -> Bool
    /// Replaces an admin-wide subscription's secret, as ``rotateWebhookSecret(id:to:previousExpires:)`` does a
    /// person's, and its people's cursors' with it. `nil` when there is none with `id`.
    func rotateAdminWebhookSecret(id: UUID, to secret: String, previousExpires: Date) async throws(RouteKitError)
        -> WebhookSubscription?
    /// Resumes an admin-wide subscription: its people's cursors that are paused or have failed attempts become
    /// active, with no failed attempts, due at `due`. `fromNow`: every person's cursor is dropped instead, and the
    /// subscription starts again from the change log's head (each person's cursor is made again when they next
    /// commit). `nil` when there is none with `id`.
    func resumeAdminWebhook(id: UUID, fromNow: Bool, due: Date) async throws(RouteKitError) -> WebhookSubscription?
    /// The people's cursors of admin-wide subscription `id` that are paused, by person, at most `limit`.
    func pausedAdminWebhookCursors(id: UUID, limit: Int) async throws(RouteKitError) -> [WebhookSubscription]
    /// What the people's cursors of admin-wide subscription `id` show of its deliveries: how many have failed
    /// attempts of their pending change set (paused ones included), and the newest `limit` attempts over all of them,
    /// oldest first, each naming its person. Bounded whatever the number of people: it reads the `limit` cursors
    /// whose newest attempt is the newest (the newest `limit` attempts are all theirs). Empty when there is no
    /// admin-wide subscription with `id`.
    func adminWebhookActivity(id: UUID, limit: Int) async throws(RouteKitError) -> AdminWebhookActivity
    /// The dispatcher's: makes a cursor of every admin-wide subscription for each person (of `people`; everyone's
    /// when `nil`) whose change-log head is past the subscription's start and who has none yet, starting there.
    /// With `people` `nil`, each subscription's start then moves to the log's head (every person past the old start
    /// has a cursor, and the others have no change between the two). Returns how many cursors were made; nothing is
    /// written when there is nothing to do.
    func startAdminWebhookCursors(people: Set<PersonID>?) async throws(RouteKitError) -> Int
}
