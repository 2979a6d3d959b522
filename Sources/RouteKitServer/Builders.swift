#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX

    /// The route builder over HTTP, for a phone or watch that uploads while it records (HealthKit's
    /// `HKWorkoutRouteBuilder`): create a builder, append batches of locations, finish it into a route of a workout
    /// with a sync identity, or discard it. Every acknowledged batch is durable. A batch names the index of its
    /// first location (`first=N`) and every answer gives the count the server holds, so a client that lost an answer
    /// resends from there and nothing is stored twice (as resumable-upload protocols such as tus do).
    struct BuilderRoutes: Sendable {
        let store: any RouteStore
        let configuration: ServerConfiguration
        let metrics: ServerMetrics
        /// Measures the finished routes' figures after the answer.
        let figures: FiguresQueue

        /// A builder as the API shows it.
        struct BuilderJSON: Encodable {
            var id: String
            var source: String
            var order: String
            var locations: Int
            var created: String
            var updated: String

            init(_ b: PendingBuilder) {
                id = b.id.uuidString.lowercased()
                source = b.source.name
                order = b.order.rawValue
                locations = b.progress.locationCount
                created = Timestamp(b.created).iso8601
                updated = Timestamp(b.updated).iso8601
            }
        }

        struct CreateBody: Decodable {
            var order: String?
        }

        func create(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let token = try context.require(.write)
            var order = LocationOrder.timestamp
            let bytes = try await request.body.collect(upTo: 64 * 1024)
            if bytes.readableBytes > 0 {
                let body: CreateBody
                do {
                    body = try JSONDecoder().decode(CreateBody.self, from: Data(bytes.readableBytesView))
                } catch {
                    throw Problem.badRequest("the body is not a JSON object like {\"order\": \"timestamp\"}")
                }
                if let text = body.order {
                    guard let o = LocationOrder(rawValue: text) else {
                        throw Problem.badRequest("'order' must be timestamp or insertion, not '\(text)'")
                    }
                    order = o
                }
            }
            let builder = try await RouteBuilder(store: store, source: token.source, order: order)
            guard let pending = try await store.pendingBuilder(id: builder.id) else {
                throw Problem.notFound("route builder \(builder.id) is not pending")
            }
            return JSONBody.response(
                BuilderJSON(pending), status: .created,
                headers: [.location: "/v1/builders/\(pending.id.uuidString.lowercased())"])
        }

        /// The pending builder of the token's source, else `404` (another source's builder does not exist for it).
        func owned(_ context: RouteKitRequestContext) async throws -> (APIToken, PendingBuilder) {
            let token = try context.require(.write)
            let id = try ReadRoutes.id(context)
            guard let pending = try await store.pendingBuilder(id: id), pending.source == token.source else {
                throw Problem.notFound("route builder \(id) is not pending (finished, discarded or never made)")
            }
            return (token, pending)
        }

        /// `GET /v1/builders`: the token's source's pending builders (never another source's), oldest first, as
        /// `{"builders": [{…}]}`, each as `GET /v1/builders/ID` shows it: a device that lost track of what it was
        /// uploading finds its builders and where each resumes.
        func list(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let token = try context.require(.write)
            let mine = try await store.pendingBuilders().filter { $0.source == token.source }
            return JSONBody.response(["builders": mine.map(BuilderJSON.init)])
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, pending) = try await owned(context)
            return JSONBody.response(BuilderJSON(pending))
        }

        func append(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, pending) = try await owned(context)
            guard let firstText = request.uri.queryParameters.get("first") else {
                throw Problem.badRequest(
                    "'first' (the index of the batch's first location) is required; the builder holds "
                        + "\(pending.progress.locationCount)")
            }
            let first = try Query.int(firstText, "first", default: 0, 0...Int(Int32.max))
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: configuration.maxBatchBytes)
            } catch {
                throw UploadRoutes.tooLarge(configuration.maxBatchBytes)
            }
            let locations = try LocationInput.parse(body, contentType: request.headers[.contentType])
            let held = pending.progress.locationCount
            guard first <= held else {
                throw Problem(
                    status: .conflict, type: "builder-gap", title: "The batch does not follow what is held",
                    detail: "the builder holds \(held) locations; send the batch that starts at index \(held)",
                    extra: ["locations": .number(Double(held))])
            }
            let skip = held - first
            guard skip < locations.count else {
                // A retry of batches already held: nothing to store.
                return JSONBody.response(BuilderJSON(pending))
            }
            let builder = try await RouteBuilder.resume(pending, in: store)
            do {
                try await builder.insert(Array(locations[skip...]))
            } catch {
                var e = error
                if let i = e.index { e.index = first + skip + i }
                throw e
            }
            metrics.stored(locations.count - skip)
            var updated = pending
            updated.progress = builder.progress
            updated.updated = Date()
            return JSONBody.response(BuilderJSON(updated))
        }

        struct FinishBody: Decodable {
            var workout: String?
            var activity: String?
            var name: String?
            var syncIdentifier: String?
            var syncVersion: Int64?
            var metadata: [String: MetadataValue]?
        }

        struct FinishJSON: Encodable {
            var outcome: String
            var route: RouteJSON
            var previous: String?
            var previousVersion: Int64?
        }

        func finish(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (token, pending) = try await owned(context)
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let body: FinishBody
            do {
                body = try JSONDecoder().decode(FinishBody.self, from: Data(bytes.readableBytesView))
            } catch {
                throw Problem.badRequest(
                    "the body is not a JSON object like {\"activity\": \"running\", \"syncIdentifier\": \"…\", "
                        + "\"syncVersion\": 1}")
            }
            let builder = try await RouteBuilder.resume(pending, in: store)
            let (workout, isNew) = try await workout(for: body, builder: builder, source: token.source)
            var metadata = body.metadata ?? [:]
            if let id = body.syncIdentifier { metadata[MetadataKey.syncIdentifier] = .string(id) }
            if let v = body.syncVersion { metadata[MetadataKey.syncVersion] = .integer(v) }
            // A new workout is saved in the transaction that saves the route: a finish refused for any reason (an
            // empty builder, sync metadata that is not valid, a claim taken over) leaves no workout behind.
            let finished =
                isNew
                ? try await builder.finish(creating: workout, metadata: metadata)
                : try await builder.finish(workout: workout, metadata: metadata)
            let response = try Self.answer(finished)  // a stale version is refused here: nothing was saved
            // The route's figures, for the lists that show them next: measured after the answer.
            figures.enqueue([finished.route.workoutID])
            return response
        }

        /// The workout a finished route goes to: the one named (of the token's source), else the workout of the
        /// route's sync identity when one is saved (a finish retried on a new builder finds it), else a new one,
        /// not saved yet (`isNew`), spanning the route's times. Nothing is written here.
        func workout(for body: FinishBody, builder: RouteBuilder, source: Source) async throws -> (
            workout: Workout, isNew: Bool
        ) {
            if let text = body.workout {
                guard let id = UUID(uuidString: text) else { throw Problem.badRequest("'workout' is not a uuid") }
                guard let w = try await store.workout(id: id) else {
                    throw Problem.notFound("workout \(id) is not saved")
                }
                guard w.source == source else { throw Problem.notFound("workout \(id) is not saved") }
                return (w, false)
            }
            let (start, end) = try await builder.timeBounds()
            var metadata: [String: MetadataValue] = [:]
            if let name = body.name { metadata["name"] = .string(name) }
            // The workout's version stays 1: a newer route version replaces the route, not the workout (which
            // would take its routes with it).
            let sync = try body.syncIdentifier.map { id throws(RouteKitError) in
                guard body.syncVersion != nil else {
                    throw RouteKitError(.missingSyncVersion, "'syncIdentifier' needs a 'syncVersion'")
                }
                return SyncIdentity(identifier: "workout-" + id, version: 1)
            }
            if let sync {
                var filter = WorkoutFilter()
                filter.source = source
                filter.syncIdentifier = sync.identifier
                filter.limit = 1
                if let existing = try await store.workouts(matching: filter).first { return (existing, false) }
            }
            let workout = Workout(
                activityType: ActivityType(guessingFrom: body.activity), start: start, end: end, source: source,
                sync: sync, metadata: metadata)
            return (workout, true)
        }

        static func answer(_ finished: RouteFinish) throws -> Response {
            switch finished.outcome {
            case .inserted:
                return JSONBody.response(
                    FinishJSON(outcome: "inserted", route: RouteJSON(finished.route)), status: .created,
                    headers: [.location: "/v1/routes/\(finished.route.id.uuidString.lowercased())"])
            case .replaced(_, let previous, let previousVersion):
                return JSONBody.response(
                    FinishJSON(
                        outcome: "replaced", route: RouteJSON(finished.route),
                        previous: previous.uuidString.lowercased(), previousVersion: previousVersion),
                    status: .created, headers: [.location: "/v1/routes/\(finished.route.id.uuidString.lowercased())"])
            case .stale(let current, let currentVersion):
                throw Problem(
                    status: .conflict, type: "stale-version", title: "A newer or equal version is stored",
                    detail:
                        "route '\(finished.route.sync.identifier)' is stored at version \(currentVersion); version "
                        + "\(finished.route.sync.version) was not saved",
                    extra: [
                        "currentRoute": .string(current.uuidString.lowercased()),
                        "currentVersion": .number(Double(currentVersion)),
                    ])
            }
        }

        func discard(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, pending) = try await owned(context)
            let builder = try await RouteBuilder.resume(pending, in: store)
            try await builder.discard()
            return Response(status: .noContent)
        }
    }

    /// Locations sent by clients: a JSON array of objects (or `{"locations": […]}`), or NDJSON (one object per
    /// line), with the fields of ``RouteKit/Location``: `latitude`, `longitude` (required), `time` (ISO 8601),
    /// `altitude`, `horizontalAccuracy`, `verticalAccuracy`, `speed`, `speedAccuracy`, `course`, `courseAccuracy`.
    enum LocationInput {
        struct Item: Decodable {
            var latitude: Double
            var longitude: Double
            var time: String?
            var altitude, horizontalAccuracy, verticalAccuracy, speed, speedAccuracy, course, courseAccuracy: Double?
        }

        struct Wrapped: Decodable {
            var locations: [Item]
        }

        static func parse(_ body: ByteBuffer, contentType: String?) throws -> [Location] {
            let data = Data(body.readableBytesView)
            let decoder = JSONDecoder()
            var items: [Item] = []
            if contentType?.hasPrefix("application/x-ndjson") == true {
                var line = 0
                for text in data.split(separator: UInt8(ascii: "\n")) {
                    line += 1
                    if text.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                    do {
                        items.append(try decoder.decode(Item.self, from: Data(text)))
                    } catch {
                        throw Problem(
                            status: .badRequest, type: "invalid-location",
                            title: "A location is not valid",
                            detail: "line \(line) is not a location object (latitude, longitude, time, …)",
                            extra: ["line": .number(Double(line))])
                    }
                }
            } else {
                do {
                    if data.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }) == UInt8(ascii: "{") {
                        items = try decoder.decode(Wrapped.self, from: data).locations
                    } else {
                        items = try decoder.decode([Item].self, from: data)
                    }
                } catch {
                    throw Problem(
                        status: .badRequest, type: "invalid-location", title: "A location is not valid",
                        detail: "the body is not a JSON array of location objects (latitude, longitude, time, …)")
                }
            }
            var out: [Location] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                var timestamp: Timestamp?
                if let text = item.time {
                    guard let t = Timestamp(iso8601: text) else {
                        throw Problem(
                            status: .unprocessableContent, type: "invalid-location", title: "A location is not valid",
                            detail: "location \(i) of the batch has a time that is not ISO 8601",
                            extra: ["index": .number(Double(i))])
                    }
                    timestamp = t
                }
                out.append(
                    Location(
                        latitude: item.latitude, longitude: item.longitude, timestamp: timestamp,
                        altitude: item.altitude, horizontalAccuracy: item.horizontalAccuracy,
                        verticalAccuracy: item.verticalAccuracy, speed: item.speed, speedAccuracy: item.speedAccuracy,
                        course: item.course, courseAccuracy: item.courseAccuracy))
            }
            return out
        }
    }
#endif
