#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX

    /// The route builder over HTTP, for a phone or watch that uploads while it records (HealthKit's
    /// `HKWorkoutRouteBuilder`): create a builder, append batches of locations, of heart-rate, power and cadence
    /// samples and of workout events, finish it into a route of a workout with a sync identity (the samples its
    /// series, the events its events, in the same transaction), or discard it. Every acknowledged batch is durable. A
    /// batch names the index of its first item (`first=N`) and every answer gives the counts the server holds, so a
    /// client that lost an answer resends from there and nothing is stored twice (as resumable-upload protocols such
    /// as tus do). `GET /v1/builders/ID/zones` streams the zone the builder's heart rate (or power) is in.
    ///
    /// A builder builds a route: every endpoint needs `write:routes` (or `write`); samples of a type also need that
    /// type's (`write:heartRate`), events and the finish `write:workouts`, and the zone stream reading its type
    /// (`read:heartRate`).
    struct BuilderRoutes: Sendable {
        let stores: PersonStores
        let configuration: ServerConfiguration
        let metrics: ServerMetrics
        /// Measures the finished routes' figures after the answer.
        let figures: FiguresQueue
        /// The event streams' slots per token (zone streams count among them).
        let hub: FeedHub
        /// Tells this process's zone streams what the builder endpoints stored.
        let live: BuilderLive
        /// Each person's storage quota (``ServerConfiguration/maxStoredBytesPerPerson``), checked before a builder is
        /// made and before a batch of locations or samples is read; `nil`: none. Events, finishing and discarding are
        /// never refused by it (a recording already stored can always be finished).
        let quota: StorageQuota?

        /// The quantity types a builder takes samples of over HTTP (`POST /v1/builders/ID/samples?type=…`).
        static let sampleTypes: [QuantityType] = [.heartRate, .power, .cadence]

        /// A builder as the API shows it.
        struct BuilderJSON: Encodable {
            var id: String
            var source: String
            var order: String
            var locations: Int
            /// Samples held by type identifier: every type ``sampleTypes`` lists (0 when none), and any other held.
            var samples: [String: Int]
            var events: Int
            var created: String
            var updated: String

            init(_ b: PendingBuilder) {
                id = b.id.uuidString.lowercased()
                source = b.source.name
                order = b.order.rawValue
                locations = b.progress.locationCount
                var samples: [String: Int] = [:]
                for type in BuilderRoutes.sampleTypes { samples[type.identifier] = 0 }
                for (type, count) in b.progress.sampleCounts { samples[type.identifier] = count }
                self.samples = samples
                events = b.progress.eventCount
                created = Timestamp(b.created).iso8601
                updated = Timestamp(b.updated).iso8601
            }
        }

        struct CreateBody: Decodable {
            var order: String?
        }

        func create(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.writing(.routes))
            try await quota?.check(store.person)
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

        /// The pending builder of the token's source, else `404` (another source's builder does not exist for it);
        /// `403` without `write:routes` (or `write`) and the other scopes `more`.
        func owned(_ context: RouteKitRequestContext, needing more: APIScope...) async throws -> (
            APIToken, PendingBuilder
        ) {
            let store = try stores.store(context)
            let token = try context.require(.writing(.routes))
            let grant = token.grant
            for scope in more where !grant.allows(scope) {
                throw Problem.insufficientScope(scope.rawValue, token)
            }
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
            let store = try stores.store(context)
            let token = try context.require(.writing(.routes))
            let mine = try await store.pendingBuilders().filter { $0.source == token.source }
            return JSONBody.response(["builders": mine.map(BuilderJSON.init)])
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let (_, pending) = try await owned(context)
            return JSONBody.response(BuilderJSON(pending))
        }

        func append(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let (_, pending) = try await owned(context)
            try await quota?.check(store.person)
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

        /// The `first` query parameter of a batch: required, 0 or more.
        static func first(_ request: Request, held: Int, what: String) throws(Problem) -> Int {
            guard let text = request.uri.queryParameters.get("first") else {
                throw Problem.badRequest(
                    "'first' (the index of the batch's first \(what)) is required; the builder holds \(held)")
            }
            return try Query.int(text, "first", default: 0, 0...Int(Int32.max))
        }

        /// The body of a batch, at most ``ServerConfiguration/maxBatchBytes``.
        func batchBody(_ request: Request) async throws -> ByteBuffer {
            do {
                return try await request.body.collect(upTo: configuration.maxBatchBytes)
            } catch {
                throw UploadRoutes.tooLarge(configuration.maxBatchBytes)
            }
        }

        /// The `409 builder-gap` of a batch that starts past the `held` items of `what` (`samples`, `events`).
        static func gap(held: Int, what: String, extra: [String: JSONValue] = [:]) -> Problem {
            var members = extra
            members[what] = .number(Double(held))
            return Problem(
                status: .conflict, type: "builder-gap", title: "The batch does not follow what is held",
                detail: "the builder holds \(held) \(what); send the batch that starts at index \(held)",
                extra: members)
        }

        /// `POST /v1/builders/ID/samples?type=heartRate&first=N`: a batch of samples (`[{"time", "value"}]`), stored
        /// once as locations are (a retry or an overlap adds nothing; a gap is `409 builder-gap`), answered with the
        /// builder; the zone streams of the builder get them.
        func appendSamples(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let typeText = request.uri.queryParameters.get("type") ?? ""
            guard let type = QuantityType(identifier: typeText), Self.sampleTypes.contains(type) else {
                let names = Self.sampleTypes.map(\.identifier).joined(separator: ", ")
                throw Problem.badRequest("'type' must be one of \(names), not '\(typeText)'")
            }
            let (_, pending) = try await owned(context, needing: .writing(.quantity(type)))
            try await quota?.check(store.person)
            let held = pending.progress.sampleCount(of: type)
            let first = try Self.first(request, held: held, what: "\(type) sample")
            let body = try await batchBody(request)
            let samples = try SampleInput.parse(body, type: type)
            guard first <= held else {
                throw Self.gap(held: held, what: "samples", extra: ["type": .string(type.identifier)])
            }
            guard held - first < samples.count else {
                // A retry of samples already held: nothing to store.
                return JSONBody.response(BuilderJSON(pending))
            }
            let builder = try await RouteBuilder.resume(pending, in: store)
            let stored = try await builder.insert(samples: samples, of: type, first: first)
            live.publish(.samples(type, first: held, stored), to: pending.id)
            var updated = pending
            updated.progress = builder.progress
            updated.updated = Date()
            return JSONBody.response(BuilderJSON(updated))
        }

        /// `POST /v1/builders/ID/events?first=N`: a batch of workout events (`[{"kind", "start", "end", "metadata"}]`),
        /// stored once as locations are, added after the workout's events when the builder finishes.
        func appendEvents(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let (_, pending) = try await owned(context, needing: .writing(.workouts))
            let held = pending.progress.eventCount
            let first = try Self.first(request, held: held, what: "event")
            let body = try await batchBody(request)
            let events = try EventInput.parse(body)
            guard first <= held else { throw Self.gap(held: held, what: "events") }
            guard held - first < events.count else { return JSONBody.response(BuilderJSON(pending)) }
            let builder = try await RouteBuilder.resume(pending, in: store)
            try await builder.insert(events: events, first: first)
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
            let store = try stores.store(context)
            let (token, pending) = try await owned(context, needing: .writing(.workouts))
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
            let (workout, isNew) = try await workout(for: body, builder: builder, source: token.source, in: store)
            var metadata = body.metadata ?? [:]
            if let id = body.syncIdentifier { metadata[MetadataKey.syncIdentifier] = .string(id) }
            if let v = body.syncVersion { metadata[MetadataKey.syncVersion] = .integer(v) }
            // A new workout is saved in the transaction that saves the route: a finish refused for any reason (an
            // empty builder, sync metadata that is not valid, a claim taken over) leaves no workout behind.
            let finished =
                isNew
                ? try await builder.finish(creating: workout, metadata: metadata)
                : try await builder.finish(workout: workout, metadata: metadata)
            // Finished (or, when stale, discarded): the builder's zone streams end.
            live.end(pending.id, reason: "finished")
            let response = try Self.answer(finished)  // a stale version is refused here: nothing was saved
            // The route's figures, for the lists that show them next: measured after the answer.
            figures.enqueue([finished.route.workoutID], of: store)
            return response
        }

        /// The workout a finished route goes to: the one named (of the token's source), else the workout of the
        /// route's sync identity when one is saved (a finish retried on a new builder finds it), else a new one,
        /// not saved yet (`isNew`), spanning the route's times. Nothing is written here.
        func workout(for body: FinishBody, builder: RouteBuilder, source: Source, in store: any RouteStore)
            async throws -> (
                workout: Workout, isNew: Bool
            )
        {
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
            let store = try stores.store(context)
            let (_, pending) = try await owned(context)
            let builder = try await RouteBuilder.resume(pending, in: store)
            try await builder.discard()
            live.end(pending.id, reason: "discarded")
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

    /// A time in a sample or event batch: ISO 8601 text (`"2024-05-01T06:00:00Z"`), or seconds since 1970-01-01 UTC
    /// (`1714543200.5`).
    struct TimeInput: Decodable {
        var text: String?
        var seconds: Double?

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Double.self) {
                seconds = n
            } else {
                text = try c.decode(String.self)
            }
        }

        /// The time; `nil` for text that is not ISO 8601 or seconds that are not finite or outside the years 1–9999.
        var timestamp: Timestamp? {
            if let text { return Timestamp(iso8601: text) }
            guard let seconds else { return nil }
            return Timestamp(Instant(seconds: 0)).adding(seconds: seconds)
        }
    }

    /// Where a batch's JSON went wrong: the index of the array element at fault, if the error says.
    enum BatchJSON {
        static func index(of error: any Error) -> Int? {
            switch error as? DecodingError {
            case .keyNotFound(_, let context)?, .typeMismatch(_, let context)?, .valueNotFound(_, let context)?,
                .dataCorrupted(let context)?:
                return context.codingPath.first?.intValue
            default: return nil
            }
        }

        /// The `400` for an element of a batch that is not what `what` must be.
        static func problem(_ type: String, _ title: String, _ detail: String, index: Int?) -> Problem {
            Problem(
                status: .badRequest, type: type, title: title, detail: detail,
                extra: index.map { ["index": .number(Double($0))] } ?? [:])
        }
    }

    /// Samples sent to a builder: a JSON array of `{"time": …, "value": n}` (time as ``TimeInput`` reads it, the
    /// value in the type's unit: bpm, W, rpm), checked as `RouteBuilder.insert(samples:of:first:)` checks them (a
    /// finite value, not negative). A bad element is a `400` naming its index in the batch.
    enum SampleInput {
        struct Item: Decodable {
            var time: TimeInput
            var value: Double
        }

        static func parse(_ body: ByteBuffer, type: QuantityType) throws -> [QuantitySample] {
            let items: [Item]
            do {
                items = try JSONDecoder().decode([Item].self, from: Data(body.readableBytesView))
            } catch {
                let index = BatchJSON.index(of: error)
                var detail = "the body is not a JSON array of samples like [{\"time\": \"2024-05-01T06:00:00Z\", "
                detail += "\"value\": 142}]"
                if let index {
                    detail = "sample \(index) of the batch is not an object with a time and a numeric value"
                }
                throw BatchJSON.problem("invalid-sample", "A sample is not valid", detail, index: index)
            }
            var out: [QuantitySample] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                guard let t = item.time.timestamp else {
                    throw BatchJSON.problem(
                        "invalid-sample", "A sample is not valid",
                        "sample \(i) of the batch has a time that is neither ISO 8601 nor seconds since 1970",
                        index: i)
                }
                out.append(QuantitySample(timestamp: t, value: item.value))
            }
            do throws(RouteKitError) {
                try RouteBuilder.check(samples: out, of: type)
            } catch {
                throw BatchJSON.problem("invalid-sample", "A sample is not valid", error.message, index: error.index)
            }
            return out
        }
    }

    /// Workout events sent to a builder: a JSON array of `{"kind", "start", "end", "metadata"}` objects, the kind
    /// one of the workout JSON's (`pause`, `resume`, `motionPaused`, `motionResumed`, `lap`, `segment`,
    /// `marker`), `start` required, `end` and `metadata` optional, times as ``TimeInput`` reads them. A bad element is
    /// a `400` naming its index in the batch.
    enum EventInput {
        struct Item: Decodable {
            var kind: String
            var start: TimeInput
            var end: TimeInput?
            var metadata: [String: MetadataValue]?
        }

        static func parse(_ body: ByteBuffer) throws -> [WorkoutEvent] {
            let items: [Item]
            do {
                items = try JSONDecoder().decode([Item].self, from: Data(body.readableBytesView))
            } catch {
                let index = BatchJSON.index(of: error)
                var detail = "the body is not a JSON array of events like [{\"kind\": \"lap\", \"start\": "
                detail += "\"2024-05-01T06:00:00Z\", \"end\": \"2024-05-01T06:05:00Z\"}]"
                if let index {
                    detail =
                        "event \(index) of the batch is not an object with a kind, a start, and an optional end "
                        + "and metadata object"
                }
                throw BatchJSON.problem("invalid-event", "An event is not valid", detail, index: index)
            }
            let kinds = WorkoutEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            var out: [WorkoutEvent] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                guard let kind = WorkoutEvent.Kind(rawValue: item.kind) else {
                    throw BatchJSON.problem(
                        "invalid-event", "An event is not valid",
                        "event \(i) of the batch has the kind '\(item.kind)', not one of \(kinds)", index: i)
                }
                guard let start = item.start.timestamp else {
                    throw BatchJSON.problem(
                        "invalid-event", "An event is not valid",
                        "event \(i) of the batch has a start that is neither ISO 8601 nor seconds since 1970", index: i)
                }
                var end: Timestamp?
                if let text = item.end {
                    guard let t = text.timestamp else {
                        throw BatchJSON.problem(
                            "invalid-event", "An event is not valid",
                            "event \(i) of the batch has an end that is neither ISO 8601 nor seconds since 1970",
                            index: i)
                    }
                    end = t
                }
                out.append(WorkoutEvent(kind: kind, start: start, end: end, metadata: item.metadata ?? [:]))
            }
            do throws(RouteKitError) {
                try RouteBuilder.check(events: out)
            } catch {
                throw BatchJSON.problem("invalid-event", "An event is not valid", error.message, index: error.index)
            }
            return out
        }
    }
#endif
