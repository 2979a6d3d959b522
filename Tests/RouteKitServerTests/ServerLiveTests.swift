#if Server
    import AsyncHTTPClient
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import Logging
    import NIOCore
    import NIOHTTP1
    @_spi(RouteKitBackend) import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import RouteKitTesting
    import Testing

    /// One Server-Sent Event.
    struct SSEEvent: Sendable {
        var id: String?
        var event: String
        var data: String

        /// The routes added by a `changes` event (their sync identifiers).
        var addedNames: [String] {
            let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
            return (object?["added"] as? [[String: Any]] ?? []).compactMap { $0["syncIdentifier"] as? String }
        }
    }

    /// Reads events from a streamed body; comments (heartbeats) and `retry:` are counted, not returned.
    struct EventReader {
        var iterator: HTTPClientResponse.Body.AsyncIterator
        var pending = ""
        var comments = 0

        init(_ body: HTTPClientResponse.Body) { iterator = body.makeAsyncIterator() }

        /// The next event, or with `comments`, the next comment too (as an event named `:`).
        mutating func next(comments returnComments: Bool = false) async throws -> SSEEvent? {
            while true {
                if let range = pending.range(of: "\n\n") {
                    let block = String(pending[..<range.lowerBound])
                    pending = String(pending[range.upperBound...])
                    var event = SSEEvent(id: nil, event: "message", data: "")
                    var isEvent = false
                    for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                        if line.hasPrefix(":") {
                            comments += 1
                        } else if line.hasPrefix("id: ") {
                            event.id = String(line.dropFirst(4))
                        } else if line.hasPrefix("event: ") {
                            event.event = String(line.dropFirst(7))
                            isEvent = true
                        } else if line.hasPrefix("data: ") {
                            event.data += String(line.dropFirst(6))
                            isEvent = true
                        }
                    }
                    if isEvent { return event }
                    if returnComments && block.hasPrefix(":") { return SSEEvent(id: nil, event: ":", data: "") }
                    continue
                }
                guard let buffer = try await iterator.next() else { return nil }
                pending += String(buffer: buffer)
            }
        }

        /// The next event that is not `up-to-date`.
        mutating func nextChanges() async throws -> SSEEvent? {
            while let e = try await next() { if e.event != "up-to-date" { return e } }
            return nil
        }
    }

    func request(_ port: Int, _ path: String, token: String, stream: Bool = true, lastEventID: String? = nil)
        -> HTTPClientRequest
    {
        var r = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        r.headers.add(name: "Authorization", value: "Bearer \(token)")
        if stream { r.headers.add(name: "Accept", value: "text/event-stream") }
        if let lastEventID { r.headers.add(name: "Last-Event-ID", value: lastEventID) }
        return r
    }

    @Suite("routekit serve: event streams and long-polls over a socket", .serialized)
    struct ServerLiveTests {
        @Test("a stream catches up, says up-to-date, delivers commits, and a reconnect with Last-Event-ID resumes exactly")
        func streamResumes() async throws {
            let f = try Fixture()
            let token = try await f.token()
            _ = try await saveRoute(f.store, "a")
            let store = f.store
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                // An uninterrupted follower, for comparison.
                let whole = Task {
                    let response = try await HTTPClient.shared.execute(request(port, "/v1/changes", token: token), timeout: .seconds(60))
                    var reader = EventReader(response.body)
                    var names: [String] = []
                    while names.count < 4, let e = try await reader.nextChanges() { names += e.addedNames }
                    return names
                }
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(60))
                #expect(response.status == .ok)
                #expect(response.headers["Content-Type"].first == "text/event-stream")
                #expect(response.headers["Cache-Control"].first == "no-store")
                #expect(response.headers["X-Accel-Buffering"].first == "no")
                var reader = EventReader(response.body)
                let first = try #require(try await reader.next())
                #expect(first.event == "changes")
                #expect(first.addedNames == ["test-a"])
                let upToDate = try #require(try await reader.next())
                #expect(upToDate.event == "up-to-date")
                #expect(upToDate.id == first.id)
                _ = try await saveRoute(store, "b")
                let second = try #require(try await reader.nextChanges())
                #expect(second.addedNames == ["test-b"])
                let resumeFrom = try #require(second.id)
                // Disconnect, commit twice while away, and come back with the last id seen.
                reader = EventReader(HTTPClientResponse.Body())
                _ = try await saveRoute(store, "c")
                _ = try await saveRoute(store, "d")
                let again = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token, lastEventID: resumeFrom), timeout: .seconds(60))
                var resumed = EventReader(again.body)
                var names: [String] = []
                while names.count < 2, let e = try await resumed.nextChanges() { names += e.addedNames }
                #expect(names == ["test-c", "test-d"])
                let uninterrupted = try await whole.value
                #expect(uninterrupted == ["test-a", "test-b", "test-c", "test-d"])
                #expect(["test-a", "test-b"] + names == uninterrupted)
            }
        }

        @Test(
            "the stream's first frame is its first event with retry: 3000 in it; no frame without data (httpx-sse would make it an empty message)"
        )
        func retryRidesOnTheFirstEvent() async throws {
            let f = try Fixture()
            let token = try await f.token()
            _ = try await saveRoute(f.store, "a")
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(30))
                #expect(response.status == .ok)
                // The catch-up (changes, up-to-date) and two heartbeats (0.5 s apart here), as sent.
                var iterator = response.body.makeAsyncIterator()
                var text = ""
                while text.components(separatedBy: "\n\n").count < 5, let buffer = try await iterator.next() {
                    text += String(buffer: buffer)
                }
                let frames = text.components(separatedBy: "\n\n").dropLast()
                let first = try #require(frames.first)
                let lines = first.split(separator: "\n").map(String.init)
                #expect(lines.first == "retry: 3000", "\(first)")
                #expect(lines.contains("event: changes"), "\(first)")
                #expect(text.components(separatedBy: "retry:").count == 2, "retry sent more than once")
                for frame in frames {
                    let fields = frame.split(separator: "\n").filter { !$0.hasPrefix(":") }
                    let hasData = fields.contains { $0.hasPrefix("data: ") }
                    // A frame is an event with data, or comments only (which no client dispatches).
                    #expect(fields.isEmpty || hasData, "a frame without data: \(frame)")
                }
            }
        }

        @Test("a stream waits out a store it cannot reach for 3 s, as changes --follow does, and delivers what came meanwhile")
        func streamWaitsOutUnavailableStore() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let faulty = FaultInjectingStore(f.store)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let app = RouteKitServer(store: faulty, configuration: f.configuration, logger: logger).makeApplication()
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(60))
                var reader = EventReader(response.body)
                #expect(try await reader.next()?.event == "up-to-date")
                faulty.setChangesUnreachable(true)
                _ = try await saveRoute(f.store, "during")
                // The stream stays open: comments ("waiting for the store", heartbeats) while the store is away.
                let before = reader.comments
                let away = ContinuousClock.now
                while ContinuousClock.now - away < .seconds(3) {
                    #expect(try await reader.next(comments: true)?.event == ":")
                }
                #expect(reader.comments > before)
                faulty.setChangesUnreachable(false)
                _ = try await saveRoute(f.store, "after")
                var names: [String] = []
                while names.count < 2, let e = try await reader.nextChanges() { names += e.addedNames }
                #expect(names == ["test-during", "test-after"])
            }
        }

        @Test("an idle stream gets heartbeats; an unusable anchor is refused with its status before any stream")
        func heartbeatAndAnchorErrors() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(30))
                var reader = EventReader(response.body)
                let upToDate = try #require(try await reader.next())
                #expect(upToDate.event == "up-to-date")
                // Heartbeats every 0.5 s here: wait for two comments without any event.
                for _ in 0..<2 {
                    let e = try await reader.next(comments: true)
                    #expect(e?.event == ":")
                }
                #expect(reader.comments == 2)
                let refused = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token, lastEventID: "garbage"), timeout: .seconds(30))
                #expect(refused.status == .badRequest)
                #expect(refused.headers["Content-Type"].first == "application/problem+json")
            }
        }

        @Test("after a change set, an idle stream sends heartbeats, never the same change set again")
        func heartbeatsDoNotRepeat() async throws {
            let f = try Fixture()
            let token = try await f.token()
            _ = try await saveRoute(f.store, "once")
            let store = f.store
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(60))
                var reader = EventReader(response.body)
                var events: [String] = []
                // The catch-up, then a live change; after each, three heartbeats (0.5 s apart here) and nothing else.
                for step in 0..<2 {
                    if step == 1 { _ = try await saveRoute(store, "later") }
                    var heartbeats = 0
                    while heartbeats < 3, let e = try await reader.next(comments: true) {
                        if e.event == ":" { heartbeats += 1 } else { events.append("\(e.event) \(e.addedNames)") }
                    }
                }
                #expect(
                    events == [
                        "changes [\"test-once\"]", "up-to-date []", "changes [\"test-later\"]", "up-to-date []",
                    ])
            }
        }

        @Test("a token holds at most its streams (429 beyond); a disconnect frees its stream")
        func streamLimit() async throws {
            var f = try Fixture()
            f.configuration.maxStreamsPerToken = 1
            let token = try await f.token()
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                // The held stream is open (its first event arrived) before the second is tried; otherwise the second
                // could get in first and the held one be refused.
                let (opened, signalOpened) = AsyncStream<Void>.makeStream()
                let held = Task {
                    defer { signalOpened.finish() }
                    let response = try await HTTPClient.shared.execute(
                        request(port, "/v1/changes", token: token), timeout: .seconds(30))
                    var reader = EventReader(response.body)
                    _ = try await reader.next()
                    signalOpened.yield()
                    try await Task.sleep(for: .seconds(30))
                    _ = reader
                }
                var openedEvents = opened.makeAsyncIterator()
                _ = await openedEvents.next()
                let second = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: token), timeout: .seconds(30))
                #expect(second.status.code == 429, "a second stream of the token is refused")
                #expect(second.headers["Retry-After"].first == "5")
                held.cancel()
                // The server notices the disconnect and frees the slot.
                var freed = false
                for _ in 0..<100 where !freed {
                    try await Task.sleep(for: .milliseconds(50))
                    let r = try await HTTPClient.shared.execute(
                        request(port, "/v1/changes", token: token), timeout: .seconds(30))
                    freed = r.status == .ok
                }
                #expect(freed)
            }
        }

        @Test(
            "a builder's zone stream over a socket: one event per zone change as batches arrive (1, 3, 2, 4), none within a zone or for a resend; a new stream starts from the stored samples; the builder's end ends it; 409 without zones"
        )
        func builderZones() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "watch")
            let unzoned = try await f.token(source: "nozones")
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                func object(_ text: String) -> [String: Any] {
                    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
                }
                func builder(_ token: String) async throws -> String {
                    try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) {
                        json($0.body)["id"] as? String ?? ""
                    }
                }
                // Zone 1 below 120 bpm, 2 from 120, 3 from 140, 4 from 160.
                try await client.execute(
                    uri: "/v1/zones/heartRate", method: .put, headers: auth(token, [.contentType: "application/json"]),
                    body: ByteBuffer(string: #"{"boundaries": [120, 140, 160]}"#)
                ) { r in
                    #expect(r.status == .ok)
                }
                // A source without zones (no configuration, no maximum heart rate, no age) is told how to set them.
                let lost = try await builder(unzoned)
                try await client.execute(uri: "/v1/builders/\(lost)/zones", method: .get, headers: auth(unzoned)) { r in
                    #expect(r.status == .conflict)
                    #expect(problemType(r) == "zones-unknown")
                    #expect((json(r.body)["detail"] as? String)?.contains("PUT /v1/zones/heartRate") == true)
                }
                let id = try await builder(token)
                let response = try await HTTPClient.shared.execute(
                    request(port, "/v1/builders/\(id)/zones", token: token), timeout: .seconds(60))
                #expect(response.status == .ok)
                #expect(response.headers["Content-Type"].first == "text/event-stream")
                var reader = EventReader(response.body)
                /// Posts heart rates `values` as the batch starting at index `first`, one second apart.
                func post(_ values: [Double], first: Int) async throws {
                    let body = samplesJSON(from: first, count: values.count) { values[$0 - first] }
                    try await client.execute(
                        uri: "/v1/builders/\(id)/samples?type=heartRate&first=\(first)", method: .post,
                        headers: auth(token), body: ByteBuffer(string: body)
                    ) { r in
                        #expect(r.status == .ok)
                    }
                }
                try await post([110, 112], first: 0)  // zone 1
                try await post([150, 151], first: 2)  // zone 3
                try await post([130], first: 4)  // zone 2
                try await post([131, 135, 138], first: 5)  // still zone 2: no event
                try await post([130], first: 4)  // a resend: nothing new
                try await post([165], first: 8)  // zone 4
                var events: [[String: Any]] = []
                while events.count < 4, let e = try await reader.next() {
                    #expect(e.event == "zone")
                    events.append(object(e.data))
                }
                let current = events.map { $0["current"] as? Int }
                #expect(current == [1, 3, 2, 4])
                let previous = events.map { $0["previous"] as? Int }
                #expect(previous == [nil, 1, 3, 2])
                #expect(events.first?["previous"] is NSNull)
                let times = events.map { $0["time"] as? String }
                let expectedTimes: [String?] = ["01", "03", "04", "08"].map { "2024-05-01T08:00:\($0)Z" }
                #expect(times == expectedTimes)
                // Each value holds until the next sample: at 08:00:04, 2 s in zone 1 and 2 s in zone 3.
                let atThird = events.count > 2 ? events[2]["secondsInZones"] as? [Double] : nil
                #expect(atThird == [2, 0, 2, 0])
                let atFourth = events.count > 3 ? events[3]["secondsInZones"] as? [Double] : nil
                #expect(atFourth == [2, 4, 2, 0])
                // A stream opened now starts with the zone the stored samples end in.
                let again = try await HTTPClient.shared.execute(
                    request(port, "/v1/builders/\(id)/zones", token: token), timeout: .seconds(60))
                var second = EventReader(again.body)
                let replay = try #require(try await second.next())
                #expect(replay.event == "zone")
                #expect(object(replay.data)["current"] as? Int == 4)
                #expect(object(replay.data)["previous"] is NSNull)
                // Discarding the builder ends both streams.
                try await client.execute(uri: "/v1/builders/\(id)", method: .delete, headers: auth(token)) { r in
                    #expect(r.status == .noContent)
                }
                let end = try await reader.next()
                #expect(end?.event == "end")
                let endData = end.map { object($0.data) } ?? [:]
                #expect(endData["builder"] as? String == "discarded")
                let secondEnd = try await second.next()
                #expect(secondEnd?.event == "end")
                #expect(try await reader.next() == nil)
            }
        }

        @Test("a long-poll returns at the first commit with what it added")
        func longPollWakes() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let anchor = try await f.store.currentAnchor().text
            let store = f.store
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let poll = Task {
                    let started = ContinuousClock.now
                    let r = try await HTTPClient.shared.execute(
                        request(port, "/v1/changes?anchor=\(anchor)&wait=50", token: token, stream: false),
                        timeout: .seconds(60))
                    let body = try await r.body.collect(upTo: 1 << 20)
                    return (String(buffer: body), ContinuousClock.now - started)
                }
                try await Task.sleep(for: .milliseconds(300))
                _ = try await saveRoute(store, "late")
                let (body, elapsed) = try await poll.value
                #expect(body.contains("\"test-late\""))
                // It answered at the commit, not at the end of its 50 s wait.
                #expect(elapsed < .seconds(25))
            }
        }
    }
#endif
