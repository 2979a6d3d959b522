#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX
    @_spi(RouteKitInternals) import RouteKitProcessing
    import ServiceLifecycle

    /// One watcher of the store's commits for the whole server: it waits on the store's `CommitWatch` and wakes
    /// the long-polls and event streams of this process that follow the people a commit concerns (one
    /// `CommitSignal` per person followed here), so that 5,000 followers cost one watcher, and a commit wakes only
    /// its person's followers: the cost of a commit grows with the people it concerns, not with every follower.
    final class FeedHub: Service, Sendable {
        let store: any RouteStore & PeopleStore
        /// Fired at shutdown (and by every person's commit): what streams watch for the server's end.
        let signal = CommitSignal()
        /// Fired after every commit the hub sees, whoever's (once its people's followers are woken), and at shutdown:
        /// what the webhook dispatcher waits on (it asks the store whose subscriptions may have something new).
        let commits = CommitSignal()
        /// One signal per person followed on this server, made on first use. At most one per person the server
        /// has served a follower of (small: a generation counter each).
        private let personSignals = Locked<[PersonID: CommitSignal]>([:])
        /// Open event streams, by token.
        let streams = Locked<[UUID: Int]>([:])
        let logger: Logger
        let metrics: ServerMetrics

        init(store: any RouteStore & PeopleStore, logger: Logger, metrics: ServerMetrics, heartbeatSeconds: Double = 15)
        {
            self.store = store
            self.logger = logger
            self.metrics = metrics
            trimming = Locked(TrimSchedule(heartbeat: .seconds(heartbeatSeconds)))
        }

        /// What `person`'s followers wait on: fired when a commit concerns them, and at shutdown.
        func signal(for person: PersonID) -> CommitSignal {
            personSignals.withLock { signals in
                if let signal = signals[person] { return signal }
                let signal = CommitSignal()
                signals[person] = signal
                return signal
            }
        }

        /// Wakes the followers of `people` (and drops the shared reads of theirs, now stale).
        func wake(_ people: Set<PersonID>) {
            reads.withLock { state in state = state.filter { !people.contains($0.key.person) } }
            let signals = personSignals.withLock { s in people.compactMap { s[$0] } }
            for signal in signals { signal.fire() }
            commits.fire()
        }

        /// Wakes every follower (shutdown; a head that moved without saying whose it was).
        func wakeEveryone() {
            reads.withLock { $0.removeAll() }
            let signals = personSignals.withLock { Array($0.values) }
            for signal in signals { signal.fire() }
            signal.fire()
            commits.fire()
        }

        func run() async throws {
            let store = self.store
            let logger = self.logger
            try await cancelWhenGracefulShutdown {
                let waiter: CommitWatch
                do throws(RouteKitError) {
                    waiter = try await store.commitWatch()
                } catch {
                    logger.error("cannot watch the store for commits", metadata: ["error": "\(error.message)"])
                    throw error
                }
                defer { waiter.close() }
                // Everyone's head; each wake asks whose heads moved past it, and wakes only their followers.
                var last = (try? await store.feedHeads(after: .max))?.head
                while !Task.isCancelled {
                    await waiter.wait(timeout: 1)
                    // Once a burst of followers has gone, give the memory their connections used back.
                    if self.shouldTrim() {
                        BatchAllocator.returnFreeMemory()
                        logger.debug(
                            "returned free memory to the system", metadata: ["openStreams": "\(self.openStreamCount)"])
                    }
                    guard let since = last else {
                        last = (try? await store.feedHeads(after: .max))?.head
                        if last != nil { self.wakeEveryone() }
                        continue
                    }
                    guard let heads = try? await store.feedHeads(after: since), heads.head != since else { continue }
                    last = heads.head
                    if heads.head < since {
                        // The log went back (a store restored from a copy): everyone reads again, and learns.
                        self.wakeEveryone()
                    } else {
                        self.wake(heads.people)
                    }
                }
            }
            // Wake the streams so that they see the shutdown and end.
            wakeEveryone()
        }

        /// Change sets being read or read since the last commit of their person, by what was asked: when a commit
        /// wakes 500 followers of one person at the same anchor, one of them reads the store and the others wait
        /// for its answer. A person's are dropped at each commit of theirs (``wake(_:)``); large sets once read.
        private let reads = Locked<[ReadKey: (generation: UInt64, task: Task<ChangeSet, any Error>)]>([:])

        struct ReadKey: Hashable {
            /// Whose feed: two people at the same anchor (or none) are owed different sets.
            var person: PersonID
            var anchor: String?
            var predicate: ChangePredicate
            var limit: Int
        }

        /// The change set after `anchor`, shared with every follower of the same person that asks the same since
        /// that person's last commit. A set read before a commit that had not fired yet is still a correct answer for
        /// a follower (the commit's fire wakes it, and it asks again from the new anchor), but not for a request's
        /// first read: a client that was told its upload was stored must find it in the feed at once. Those pass
        /// `shared: false` and read the store.
        func changes(
            in store: any RouteStore, since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int,
            shared: Bool
        )
            async throws(RouteKitError) -> ChangeSet
        {
            if !shared { return try await store.changes(since: anchor, matching: predicate, limit: limit) }
            let key = ReadKey(person: store.person, anchor: anchor?.text, predicate: predicate, limit: limit)
            let generation = signal(for: store.person).current
            let task = reads.withLock { tasks -> Task<ChangeSet, any Error> in
                if let running = tasks[key], running.generation == generation { return running.task }
                let task = Task { () throws -> ChangeSet in
                    try await store.changes(since: anchor, matching: predicate, limit: limit)
                }
                tasks[key] = (generation, task)
                return task
            }
            func forget() {
                reads.withLock { tasks in
                    if tasks[key]?.generation == generation { tasks[key] = nil }
                }
            }
            do {
                let set = try await task.value
                // Live updates are small and shared by every follower; catch-up pages are large and rarely asked for
                // twice: those are not kept once read (memory stays bounded while followers page).
                if set.count > 64 { forget() }
                return set
            } catch let error as RouteKitError {
                // Errors are not shared: the next reader asks the store again.
                forget()
                throw error
            } catch {
                forget()
                throw RouteKitError(.storage, "reading the change feed failed")
            }
        }

        /// When to give the memory of closed streams back to the system.
        private let trimming: Locked<TrimSchedule>

        /// Whether to return free memory now (called once a second by the watcher).
        func shouldTrim(now: ContinuousClock.Instant = .now) -> Bool {
            let open = openStreamCount
            return trimming.withLock { $0.tick(open: open, now: now) }
        }

        /// Counts a new stream of `token`; `false` when it already holds `limit`.
        func openStream(_ token: UUID, limit: Int) -> Bool {
            let open = streams.withLock { s -> Int? in
                guard s[token, default: 0] < limit else { return nil }
                s[token, default: 0] += 1
                metrics.streamOpened()
                return s.values.reduce(0, +)
            }
            guard let open else { return false }
            // Seen here, not only at the watcher's next tick: a burst may come and go between two ticks.
            trimming.withLock { $0.highWater = max($0.highWater, open) }
            return true
        }

        func closeStream(_ token: UUID) {
            streams.withLock { s in
                s[token, default: 1] -= 1
                if s[token] == 0 { s[token] = nil }
                metrics.streamClosed()
            }
        }

        /// Event streams open now.
        var openStreamCount: Int { streams.withLock { $0.values.reduce(0, +) } }

        /// Open event streams, by person (every token of theirs together).
        let personStreams = Locked<[PersonID: Int]>([:])

        /// Admits one more event stream of `token` (acting as `person`), or refuses it with `429` and `Retry-After`:
        /// a token holds at most ``ServerConfiguration/maxStreamsPerToken``, a person at most
        /// ``ServerConfiguration/maxStreamsPerPerson`` over all their tokens. The slot gives both back.
        func admitStream(_ token: APIToken, person: PersonID, _ configuration: ServerConfiguration) throws(Problem)
            -> StreamSlot
        {
            let personLimit = configuration.maxStreamsPerPerson
            let personAdmitted = personStreams.withLock { open -> Bool in
                guard open[person, default: 0] < personLimit else { return false }
                open[person, default: 0] += 1
                return true
            }
            guard personAdmitted else {
                throw Problem(
                    status: .tooManyRequests, type: "too-many-streams", title: "Too many open streams",
                    detail: "this person holds \(personLimit) event streams already (over all their tokens)",
                    headers: [.retryAfter: "5"])
            }
            guard openStream(token.id, limit: configuration.maxStreamsPerToken) else {
                closePersonStream(person)
                throw Problem(
                    status: .tooManyRequests, type: "too-many-streams", title: "Too many open streams",
                    detail: "this token holds \(configuration.maxStreamsPerToken) event streams already",
                    headers: [.retryAfter: "5"])
            }
            return StreamSlot(hub: self, token: token.id, person: person)
        }

        /// Gives back one of `person`'s stream slots.
        func closePersonStream(_ person: PersonID) {
            personStreams.withLock { open in
                open[person, default: 1] -= 1
                if open[person] == 0 { open[person] = nil }
            }
        }
    }

    /// One token's event-stream slot, given back once: by ``release()`` when the stream ends, or when the last
    /// reference goes (a response dropped unwritten).
    final class StreamSlot: Sendable {
        private let hub: FeedHub
        private let token: UUID
        private let person: PersonID
        private let held = Locked(true)

        init(hub: FeedHub, token: UUID, person: PersonID) {
            self.hub = hub
            self.token = token
            self.person = person
        }

        func release() {
            let wasHeld = held.withLock { held in
                defer { held = false }
                return held
            }
            if wasHeld {
                hub.closeStream(token)
                hub.closePersonStream(person)
            }
        }

        deinit { release() }
    }

    /// What this server's followers wait on between reads (a ``ChangeTailWaiter``): the hub's commit signal, which one
    /// watcher of the store fires for every event stream and long-poll of the process, instead of a commit waiter
    /// each.
    final class FeedWaiter: ChangeTailWaiter {
        /// How long one wait lasts.
        enum Pace: Sendable {
            /// At most this many milliseconds: when no commit came, the tail reports it idle (an event stream sends a
            /// heartbeat) without reading, and waits again.
            case heartbeat(milliseconds: Int)
            /// Until this instant (a long-poll's): the tail reads after every wait, the one that ends at the deadline
            /// too (a commit of another process that the hub's watcher has not seen yet is in the answer); a wait that
            /// would start after it is idle at once.
            case deadline(ContinuousClock.Instant)
        }

        private let signal: CommitSignal
        private let pace: Pace
        /// How many commits the signal had counted when the last read began.
        private let seen: Locked<UInt64>

        /// A waiter whose follower's last read began when `signal` had counted `seen` commits.
        init(signal: CommitSignal, seen: UInt64, pace: Pace) {
            self.signal = signal
            self.pace = pace
            self.seen = Locked(seen)
        }

        func willRead() {
            let current = signal.current
            seen.withLock { $0 = current }
        }

        func wait() async -> Bool {
            let last = seen.withLock { $0 }
            switch pace {
            case .heartbeat(let milliseconds):
                if signal.current == last { await signal.wait(seen: last, milliseconds: milliseconds) }
                return signal.current != last
            case .deadline(let deadline):
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                let ms = Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
                await signal.wait(seen: last, milliseconds: max(1, ms))
                return true
            }
        }

        /// Nothing to release: the signal is the hub's.
        func close() {}
    }

    extension HTTPField.Name {
        /// `Last-Event-ID`: where an event stream resumes (an anchor).
        package static let lastEventID = named("Last-Event-ID")
        /// `X-Accel-Buffering`: `no` tells nginx not to buffer an event stream.
        package static let accelBuffering = named("X-Accel-Buffering")
        /// `RouteKit-Anchor`: the anchor of a change set.
        package static let routeKitAnchor = named("RouteKit-Anchor")
        /// `RouteKit-Up-To-Date`: whether a change set caught up with the store.
        package static let routeKitUpToDate = named("RouteKit-Up-To-Date")
        /// `X-Request-Id`: the id of a request in the server's log.
        package static let requestID = named("X-Request-Id")

        /// A field name from text that is a valid token (all of the above are, so the fallback is never taken).
        private static func named(_ text: String) -> HTTPField.Name { HTTPField.Name(text) ?? .via }
    }

    /// `GET /v1/changes`: the change feed as one JSON change set, a long-poll (`wait=S`), or Server-Sent Events
    /// (`Accept: text/event-stream`).
    struct FeedRoutes: Sendable {
        let stores: PersonStores
        let hub: FeedHub
        let configuration: ServerConfiguration

        func changes(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            // Any read scope: each set leaves out the objects of types the token may not read.
            let token = try context.requireSomeRead()
            let query = request.uri.queryParameters
            let limit = try Query.int(query.get("limit"), "limit", default: 500, 1...configuration.maxLimit)
            let wait = try Query.int(query.get("wait"), "wait", default: 0, 0...configuration.maxWaitSeconds)
            let predicate = try Query.predicate(query)
            let isStream = request.headers[.accept]?.contains("text/event-stream") ?? false
            var anchorText = query.get("anchor")
            if isStream, let last = request.headers[.lastEventID], !last.isEmpty { anchorText = last }
            var anchor: ChangeAnchor?
            if let anchorText { anchor = try await opened(anchorText, for: token, person: store.person) }
            // The first read happens before any answer, so that an unusable anchor gets its status on both forms.
            let seen = hub.signal(for: store.person).current
            var set = try await read(in: store, since: anchor, predicate, limit, token, shared: false)
            if isStream {
                let slot = try hub.admitStream(token, person: store.person, configuration)
                return stream(
                    in: store, first: set, seen: seen, predicate, limit, token, slot: slot, request: request,
                    logger: context.logger)
            }
            if wait > 0 && set.added.isEmpty && set.deleted.isEmpty && !set.hasMore {
                // The feed's tailing loop, as the event stream runs it, until a set with changes, the deadline, the
                // client's leaving or the server's shutdown. A store that cannot be reached is waited out with the
                // backoff of `routekit changes --follow`, and read again as soon as it answers; past the deadline the
                // answer is the last set read (its anchor still good), not an error.
                let deadline = ContinuousClock.now + .seconds(wait)
                let waiter = FeedWaiter(signal: hub.signal(for: store.person), seen: seen, pace: .deadline(deadline))
                var tail = makeTail(in: store, after: set, predicate, limit, token, waiter: waiter)
                polling: while set.added.isEmpty && set.deleted.isEmpty && !set.hasMore {
                    switch try await tail.next() {
                    case .changes(let later)?:
                        set = later
                    case .unavailable?:
                        if ContinuousClock.now >= deadline { break polling }
                    case .idle?, nil:
                        break polling
                    }
                }
            }
            let sealed = TokenAnchors.text(set.anchor, for: token)
            return JSONBody.raw(
                ChangeSetJSON.bytes(set, anchorText: sealed),
                headers: [.routeKitAnchor: sealed, .routeKitUpToDate: set.hasMore ? "false" : "true"])
        }

        /// The anchor `token` (of `person`) sent back: one of its own (``TokenAnchors/anchor(_:for:)``), or one an
        /// admin-wide webhook subscription delivered in a change set of the person's (its key read from the store).
        /// - Throws: ``RouteKitError/Code/anchorMalformed`` when it is neither.
        func opened(_ text: String, for token: APIToken, person: PersonID) async throws(RouteKitError) -> ChangeAnchor {
            guard let id = TokenAnchors.webhook(of: text) else { return try TokenAnchors.anchor(text, for: token) }
            var keyText: String?
            if let hooks = stores.base as? any WebhookStore, let subscription = try await hooks.adminWebhook(id: id) {
                keyText = subscription.anchorKey
            }
            return try TokenAnchors.anchor(text, person: person, webhookKeyText: keyText)
        }

        /// One change set, without what the token may not read; `shared` as in ``FeedHub/changes``.
        ///
        /// For a token limited to some sources, or narrowed to some types of object (`removeUnreadable(_:)`), pages
        /// of the store's feed are read and merged until `limit` changes it may see are there, the feed is caught
        /// up, or ``maxHiddenPages`` pages were read: whether the feed had more (``ChangeSet/hasMore``) then says
        /// nothing of the hidden commits, except past that many pages.
        func read(
            in store: any RouteStore, since anchor: ChangeAnchor?, _ predicate: ChangePredicate, _ limit: Int,
            _ token: APIToken, shared: Bool
        )
            async throws(RouteKitError) -> ChangeSet
        {
            var set = try await hub.changes(in: store, since: anchor, matching: predicate, limit: limit, shared: shared)
            guard token.readableSources != nil || !token.grant.readsEverything else { return set }
            set.removeUnreadable(token)
            var pages = 1
            while set.hasMore && set.count < limit && pages < Self.maxHiddenPages {
                var next = try await hub.changes(
                    in: store, since: set.anchor, matching: predicate, limit: limit, shared: shared)
                pages += 1
                next.removeUnreadable(token)
                set.merge(next)
            }
            return set
        }

        /// How many pages of the store's feed one read for a source-limited token goes through at most.
        static let maxHiddenPages = 32

        /// The feed's one tailing loop (``ChangeTail``, which `routekit changes --follow` runs too) after `first`, the
        /// set this request read before it answered: its reads shared through the hub and filtered for `token`
        /// (``read(in:since:_:_:_:shared:)``), its waits on the hub's commit signal (`waiter`); it ends when the client
        /// goes (the task is cancelled) or the server shuts down.
        func makeTail(
            in store: any RouteStore, after first: ChangeSet, _ predicate: ChangePredicate, _ limit: Int,
            _ token: APIToken, waiter: FeedWaiter
        ) -> ChangeTail {
            ChangeTail(
                after: first,
                read: { [self] (anchor: ChangeAnchor?) async throws(RouteKitError) -> ChangeSet in
                    try await self.read(in: store, since: anchor, predicate, limit, token, shared: true)
                },
                waiter: { () async throws(RouteKitError) -> any ChangeTailWaiter in waiter },
                stopped: { Task.isCancelled || Task.isShuttingDownGracefully })
        }

        /// The event stream: `changes` events whose `id:` is the anchor after them (a reconnect with
        /// `Last-Event-ID` resumes exactly), `up-to-date` after each catch-up, a comment when idle, an `error`
        /// event (a problem) when the store fails, and the end on client disconnect or, after a `shutdown` event
        /// (``shutdownEvent``), on server shutdown. The first event carries `retry: 3000` (``retryField``).
        func stream(
            in store: any RouteStore, first: ChangeSet, seen start: UInt64, _ predicate: ChangePredicate, _ limit: Int,
            _ token: APIToken, slot: StreamSlot, request: Request, logger: Logger
        ) -> Response {
            let heartbeatMS = Int(configuration.heartbeatSeconds * 1000)
            let headers: HTTPFields = [
                .contentType: "text/event-stream", .cacheControl: "no-store", .accelBuffering: "no",
            ]
            let hub = self.hub
            // The slot is given back when the body has been written or, when the connection went before the answer
            // could start (a reset right after the request: the body is never written), when the response is dropped.
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    defer { slot.release() }
                    do {
                        try await request.body.consumeWithCancellationOnInboundClose { _ in
                            try await withGracefulShutdownHandler {
                                try await pump(
                                    &writer, in: store, first: first, seen: start, predicate, limit, token,
                                    heartbeatMS: heartbeatMS, logger: logger)
                            } onGracefulShutdown: {
                                hub.wakeEveryone()
                            }
                        }
                    } catch {
                        // The client went away (or a write failed): nothing more to send.
                    }
                    try? await writer.finish(nil)
                })
        }

        /// Writes the stream's events until the client leaves, the server shuts down or the store fails (a store that
        /// cannot be reached is waited for, not a failure): each step of the feed's tailing loop (``makeTail``) as
        /// events and comments.
        func pump(
            _ writer: inout any ResponseBodyWriter, in store: any RouteStore, first: ChangeSet, seen start: UInt64,
            _ predicate: ChangePredicate, _ limit: Int, _ token: APIToken, heartbeatMS: Int, logger: Logger
        ) async throws {
            // `retry:` rides on the first event: a frame of its own, without data, dispatches no event by the
            // specification, but some clients (httpx-sse) turn it into an empty `message`.
            var retryPending = true
            let waiter = FeedWaiter(
                signal: hub.signal(for: store.person), seen: start, pace: .heartbeat(milliseconds: heartbeatMS))
            var tail = makeTail(in: store, after: first, predicate, limit, token, waiter: waiter)
            var upToDateSent = false
            var waitingLogged = false
            while true {
                let step: ChangeTail.Step?
                do throws(RouteKitError) {
                    step = try await tail.next()
                } catch {
                    logger.warning("event stream ended by a store error", metadata: ["code": "\(error.code)"])
                    let frame = Self.event("error", id: nil, JSONValue.object(Problem(error).members()))
                    try await writer.write(Self.withRetry(&retryPending, frame))
                    return
                }
                switch step {
                case .changes(let set)?:
                    if waitingLogged {
                        logger.notice("event stream: the store answers again")
                        waitingLogged = false
                    }
                    if !set.added.isEmpty || !set.deleted.isEmpty {
                        let anchorText = TokenAnchors.text(set.anchor, for: token)
                        let json = ChangeSetJSON.bytes(set, anchorText: anchorText)
                        let frame = Self.event("changes", id: anchorText, json: json)
                        try await writer.write(Self.withRetry(&retryPending, frame))
                        upToDateSent = false
                    }
                    if !set.hasMore && !upToDateSent {
                        let anchorText = TokenAnchors.text(set.anchor, for: token)
                        let frame = Self.event("up-to-date", id: anchorText, ["anchor": anchorText])
                        try await writer.write(Self.withRetry(&retryPending, frame))
                        upToDateSent = true
                    }
                case .idle?:
                    // A heartbeat interval without a commit: nothing was read, and nothing is sent again.
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .unavailable(let error)?:
                    // A store that cannot be reached (a database server restarting) is waited for with the backoff
                    // `routekit changes --follow` uses (the tail's next step waits, then reads from the same anchor,
                    // losing and repeating nothing): a comment keeps the connection open meanwhile.
                    if !waitingLogged {
                        logger.warning("event stream waiting for the store", metadata: ["code": "\(error.code)"])
                        waitingLogged = true
                    }
                    try await writer.write(ByteBuffer(string: ": waiting for the store\n\n"))
                case nil:
                    // The client went away or the server is shutting down: then the stream says so in a last event
                    // before it ends (a client that went away gets nothing, and the write fails quietly).
                    if Task.isShuttingDownGracefully && !Task.isCancelled {
                        try await writer.write(Self.withRetry(&retryPending, Self.shutdownEvent))
                    }
                    return
                }
            }
        }

        /// The last event of a stream that ends because the server shuts down (SIGTERM): `shutdown`, with no `id:`
        /// (the last event's id stays where a reconnect resumes).
        static var shutdownEvent: ByteBuffer {
            event("shutdown", id: nil, ["detail": "the server is shutting down; reconnect with Last-Event-ID"])
        }

        /// The reconnection delay an event stream asks of its clients (milliseconds), sent with its first event.
        static let retryField = "retry: 3000\n"

        /// `frame`, preceded by ``retryField`` when `pending` (which it then clears): the stream's first event.
        static func withRetry(_ pending: inout Bool, _ frame: ByteBuffer) -> ByteBuffer {
            guard pending else { return frame }
            pending = false
            var buffer = ByteBuffer(string: retryField)
            var rest = frame
            buffer.writeBuffer(&rest)
            return buffer
        }

        static func event(_ name: String, id: String?, _ value: some Encodable) -> ByteBuffer {
            event(name, id: id, json: JSONBody.bytes(value))
        }

        /// An event whose data is one line of JSON.
        static func event(_ name: String, id: String?, json: [UInt8]) -> ByteBuffer {
            var text = ""
            if let id { text += "id: \(id)\n" }
            text += "event: \(name)\ndata: "
            var buffer = ByteBuffer(string: text)
            buffer.writeBytes(json)
            buffer.writeString("\n\n")
            return buffer
        }
    }

    /// Query parameters, checked: a bad one is a `400` naming it.
    enum Query {
        static func int(_ text: String?, _ name: String, default value: Int, _ range: ClosedRange<Int>) throws(Problem)
            -> Int
        {
            guard let text else { return value }
            guard let n = Int(text), range.contains(n) else {
                throw Problem.badRequest(
                    "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            return n
        }

        static func uuid(_ text: String?, _ name: String) throws(Problem) -> UUID? {
            guard let text else { return nil }
            guard let id = UUID(uuidString: text) else {
                throw Problem.badRequest("'\(name)' is not a uuid: '\(text)'")
            }
            return id
        }

        static func source(_ text: String?) throws(Problem) -> Source? {
            guard let text else { return nil }
            do { return try Source(name: text) } catch { throw Problem.badRequest("'source': \(error.message)") }
        }

        static func time(_ text: String?, _ name: String) throws(Problem) -> Instant? {
            guard let text else { return nil }
            guard let t = Timestamp(iso8601: text) else {
                throw Problem.badRequest("'\(name)' is not an ISO 8601 time (2024-05-01T06:00:00Z): '\(text)'")
            }
            return t.instant
        }

        /// `types`, `workout`, `source`, `syncIdentifier`, `from`, `to`.
        static func predicate(_ q: Parameters) throws(Problem) -> ChangePredicate {
            let from = try time(q.get("from"), "from")
            let to = try time(q.get("to"), "to")
            var interval: ClosedRange<Instant>?
            if from != nil || to != nil {
                let lo = from ?? Instant(seconds: .min)
                let hi = to ?? Instant(seconds: .max)
                guard lo <= hi else { throw Problem.badRequest("'from' is after 'to'") }
                interval = lo...hi
            }
            var types: Set<ChangeObjectType> = [.route]
            if let text = q.get("types") {
                do { types = try ChangeObjectType.parseList(text) } catch { throw Problem.badRequest(error.message) }
            }
            return ChangePredicate(
                types: types, workout: try uuid(q.get("workout"), "workout"), source: try source(q.get("source")),
                syncIdentifier: q.get("syncIdentifier"), interval: interval)
        }
    }

    /// When to give freed memory back to the system (`malloc_trim`) after event streams close. glibc keeps what a
    /// burst of connections freed (`Benchmarks/README.md` has how much) and returns it only when asked; asked at
    /// once, it returns little, since the closed connections' memory is still being released, and each closed
    /// stream's heartbeat timer lives on until its deadline (15 s), pinning pages. So: once the open streams fall
    /// to half of their high-water mark (at least 16 streams gone), trim after each of `delays` (the last one past
    /// the heartbeat); a few streams coming and going never trigger it.
    struct TrimSchedule {
        /// The most streams open since the last drop.
        var highWater = 0
        /// When the next trims are due, soonest first.
        var due: [ContinuousClock.Instant] = []
        /// How long after a drop to trim.
        var delays: [Duration]

        /// A schedule for streams whose heartbeat comes every `heartbeat`.
        init(heartbeat: Duration = .seconds(15)) {
            delays = [.seconds(3), heartbeat + .seconds(2)]
        }

        /// Called with the open streams; `true` when it is time to trim.
        mutating func tick(open: Int, now: ContinuousClock.Instant) -> Bool {
            highWater = max(highWater, open)
            if highWater - open >= 16 && open <= highWater / 2 {
                due = delays.map { now + $0 }
                highWater = open
            }
            guard let first = due.first, now >= first else { return false }
            due.removeAll { $0 <= now }
            return true
        }
    }

    extension ChangeSet {
        /// Drops what `token` may not read: the objects of other sources, and those of types its scopes leave out
        /// (routes without `read:routes`, workouts without `read:workouts`, effort scores without `read:effort`, a
        /// series without its quantity type's `read:TYPE`); the workouts it keeps lose the recorded totals of the
        /// quantity types it may not read. (Sets are shared by every token of a person: this is done to each token's
        /// copy, never in the store.)
        mutating func removeUnreadable(_ token: APIToken) {
            let grant = token.grant
            let routes = grant.mayRead(.routes)
            added.removeAll { !routes || !token.mayRead($0.source) }
            deleted.removeAll { !routes || !token.mayRead($0.source) }
            addedObjects.removeAll { !token.mayRead($0.source) || !grant.mayRead(object: $0) }
            deletedObjects.removeAll { !token.mayRead($0.source) || !grant.mayRead(key: $0.key) }
            if !grant.readsEveryQuantity {
                for i in addedObjects.indices {
                    guard case .workout(let workout) = addedObjects[i] else { continue }
                    addedObjects[i] = .workout(grant.redacted(workout))
                }
            }
        }

        /// Appends the change set that follows this one: a route this set added and the next one deletes (replaced
        /// in between) is dropped from both, so that deletions-first-then-additions stays right for the merge.
        mutating func merge(_ next: ChangeSet) {
            let addedIDs = Set(added.map(\.id))
            var removed: Set<UUID> = []
            for d in next.deleted {
                if addedIDs.contains(d.id) { removed.insert(d.id) } else { deleted.append(d) }
            }
            if !removed.isEmpty { added.removeAll { removed.contains($0.id) } }
            added += next.added
            // The other objects, by key: a series can be added again under its key, so the consumer may hold an
            // older copy of what this set added; the next set's deletions are always kept (deleting what a consumer
            // does not hold is a no-op), and an object added again replaces the copy this set added.
            let nextKeys = Set(next.deletedObjects.map(\.key)).union(next.addedObjects.map(\.key))
            deletedObjects += next.deletedObjects
            addedObjects.removeAll { nextKeys.contains($0.key) }
            addedObjects += next.addedObjects
            anchor = next.anchor
            hasMore = next.hasMore
        }
    }
#endif
