import Foundation

/// A webhook subscription as a store keeps it (`routekit serve`'s `/v1/webhooks`): one person's request to have the
/// changes of their feed pushed to a URL, and where the deliveries stand.
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
    /// Whose changes it delivers (a store saves it as its view's person, whatever this says).
    package var person: PersonID
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
        id: UUID = UUID(), person: PersonID, url: String, types: Set<ChangeObjectType>, secret: String,
        previousSecret: String? = nil, previousSecretExpires: Date? = nil, state: State = .active,
        cursor: String? = nil, attempts: Int = 0, nextAttempt: Date? = nil, pendingSince: Date? = nil,
        anchorKey: String? = nil, created: Date = Date(), recentAttempts: [WebhookAttemptRecord] = []
    ) {
        self.id = id
        self.person = person
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
/// exactly as a missing one, except ``dueWebhooks(at:people:after:limit:)``, the dispatcher's, which looks at
/// everyone's. Erasing a person (``PeopleStore/erasePerson(id:)``) removes their subscriptions.
package protocol WebhookStore: AnyObject, Sendable {
    /// Adds a subscription of this view's person, unless they have `limit` already (then `false`, and nothing is
    /// added). A subscription without a cursor gets the person's current anchor.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a subscription with its id exists.
    func addWebhook(_ subscription: WebhookSubscription, limit: Int) async throws(RouteKitError) -> Bool
    /// The person's subscription with `id`, or `nil`.
    func webhook(id: UUID) async throws(RouteKitError) -> WebhookSubscription?
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
    /// Records a delivery (or a read that had nothing to deliver) in one transaction, only while the subscription's
    /// cursor is still `cursor`: `false` when it is gone, or when its cursor moved (another server delivered
    /// meanwhile), and nothing is changed.
    func updateWebhookDelivery(id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
        async throws(RouteKitError) -> Bool
    /// The dispatcher's work, of every person: the active subscriptions whose retry is due at `now`, and those with
    /// no retry scheduled of `people` (every person when `nil`), by id, at most `limit` of those after `after`.
    func dueWebhooks(at now: Date, people: Set<PersonID>?, after: UUID?, limit: Int) async throws(RouteKitError)
        -> [WebhookSubscription]
}
