#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitProcessing
    import ServiceLifecycle

    /// What the builder endpoints of this process tell the zone streams of a builder (`GET /v1/builders/ID/zones`):
    /// the samples a batch stored, and the builder's end. Each stream registers before it reads the builder's stored
    /// samples, so a batch stored meanwhile is in what it read, in what it is told, or in both (the indices tell).
    ///
    /// In-process: a batch another server process stores (behind a load balancer) does not reach this process's
    /// streams. A stream's notices are kept in a bounded buffer (``buffer``, the newest kept); a stream that finds a
    /// gap in the indices reads what it missed from the store.
    final class BuilderLive: Sendable {
        /// What a stream is told.
        enum Notice: Sendable {
            /// Samples of a type stored by one batch, in the order stored; `first` is the index of the first among
            /// the builder's samples of that type.
            case samples(QuantityType, first: Int, [QuantitySample])
            /// Time for a heartbeat comment (the stream's own timer).
            case heartbeat
            /// The builder finished or was discarded (`finished`, `discarded`).
            case ended(String)
        }

        /// How many notices a stream that has not read them keeps at most (the oldest are dropped).
        static let buffer = 64

        /// Each builder's streams, by a key of each.
        private let streams = Locked<[UUID: [UUID: AsyncStream<Notice>.Continuation]]>([:])

        /// One stream's registration: its notices, until it is ended (by ``end()``, its reader's cancellation, or
        /// the last reference going: a response dropped unwritten), which unregisters it.
        final class Subscription: Sendable {
            /// The notices, in the order told.
            let notices: AsyncStream<Notice>
            let continuation: AsyncStream<Notice>.Continuation

            init(notices: AsyncStream<Notice>, continuation: AsyncStream<Notice>.Continuation) {
                self.notices = notices
                self.continuation = continuation
            }

            /// Tells the stream itself something (its heartbeats).
            func yield(_ notice: Notice) { continuation.yield(notice) }

            /// Ends the stream (a reader gets what was told before, then the end); calling it again does nothing.
            func end() { continuation.finish() }

            deinit { continuation.finish() }
        }

        /// Registers a stream of `builder`'s notices; it is unregistered when it ends.
        func subscribe(_ builder: UUID) -> Subscription {
            let (notices, continuation) = AsyncStream<Notice>.makeStream(bufferingPolicy: .bufferingNewest(Self.buffer))
            let key = UUID()
            streams.withLock { $0[builder, default: [:]][key] = continuation }
            // Called outside the lock: `finish()` and cancellation call it, and neither happens under the lock.
            continuation.onTermination = { [weak self] _ in self?.remove(builder, key) }
            return Subscription(notices: notices, continuation: continuation)
        }

        private func remove(_ builder: UUID, _ key: UUID) {
            streams.withLock { s in
                s[builder]?[key] = nil
                if s[builder]?.isEmpty == true { s[builder] = nil }
            }
        }

        /// The continuations of `builder`'s streams now (yielded to outside the lock).
        private func continuations(of builder: UUID, removing: Bool = false) -> [AsyncStream<Notice>.Continuation] {
            streams.withLock { s in
                let found = Array((s[builder] ?? [:]).values)
                if removing { s[builder] = nil }
                return found
            }
        }

        /// Tells `builder`'s streams.
        func publish(_ notice: Notice, to builder: UUID) {
            for c in continuations(of: builder) { c.yield(notice) }
        }

        /// Tells `builder`'s streams that it ended, and ends them.
        func end(_ builder: UUID, reason: String) {
            for c in continuations(of: builder, removing: true) {
                c.yield(.ended(reason))
                c.finish()
            }
        }
    }

    /// The data of a `zone` event.
    struct ZoneEventJSON: Encodable {
        /// The zone now, from 1.
        var current: Int
        /// The zone the last event said, `null` in a stream's first event.
        @ExplicitNull var previous: Int?
        /// The time of the last sample taken into account (ISO 8601).
        var time: String
        /// Seconds in each zone (zone 1 first) up to `time`.
        var secondsInZones: [Double]

        init?(_ zones: LiveZones, previous: Int?) {
            guard let current = zones.current, let time = zones.time else { return nil }
            self.current = current
            self.previous = previous
            self.time = Timestamp(time).iso8601
            self.secondsInZones = zones.seconds
        }
    }

    extension BuilderRoutes {
        /// `GET /v1/builders/ID/zones` (`?type=heartRate`, the default, or `power`): a Server-Sent Events stream of the
        /// zone the builder's samples are in, in the token's source's preferred zones (`GET /v1/zones/heartRate`):
        /// first the zone its stored samples end in (when it holds any), then a `zone` event each time a batch of
        /// samples leaves the builder in another zone than the last event said; heartbeat comments in between; an
        /// `end` event when the builder finishes or is discarded. Without zones for the source (no configuration, no
        /// maximum heart rate, no age; no FTP for power) it is `409 zones-unknown`, saying how to set them. Besides the
        /// builder's `write:routes`, it needs the quantity's read scope (`read:heartRate`, `read:power`).
        func zones(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let text = request.uri.queryParameters.get("type") ?? ZoneConfiguration.Quantity.heartRate.rawValue
            guard let quantity = ZoneConfiguration.Quantity(rawValue: text) else {
                throw Problem.badRequest("'type' must be heartRate or power, not '\(text)'")
            }
            // The zone of its samples tells them: reading them is the quantity's scope (`read:heartRate`).
            let (token, pending) = try await owned(context, needing: .reading(.quantity(quantity.quantityType)))
            guard let preferred = try await ZoneSettingsChanges.preferred(quantity, of: token.source, in: store) else {
                let how =
                    quantity == .heartRate
                    ? "{\"boundaries\": [120, 140, 155, 170]} or {\"maximumHeartRate\": 190, \"restingHeartRate\": 50}"
                    : "{\"boundaries\": [150, 200, 240, 280]} or {\"ftp\": 250}"
                throw Problem(
                    status: .conflict, type: "zones-unknown", title: "No zones are known for this source",
                    detail: "no \(quantity.rawValue) zones are known for this source: set them with PUT "
                        + "/v1/zones/\(quantity.rawValue) and a body like \(how) (or routekit zones set), then ask "
                        + "again",
                    extra: ["zones": .string("/v1/zones/\(quantity.rawValue)")])
            }
            let zones = try Zones(preferred)
            let type: QuantityType = quantity == .heartRate ? .heartRate : .power
            let slot = try hub.admitStream(token, person: store.person, configuration)
            // Registered before the stored samples are read: nothing stored from now on is missed.
            let subscription = live.subscribe(pending.id)
            var replay = LiveZones(zones: zones, quantity: quantity)
            let held: [QuantitySample]
            do {
                held = try await store.builderSamples(of: type, builder: pending.id)
            } catch {
                subscription.end()
                slot.release()
                throw error
            }
            replay.add(held)
            let start = (zones: replay, processed: held.count)
            let heartbeat = Duration.milliseconds(Int(configuration.heartbeatSeconds * 1000))
            let logger = context.logger
            let headers: HTTPFields = [
                .contentType: "text/event-stream", .cacheControl: "no-store", .accelBuffering: "no",
            ]
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    defer {
                        subscription.end()
                        slot.release()
                    }
                    // Heartbeats go through the stream's own notices, after what was told before them.
                    let beats = Task { [weak subscription] in
                        while !Task.isCancelled {
                            try? await Task.sleep(for: heartbeat)
                            subscription?.yield(.heartbeat)
                        }
                    }
                    defer { beats.cancel() }
                    do {
                        try await request.body.consumeWithCancellationOnInboundClose { _ in
                            try await withGracefulShutdownHandler {
                                try await pumpZones(
                                    &writer, notices: subscription.notices, start: start.zones,
                                    processed: start.processed, type: type, builder: pending.id, in: store,
                                    logger: logger)
                            } onGracefulShutdown: {
                                subscription.end()
                            }
                        }
                    } catch {
                        // The client went away (or a write failed): nothing more to send.
                    }
                    try? await writer.finish(nil)
                })
        }

        /// Writes a zone stream's events until the builder ends, the client leaves or the server shuts down: the zone
        /// of the samples read so far (`start`, from the first `processed` samples of `type`) when there is one, then
        /// a `zone` event after each batch that leaves the zone other than the last event said; at a shutdown, a last
        /// `shutdown` event (``FeedRoutes/shutdownEvent``).
        func pumpZones(
            _ writer: inout any ResponseBodyWriter, notices: AsyncStream<BuilderLive.Notice>, start: LiveZones,
            processed count: Int, type: QuantityType, builder: UUID, in store: any RouteStore, logger: Logger
        ) async throws {
            try await writer.write(ByteBuffer(string: "retry: 3000\n\n"))
            var zones = start
            var processed = count
            var sent: Int?
            if let event = ZoneEventJSON(zones, previous: nil) {
                try await writer.write(FeedRoutes.event("zone", id: nil, event))
                sent = event.current
            }
            for await notice in notices {
                switch notice {
                case .heartbeat:
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .ended(let reason):
                    try await writer.write(FeedRoutes.event("end", id: nil, ["builder": reason]))
                    return
                case .samples(let kind, let first, let samples):
                    guard kind == type else { continue }
                    let batch: [QuantitySample]
                    if first > processed {
                        // Notices were dropped (this stream fell behind): what it missed is read from the store.
                        do throws(RouteKitError) {
                            batch = try await store.builderSamples(of: type, builder: builder, from: processed)
                        } catch {
                            logger.warning("zone stream ended by a store error", metadata: ["code": "\(error.code)"])
                            try await writer.write(
                                FeedRoutes.event("error", id: nil, JSONValue.object(Problem(error).members())))
                            return
                        }
                    } else {
                        let skip = processed - first
                        guard skip < samples.count else { continue }
                        batch = Array(samples[skip...])
                    }
                    processed += batch.count
                    zones.add(batch)
                    if let event = ZoneEventJSON(zones, previous: sent), event.current != sent {
                        try await writer.write(FeedRoutes.event("zone", id: nil, event))
                        sent = event.current
                    }
                }
            }
            // The notices ended without the builder's end: the server is shutting down (SIGTERM), said in a last event.
            if Task.isShuttingDownGracefully && !Task.isCancelled {
                try await writer.write(FeedRoutes.shutdownEvent)
            }
        }
    }
#endif
