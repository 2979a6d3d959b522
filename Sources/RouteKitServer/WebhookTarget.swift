#if Server
    import Foundation
    import NIOCore
    import RouteKit

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A webhook receiver's URL, checked for its form (``WebhookTargetPolicy/parse(_:)``).
    package struct WebhookTarget: Sendable, Hashable {
        /// The URL as given (it is requested as it is).
        package var url: String
        /// `http` or `https`.
        package var scheme: String
        /// The host, lowercased, without the brackets of an IPv6 literal.
        package var host: String
        /// The port, given or the scheme's.
        package var port: Int
    }

    /// What kind of address an IP address is, for the webhook sender's refusal of internal targets (server-side
    /// request forgery): every class but ``global`` is refused, and the private ones (``isPrivate``) are allowed
    /// by a policy with `allowPrivate`.
    package enum WebhookAddressClass: String, Sendable, CaseIterable {
        /// A public unicast address.
        case global
        /// 127.0.0.0/8, ::1.
        case loopback
        /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 198.18.0.0/15 (benchmarking), fec0::/10 (site-local), and
        /// 64:ff9b:1::/48 (local NAT64).
        case privateNetwork
        /// 169.254.0.0/16 (where clouds serve instance metadata), fe80::/10.
        case linkLocal
        /// 100.64.0.0/10, carrier-grade NAT.
        case sharedAddressSpace
        /// fc00::/7.
        case uniqueLocal
        /// 0.0.0.0/8 and :: (on Linux, a connection to 0.0.0.0 reaches this machine).
        case unspecified
        /// 224.0.0.0/4, ff00::/8.
        case multicast
        /// 240.0.0.0/4 with the broadcast address 255.255.255.255, 192.0.0.0/24, 100::/64.
        case reserved

        /// Whether `allowPrivate` allows it: the classes of a machine's own or its local network's receivers
        /// (multicast, broadcast, reserved and unspecified addresses are never a receiver's).
        package var isPrivate: Bool {
            switch self {
            case .loopback, .privateNetwork, .linkLocal, .sharedAddressSpace, .uniqueLocal: true
            case .global, .unspecified, .multicast, .reserved: false
            }
        }

        /// How a refusal names it.
        package var phrase: String {
            switch self {
            case .global: "a public address"
            case .loopback: "a loopback address"
            case .privateNetwork: "a private address"
            case .linkLocal: "a link-local address"
            case .sharedAddressSpace: "a shared (carrier-grade NAT) address"
            case .uniqueLocal: "a unique local address"
            case .unspecified: "an unspecified address"
            case .multicast: "a multicast address"
            case .reserved: "a reserved or broadcast address"
            }
        }

        /// The class of an address of 4 bytes (IPv4) or 16 (IPv6), network order; IPv6 forms that carry an IPv4
        /// address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo's
        /// client) are classed by that address. Any other length is ``reserved``.
        package static func of(_ bytes: [UInt8]) -> WebhookAddressClass {
            if bytes.count == 4 { return v4(bytes[0], bytes[1], bytes[2]) }
            guard bytes.count == 16 else { return .reserved }
            let b = bytes
            func zero(_ range: Range<Int>) -> Bool { b[range].allSatisfy { $0 == 0 } }
            if zero(0..<16) { return .unspecified }
            if zero(0..<15) && b[15] == 1 { return .loopback }
            if zero(0..<10) && b[10] == 0xFF && b[11] == 0xFF { return v4(b[12], b[13], b[14]) }
            if zero(0..<12) { return v4(b[12], b[13], b[14]) }
            if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B {
                if zero(4..<12) { return v4(b[12], b[13], b[14]) }
                if b[4] == 0x00 && b[5] == 0x01 { return .privateNetwork }
            }
            if b[0] == 0x20 && b[1] == 0x02 { return v4(b[2], b[3], b[4]) }
            // Teredo: the client's address is the last four bytes, inverted.
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00 { return v4(~b[12], ~b[13], ~b[14]) }
            if (b[0] & 0xFE) == 0xFC { return .uniqueLocal }
            if b[0] == 0xFE && (b[1] & 0xC0) == 0x80 { return .linkLocal }
            if b[0] == 0xFE && (b[1] & 0xC0) == 0xC0 { return .privateNetwork }
            if b[0] == 0xFF { return .multicast }
            if b[0] == 0x01 && zero(1..<8) { return .reserved }
            return .global
        }

        /// The class of the IPv4 address whose first three bytes are `a`, `b` and `c` (the fourth decides none).
        static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> WebhookAddressClass {
            switch a {
            case 0: return .unspecified
            case 10: return .privateNetwork
            case 100 where (b & 0xC0) == 0x40: return .sharedAddressSpace
            case 127: return .loopback
            case 169 where b == 254: return .linkLocal
            case 172 where (b & 0xF0) == 0x10: return .privateNetwork
            case 192 where b == 168: return .privateNetwork
            case 192 where b == 0 && c == 0: return .reserved
            case 198 where (b & 0xFE) == 18: return .privateNetwork
            case 224...239: return .multicast
            case 240...255: return .reserved
            default: return .global
            }
        }
    }

    /// Which URLs webhooks may be delivered to, checked when a subscription is made and again before every delivery
    /// (a host's addresses may have changed since: DNS rebinding): `http` or `https`, no user name or password, at
    /// most ``maxURLLength`` bytes, and a host whose every address (IPv4 and IPv6, as `getaddrinfo` gives them) is
    /// public, unless ``allowPrivate`` (then loopback, private, link-local, carrier-grade NAT and unique local
    /// addresses pass too; multicast, broadcast, reserved and unspecified ones never do).
    ///
    /// The sender checks the address each connection actually reached too (``WebhookSender``), so a name that
    /// resolves to a public address for the check and to an internal one for the connection is refused as well.
    /// Refusals name the host, never the URL's path or query (which may hold the receiver's own credentials), nor
    /// the address a name resolved to.
    package struct WebhookTargetPolicy: Sendable {
        /// Resolves a host (a name or an IP literal) to its addresses, 4 or 16 bytes each.
        /// - Throws: ``RouteKitError/Code/unavailable`` when it cannot.
        package typealias Resolver = @Sendable (String) async throws(RouteKitError) -> [[UInt8]]

        /// The longest URL accepted, in bytes.
        package static let maxURLLength = 2048

        /// Whether private-network receivers are allowed (tests; `routekit serve --webhooks-allow-private`,
        /// ``ServerConfiguration/webhooksAllowPrivate``).
        package var allowPrivate: Bool
        private let resolve: Resolver

        /// A policy; `resolve` replaces the system's resolver (`getaddrinfo`, on the blocking executor), for tests.
        package init(allowPrivate: Bool = false, resolve: Resolver? = nil) {
            self.allowPrivate = allowPrivate
            if let resolve {
                self.resolve = resolve
            } else {
                self.resolve = Self.systemResolver
            }
        }

        /// `getaddrinfo`, on RouteKit's blocking executor (it blocks while DNS answers).
        static let systemResolver: Resolver = { (host: String) async throws(RouteKitError) -> [[UInt8]] in
            try await BlockingExecutor.shared.run { () throws(RouteKitError) -> [[UInt8]] in
                try WebhookTargetPolicy.systemAddresses(of: host)
            }
        }

        /// The URL's parts, when its form is one a webhook may be delivered to; no name is resolved.
        /// - Throws: ``RouteKitError/Code/invalidArgument`` saying what is wrong (never repeating the path or
        ///   query).
        package static func parse(_ text: String) throws(RouteKitError) -> WebhookTarget {
            guard text.utf8.count <= maxURLLength else {
                throw RouteKitError(.invalidArgument, "a webhook URL is at most \(maxURLLength) bytes long")
            }
            guard
                !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\\" })
            else {
                throw RouteKitError(
                    .invalidArgument, "a webhook URL holds no spaces, control characters or backslashes")
            }
            guard let url = URL(string: text) else {
                throw RouteKitError(.invalidArgument, "the webhook URL cannot be read as a URL")
            }
            guard let rawScheme = url.scheme else {
                throw RouteKitError(.invalidArgument, "a webhook URL is http or https, and this one has no scheme")
            }
            let scheme = rawScheme.lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw RouteKitError(
                    .invalidArgument, "a webhook URL is http or https, not '\(String(scheme.prefix(20)))'")
            }
            // The authority as written, too: no parser may find a user name in it that another does not.
            let afterScheme = text.range(of: "://").map { text[$0.upperBound...] } ?? Substring(text)
            let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard url.user == nil, url.password == nil, !authority.contains("@") else {
                throw RouteKitError(.invalidArgument, "a webhook URL carries no user name or password")
            }
            guard let rawHost = url.host, !rawHost.isEmpty else {
                throw RouteKitError(.invalidArgument, "the webhook URL has no host")
            }
            var host = Substring(rawHost)
            if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { throw RouteKitError(.invalidArgument, "the webhook URL has no host") }
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            guard (1...65535).contains(port) else {
                throw RouteKitError(.invalidArgument, "the webhook URL's port must be from 1 to 65535")
            }
            return WebhookTarget(url: text, scheme: scheme, host: host.lowercased(), port: port)
        }

        /// The URL's parts, when its form is allowed (``parse(_:)``) and every address of its host is.
        /// - Throws: ``RouteKitError/Code/invalidArgument`` for a refused URL or address (naming the host and the
        ///   class of address, ``WebhookAddressClass/phrase``); ``RouteKitError/Code/unavailable`` when the host
        ///   does not resolve (now: it may later).
        package func check(_ text: String) async throws(RouteKitError) -> WebhookTarget {
            let target = try Self.parse(text)
            let addresses = try await resolve(target.host)
            guard !addresses.isEmpty else {
                throw RouteKitError(.unavailable, "the webhook URL's host '\(target.host)' has no address")
            }
            let literal = target.host.contains(":") || target.host.allSatisfy { $0.isNumber || $0 == "." }
            for address in addresses {
                if let refused = refusal(for: address) {
                    throw RouteKitError(
                        .invalidArgument,
                        "the webhook URL's host '\(target.host)' \(literal ? "is" : "resolves to") \(refused.phrase)")
                }
            }
            return target
        }

        /// The class of `address` when this policy refuses it, `nil` when it allows it.
        package func refusal(for address: [UInt8]) -> WebhookAddressClass? {
            let kind = WebhookAddressClass.of(address)
            if kind == .global || (allowPrivate && kind.isPrivate) { return nil }
            return kind
        }

        /// Why a connection's peer is refused, `nil` when it is allowed.
        func refusal(forPeer address: SocketAddress?) -> WebhookPeerRefusal? {
            guard let address, let bytes = Self.bytes(of: address) else {
                return WebhookPeerRefusal(message: "the receiver's connection has no IP address")
            }
            guard let refused = self.refusal(for: bytes) else { return nil }
            return WebhookPeerRefusal(
                message: "the connection to the webhook receiver reached \(refused.phrase) (its host's addresses "
                    + "changed after they were checked)")
        }

        /// For `HTTPClient`'s connection initializers: a connection whose peer this policy refuses gets a handler
        /// that lets nothing through (the request fails with the refusal, and the connection is closed).
        func guardConnection(_ channel: any Channel) -> EventLoopFuture<Void> {
            guard let refused = self.refusal(forPeer: channel.remoteAddress) else {
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            return channel.pipeline.addHandler(PeerRefusalHandler(refused), position: .first)
        }

        /// The 4 or 16 bytes of an IP socket address.
        static func bytes(of address: SocketAddress) -> [UInt8]? {
            if case .v4(let v4) = address { return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) } }
            if case .v6(let v6) = address { return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) } }
            return nil
        }

        /// Every address of `host` (`getaddrinfo`, which reads IP literals without asking DNS); blocks.
        static func systemAddresses(of host: String) throws(RouteKitError) -> [[UInt8]] {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Darwin)
                hints.ai_socktype = SOCK_STREAM
            #else
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else {
                throw RouteKitError(.unavailable, "the webhook URL's host '\(host)' does not resolve")
            }
            defer { freeaddrinfo(first) }
            var addresses: [[UInt8]] = []
            var node: UnsafeMutablePointer<addrinfo>? = first
            while let current = node {
                if let socketAddress = current.pointee.ai_addr {
                    let raw = UnsafeRawPointer(socketAddress)
                    if current.pointee.ai_family == AF_INET {
                        let v4 = raw.loadUnaligned(as: sockaddr_in.self)
                        addresses.append(withUnsafeBytes(of: v4.sin_addr) { Array($0) })
                    } else if current.pointee.ai_family == AF_INET6 {
                        let v6 = raw.loadUnaligned(as: sockaddr_in6.self)
                        addresses.append(withUnsafeBytes(of: v6.sin6_addr) { Array($0) })
                    }
                }
                node = current.pointee.ai_next
            }
            guard !addresses.isEmpty else {
                throw RouteKitError(.unavailable, "the webhook URL's host '\(host)' has no IP address")
            }
            return addresses
        }
    }

    /// A connection whose peer the policy refuses.
    struct WebhookPeerRefusal: Error, Sendable {
        var message: String
    }

    /// The first handler of a refused connection's pipeline: whatever is written fails with the refusal, which then
    /// goes up the pipeline (failing the request with it), and the connection is closed. Both happen on the next
    /// turn of the event loop, outside the write that found the refusal.
    final class PeerRefusalHandler: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let refusal: WebhookPeerRefusal
        private let fired = Locked(false)

        init(_ refusal: WebhookPeerRefusal) { self.refusal = refusal }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            promise?.fail(refusal)
            let first = fired.withLock { fired in
                defer { fired = true }
                return !fired
            }
            guard first else { return }
            let refusal = self.refusal
            context.eventLoop.assumeIsolated().execute {
                context.fireErrorCaught(refusal)
                context.close(promise: nil)
            }
        }
    }
#endif
