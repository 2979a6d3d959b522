#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKit

    /// How the webhook sender delivers.
    package struct WebhookSenderConfiguration: Sendable {
        /// The `User-Agent` of every delivery: `RouteKit/VERSION` (``userAgent(version:)``).
        package var userAgent: String
        /// How long connecting to a receiver may take (TCP and TLS), in seconds.
        package var connectTimeoutSeconds = 5.0
        /// How long a whole delivery may take, in seconds: resolving the receiver's host, connecting, sending,
        /// waiting for the answer and reading it. Past it the attempt is ``WebhookDeliveryOutcome/timedOut``, unless
        /// the answer's status had arrived (then the status counts, and the rest of its body is not read).
        package var deadlineSeconds = 15.0
        /// The most bytes of an answer's body read; the rest is not (the connection is closed instead).
        package var maxResponseBytes = 64 << 10
        /// Whether receivers on loopback and private networks are allowed (``WebhookTargetPolicy``).
        package var allowPrivate = false

        /// The defaults, with the `User-Agent` of RouteKit `version` (`routekit --version`'s).
        package init(version: String) {
            userAgent = Self.userAgent(version: version)
        }

        /// `RouteKit/VERSION`.
        package static func userAgent(version: String) -> String { "RouteKit/\(version)" }

        /// `seconds` as whole milliseconds, from 1 ms to a day; `fallback` when it is not a finite number.
        static func milliseconds(_ seconds: Double, fallback: Double) -> Int64 {
            let value = seconds.isFinite ? seconds : fallback
            return Int64((min(max(value, 0.001), 86_400) * 1000).rounded())
        }
    }

    /// How one delivery attempt ended.
    package enum WebhookDeliveryOutcome: Sendable, Hashable {
        /// The receiver answered 2xx.
        case delivered(Int)
        /// The receiver answered `410 Gone`: it wants no more deliveries (the subscription is removed).
        case gone
        /// The receiver answered another status, a redirect among them (redirects are never followed).
        case failed(Int)
        /// No answer came within the deadline.
        case timedOut
        /// No connection could be made, or it broke before an answer: why, never naming the URL.
        case unreachable(String)
        /// The receiver's URL or address is not allowed (``WebhookTargetPolicy``): why, naming the host at most.
        case refusedTarget(String)

        /// The outcome of an answer with `status`.
        package init(status: Int) {
            switch status {
            case 200...299: self = .delivered(status)
            case 410: self = .gone
            default: self = .failed(status)
            }
        }

        /// The status the receiver answered, if it answered.
        package var status: Int? {
            switch self {
            case .delivered(let status), .failed(let status): status
            case .gone: 410
            case .timedOut, .unreachable, .refusedTarget: nil
            }
        }

        /// One line for a subscription's record of its last attempts, and for a pause's reason.
        package var summary: String {
            switch self {
            case .delivered(let status): "delivered (\(status))"
            case .gone: "the receiver answered 410 Gone"
            case .failed(let status): "the receiver answered \(status)"
            case .timedOut: "the receiver did not answer in time"
            case .unreachable(let why): why
            case .refusedTarget(let why): why
            }
        }
    }

    /// One delivery attempt: how it ended, how much of the answer was read and how long it took.
    package struct WebhookAttempt: Sendable, Hashable {
        /// How it ended.
        package var outcome: WebhookDeliveryOutcome
        /// The bytes of the answer's body read (at most the configuration's `maxResponseBytes`).
        package var responseBytesRead: Int
        /// From the call to its end.
        package var duration: Duration
    }

    /// Delivers webhooks: one signed `POST` per call, through one `HTTPClient` shared by every delivery (its
    /// connections kept alive between deliveries to the same receiver).
    ///
    /// Each delivery checks its URL with ``WebhookTargetPolicy`` (the host resolved again, so a subscription whose
    /// host moved to an internal address since it was made is refused), and every new connection is checked again
    /// at the address it actually reached, before anything is sent on it (a host that resolves once to a public
    /// address and then to an internal one gets no request). Redirects are not followed (a `3xx` is
    /// ``WebhookDeliveryOutcome/failed(_:)``); connecting has its own timeout, and the whole delivery a deadline
    /// that holds whatever the receiver does (a receiver that never answers, or answers a byte at a time); at most
    /// `maxResponseBytes` of an answer are read, then the connection is closed.
    ///
    /// The sender holds an `HTTPClient`, which must be shut down: ``shutdown()`` when done, or use
    /// ``withSender(configuration:resolver:_:)``.
    package final class WebhookSender: Sendable {
        /// How it delivers.
        package let configuration: WebhookSenderConfiguration
        /// The targets it allows.
        package let policy: WebhookTargetPolicy
        private let client: HTTPClient

        /// A sender; `resolver` replaces the system's resolver in its target checks (tests; connections still
        /// resolve through the system).
        package init(configuration: WebhookSenderConfiguration, resolver: WebhookTargetPolicy.Resolver? = nil) {
            self.configuration = configuration
            let policy = WebhookTargetPolicy(allowPrivate: configuration.allowPrivate, resolve: resolver)
            self.policy = policy
            let connect = WebhookSenderConfiguration.milliseconds(configuration.connectTimeoutSeconds, fallback: 5)
            let deadline = WebhookSenderConfiguration.milliseconds(configuration.deadlineSeconds, fallback: 15)
            var http = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: HTTPClient.Configuration.Timeout(
                    connect: .milliseconds(connect), read: .milliseconds(deadline)),
                tracing: HTTPClient.TracingConfiguration())
            let guardConnection: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                policy.guardConnection(channel)
            }
            http.http1_1ConnectionDebugInitializer = guardConnection
            http.http2ConnectionDebugInitializer = guardConnection
            client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
        }

        /// Runs `body` with a new sender, which is shut down when `body` returns or throws.
        package static func withSender<Value>(
            configuration: WebhookSenderConfiguration, resolver: WebhookTargetPolicy.Resolver? = nil,
            _ body: (WebhookSender) async throws -> Value
        ) async throws -> Value {
            let sender = WebhookSender(configuration: configuration, resolver: resolver)
            do {
                let value = try await body(sender)
                await sender.shutdown()
                return value
            } catch {
                await sender.shutdown()
                throw error
            }
        }

        /// Closes the sender's connections; deliveries after it are ``WebhookDeliveryOutcome/unreachable(_:)``.
        package func shutdown() async {
            try? await client.shutdown()
        }

        /// Delivers one message: `POST url` with `body` (JSON) and the Standard Webhooks headers (`webhook-id: id`,
        /// `webhook-timestamp: timestamp`, `webhook-signature` by every one of `secrets`, ``WebhookSigner``),
        /// `Content-Type: application/json` and the configuration's `User-Agent`. A retry of the same message keeps
        /// its `id` (receivers use it to ignore repeats) and takes a new `timestamp`.
        /// - Throws: ``RouteKitError/Code/invalidArgument`` when `id` is not 1 to 256 letters, digits, `_` and `-`,
        ///   or `secrets` is empty (before anything is sent); every other failure is an outcome.
        package func send(
            to url: String, id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]
        ) async throws(RouteKitError) -> WebhookAttempt {
            guard Self.isValidMessageID(id) else {
                throw RouteKitError(.invalidArgument, "a webhook-id is 1 to 256 letters, digits, '_' and '-'")
            }
            let signature = try WebhookSigner(secrets: secrets).signature(id: id, timestamp: timestamp, body: body)
            let started = ContinuousClock.now
            let limit = WebhookSenderConfiguration.milliseconds(configuration.deadlineSeconds, fallback: 15)
            let deadline = NIODeadline.now() + .milliseconds(limit)
            let progress = Locked(ExchangeProgress())
            let finished = await FirstOf<WebhookDeliveryOutcome>.within(.milliseconds(limit)) { [self] in
                await self.exchange(
                    url: url, id: id, timestamp: timestamp, body: body, signature: signature, deadline: deadline,
                    progress: progress)
            }
            let seen = progress.withLock { $0 }
            // Past the deadline, an answer whose status came counts by its status (only its body was cut short).
            let outcome = finished ?? seen.status.map { WebhookDeliveryOutcome(status: $0) } ?? .timedOut
            return WebhookAttempt(
                outcome: outcome, responseBytesRead: seen.bytesRead, duration: ContinuousClock.now - started)
        }

        /// What an exchange has seen so far, for the deadline's side of the race.
        struct ExchangeProgress: Sendable {
            var status: Int?
            var bytesRead = 0
        }

        /// The check, the request and the answer's first bytes.
        private func exchange(
            url: String, id: String, timestamp: Int64, body: [UInt8], signature: String, deadline: NIODeadline,
            progress: Locked<ExchangeProgress>
        ) async -> WebhookDeliveryOutcome {
            do throws(RouteKitError) {
                _ = try await policy.check(url)
            } catch {
                return error.code == .unavailable ? .unreachable(error.message) : .refusedTarget(error.message)
            }
            if Task.isCancelled { return .timedOut }
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: configuration.userAgent)
            request.headers.add(name: "webhook-id", value: id)
            request.headers.add(name: "webhook-timestamp", value: String(timestamp))
            request.headers.add(name: "webhook-signature", value: signature)
            request.body = .bytes(ByteBuffer(bytes: body))
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: deadline)
            } catch {
                return Self.outcome(of: error)
            }
            let status = Int(response.status.code)
            progress.withLock { $0.status = status }
            let limit = max(0, configuration.maxResponseBytes)
            if limit > 0 {
                var read = 0
                do {
                    for try await chunk in response.body {
                        read += min(chunk.readableBytes, limit - read)
                        let count = read
                        progress.withLock { $0.bytesRead = count }
                        // Leaving the loop drops the body: the client stops reading and closes the connection.
                        if read >= limit { break }
                    }
                } catch {
                    // The body broke off: the status stands.
                }
            }
            return WebhookDeliveryOutcome(status: status)
        }

        /// The outcome of a request that got no answer. The client's own errors are not repeated: some name the URL.
        static func outcome(of error: any Error) -> WebhookDeliveryOutcome {
            if let refusal = error as? WebhookPeerRefusal { return .refusedTarget(refusal.message) }
            if error is CancellationError { return .timedOut }
            if let failure = error as? HTTPClientError {
                if failure == .deadlineExceeded || failure == .readTimeout || failure == .cancelled { return .timedOut }
                if failure == .connectTimeout {
                    return .unreachable("no connection to the webhook receiver within the connect timeout")
                }
                if failure == .remoteConnectionClosed {
                    return .unreachable("the webhook receiver closed the connection without answering")
                }
            }
            return .unreachable("the webhook receiver could not be reached (\(type(of: error)))")
        }

        /// Whether `id` may be a `webhook-id`: 1 to 256 ASCII letters, digits, `_` and `-` (never a `.`, which
        /// separates the signed parts).
        package static func isValidMessageID(_ id: String) -> Bool {
            let bytes = id.utf8
            guard (1...256).contains(bytes.count) else { return false }
            return bytes.allSatisfy { byte in
                switch byte {
                case 48...57, 65...90, 97...122, 95, 45: true  // 0-9, A-Z, a-z, _, -
                default: false
                }
            }
        }
    }

    /// The first of an operation's result and a time limit, without waiting for the operation once the limit has
    /// passed: it is cancelled, and left to end on its own (a DNS lookup blocking a thread cannot hold the caller).
    final class FirstOf<Value: Sendable>: Sendable {
        private enum State {
            case pending
            case waiting(CheckedContinuation<Value?, Never>)
            case finished(Value?)
            case resumed
        }

        private let state = Locked<State>(.pending)

        /// What `operation` returns, or `nil` when `limit` passes first or the calling task is cancelled.
        static func within(_ limit: Duration, _ operation: @escaping @Sendable () async -> Value) async -> Value? {
            let race = FirstOf<Value>()
            let worker = Task {
                let value = await operation()
                race.finish(value)
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                race.finish(nil)
            }
            let value = await withTaskCancellationHandler {
                await race.value()
            } onCancel: {
                race.finish(nil)
            }
            worker.cancel()
            timer.cancel()
            return value
        }

        /// Ends the race with `value` (`nil`: the limit), unless it has ended.
        func finish(_ value: Value?) {
            let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
                switch state {
                case .pending:
                    state = .finished(value)
                    return nil
                case .waiting(let continuation):
                    state = .resumed
                    return continuation
                case .finished, .resumed:
                    return nil
                }
            }
            waiter?.resume(returning: value)
        }

        /// Waits for the race's end (one waiter).
        func value() async -> Value? {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready = state.withLock { state -> Value?? in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return .none
                    case .finished(let value):
                        state = .resumed
                        return .some(value)
                    case .waiting, .resumed:
                        return .some(nil)
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
#endif
