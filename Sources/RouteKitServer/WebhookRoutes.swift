#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import RouteKit

    /// A subscription as the API shows it: never its secrets, except the new one when it is made or rotated; its
    /// cursor as the asking token reads anchors. An admin-wide subscription says so (`everyone`), has no cursor of
    /// its own (each person has one), shows its people's cursors' attempts (``showing(_:)``), and lists its people
    /// whose cursor is paused (`pausedPeople`, when asked).
    struct WebhookJSON: Encodable {
        struct Attempt: Encodable {
            var time: String
            var status: Int?
            var error: String?
            var detail: String
            var durationMs: Int
            var webhookId: String
            /// Whose cursor made it, in an admin-wide subscription's attempts; absent in a person's own.
            var person: String?

            init(_ record: WebhookAttemptRecord, person: PersonID? = nil) {
                time = Timestamp(record.time).iso8601
                status = record.status
                error = record.error
                detail = record.detail
                durationMs = record.durationMilliseconds
                webhookId = record.messageID
                self.person = person?.description
            }
        }

        /// A person's cursor of an admin-wide subscription that is paused: why, where (its anchor sealed for the
        /// person's tokens) and its last attempts.
        struct PausedPerson: Encodable {
            var person: String
            var reason: String?
            var cursor: String?
            var failedAttempts: Int
            var lastAttempts: [Attempt]

            init(_ entry: WebhookSubscription) {
                person = entry.person?.description ?? ""
                reason = entry.pauseReason
                cursor = entry.cursor.flatMap { try? ChangeAnchor(text: $0) }.map {
                    TokenAnchors.text($0, deliveredBy: entry)
                }
                failedAttempts = entry.attempts
                lastAttempts = WebhookJSON.attempts(entry.recentAttempts)
            }
        }

        var id: String
        var url: String
        var types: [String]
        var state: String
        var reason: String?
        var cursor: String?
        var failedAttempts: Int
        var nextAttempt: String?
        var previousSecretExpires: String?
        var created: String
        var lastAttempts: [Attempt]
        /// The new secret (`whsec_…`), only in the answer that made it.
        var secret: String?
        /// `true` for an admin-wide subscription.
        var everyone: Bool?
        /// An admin-wide subscription's people whose cursor is paused (`GET /v1/webhooks/ID`).
        var pausedPeople: [PausedPerson]?

        init(_ s: WebhookSubscription, for token: APIToken, secret: String? = nil, now: Date = Date()) {
            id = s.id.lowercaseText
            url = s.url
            types = s.types.map(\.rawValue).sorted()
            state = s.pauseReason == nil ? "active" : "paused"
            reason = s.pauseReason
            if s.person != nil {
                cursor = s.cursor.flatMap { try? ChangeAnchor(text: $0) }.map { TokenAnchors.text($0, for: token) }
            } else {
                everyone = true
            }
            failedAttempts = s.attempts
            nextAttempt = s.nextAttempt.map { Timestamp($0).iso8601 }
            previousSecretExpires = s.previousSecretExpires.flatMap { $0 > now ? Timestamp($0).iso8601 : nil }
            created = Timestamp(s.created).iso8601
            lastAttempts = Self.attempts(s.recentAttempts)
            self.secret = secret
        }

        /// Attempts as the API shows them.
        static func attempts(_ list: [WebhookAttemptRecord]) -> [Attempt] {
            list.map { Attempt($0) }
        }

        /// An admin-wide subscription's answer with its people's cursors' activity: `failedAttempts` is how many
        /// cursors are failing (paused ones included), `lastAttempts` the newest attempts over all of them, each
        /// naming its person.
        func showing(_ activity: AdminWebhookActivity) -> WebhookJSON {
            var shown = self
            shown.failedAttempts = activity.failingCursors
            shown.lastAttempts = activity.recentAttempts.map { Attempt($0.record, person: $0.person) }
            return shown
        }
    }

    extension Problem {
        /// The store keeps no webhook subscriptions.
        static let webhooksUnavailable = Problem(
            status: .notImplemented, type: "webhooks-unavailable", title: "Webhooks are not available",
            detail: "this server's store keeps no webhook subscriptions")

        /// A subscription id that is not one of the token's person's (another person's included).
        static func noWebhook(_ text: String) -> Problem {
            Problem.notFound("webhook subscription \(text) does not exist")
        }
    }

    /// The webhook subscriptions of the token's person (`read` to list and read them, `write` for the rest), or,
    /// with an admin token, the admin-wide ones (every person's change sets, one person's in each delivery):
    ///
    /// - `POST /v1/webhooks` `{"url": …, "types": [...]}` → `201` with the subscription and its `secret`
    ///   (`whsec_…`, shown once); the URL is checked by ``WebhookTargetPolicy`` (`422 webhook-url-refused`, naming
    ///   the host); at most ``WebhookSettings/maxPerPerson`` a person, ``WebhookSettings/maxAdminWide`` admin-wide
    ///   (`409 too-many-webhooks`)
    /// - `GET /v1/webhooks` → `{"webhooks": […]}`; `GET /v1/webhooks/ID` → its state, why it is paused, its
    ///   cursor and its last attempts (admin-wide: the newest attempts over its people's cursors, each naming its
    ///   `person`, how many cursors are failing as `failedAttempts`, and the people whose cursor is paused,
    ///   `pausedPeople`)
    /// - `DELETE /v1/webhooks/ID` → `204`
    /// - `POST /v1/webhooks/ID/rotate` → the subscription with its new `secret`; the old one still signs for
    ///   ``WebhookSettings/rotationOverlapSeconds``
    /// - `POST /v1/webhooks/ID/resume` (optionally `{"from": "now"}`: deliver from the person's current anchor; for
    ///   an admin-wide one, from the change log's head, for everyone) → the subscription, active, its failed
    ///   attempts forgotten
    ///
    /// Another person's subscription answers `404`, exactly as a missing one; so does an admin-wide one to a
    /// person's token, and a person's to an admin token.
    struct WebhookRoutes: Sendable {
        /// Whose subscriptions a request acts on.
        enum Owner {
            /// The token's person's, in the store seen as them.
            case person(any RouteStore)
            /// The admin-wide ones (an admin token's).
            case everyone
        }

        /// The most paused people `GET /v1/webhooks/ID` lists of an admin-wide subscription.
        static let pausedPeopleShown = 100

        let stores: PersonStores
        let settings: WebhookSettings
        let policy: WebhookTargetPolicy

        init(stores: PersonStores, configuration: ServerConfiguration) {
            self.stores = stores
            settings = configuration.webhooks
            policy = configuration.webhooks.targetPolicy(allowPrivate: configuration.webhooksAllowPrivate)
        }

        func add(to router: RecordingRouter) {
            router.post("/v1/webhooks", use: create)
            router.get("/v1/webhooks", use: list)
            router.get("/v1/webhooks/:id", use: get)
            router.delete("/v1/webhooks/:id", use: delete)
            router.post("/v1/webhooks/:id/rotate", use: rotate)
            router.post("/v1/webhooks/:id/resume", use: resume)
        }

        struct CreateBody: Decodable {
            var url: String?
            var types: [String]?
        }

        struct ResumeBody: Decodable {
            var from: String?
        }

        /// Whose subscriptions the request acts on, the store that keeps them, and the token: the token's person's
        /// (the token must have `scope`), or, for an admin token (no person; the `admin` scope), the admin-wide
        /// ones.
        func scoped(_ context: RouteKitRequestContext, _ scope: APIScope) throws(Problem)
            -> (owner: Owner, hooks: any WebhookStore, token: APIToken)
        {
            let token = try context.requireToken()
            guard token.person != nil else {
                _ = try context.require(.admin)
                guard let hooks = stores.base as? any WebhookStore else { throw Problem.webhooksUnavailable }
                return (owner: .everyone, hooks: hooks, token: token)
            }
            _ = try context.require(scope)
            let store = try stores.store(for: token)
            guard let hooks = store as? any WebhookStore else { throw Problem.webhooksUnavailable }
            return (owner: .person(store), hooks: hooks, token: token)
        }

        /// The subscription id of the path; `404` when it is not a uuid.
        static func id(_ context: RouteKitRequestContext) throws(Problem) -> UUID {
            let text = context.parameters.get("id") ?? ""
            guard let id = UUID(uuidString: text) else { throw Problem.noWebhook(text) }
            return id
        }

        func create(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, token) = try scoped(context, .write)
            guard token.readableSources == nil else {
                throw Problem(
                    status: .forbidden, type: "webhook-token-limited",
                    title: "A token limited to some sources cannot subscribe",
                    detail: "a webhook delivers every source of its person; use a token that reads every source")
            }
            let body = try await PeopleRoutes.body(request, CreateBody.self)
            guard let url = body.url, !url.isEmpty else { throw Problem.badRequest("'url' is required") }
            let types = try Self.types(body.types)
            do throws(RouteKitError) {
                _ = try await policy.check(url)
            } catch {
                throw Problem(
                    status: .unprocessableContent, type: "webhook-url-refused",
                    title: "The webhook URL is not allowed", detail: error.message)
            }
            let secret = WebhookSecret.generate()
            let subscription: WebhookSubscription
            let added: Bool
            switch owner {
            case .person(let store):
                let head = try await store.currentAnchor()
                subscription = WebhookSubscription(
                    person: store.person, url: url, types: types, secret: secret.text, cursor: head.text,
                    anchorKey: TokenAnchors.keyText(for: token))
                added = try await hooks.addWebhook(subscription, limit: settings.maxPerPerson)
            case .everyone:
                // It starts at the change log's head; its anchors are sealed for each person's tokens, with a key
                // of its own.
                subscription = WebhookSubscription(
                    person: nil, url: url, types: types, secret: secret.text,
                    anchorKey: TokenAnchors.newWebhookKeyText())
                added = try await hooks.addAdminWebhook(subscription, limit: settings.maxAdminWide)
            }
            guard added else { throw tooMany(owner) }
            let stored = try await find(subscription.id, owner, hooks) ?? subscription
            var response = JSONBody.response(
                WebhookJSON(stored, for: token, secret: secret.text), status: .created)
            response.headers[.location] = "/v1/webhooks/\(subscription.id.lowercaseText)"
            return response
        }

        /// The `409` for one subscription too many.
        func tooMany(_ owner: Owner) -> Problem {
            let detail =
                switch owner {
                case .person:
                    "a person has at most \(settings.maxPerPerson) webhook subscriptions; delete one first"
                case .everyone:
                    "there are at most \(settings.maxAdminWide) admin-wide webhook subscriptions; delete one first"
                }
            return Problem(
                status: .conflict, type: "too-many-webhooks", title: "Too many webhook subscriptions", detail: detail)
        }

        /// The types asked for: names of `GET /v1/changes?types=` (`all` among them); routes when none are given.
        static func types(_ names: [String]?) throws(Problem) -> Set<ChangeObjectType> {
            guard let names else { return [.route] }
            guard !names.isEmpty else { throw Problem.badRequest("'types' must name at least one change type") }
            do throws(RouteKitError) {
                return try ChangeObjectType.parseList(names.joined(separator: ","))
            } catch {
                throw Problem.badRequest("'types': \(error.message)")
            }
        }

        /// `owner`'s subscription with `id`.
        func find(_ id: UUID, _ owner: Owner, _ hooks: any WebhookStore) async throws(RouteKitError)
            -> WebhookSubscription?
        {
            switch owner {
            case .person: return try await hooks.webhook(id: id)
            case .everyone: return try await hooks.adminWebhook(id: id)
            }
        }

        func list(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, token) = try scoped(context, .read)
            let found: [WebhookSubscription]
            switch owner {
            case .person: found = try await hooks.webhooks()
            case .everyone: found = try await hooks.adminWebhooks()
            }
            let now = Date()
            var shown: [WebhookJSON] = []
            for subscription in found {
                shown.append(try await answer(subscription, hooks, for: token, now: now))
            }
            return JSONBody.response(["webhooks": shown])
        }

        /// `s` as the API shows it to `token`; an admin-wide one with its people's cursors' failures and newest
        /// attempts (two reads of the store, however many people it has).
        func answer(_ s: WebhookSubscription, _ hooks: any WebhookStore, for token: APIToken, now: Date = Date())
            async throws(RouteKitError) -> WebhookJSON
        {
            let shown = WebhookJSON(s, for: token, now: now)
            guard s.person == nil else { return shown }
            return shown.showing(
                try await hooks.adminWebhookActivity(id: s.id, limit: WebhookSubscription.recentLimit))
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, token) = try scoped(context, .read)
            let id = try Self.id(context)
            guard let subscription = try await find(id, owner, hooks) else { throw Problem.noWebhook(id.lowercaseText) }
            var body = try await answer(subscription, hooks, for: token)
            if case .everyone = owner {
                body.pausedPeople = try await hooks.pausedAdminWebhookCursors(id: id, limit: Self.pausedPeopleShown)
                    .map(WebhookJSON.PausedPerson.init)
            }
            return JSONBody.response(body)
        }

        func delete(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, _) = try scoped(context, .write)
            let id = try Self.id(context)
            let deleted: Bool
            switch owner {
            case .person: deleted = try await hooks.deleteWebhook(id: id)
            case .everyone: deleted = try await hooks.deleteAdminWebhook(id: id)
            }
            guard deleted else { throw Problem.noWebhook(id.lowercaseText) }
            return Response(status: .noContent)
        }

        func rotate(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, token) = try scoped(context, .write)
            let id = try Self.id(context)
            let secret = WebhookSecret.generate()
            let expires = Date().addingTimeInterval(max(0, settings.rotationOverlapSeconds))
            let rotated: WebhookSubscription?
            switch owner {
            case .person:
                rotated = try await hooks.rotateWebhookSecret(id: id, to: secret.text, previousExpires: expires)
            case .everyone:
                rotated = try await hooks.rotateAdminWebhookSecret(id: id, to: secret.text, previousExpires: expires)
            }
            guard let rotated else { throw Problem.noWebhook(id.lowercaseText) }
            var body = try await answer(rotated, hooks, for: token)
            body.secret = secret.text
            return JSONBody.response(body)
        }

        func resume(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (owner, hooks, token) = try scoped(context, .write)
            let id = try Self.id(context)
            let fromNow = try await Self.fromNow(request)
            // Due at once: the dispatcher's next look (within a second) delivers it, whoever commits.
            let resumed: WebhookSubscription?
            switch owner {
            case .person(let store):
                var cursor: String?
                if fromNow { cursor = try await store.currentAnchor().text }
                resumed = try await hooks.resumeWebhook(id: id, cursor: cursor, due: Date())
            case .everyone:
                resumed = try await hooks.resumeAdminWebhook(id: id, fromNow: fromNow, due: Date())
            }
            guard let resumed else { throw Problem.noWebhook(id.lowercaseText) }
            return JSONBody.response(try await answer(resumed, hooks, for: token))
        }

        /// Whether a resumption's body asks to deliver from now (`{"from": "now"}`); no body is from the cursor.
        static func fromNow(_ request: Request) async throws -> Bool {
            let bytes = try await request.body.collect(upTo: PeopleRoutes.maxBodyBytes)
            guard bytes.readableBytes > 0 else { return false }
            let body: ResumeBody
            do {
                body = try JSONDecoder().decode(ResumeBody.self, from: Data(bytes.readableBytesView))
            } catch {
                throw Problem.badRequest("the body is not the JSON object this needs")
            }
            switch body.from {
            case nil: return false
            case "now"?: return true
            case let other?:
                throw Problem.badRequest("'from' is \"now\" (deliver from the current anchor), not '\(other)'")
            }
        }
    }
#endif
