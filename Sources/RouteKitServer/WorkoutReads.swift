#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX
    import RouteKitProcessing

    extension ReadRoutes {
        /// The workout when it exists and the token may read it, else `404`; `403` without `needed` (`read:workouts`,
        /// or what the endpoint reads of it: `read:effort` for its effort scores).
        func readableWorkout(_ context: RouteKitRequestContext, needing needed: APIScope = .reading(.workouts))
            async throws -> Workout
        {
            let store = try stores.store(context)
            let token = try context.require(needed)
            let id = try Self.id(context)
            guard let w = try await store.workout(id: id), token.mayRead(w.source) else {
                throw Problem.notFound("workout \(id) is not in the store")
            }
            return w
        }

        /// `routekit stats --json` for a workout (from its raw recording): `?maxHr=&age=&zones=&ftp=&powerZones=`
        /// `&minSpeed=&grace=&hysteresis=`.
        func stats(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let workout = try await readableWorkout(context)
            let q = request.uri.queryParameters
            func number(_ name: String, _ range: ClosedRange<Double>) throws(Problem) -> Double? {
                guard let text = q.get(name) else { return nil }
                guard let v = Double(text), v.isFinite, range.contains(v) else {
                    throw Problem.badRequest(
                        "'\(name)' must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
                }
                return v
            }
            func zones(_ name: String) throws(Problem) -> Zones? {
                guard let text = q.get(name) else { return nil }
                do { return try Zones(parsing: text, name: "'\(name)'") } catch {
                    throw Problem.badRequest(error.message)
                }
            }
            var r = WorkoutStatisticsRequest()
            r.maximumHeartRate = try number("maxHr", 61...260)
            r.age = try number("age", 1...120)
            r.zones = try zones("zones")
            r.ftp = try number("ftp", 20...2_000)
            r.powerZones = try zones("powerZones")
            r.minimumSpeed = try number("minSpeed", 0...100)
            r.grace = try number("grace", 0...3_600)
            r.elevationHysteresis = try number("hysteresis", 0...1_000)
            let report = try await WorkoutStatistics.compute(store: store, id: workout.id, request: r)
            var response = JSONBody.response(WorkoutStatisticsJSON(report))
            // A workout's series and effort may grow beside its route: revalidate.
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// `routekit splits --json` for a workout (from its raw recording): `?by=lap|km|mile|METRES` (`lap` by default).
        func splits(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let workout = try await readableWorkout(context)
            let rule: SplitRule
            do { rule = try SplitRule(parsing: request.uri.queryParameters.get("by") ?? "lap", name: "'by'") } catch {
                throw Problem.badRequest(error.message)
            }
            let report = try await WorkoutStatistics.splits(store: store, id: workout.id, rule: rule)
            var response = JSONBody.response(WorkoutSplitsJSON(report))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// The quantity types the workout has series of: `{"types": [{"type": "heartRate", "unit": "count/min"}]}`.
        func seriesTypes(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let workout = try await readableWorkout(context)
            struct TypeJSON: Encodable {
                var type: String
                var unit: String
            }
            let types = try await store.seriesTypes(ofWorkout: workout.id).map {
                TypeJSON(type: $0.identifier, unit: $0.unit)
            }
            return JSONBody.response(["types": types])
        }

        /// One series of the workout, in time order: one `{"time", "value"}` object per line, streamed batch by
        /// batch. `404` when the workout has no series of the type, and when the token may not read the type (its
        /// store lists no such series): the same answer, so it never learns whether the series exists.
        func series(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let workout = try await readableWorkout(context)
            let text = context.parameters.get("type") ?? ""
            guard let type = QuantityType(identifier: text) else {
                throw Problem.badRequest(
                    "'\(text)' is not a series type: \(QuantityType.all.map(\.identifier).joined(separator: ", "))")
            }
            guard try await store.seriesTypes(ofWorkout: workout.id).contains(type) else {
                throw Problem.notFound("workout \(workout.id) has no \(type.identifier) series")
            }
            return Response(
                status: .ok,
                headers: [.contentType: "application/x-ndjson", .cacheControl: "private, no-cache"],
                body: ResponseBody { writer in
                    for try await batch in store.samples(of: type, workout: workout.id, batchSize: 4_096) {
                        var buffer = ByteBuffer()
                        buffer.reserveCapacity(batch.samples.count * 48)
                        for s in batch.samples { buffer.writeString(SampleJSON.line(s)) }
                        try await writer.write(buffer)
                    }
                    try await writer.finish(nil)
                })
        }

        /// The workout's effort scores and the one that counts: `{"effective": {…}|null, "scores": [{…}]}`.
        func effort(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let workout = try await readableWorkout(context, needing: .reading(.effort))
            let scores = try await store.efforts(ofWorkout: workout.id)
            var response = JSONBody.response(WorkoutEffortJSON(scores))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }
    }
#endif
