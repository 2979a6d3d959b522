#if Client
    import Foundation

    /// Uploads a route while it is recorded, through a route builder on the server (`/v1/builders`), as HealthKit's
    /// `HKWorkoutRouteBuilder` collects one: ``append(_:)`` as locations come, then
    /// ``finish(workout:activity:name:syncIdentifier:syncVersion:metadata:)``.
    ///
    /// Locations are sent in batches of ``batchSize``, each naming the index of its first location (`first=N`), and
    /// every answer says how many the server holds (``held``): a batch is durable once answered, a batch whose
    /// answer was lost is sent again with the same `first` and stored once, and a transient failure (a connection
    /// lost, `408`, `429`, `5xx`) is retried with backoff. After a restart of the app,
    /// ``resume(builderID:client:batchSize:)`` asks the server what it holds: append the recording's locations from
    /// index ``held`` on.
    public actor RouteUploader {
        /// The builder's identifier: keep it (with the recording) to resume after a restart.
        public nonisolated let builderID: UUID
        /// The locations the server holds: the index of the next location to send.
        public private(set) var held: Int
        /// Locations per batch.
        public nonisolated let batchSize: Int
        /// The client.
        let client: RouteKitClient
        /// Locations appended and not acknowledged yet (the first is location ``held``).
        var pending: [ClientLocation] = []
        /// Attempts of one batch before its error is thrown.
        let attempts = 6

        /// Starts a route builder on the server (`POST /v1/builders`) and an uploader for it.
        ///
        /// - Parameters:
        ///   - client: The client.
        ///   - order: How the server orders the locations: by time (the default) or as appended.
        ///   - batchSize: Locations per batch (500 by default).
        public init(client: RouteKitClient, order: ClientLocationOrder = .timestamp, batchSize: Int = 500)
            async throws(RouteKitClientError)
        {
            guard batchSize >= 1 else {
                throw RouteKitClientError(.invalidArgument, "createBuilder: the batch size must be at least 1")
            }
            let api = client.api
            let builder: ClientBuilder
            switch order {
            case .timestamp:
                builder = try await client.call("createBuilder") {
                    try await api.createBuilder(body: .json(.init(order: .timestamp))).created.body.json
                }
            case .insertion:
                builder = try await client.call("createBuilder") {
                    try await api.createBuilder(body: .json(.init(order: .insertion))).created.body.json
                }
            }
            self.init(client: client, builder: builder, batchSize: batchSize)
        }

        /// An uploader for a builder the server holds.
        init(client: RouteKitClient, builder: ClientBuilder, batchSize: Int) {
            self.client = client
            builderID = builder.id
            held = builder.locations
            self.batchSize = batchSize
        }

        /// Resumes the uploads of a builder after a restart: asks the server what it holds (`GET /v1/builders/ID`);
        /// append the recording's locations from index ``held`` on. A builder that was finished or discarded (or
        /// never made) is a `404` problem.
        public static func resume(builderID: UUID, client: RouteKitClient, batchSize: Int = 500)
            async throws(RouteKitClientError) -> RouteUploader
        {
            guard batchSize >= 1 else {
                throw RouteKitClientError(.invalidArgument, "getBuilder: the batch size must be at least 1")
            }
            let builder = try await client.builder(builderID)
            return RouteUploader(client: client, builder: builder, batchSize: batchSize)
        }

        /// Appends locations, in recording order; every full batch is sent before this returns (the rest waits for
        /// more, or for ``flush()``).
        public func append(_ locations: [ClientLocation]) async throws(RouteKitClientError) {
            pending += locations
            while pending.count >= batchSize { try await sendBatch() }
        }

        /// Sends every location appended and not sent yet.
        public func flush() async throws(RouteKitClientError) {
            while !pending.isEmpty { try await sendBatch() }
        }

        /// Locations appended and not acknowledged by the server yet.
        public var pendingCount: Int { pending.count }

        /// Sends what is pending and finishes the builder into a route with a sync identity
        /// (`POST /v1/builders/ID/finish`).
        ///
        /// - Parameters:
        ///   - workout: An existing workout of the token's source to add the route to; by default a new workout
        ///     spanning the route's times is saved with it.
        ///   - activity: The new workout's activity type (`running`, `cycling`…).
        ///   - name: The new workout's name.
        ///   - syncIdentifier: The route's sync identifier (with `syncVersion`): a higher version replaces the current
        ///     route of that identifier, an equal or lower one is a `409 stale-version` problem.
        ///   - syncVersion: The route's sync version.
        ///   - metadata: The route's metadata.
        public func finish(
            workout: UUID? = nil, activity: String? = nil, name: String? = nil, syncIdentifier: String? = nil,
            syncVersion: Int64? = nil, metadata: ClientMetadata = [:]
        ) async throws(RouteKitClientError) -> ClientFinishedRoute {
            try await flush()
            let id = builderID.uuidString.lowercased()
            let api = client.api
            let body = try await client.call("finishBuilder") {
                try await api.finishBuilder(
                    path: .init(id: id),
                    body: .json(
                        .init(
                            workout: workout?.uuidString.lowercased(), activity: activity, name: name,
                            syncIdentifier: syncIdentifier, syncVersion: syncVersion.map { Int($0) },
                            metadata: metadata.isEmpty ? nil : metadata))
                ).created.body.json
            }
            return ClientFinishedRoute(
                outcome: body.outcome.rawValue, route: body.route,
                previous: body.previous.flatMap { UUID(uuidString: $0) },
                previousVersion: body.previousVersion.map { Int64($0) })
        }

        /// Sends the first batch of what is pending, with `first` = ``held``, until the server acknowledges it
        /// (transient failures are retried with backoff); what the server then holds is the new ``held``.
        func sendBatch() async throws(RouteKitClientError) {
            let batch = Array(pending.prefix(batchSize))
            let first = held
            let id = builderID.uuidString.lowercased()
            let client = self.client
            let api = client.api
            var attempt = 0
            while true {
                attempt += 1
                do throws(RouteKitClientError) {
                    let builder = try await client.call("appendLocations") {
                        try await api.appendLocations(
                            path: .init(id: id), query: .init(first: first), body: .json(.case1(batch))
                        ).ok.body.json
                    }
                    let acknowledged = min(pending.count, builder.locations - first)
                    guard acknowledged > 0 else {
                        throw RouteKitClientError(
                            .unexpectedResponse,
                            "appendLocations: the builder holds \(builder.locations) locations after a batch from "
                                + "\(first)")
                    }
                    pending.removeFirst(acknowledged)
                    held = builder.locations
                    return
                } catch {
                    guard error.isTransient, attempt < attempts, !Task.isCancelled else { throw error }
                    let backoff = 0.5 * Double(1 << min(attempt - 1, 5))
                    let seconds = max(min(backoff, 15), min(error.retryAfter ?? 0, 60))
                    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                }
            }
        }
    }

    extension RouteKitClient {
        /// What a route builder holds (`GET /v1/builders/ID`): where its uploads resume.
        public func builder(_ id: UUID) async throws(RouteKitClientError) -> ClientBuilder {
            try await call("getBuilder") {
                try await api.getBuilder(path: .init(id: id.uuidString.lowercased())).ok.body.json
            }
        }
    }
#endif
