#if Server
    import Crypto
    import Foundation
    import Logging
    import RouteKit
    import RouteKitApplication
    import ServiceLifecycle

    /// How the server delivers webhooks (``ServerConfiguration/webhooks``): its limits, its retries and its
    /// timeouts. The defaults are the documented ones; tests make them short.
    package struct WebhookSettings: Sendable {
        /// Subscriptions one person may have (`409 too-many-webhooks` beyond).
        package var maxPerPerson = 20
        /// Admin-wide subscriptions (an admin token's, of every person's changes) the server may have
        /// (`409 too-many-webhooks` beyond).
        package var maxAdminWide = 20
        /// Deliveries made at once by one server, over every subscription.
        package var maxConcurrentDeliveries = 8
        /// Changes read for one delivery (a soft limit: a change set never splits a transaction).
        package var maxChanges = 100
        /// Change sets one subscription delivers in a row before the others get their turn.
        package var maxSetsPerTurn = 16
        /// How long a server's claim on a subscription lasts while it delivers, in seconds (renewed before each
        /// delivery; a server that dies mid-delivery leaves it to another once it has passed). Longer than a
        /// delivery's ``deadlineSeconds``: else another server could send the same set while the first still waits
        /// for its answer.
        package var leaseSeconds = 30.0
        /// How often every active subscription is looked at, in seconds, besides those of people who committed (a
        /// subscription another server left, a store that could not be read).
        package var sweepSeconds = 30.0
        /// The longest the dispatcher waits for a commit before it looks again (retries that came due), in seconds.
        package var pollSeconds = 1.0
        /// How long a replaced secret keeps signing after a rotation, in seconds: a day.
        package var rotationOverlapSeconds = 86_400.0
        /// Backoff, attempts before a pause, removal on `410`.
        package var retry = WebhookRetryPolicy()
        /// How long connecting to a receiver may take, in seconds.
        package var connectTimeoutSeconds = 5.0
        /// How long a whole delivery may take, in seconds.
        package var deadlineSeconds = 15.0
        /// Replaces the system's resolver in the receivers' checks (tests).
        package var resolver: WebhookTargetPolicy.Resolver?

        /// The defaults.
        package init() {}

        /// Timings for tests of a whole server: commits and due retries looked at every 0.1 s, every subscription
        /// every 0.5 s, a lease of 6 s (a killed server's runs out soon; longer than a delivery's 5 s, as
        /// ``leaseSeconds`` must be), retries within 0.05 s growing to 0.2 s, connecting within 1 s and a whole
        /// delivery within 5 s; the defaults otherwise. `routekit serve` takes them
        /// with `ROUTEKIT_TEST_QUICK_WEBHOOKS=1` in its environment (a switch for tests, not a setting).
        package static var quick: WebhookSettings {
            var settings = WebhookSettings()
            settings.pollSeconds = 0.1
            settings.sweepSeconds = 0.5
            settings.leaseSeconds = 6
            settings.connectTimeoutSeconds = 1
            settings.deadlineSeconds = 5
            settings.retry.baseSeconds = 0.05
            settings.retry.capSeconds = 0.2
            return settings
        }

        /// The sender's configuration: these timeouts, and whether private receivers are allowed.
        package func senderConfiguration(allowPrivate: Bool) -> WebhookSenderConfiguration {
            var configuration = WebhookSenderConfiguration(version: RouteKitRelease.version)
            configuration.allowPrivate = allowPrivate
            configuration.connectTimeoutSeconds = connectTimeoutSeconds
            configuration.deadlineSeconds = deadlineSeconds
            return configuration
        }

        /// The policy subscriptions' URLs are checked with when they are made.
        package func targetPolicy(allowPrivate: Bool) -> WebhookTargetPolicy {
            WebhookTargetPolicy(allowPrivate: allowPrivate, resolve: resolver)
        }
    }

    /// Delivers every person's webhook subscriptions, as a service of the server.
    ///
    /// The store's change log is the outbox: each subscription's cursor is the anchor of the last change set its
    /// receiver acknowledged, and a delivery is the person's feed after it (`changes(since:matching:limit:)` with the
    /// subscription's types), signed with its secrets; the cursor moves only after a `2xx`. So deliveries are at least
    /// once and in anchor order, and a server stopped mid-delivery loses nothing: the next look (its own after a
    /// restart, or another server's) sends the same change set again, with the same `webhook-id` (derived from the
    /// subscription and the anchor the set ends at).
    ///
    /// It wakes on every commit the server's feed hub sees (`FeedHub.commits`) and at least every
    /// ``WebhookSettings/pollSeconds``. A look reads which people committed since the last one (`feedHeads(after:)`)
    /// and asks the store for their active subscriptions, and for any whose retry came due; every
    /// ``WebhookSettings/sweepSeconds`` it asks for all active ones. Each subscription found is delivered under a
    /// lease of the store (`claimWork`, key `webhook:ID`), so two servers sharing a store never deliver one
    /// subscription at once; at most ``WebhookSettings/maxConcurrentDeliveries`` run at once, and what does not fit
    /// waits for the next look (nothing is queued in memory). Failures go through ``WebhookRetryPolicy``: a retry
    /// later, a pause that says why, or removal on `410 Gone`. A cursor the store's history no longer reaches
    /// (`anchorExpired`) pauses the subscription. At shutdown, deliveries under way are cut short and recorded only
    /// when acknowledged.
    ///
    /// An admin-wide subscription is delivered person by person: each look first has the store make a cursor of it
    /// for every person whose feed moved past its start (`WebhookStore.startAdminWebhookCursors(people:)`;
    /// the people who committed, everyone at a sweep), and each cursor is then delivered as a person's subscription
    /// is, under its own lease, with its own retries and pause, its body naming the person (`"person"`) and its
    /// anchors sealed for the person's tokens (`w1.…`). `410 Gone` removes the admin-wide subscription.
    final class WebhookDispatcher: Service, Sendable {
        let store: any RouteStore & PeopleStore
        let webhooks: any WebhookStore
        /// What wakes the dispatcher: the feed hub's `commits` (a commit of any person, this process's or another's).
        let commits: CommitSignal
        let settings: WebhookSettings
        let senderConfiguration: WebhookSenderConfiguration
        let logger: Logger
        /// This server's name in the store's leases.
        let holder = UUID()
        /// Fired when a delivery ends, so that waiting work starts at once.
        private let wake = CommitSignal()
        /// The subscriptions being delivered by this server.
        private let inFlight = Locked<Set<UUID>>([])

        /// The subscriptions per page of the store's list.
        static let pageSize = 100

        /// A dispatcher for `store`'s subscriptions; `nil` when the store keeps none.
        init?(
            store: any RouteStore & PeopleStore, commits: CommitSignal, settings: WebhookSettings, allowPrivate: Bool,
            logger: Logger
        ) {
            guard let webhooks = store as? any WebhookStore else { return nil }
            self.store = store
            self.webhooks = webhooks
            self.commits = commits
            self.settings = settings
            self.senderConfiguration = settings.senderConfiguration(allowPrivate: allowPrivate)
            self.logger = logger
        }

        /// Delivers until the server shuts down; then returns without an error.
        func run() async throws {
            let sender = WebhookSender(configuration: senderConfiguration, resolver: settings.resolver)
            let poll = Self.milliseconds(settings.pollSeconds, fallback: 1)
            await cancelWhenGracefulShutdown { [self] in
                await withDiscardingTaskGroup { group in
                    // The hub's commits wake the loop through `wake`, as ended deliveries do.
                    group.addTask { [self] in
                        var seen = commits.current
                        while !Task.isCancelled {
                            await commits.wait(seen: seen, milliseconds: 1_000)
                            let now = commits.current
                            if now != seen {
                                seen = now
                                wake.fire()
                            }
                        }
                    }
                    var scan = Scan()
                    while !Task.isCancelled {
                        let seen = wake.current
                        for subscription in await nextWork(&scan) {
                            group.addTask { [self] in
                                await deliver(subscription, sender: sender)
                                inFlight.withLock { _ = $0.remove(subscription.id) }
                                wake.fire()
                            }
                        }
                        if Task.isCancelled { break }
                        await wake.wait(seen: seen, milliseconds: poll)
                    }
                    group.cancelAll()
                }
            }
            await sender.shutdown()
        }

        // MARK: Finding work

        /// What the dispatcher knows between looks.
        struct Scan {
            /// The change log's head at the last look (`nil` before the first).
            var head: Int64?
            /// People who committed and whose subscriptions are still to be looked at.
            var dirty: Set<PersonID> = []
            /// When every active subscription is next looked at.
            var sweep = ContinuousClock.now
            /// Whether the last look failed (logged once, then at debug level).
            var failing = false
            /// Where the last look stopped when every slot was taken: the next one starts after it and wraps around,
            /// so that busy subscriptions early in the order do not keep the later ones waiting.
            var resumeAfter: UUID?
        }

        /// How a subscription's slot was asked for.
        enum Slot {
            /// Taken: deliver it.
            case taken
            /// This server is delivering it already.
            case busy
            /// Every slot is taken.
            case full
        }

        /// Takes a delivery slot for subscription `id`.
        func reserve(_ id: UUID) -> Slot {
            let limit = max(1, settings.maxConcurrentDeliveries)
            return inFlight.withLock { running in
                if running.contains(id) { return .busy }
                if running.count >= limit { return .full }
                running.insert(id)
                return .taken
            }
        }

        /// The subscriptions to deliver now, each with its slot taken.
        func nextWork(_ scan: inout Scan) async -> [WebhookSubscription] {
            let started = ContinuousClock.now
            let everyone = scan.head == nil || started >= scan.sweep
            var work: [WebhookSubscription] = []
            var busy: Set<PersonID> = []
            var complete = true
            do throws(RouteKitError) {
                let heads = try await store.feedHeads(after: scan.head ?? .max)
                if scan.head != nil { scan.dirty.formUnion(heads.people) }
                scan.head = heads.head
                let people: Set<PersonID>? = everyone ? nil : scan.dirty
                // People new to an admin-wide subscription get their cursor of it, found below with the rest.
                _ = try await webhooks.startAdminWebhookCursors(people: people)
                let start = scan.resumeAfter
                var after = start
                // From `start` to the end of the order, then from its beginning back to `start`.
                var wrapped = start == nil
                var previous = start
                paging: while true {
                    let page = try await webhooks.dueWebhooks(
                        at: Date(), people: people, after: after, limit: Self.pageSize)
                    for subscription in page {
                        if wrapped, let start, subscription.id == start { break paging }
                        switch reserve(subscription.id) {
                        case .taken: work.append(subscription)
                        case .busy: if let person = subscription.person { busy.insert(person) }
                        case .full:
                            complete = false
                            scan.resumeAfter = previous
                            break paging
                        }
                        previous = subscription.id
                    }
                    if page.count == Self.pageSize, let last = page.last {
                        after = last.id
                    } else if wrapped {
                        break
                    } else {
                        wrapped = true
                        after = nil
                    }
                }
                if complete { scan.resumeAfter = nil }
                if scan.failing {
                    logger.notice("webhooks: the store answers again")
                    scan.failing = false
                }
            } catch {
                complete = false
                if !scan.failing {
                    logger.warning("webhooks: cannot read the subscriptions due", metadata: ["code": "\(error.code)"])
                    scan.failing = true
                }
            }
            if complete {
                // People whose subscription is being delivered are looked at again once it is done: a commit may
                // have come after its last read.
                scan.dirty = busy
                if everyone { scan.sweep = started + .seconds(max(0.05, settings.sweepSeconds)) }
            } else {
                scan.dirty.formUnion(busy)
            }
            return work
        }

        // MARK: Delivering

        /// What a delivery step leaves.
        enum Turn {
            /// More may be ready at once (the change set had more after it).
            case again
            /// Nothing more for now.
            case done
        }

        /// Delivers `subscription`'s pending change sets, up to ``WebhookSettings/maxSetsPerTurn``, under its lease.
        func deliver(_ subscription: WebhookSubscription, sender: WebhookSender) async {
            guard let person = subscription.person else { return }
            let view = store.forPerson(person)
            guard let hooks = view as? any WebhookStore else { return }
            let key = "webhook:" + subscription.id.lowercaseText
            // Nothing new after its cursor: no lease is taken (a look at every subscription costs reads only).
            if subscription.attempts == 0, subscription.nextAttempt == nil, let cursor = subscription.cursor,
                let anchor = try? ChangeAnchor(text: cursor),
                let set = try? await view.changes(
                    since: anchor, matching: ChangePredicate(types: subscription.types), limit: 1),
                set.count == 0, set.anchor.text == cursor
            {
                return
            }
            do throws(RouteKitError) {
                let held = try await view.claimWorkBatch([key], holder: holder, seconds: settings.leaseSeconds)
                // Another server is delivering it.
                guard held.contains(key) else { return }
            } catch {
                logger.warning(
                    "webhooks: cannot claim a subscription",
                    metadata: ["webhook": "\(subscription.id.lowercaseText)", "code": "\(error.code)"])
                return
            }
            for _ in 0..<max(1, settings.maxSetsPerTurn) {
                if Task.isCancelled { break }
                do throws(RouteKitError) {
                    let turn = try await step(subscription.id, view: view, hooks: hooks, key: key, sender: sender)
                    if turn == .done { break }
                } catch {
                    logger.warning(
                        "webhooks: a delivery stopped on a store error (tried again later)",
                        metadata: ["webhook": "\(subscription.id.lowercaseText)", "code": "\(error.code)"])
                    break
                }
            }
            let holder = self.holder
            _ = await Self.uncancelled { try? await view.releaseWorkClaim(key, holder: holder) }
        }

        /// One change set of subscription `id`: read after its cursor, delivered, and the outcome recorded.
        func step(
            _ id: UUID, view: any RouteStore & PeopleStore, hooks: any WebhookStore, key: String,
            sender: WebhookSender
        ) async throws(RouteKitError) -> Turn {
            guard let subscription = try await hooks.webhookToDeliver(id: id), subscription.pauseReason == nil else {
                return .done
            }
            let now = Date()
            if let due = subscription.nextAttempt, due > now { return .done }
            let cursor = subscription.cursor
            let set: ChangeSet
            do throws(RouteKitError) {
                var anchor: ChangeAnchor?
                if let cursor { anchor = try ChangeAnchor(text: cursor) }
                set = try await view.changes(
                    since: anchor, matching: ChangePredicate(types: subscription.types), limit: settings.maxChanges)
            } catch  where error.code.isAnchorError {
                let reason = Self.pauseReason(for: error.code)
                _ = try await record(
                    hooks, id, from: cursor,
                    WebhookDeliveryUpdate(
                        attempts: subscription.attempts, pendingSince: subscription.pendingSince, pauseReason: reason))
                logger.notice(
                    "webhooks: a subscription is paused: its cursor is past the store's history",
                    metadata: ["webhook": "\(id.lowercaseText)", "code": "\(error.code)"])
                return .done
            }
            if set.count == 0 {
                // Nothing of the subscription's types: the cursor moves past the changes of other types (and a
                // resumed subscription's schedule is cleared).
                if set.anchor.text != cursor || subscription.nextAttempt != nil || subscription.attempts != 0 {
                    guard try await record(hooks, id, from: cursor, WebhookDeliveryUpdate(cursor: set.anchor.text))
                    else { return .done }
                }
                return set.hasMore ? .again : .done
            }
            // The lease is renewed before each delivery; one lost (this server stalled past it) ends the turn.
            guard try await view.claimWorkBatch([key], holder: holder, seconds: settings.leaseSeconds).contains(key)
            else { return .done }
            let message = Self.messageID(id, set.anchor)
            let firstRead = subscription.pendingSince ?? now
            let body = WebhookPayload.body(
                set, anchorText: TokenAnchors.text(set.anchor, deliveredBy: subscription),
                person: subscription.parent == nil ? nil : subscription.person, timestamp: firstRead)
            let secrets = subscription.signingSecrets(at: now).compactMap { try? WebhookSecret(text: $0) }
            let attempt: WebhookAttempt
            do throws(RouteKitError) {
                attempt = try await sender.send(
                    to: subscription.url, id: message, timestamp: Int64(now.timeIntervalSince1970), body: body,
                    secrets: secrets)
            } catch {
                // No secret that can sign (the sender refuses before sending anything).
                _ = try await record(
                    hooks, id, from: cursor,
                    WebhookDeliveryUpdate(
                        attempts: subscription.attempts, pendingSince: subscription.pendingSince,
                        pauseReason: "the subscription cannot be signed: " + error.message))
                return .done
            }
            if case .delivered = attempt.outcome {
                // Acknowledged: recorded even while the server stops.
            } else if Task.isCancelled {
                // Cut short by the shutdown: nothing is recorded, and the set is sent again (with the same id).
                return .done
            }
            let number = subscription.attempts + 1
            let made = WebhookAttemptRecord(
                time: now, status: attempt.outcome.status, error: attempt.outcome.errorKind,
                detail: attempt.outcome.summary, durationMilliseconds: Self.milliseconds(attempt.duration),
                messageID: message)
            switch settings.retry.next(after: number, attempt.outcome) {
            case .advance:
                let moved = try await record(
                    hooks, id, from: cursor, WebhookDeliveryUpdate(cursor: set.anchor.text, attempt: made))
                return moved && set.hasMore ? .again : .done
            case .retry(let delay):
                _ = try await record(
                    hooks, id, from: cursor,
                    WebhookDeliveryUpdate(
                        attempts: number, nextAttempt: now.addingTimeInterval(Self.seconds(delay)),
                        pendingSince: firstRead, attempt: made))
                return .done
            case .pause(let reason):
                _ = try await record(
                    hooks, id, from: cursor,
                    WebhookDeliveryUpdate(
                        attempts: number, pendingSince: firstRead, pauseReason: reason, attempt: made))
                // Why is the subscription's to say (GET /v1/webhooks/ID): a refusal names the receiver's host.
                logger.notice(
                    "webhooks: a subscription is paused after failed attempts",
                    metadata: ["webhook": "\(id.lowercaseText)", "attempts": "\(number)"])
                return .done
            case .remove:
                let removed = await Self.uncancelled { () async -> Result<Bool, RouteKitError> in
                    do throws(RouteKitError) {
                        // An admin-wide subscription's receiver is everyone's: the whole subscription goes.
                        if let parent = subscription.parent {
                            return .success(try await hooks.deleteAdminWebhook(id: parent))
                        }
                        return .success(try await hooks.deleteWebhook(id: id))
                    } catch {
                        return .failure(error)
                    }
                }
                if case .failure(let error) = removed { throw error }
                logger.notice(
                    "webhooks: a subscription is removed: its receiver answered 410 Gone",
                    metadata: ["webhook": "\(id.lowercaseText)"])
                return .done
            }
        }

        /// Records a delivery, even while the server stops (the write runs in a task of its own, which the
        /// delivery's cancellation does not reach).
        func record(_ hooks: any WebhookStore, _ id: UUID, from cursor: String?, _ update: WebhookDeliveryUpdate)
            async throws(RouteKitError) -> Bool
        {
            let result = await Self.uncancelled { () async -> Result<Bool, RouteKitError> in
                do throws(RouteKitError) {
                    return .success(try await hooks.updateWebhookDelivery(id: id, from: cursor, update))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let recorded): return recorded
            case .failure(let error): throw error
            }
        }

        // MARK: Helpers

        /// The `webhook-id` of the change set of subscription `id` that ends at `anchor`: `msg_` and 32 hex digits
        /// of a SHA-256 of both. Every server, and every retry, gives the same set the same id.
        static func messageID(_ id: UUID, _ anchor: ChangeAnchor) -> String {
            let digest = SHA256.hash(data: Array((id.lowercaseText + "\n" + anchor.text).utf8))
            let digits = Array("0123456789abcdef")
            var text = "msg_"
            for byte in digest.prefix(16) {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            return text
        }

        /// Why a subscription whose cursor the feed refuses (`code`, an anchor error) is paused.
        static func pauseReason(for code: RouteKitError.Code) -> String {
            let advice =
                "resume it with {\"from\": \"now\"} and catch up with GET /v1/changes without an anchor"
            if code == .anchorExpired {
                return "the change feed's history before the subscription's cursor was compacted (anchor-expired); "
                    + advice
            }
            return "the subscription's cursor is not an anchor of this store's history (\(code)); " + advice
        }

        /// Runs `body` in a task of its own: the caller's cancellation does not reach it.
        static func uncancelled<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
            await Task { await body() }.value
        }

        /// `seconds` as whole milliseconds, from 1 ms to an hour (`fallback` when it is not a number).
        static func milliseconds(_ seconds: Double, fallback: Double) -> Int {
            let value = seconds.isFinite ? seconds : fallback
            return Int((min(max(value, 0.001), 3600) * 1000).rounded())
        }

        /// A duration in whole milliseconds.
        static func milliseconds(_ duration: Duration) -> Int {
            let parts = duration.components
            return Int(parts.seconds) * 1000 + Int(parts.attoseconds / 1_000_000_000_000_000)
        }

        /// A duration in seconds.
        static func seconds(_ duration: Duration) -> Double {
            let parts = duration.components
            return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        }
    }

    extension WebhookDeliveryOutcome {
        /// Why there was no status, as a subscription's attempts say it: `timeout`, `unreachable`, `refused`; `nil`
        /// when the receiver answered.
        package var errorKind: String? {
            switch self {
            case .delivered, .gone, .failed: nil
            case .timedOut: "timeout"
            case .unreachable: "unreachable"
            case .refusedTarget: "refused"
            }
        }
    }
#endif
