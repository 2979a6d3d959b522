#if Server
    import Foundation
    import RouteKit
    import RouteKitApplication

    /// The body of a webhook that carries a change set, in the Standard Webhooks payload shape:
    /// `{"data": CHANGES, "timestamp": "…", "type": "routekit.changes"}`, where `CHANGES` is the change set exactly as
    /// `GET /v1/changes` answers it (`ChangeSetJSON`, written by the same code: `added`, `addedObjects`, `anchor`,
    /// `deleted`, `deletedObjects`, `hasMore`). A receiver applies it as it would a page of the feed, and keeps its
    /// `anchor`: after a gap (a subscription paused, a receiver restored from a backup) it resumes with
    /// `GET /v1/changes?anchor=…`, losing and repeating nothing.
    ///
    /// A delivery of an admin-wide subscription (of everyone's changes) carries one person's change set, and says
    /// whose: `{"data": CHANGES, "person": "…", "timestamp": "…", "type": "routekit.changes"}`.
    ///
    /// Keys are sorted, as in every JSON RouteKit writes; the body is signed as these exact bytes.
    package enum WebhookPayload {
        /// The `type` of a change set's webhook.
        package static let changesType = "routekit.changes"

        /// The body for `set`, made at `timestamp` (the time the change set was read for delivery: a retry sends the
        /// same body again, its `webhook-timestamp` header is the attempt's). `anchorText` is the anchor as the
        /// subscriber reads it (a token limited to some sources gets sealed anchors); `set.anchor`'s text by default.
        /// `person`: whose change set it is, for an admin-wide subscription's delivery.
        package static func body(
            _ set: ChangeSet, anchorText: String? = nil, person: PersonID? = nil, timestamp: Date
        ) -> [UInt8] {
            var bytes = Array("{\"data\":".utf8)
            bytes += ChangeSetJSON.bytes(set, anchorText: anchorText)
            if let person {
                bytes += Array(",\"person\":".utf8)
                JSONEscaping.appendQuoted(person.description, to: &bytes)
            }
            bytes += Array(",\"timestamp\":".utf8)
            JSONEscaping.appendQuoted(Timestamp(timestamp).iso8601, to: &bytes)
            bytes += Array(",\"type\":".utf8)
            JSONEscaping.appendQuoted(changesType, to: &bytes)
            bytes += Array("}".utf8)
            return bytes
        }
    }
#endif
