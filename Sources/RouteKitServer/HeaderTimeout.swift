#if Server
    import HTTPTypes
    import NIOHTTPTypes
    import NIOCore

    /// Closes a connection whose request head does not arrive in time: the defence against a client that sends its
    /// headers a byte at a time to hold connections open. Without it only the idle timeout (75 s by default, meant
    /// for kept-alive connections between requests) would cut such a client.
    ///
    /// It sits after HTTP decoding, where a request head is one event once its last header line has arrived. The
    /// clock runs from the connection's start to its first request head, and from each response's end (when no other
    /// request is outstanding) to the next head, then with the keep-alive allowance added, so an idle keep-alive
    /// connection is still closed by the idle timeout first. A request being answered (an upload, an event stream)
    /// is never cut by it.
    final class HeaderTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private let headerTimeout: TimeAmount
        private let keepAlive: TimeAmount
        private var timer: Scheduled<Void>?
        /// Request heads received and not yet answered to their end.
        private var outstanding = 0

        /// - Parameters:
        ///   - headerTimeout: the longest a request head may take to arrive.
        ///   - keepAlive: the time a connection may wait between requests (the idle timeout), added after a response.
        init(headerTimeout: TimeAmount, keepAlive: TimeAmount) {
            self.headerTimeout = headerTimeout
            self.keepAlive = keepAlive
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { arm(context: context, after: headerTimeout) }
        }

        func channelActive(context: ChannelHandlerContext) {
            if timer == nil && outstanding == 0 { arm(context: context, after: headerTimeout) }
            context.fireChannelActive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { disarm() }

        func channelInactive(context: ChannelHandlerContext) {
            disarm()
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head = unwrapInboundIn(data) {
                outstanding += 1
                disarm()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) {
                outstanding = max(0, outstanding - 1)
                if outstanding == 0 { arm(context: context, after: keepAlive + headerTimeout) }
            }
            context.write(data, promise: promise)
        }

        private func arm(context: ChannelHandlerContext, after delay: TimeAmount) {
            disarm()
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
        }

        private func disarm() {
            timer?.cancel()
            timer = nil
        }
    }
#endif
