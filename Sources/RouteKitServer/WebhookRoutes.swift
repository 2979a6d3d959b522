#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import RouteKit

    /// A subscription as the API shows it: never its secrets, except the new one when it is made or rotated; its
    /// cursor as the asking token reads anchors.
    struct WebhookJSON: Encodable {
        struct Attempt: Encodable {
            var time: String
            var status: Int?
            var error: String?
            var detail: String
            var durationMs: Int
            var webhookId: String
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

        init(_ s: WebhookSubscription, for token: APIToken, secret: String? = nil, now: Date = Date()) {
            id = s.id.lowercaseText
            url = s.url
            types = s.types.map(\.rawValue).sorted()
            state = s.pauseReason == nil ? "active" : "paused"
            reason = s.pauseReason
            cursor = s.cursor.flatMap { try? ChangeAnchor(text: $0) }.map { TokenAnchors.text($0, for: token) }
            failedAttempts = s.attempts
            nextAttempt = s.nextAttempt.map { Timestamp($0).iso8601 }
            previousSecretExpires = s.previousSecretExpires.flatMap { $0 > now ? Timestamp($0).iso8601 : nil }
            created = Timestamp(s.created).iso8601
            lastAttempts = s.recentAttempts.map {
                Attempt(
                    time: Timestamp($0.time).iso8601, status: $0.status, error: $0.error, detail: $0.detail,
                    durationMs: $0.durationMilliseconds, webhookId: $0.messageID)
            }
            self.secret = secret
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

    /// The webhook subscriptions of the token's person (`read` to list and read them, `write` for the rest):
    ///
    /// - `POST /v1/webhooks` `{"url": …, "types": [...]}` → `201` with the subscription and its `secret`
    ///   (`whsec_…`, shown once); the URL is checked by ``WebhookTargetPolicy`` (`422 webhook-url-refused`, naming
    ///   the host); at most ``WebhookSettings/maxPerPerson`` (`409 too-many-webhooks`)
    /// - `GET /v1/webhooks` → `{"webhooks": […]}`; `GET /v1/webhooks/ID` → its state, why it is paused, its
    ///   cursor and its last attempts
    /// - `DELETE /v1/webhooks/ID` → `204`
    /// - `POST /v1/webhooks/ID/rotate` → the subscription with its new `secret`; the old one still signs for
    ///   ``WebhookSettings/rotationOverlapSeconds``
    /// - `POST /v1/webhooks/ID/resume` (optionally `{"from": "now"}`: deliver from the person's current anchor) →
    ///   the subscription, active, its failed attempts forgotten
    ///
    /// Another person's subscription answers `404`, exactly as a missing one.
    struct WebhookRoutes: Sendable {
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

        /// The token's person's store and subscriptions, and the token (which must have `scope`).
        func scoped(_ context: RouteKitRequestContext, _ scope: APIScope) throws(Problem)
            -> (store: any RouteStore, hooks: any WebhookStore, token: APIToken)
        {
            let token = try context.require(scope)
            let store = try stores.store(for: token)
            guard let hooks = store as? any WebhookStore else { throw Problem.webhooksUnavailable }
            return (store, hooks, token)
        }

        /// The subscription id of the path; `404` when it is not a uuid.
        static func id(_ context: RouteKitRequestContext) throws(Problem) -> UUID {
            let text = context.parameters.get("id") ?? ""
            guard let id = UUID(uuidString: text) else { throw Problem.noWebhook(text) }
            return id
        }

        func create(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (store, hooks, token) = try scoped(context, .write)
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
            let head = try await store.currentAnchor()
            let subscription = WebhookSubscription(
                person: store.person, url: url, types: types, secret: secret.text, cursor: head.text,
                anchorKey: TokenAnchors.keyText(for: token))
            guard try await hooks.addWebhook(subscription, limit: settings.maxPerPerson) else {
                throw Problem(
                    status: .conflict, type: "too-many-webhooks", title: "Too many webhook subscriptions",
                    detail: "a person has at most \(settings.maxPerPerson) webhook subscriptions; delete one first")
            }
            let stored = try await hooks.webhook(id: subscription.id) ?? subscription
            var response = JSONBody.response(
                WebhookJSON(stored, for: token, secret: secret.text), status: .created)
            response.headers[.location] = "/v1/webhooks/\(subscription.id.lowercaseText)"
            return response
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

        func list(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, hooks, token) = try scoped(context, .read)
            let now = Date()
            let all = try await hooks.webhooks().map { WebhookJSON($0, for: token, now: now) }
            return JSONBody.response(["webhooks": all])
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, hooks, token) = try scoped(context, .read)
            let id = try Self.id(context)
            guard let subscription = try await hooks.webhook(id: id) else { throw Problem.noWebhook(id.lowercaseText) }
            return JSONBody.response(WebhookJSON(subscription, for: token))
        }

        func delete(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, hooks, _) = try scoped(context, .write)
            let id = try Self.id(context)
            guard try await hooks.deleteWebhook(id: id) else { throw Problem.noWebhook(id.lowercaseText) }
            return Response(status: .noContent)
        }

        func rotate(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, hooks, token) = try scoped(context, .write)
            let id = try Self.id(context)
            let secret = WebhookSecret.generate()
            let expires = Date().addingTimeInterval(max(0, settings.rotationOverlapSeconds))
            guard let rotated = try await hooks.rotateWebhookSecret(id: id, to: secret.text, previousExpires: expires)
            else { throw Problem.noWebhook(id.lowercaseText) }
            return JSONBody.response(WebhookJSON(rotated, for: token, secret: secret.text))
        }

        func resume(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (store, hooks, token) = try scoped(context, .write)
            let id = try Self.id(context)
            let bytes = try await request.body.collect(upTo: PeopleRoutes.maxBodyBytes)
            var cursor: String?
            if bytes.readableBytes > 0 {
                let body: ResumeBody
                do {
                    body = try JSONDecoder().decode(ResumeBody.self, from: Data(bytes.readableBytesView))
                } catch {
                    throw Problem.badRequest("the body is not the JSON object this needs")
                }
                switch body.from {
                case nil: break
                case "now"?: cursor = try await store.currentAnchor().text
                case let other?:
                    throw Problem.badRequest("'from' is \"now\" (deliver from the current anchor), not '\(other)'")
                }
            }
            // Due at once: the dispatcher's next look (within a second) delivers it, whoever commits.
            guard let resumed = try await hooks.resumeWebhook(id: id, cursor: cursor, due: Date()) else {
                throw Problem.noWebhook(id.lowercaseText)
            }
            return JSONBody.response(WebhookJSON(resumed, for: token))
        }
    }
#endif
