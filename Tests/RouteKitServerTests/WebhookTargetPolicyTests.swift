#if Server
    import Foundation
    import RouteKit
    import RouteKitServer
    import Testing

    /// The error `policy` gives `url`, or `nil` when it allows it.
    func targetRefusal(_ url: String, _ policy: WebhookTargetPolicy = WebhookTargetPolicy()) async -> RouteKitError? {
        do throws(RouteKitError) {
            _ = try await policy.check(url)
            return nil
        } catch {
            return error
        }
    }

    @Suite("Webhooks: which receivers are allowed")
    struct WebhookTargetPolicyTests {
        /// An address of each forbidden class, as a URL's host (IP literals resolve without DNS), and a word its
        /// refusal says.
        static let forbidden: [(host: String, says: String)] = [
            ("127.0.0.1", "loopback"), ("127.45.6.7", "loopback"),
            ("10.0.0.1", "private"), ("10.255.255.255", "private"),
            ("172.16.0.1", "private"), ("172.31.255.254", "private"),
            ("192.168.1.10", "private"), ("198.18.0.1", "private"),
            ("169.254.169.254", "link-local"), ("169.254.0.1", "link-local"),
            ("100.64.0.1", "carrier-grade NAT"), ("100.127.255.254", "carrier-grade NAT"),
            ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"),
            ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"),
            ("255.255.255.255", "broadcast"), ("240.0.0.1", "broadcast"), ("192.0.0.8", "reserved"),
            ("[::1]", "loopback"), ("[::]", "unspecified"),
            ("[fc00::1]", "unique local"), ("[fd12:3456:789a::1]", "unique local"),
            ("[fe80::1]", "link-local"), ("[febf::1]", "link-local"), ("[fec0::1]", "private"),
            ("[ff02::1]", "multicast"), ("[ff05::1:3]", "multicast"),
            // IPv4 addresses written as IPv6 ones: mapped, compatible, NAT64, 6to4, Teredo (client 127.0.0.1).
            ("[::ffff:127.0.0.1]", "loopback"), ("[::ffff:10.1.2.3]", "private"),
            ("[::ffff:169.254.169.254]", "link-local"), ("[::ffff:7f00:1]", "loopback"),
            ("[::127.0.0.1]", "loopback"), ("[::10.0.0.1]", "private"),
            ("[64:ff9b::a9fe:a9fe]", "link-local"), ("[64:ff9b::7f00:1]", "loopback"),
            ("[2002:7f00:1::1]", "loopback"), ("[2002:c0a8:101::1]", "private"),
            ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "loopback"),
        ]

        @Test(
            "an address of every forbidden class is refused, naming the host and the class",
            arguments: WebhookTargetPolicyTests.forbidden)
        func forbiddenLiterals(host: String, says: String) async {
            let refusal = await targetRefusal("https://\(host):8443/hooks/routekit?token=RECEIVER-SECRET")
            #expect(refusal?.code == .invalidArgument)
            let message = refusal?.message ?? ""
            let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            #expect(message.contains("'\(bare)'"), "\(message)")
            #expect(message.contains(says), "\(message)")
            // Never the path or the query.
            #expect(!message.contains("hooks"))
            #expect(!message.contains("RECEIVER-SECRET"))
        }

        @Test(
            "public addresses pass, IPv4 and IPv6 (including the IPv6 forms of a public IPv4 address)",
            arguments: [
                "http://93.184.216.34/hook", "https://8.8.8.8:8443/hook", "http://[2606:4700:4700::1111]/hook",
                "http://[::ffff:8.8.8.8]/", "http://[64:ff9b::808:808]/", "http://[2002:808:808::1]/",
                "https://172.32.0.1/", "https://100.128.0.1/", "https://192.169.0.1/", "https://169.255.0.1/",
            ])
        func publicLiterals(url: String) async throws {
            let refusal = await targetRefusal(url)
            #expect(refusal == nil, "\(refusal?.message ?? "")")
            let target = try await WebhookTargetPolicy().check(url)
            #expect(target.url == url)
            #expect(target.scheme == "http" || target.scheme == "https")
        }

        @Test("allowPrivate lets loopback, private and link-local receivers through, never multicast or broadcast")
        func allowPrivate() async {
            let policy = WebhookTargetPolicy(allowPrivate: true)
            for allowed in ["127.0.0.1", "10.1.2.3", "192.168.0.7", "169.254.1.1", "100.64.0.1", "[::1]", "[fd00::5]"] {
                let refusal = await targetRefusal("http://\(allowed):9000/hook", policy)
                #expect(refusal == nil, "\(allowed): \(refusal?.message ?? "")")
            }
            for refused in ["224.0.0.1", "255.255.255.255", "0.0.0.0", "[ff02::1]", "[::]"] {
                let refusal = await targetRefusal("http://\(refused):9000/hook", policy)
                #expect(refusal?.code == .invalidArgument, "\(refused)")
            }
        }

        @Test("localhost resolves to loopback addresses: refused, and allowed with allowPrivate")
        func localhost() async throws {
            let found = await targetRefusal("http://localhost:8080/hook")
            let refusal = try #require(found)
            #expect(refusal.code == .invalidArgument)
            #expect(refusal.message.contains("'localhost' resolves to"))
            #expect(refusal.message.contains("loopback"))
            let upper = await targetRefusal("http://LocalHost:8080/hook")
            #expect(upper?.code == .invalidArgument)
            let allowed = await targetRefusal("http://localhost:8080/hook", WebhookTargetPolicy(allowPrivate: true))
            #expect(allowed == nil)
        }

        @Test("a name is refused when any of its addresses is forbidden, and passes when all are public")
        func everyAddress() async {
            let mixed = WebhookTargetPolicy(resolve: { _ in [[93, 184, 216, 34], [10, 0, 0, 9]] })
            let refusal = await targetRefusal("https://hooks.example.com/x", mixed)
            #expect(refusal?.code == .invalidArgument)
            let message = refusal?.message ?? ""
            #expect(message.contains("'hooks.example.com' resolves to a private address"))
            // The address it resolved to is not told (a subscriber could map a private network with it).
            #expect(!message.contains("10.0.0.9"))
            let v6 = WebhookTargetPolicy(resolve: { _ in
                [[93, 184, 216, 34], [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]]
            })
            let linkLocal = await targetRefusal("https://hooks.example.com/x", v6)
            let linkLocalMessage = linkLocal?.message ?? ""
            #expect(linkLocalMessage.contains("link-local"))
            let public2 = WebhookTargetPolicy(resolve: { _ in
                [[93, 184, 216, 34], [0x26, 0x06, 0x28, 0, 0x02, 0x20, 0, 1, 0x2, 0x48, 0x18, 0x93, 0x25, 0xC8, 0x19, 0x46]]
            })
            let publicRefusal = await targetRefusal("https://hooks.example.com/x", public2)
            #expect(publicRefusal == nil)
        }

        @Test("a host that does not resolve is unavailable (it may later), not refused")
        func unresolved() async {
            let failing = WebhookTargetPolicy(resolve: { (host: String) async throws(RouteKitError) -> [[UInt8]] in
                throw RouteKitError(.unavailable, "the webhook URL's host '\(host)' does not resolve")
            })
            let refusal = await targetRefusal("https://nowhere.example/x", failing)
            #expect(refusal?.code == .unavailable)
            let empty = WebhookTargetPolicy(resolve: { _ in [] })
            let emptyRefusal = await targetRefusal("https://nowhere.example/x", empty)
            #expect(emptyRefusal?.code == .unavailable)
        }

        @Test(
            "URLs of the wrong form are refused before any lookup, without their path, query or password",
            arguments: [
                ("ftp://93.184.216.34/hook", "http or https"),
                ("javascript:alert(1)", "http or https"),
                ("file:///etc/passwd", "http or https"),
                ("http://user:PASSWORD-1@93.184.216.34/hook", "user name or password"),
                ("http://93.184.216.34@127.0.0.1/hook", "user name or password"),
                ("https://token@hooks.example.com/hook", "user name or password"),
                ("http://hooks.example.com /hook", "spaces"),
                ("http://hooks.example.com/ho\nok", "control"),
                ("http://hooks.example.com\\@127.0.0.1/", "backslash"),
                ("not a url", "spaces"),
                ("hooks.example.com/path", "http or https"),
            ])
        func malformed(url: String, says: String) async {
            let looked = Locked(0)
            let counting = WebhookTargetPolicy(resolve: { _ in
                looked.withLock { $0 += 1 }
                return [[93, 184, 216, 34]]
            })
            let refusal = await targetRefusal(url, counting)
            #expect(refusal?.code == .invalidArgument, "\(url)")
            let message = refusal?.message ?? ""
            #expect(message.contains(says), "\(message)")
            #expect(!message.contains("PASSWORD"))
            #expect(!message.contains("/hook"))
            let lookups = looked.withLock { $0 }
            #expect(lookups == 0)
        }

        @Test("a URL without a host is refused")
        func noHost() async {
            for url in ["http:///hook", "https://:8443/hook", "http://[]/hook"] {
                let refusal = await targetRefusal(url)
                #expect(refusal?.code == .invalidArgument, "\(url)")
            }
        }

        @Test("a URL longer than 2048 bytes is refused; one of 2048 is read")
        func length() async {
            let base = "https://93.184.216.34/"
            let longest = base + String(repeating: "a", count: WebhookTargetPolicy.maxURLLength - base.utf8.count)
            let longestRefusal = await targetRefusal(longest)
            #expect(longestRefusal == nil)
            let refusal = await targetRefusal(longest + "a")
            #expect(refusal?.code == .invalidArgument)
            let message = refusal?.message ?? ""
            #expect(message.contains("2048"))
        }

        @Test("the parts of an allowed URL: scheme and host lowercased, brackets off, the scheme's port by default")
        func parts() throws {
            let plain = try WebhookTargetPolicy.parse("HTTP://Hooks.Example.COM/Path?Q=1")
            #expect(plain.scheme == "http")
            #expect(plain.host == "hooks.example.com")
            #expect(plain.port == 80)
            let secure = try WebhookTargetPolicy.parse("https://[2606:4700::1111]/x")
            #expect(secure.host == "2606:4700::1111")
            #expect(secure.port == 443)
            let explicit = try WebhookTargetPolicy.parse("https://hooks.example.com:8443/x")
            #expect(explicit.port == 8443)
        }

        @Test("address classes, byte by byte")
        func classes() {
            #expect(WebhookAddressClass.of([8, 8, 8, 8]) == .global)
            #expect(WebhookAddressClass.of([127, 0, 0, 1]) == .loopback)
            #expect(WebhookAddressClass.of([172, 15, 0, 1]) == .global)
            #expect(WebhookAddressClass.of([172, 16, 0, 1]) == .privateNetwork)
            #expect(WebhookAddressClass.of([100, 63, 0, 1]) == .global)
            #expect(WebhookAddressClass.of([100, 64, 0, 1]) == .sharedAddressSpace)
            #expect(WebhookAddressClass.of([1, 2, 3]) == .reserved)
            var mapped = [UInt8](repeating: 0, count: 16)
            mapped[10] = 0xFF
            mapped[11] = 0xFF
            mapped[12] = 192
            mapped[13] = 168
            #expect(WebhookAddressClass.of(mapped) == .privateNetwork)
            mapped[12] = 8
            mapped[13] = 8
            #expect(WebhookAddressClass.of(mapped) == .global)
            #expect(WebhookAddressClass.loopback.isPrivate)
            #expect(!WebhookAddressClass.multicast.isPrivate)
            #expect(!WebhookAddressClass.global.isPrivate)
        }
    }
#endif
