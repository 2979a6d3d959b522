#if Client
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    extension RouteKitClient {
        /// The change feed after `anchor` (`GET /v1/changes` as Server-Sent Events), one ``ChangeSetResponse`` at a
        /// time, as HealthKit's anchored object query gives them: without an anchor, every current route (and, with
        /// `types`, every current object of those types) first, then each change as it is committed.
        ///
        /// The feed follows until the task is cancelled or the loop ends. A lost connection, a server that shuts
        /// down or restarts, or one that is busy (`429`, `503`) is waited out: it reconnects with `Last-Event-ID`
        /// set to the anchor of the last event read, after the delay the server asked for (`retry:`, 3 s), doubled
        /// after each failed attempt up to 30 s. Nothing is missed or repeated across a reconnection.
        ///
        /// Keep each set's ``ChangeSetResponse/anchor`` once its changes are applied, and pass it as `anchor` after
        /// a restart. An anchor the server cannot answer exactly is thrown as its problem (`400 anchor-malformed`,
        /// `409 anchor-foreign` or `anchor-ahead`, `410 anchor-expired`): start again without an anchor. Anchors
        /// belong to their token and to `types` and `workout`: follow with the same ones.
        ///
        /// - Parameters:
        ///   - anchor: The anchor of a change set already applied, or `nil` to start with everything current.
        ///   - types: What to follow: routes (the default), workouts, effort scores, series.
        ///   - workout: Only the routes and objects of this workout.
        public func changes(
            since anchor: String? = nil, types: Set<ClientChangeType> = [.route], workout: UUID? = nil
        ) -> ChangeFeed {
            ChangeFeed(client: self, anchor: anchor, types: types, workout: workout)
        }
    }

    /// The change feed as an asynchronous sequence of change sets
    /// (``RouteKitClient/RouteKitClient/changes(since:types:workout:)``): it connects when iterated, reconnects with
    /// `Last-Event-ID` after a lost connection, and ends when its task is cancelled. Its errors are
    /// ``RouteKitClientError``s.
    public struct ChangeFeed: AsyncSequence, Sendable {
        /// A change set.
        public typealias Element = ChangeSetResponse

        /// The client.
        let client: RouteKitClient
        /// Where the feed starts.
        let anchor: String?
        /// What it follows.
        let types: Set<ClientChangeType>
        /// Only this workout's changes, when set.
        let workout: UUID?

        /// An iterator that connects at its first `next()`.
        public func makeAsyncIterator() -> Iterator { Iterator(feed: self) }

        /// Reads the event stream, one change set at a time; one consumer only.
        public struct Iterator: AsyncIteratorProtocol {
            /// The feed.
            let feed: ChangeFeed
            /// The anchor after the last event read: where a reconnection resumes (`Last-Event-ID`).
            public private(set) var anchor: String?
            /// The open stream, `nil` between connections.
            var body: HTTPBody.Iterator?
            /// The stream's parser.
            var parser = SSEParser()
            /// Events parsed and not handled yet.
            var ready: [SSEEvent] = []
            /// Connections in a row that brought no event.
            var failures = 0
            /// The reconnection delay the server asked for (`retry:`).
            var retryMilliseconds = 3000

            init(feed: ChangeFeed) {
                self.feed = feed
                anchor = feed.anchor
            }

            /// The next change set; `nil` once the task is cancelled.
            public mutating func next() async throws(RouteKitClientError) -> ChangeSetResponse? {
                while !Task.isCancelled {
                    if !ready.isEmpty {
                        let event = ready.removeFirst()
                        switch try handle(event) {
                        case .changes(let set): return set
                        case .nothing: break
                        case .reconnect:
                            close()
                            await pause(retryAfter: nil)
                        }
                        continue
                    }
                    if body == nil {
                        do throws(RouteKitClientError) {
                            try await connect()
                        } catch {
                            guard error.isTransient else { throw error }
                            await pause(retryAfter: error.retryAfter)
                        }
                        continue
                    }
                    await read()
                }
                close()
                return nil
            }

            /// What an event asks for.
            enum Outcome {
                case changes(ChangeSetResponse)
                case nothing
                case reconnect
            }

            /// Handles one event: a change set to return, an anchor to keep, or the stream's end (`error`: the
            /// server's store failed; `shutdown`: the server is shutting down).
            mutating func handle(_ event: SSEEvent) throws(RouteKitClientError) -> Outcome {
                switch event.name {
                case "changes":
                    let set: ChangeSetResponse
                    do {
                        set = try JSONDecoder().decode(ChangeSetResponse.self, from: Data(event.data.utf8))
                    } catch {
                        throw RouteKitClientError.wrapping(error, operation: "changes")
                    }
                    anchor = event.id ?? set.anchor
                    failures = 0
                    return .changes(set)
                case "up-to-date":
                    if let id = event.id { anchor = id }
                    failures = 0
                    return .nothing
                case "error", "shutdown":
                    return .reconnect
                default:
                    return .nothing
                }
            }

            /// Opens the event stream from ``anchor``.
            mutating func connect() async throws(RouteKitClientError) {
                var query: [(String, String)] = []
                if !feed.types.isEmpty {
                    query.append(("types", feed.types.map(\.rawValue).sorted().joined(separator: ",")))
                }
                if let workout = feed.workout { query.append(("workout", workout.uuidString.lowercased())) }
                var headers: HTTPFields = [.accept: "text/event-stream"]
                if let anchor, let lastEventID = HTTPField.Name("Last-Event-ID") { headers[lastEventID] = anchor }
                let (response, stream) = try await feed.client.send(
                    "changes", path: "/v1/changes", query: query, headers: headers)
                let contentType = response.headerFields[.contentType] ?? ""
                guard let stream, contentType.hasPrefix("text/event-stream") else {
                    throw RouteKitClientError(
                        .unexpectedResponse, "changes: the answer is not an event stream ('\(contentType)')",
                        status: response.status.code)
                }
                body = stream.makeAsyncIterator()
                parser = SSEParser()
            }

            /// Reads the next chunk of the stream into ``ready``; at the stream's end or when the connection breaks,
            /// closes it and waits before the next connection.
            mutating func read() async {
                guard var stream = body else { return }
                body = nil
                do {
                    if let chunk = try await stream.next() {
                        body = stream
                        ready += parser.push(chunk)
                        if let retry = parser.retry { retryMilliseconds = Swift.min(retry, 60_000) }
                        return
                    }
                } catch {
                    // The connection broke: reconnect below.
                }
                close()
                await pause(retryAfter: nil)
            }

            /// Drops the stream (its connection closes) and what was parsed of it.
            mutating func close() {
                body = nil
                ready = []
                parser = SSEParser()
            }

            /// Waits before the next connection: the server's delay, doubled after each attempt that brought no
            /// event (at most 30 s), or its `Retry-After` when longer. Returns at once when the task is cancelled.
            mutating func pause(retryAfter: Double?) async {
                let doubled = Double(retryMilliseconds) / 1000 * Double(1 << Swift.min(failures, 4))
                let seconds = Swift.max(Swift.min(doubled, 30), Swift.min(retryAfter ?? 0, 300))
                failures += 1
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            }
        }
    }

    @available(*, unavailable)
    extension ChangeFeed.Iterator: Sendable {}

    /// An event of a `text/event-stream`.
    package struct SSEEvent: Hashable, Sendable {
        /// The event's type (`event:`), `message` when it has none.
        package var name: String
        /// Its data lines, joined by line feeds.
        package var data: String
        /// The last event id of the stream when the event was dispatched (`id:` of this or an earlier event), `nil`
        /// when none was set.
        package var id: String?

        /// An event.
        package init(name: String, data: String, id: String?) {
            self.name = name
            self.data = data
            self.id = id
        }
    }

    /// A `text/event-stream` parser (the WHATWG HTML specification's "event stream interpretation"): lines end with
    /// CR LF, LF or CR, wherever the chunks split them; `event:`, `data:` (several are joined by line feeds), `id:`
    /// (kept for later events, ignored when it holds NUL), `retry:` (digits only), comments (`:`) and unknown
    /// fields ignored; an event is dispatched at an empty line when it has data.
    package struct SSEParser: Sendable {
        /// The line being read.
        private var line: [UInt8] = []
        /// Whether the last byte was a CR (a LF right after it ends no second line).
        private var afterCR = false
        /// The event's data so far.
        private var data: [UInt8] = []
        /// Whether the event has a data line (an empty one included).
        private var hasData = false
        /// The event's type so far.
        private var eventName = ""
        /// The last event id.
        private var lastEventID = ""
        /// The reconnection delay the stream set (milliseconds), if it set one.
        package private(set) var retry: Int?

        /// A parser at the start of a stream.
        package init() {}

        /// Reads `bytes` and returns the events they complete.
        package mutating func push(_ bytes: some Sequence<UInt8>) -> [SSEEvent] {
            var events: [SSEEvent] = []
            for byte in bytes {
                if afterCR {
                    afterCR = false
                    if byte == 0x0A { continue }
                }
                switch byte {
                case 0x0D:
                    afterCR = true
                    if let event = endLine() { events.append(event) }
                case 0x0A:
                    if let event = endLine() { events.append(event) }
                default:
                    line.append(byte)
                }
            }
            return events
        }

        /// Interprets the line read, and dispatches the event at an empty line.
        private mutating func endLine() -> SSEEvent? {
            defer { line.removeAll(keepingCapacity: true) }
            guard !line.isEmpty else { return dispatch() }
            if line[0] == UInt8(ascii: ":") { return nil }
            let field: [UInt8]
            var value: ArraySlice<UInt8>
            if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                field = Array(line[..<colon])
                value = line[(colon + 1)...]
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            } else {
                field = line
                value = []
            }
            switch String(decoding: field, as: UTF8.self) {
            case "event":
                eventName = String(decoding: value, as: UTF8.self)
            case "data":
                if hasData { data.append(0x0A) }
                data.append(contentsOf: value)
                hasData = true
            case "id":
                if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
            case "retry":
                if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), value.count <= 9 {
                    retry = Int(String(decoding: value, as: UTF8.self))
                }
            default:
                break
            }
            return nil
        }

        /// The event read so far, if it has data; the event's fields start again either way.
        private mutating func dispatch() -> SSEEvent? {
            defer {
                data.removeAll(keepingCapacity: true)
                hasData = false
                eventName = ""
            }
            guard hasData else { return nil }
            return SSEEvent(
                name: eventName.isEmpty ? "message" : eventName, data: String(decoding: data, as: UTF8.self),
                id: lastEventID.isEmpty ? nil : lastEventID)
        }
    }
#endif
