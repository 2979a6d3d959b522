#if Server
    import HTTPTypes
    import NIOCore
    import NIOHTTPTypes
    import RouteKit

    /// Keeps a connection from being held without a reason once its request has started:
    ///
    /// - **An answer before the body's end closes the connection.** A request answered while its body is still
    ///   arriving (a `401` to an upload without a token, a `413`, a `400`) gets `Connection: close`, and the
    ///   connection is closed once the answer is written. Otherwise the server would read the rest of the body to
    ///   reach the next request, with no limit and no deadline: a client trickling a byte every ten seconds held a
    ///   connection for as long as it liked.
    /// - **A body slower than a minimum rate is cut.** While the server waits for more of a body, at least
    ///   `minimumBytesPerSecond` must arrive, measured over `window` of waiting (time the server spends with what
    ///   it has, or held back by its own back-pressure, does not count). A slower body is answered `408` when
    ///   nothing was answered yet, and the connection closed.
    ///
    /// It sits after HTTP decoding, beside ``HeaderTimeoutHandler``.
    final class RequestGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private let minimumBytesPerSecond: Int
        private let window: TimeAmount
        /// A request's body is arriving (its head came, its end has not).
        private var receivingBody = false
        /// The current request's answer has started.
        private var answered = false
        /// Close once the current answer has been written.
        private var closeAfterAnswer = false
        /// The server asked for more bytes and none came yet, since this instant.
        private var waitingSince: NIODeadline?
        /// Time spent waiting for the body and bytes of body received, since the last check that passed.
        private var waited: TimeAmount = .zero
        private var received = 0
        private var timer: RepeatedTask?

        init(minimumBytesPerSecond: Int, window: TimeAmount) {
            self.minimumBytesPerSecond = max(0, minimumBytesPerSecond)
            self.window = window
        }

        func handlerRemoved(context: ChannelHandlerContext) { stopTimer() }

        func channelInactive(context: ChannelHandlerContext) {
            stopTimer()
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let now = NIODeadline.now()
            if let since = waitingSince {
                waited = waited + (now - since)
                waitingSince = nil
            }
            switch unwrapInboundIn(data) {
            case .head:
                receivingBody = true
                answered = false
                closeAfterAnswer = false
                waited = .zero
                received = 0
                startTimer(context: context)
            case .body(let buffer):
                received += buffer.readableBytes
            case .end:
                receivingBody = false
                stopTimer()
            }
            context.fireChannelRead(data)
        }

        func read(context: ChannelHandlerContext) {
            if receivingBody && waitingSince == nil { waitingSince = .now() }
            context.read()
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(var response) where response.status.code >= 200:
                answered = true
                if receivingBody {
                    // Answered before the body ended: the rest of it is not read.
                    closeAfterAnswer = true
                    stopTimer()
                    response.headerFields[.connection] = "close"
                    context.write(wrapOutboundOut(.head(response)), promise: promise)
                    return
                }
            case .end:
                if closeAfterAnswer {
                    let channel = context.channel
                    let written = context.eventLoop.makePromise(of: Void.self)
                    written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    promise.map { written.futureResult.cascade(to: $0) }
                    context.writeAndFlush(data, promise: written)
                    return
                }
            default:
                break
            }
            context.write(data, promise: promise)
        }

        private func startTimer(context: ChannelHandlerContext) {
            stopTimer()
            guard minimumBytesPerSecond > 0 else { return }
            let tick = TimeAmount.nanoseconds(max(window.nanoseconds / 4, 10_000_000))
            // Both stay on the channel's event loop; the task is cancelled when the body ends or the channel goes.
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { _ in
                let (handler, context) = bound.value
                handler.check(context: context)
            }
        }

        private func stopTimer() {
            timer?.cancel()
            timer = nil
        }

        private func check(context: ChannelHandlerContext) {
            guard receivingBody else { return stopTimer() }
            var waitedNow = waited
            if let since = waitingSince { waitedNow = waitedNow + (NIODeadline.now() - since) }
            guard waitedNow >= window else { return }
            let seconds = Double(waitedNow.nanoseconds) / 1e9
            if Double(received) >= Double(minimumBytesPerSecond) * seconds {
                // Fast enough over this window: measure the next one afresh.
                waited = .zero
                received = 0
                if waitingSince != nil { waitingSince = .now() }
                return
            }
            stopTimer()
            receivingBody = false
            if !answered {
                answered = true
                let body = ByteBuffer(
                    string:
                        #"{"type":"urn:routekit:problem:request-timeout","title":"The request body arrives too slowly","#
                        + #""status":408,"detail":"the body arrived slower than \#(minimumBytesPerSecond) bytes a second"}"#
                )
                let head = HTTPResponse(
                    status: .requestTimeout,
                    headerFields: [
                        .connection: "close", .contentType: "application/problem+json",
                        .contentLength: String(body.readableBytes),
                    ])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.body(body)), promise: nil)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Counts open connections by the client's address, for ``ServerConfiguration/maxConnectionsPerAddress``.
    final class ConnectionCounter: Sendable {
        private let open = Locked<[String: Int]>([:])

        /// Counts a connection from `address`; `false` (not counted) when that address has `limit` open already.
        func open(_ address: String, limit: Int) -> Bool {
            open.withLock { open in
                guard open[address, default: 0] < limit else { return false }
                open[address, default: 0] += 1
                return true
            }
        }

        func close(_ address: String) {
            open.withLock { open in
                open[address, default: 1] -= 1
                if open[address] == 0 { open[address] = nil }
            }
        }
    }

    /// Closes a new connection at once when its address already holds the most connections allowed.
    final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        private let counter: ConnectionCounter
        private let limit: Int
        private var address: String?
        private var refused = false

        init(counter: ConnectionCounter, limit: Int) {
            self.counter = counter
            self.limit = limit
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { admit(context: context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            if address == nil && !refused { admit(context: context) }
            context.fireChannelActive()
        }

        private func admit(context: ChannelHandlerContext) {
            let key = context.channel.remoteAddress?.ipAddress ?? "unknown"
            if counter.open(key, limit: limit) {
                address = key
            } else {
                refused = true
                context.close(promise: nil)
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !refused else { return }
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            release()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { release() }

        private func release() {
            if let address {
                counter.close(address)
                self.address = nil
            }
        }
    }
#endif
