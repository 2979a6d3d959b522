#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitProcessing

    /// The token's source's zones: `GET /v1/zones` (the settings), `GET`, `PUT` and `DELETE /v1/zones/{quantity}`
    /// (`heartRate` or `power`). The rules are the application's (``ZoneSettingsChanges``), as `routekit zones`
    /// applies them; these routes only translate. A quantity's zones and figures are its type's: reading them needs
    /// `read:heartRate` (or `read:power`, or `read`), changing them `write:heartRate` (…); the settings leave out the
    /// quantities the token may not read.
    struct ZoneRoutes: Sendable {
        let stores: PersonStores

        /// The longest body `PUT /v1/zones/{quantity}` reads.
        static let maxBodyBytes = 16 * 1024

        /// `GET /v1/zones`: the figures and the configuration each quantity's workouts use (any read scope; the
        /// quantities the token may not read are left out).
        func settings(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.requireSomeRead()
            let settings = token.grant.redacted(try await store.zoneSettings(of: token.source))
            var response = JSONBody.response(ZoneSettingsJSON(settings))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// `GET /v1/zones/{quantity}`: the configuration the token's source's workouts use; `404` when nothing is
        /// known (each workout's own maximum or estimated FTP is used, and its statistics say so).
        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.reading(.quantity(quantity.quantityType)))
            guard let c = try await ZoneSettingsChanges.preferred(quantity, of: token.source, in: store) else {
                throw Problem.notFound(
                    "no \(quantity.rawValue) zones are known for this source: PUT boundaries "
                        + (quantity == .heartRate ? "or a maximumHeartRate" : "or an ftp"))
            }
            var response = JSONBody.response(ZoneConfigurationJSON(c))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// The body of `PUT /v1/zones/{quantity}`.
        struct Body: Decodable {
            var boundaries: [Double]?
            var maximumHeartRate: Double?
            var restingHeartRate: Double?
            var age: Double?
            var ftp: Double?
        }

        /// `PUT /v1/zones/{quantity}` with `{"boundaries": [b1, …]}` (the person's own zones) and/or the figures
        /// (`maximumHeartRate`, `restingHeartRate`, `age`; `ftp`): answers the configuration now used (`write`).
        func put(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.writing(.quantity(quantity.quantityType)))
            let change = try await Self.change(request)
            let now = try await ZoneSettingsChanges.apply(change, to: quantity, of: token.source, in: store)
            guard let now else { return Response(status: .noContent) }
            return JSONBody.response(ZoneConfigurationJSON(now))
        }

        /// The change a `PUT` body asks for.
        static func change(_ request: Request) async throws -> ZoneSettingsChanges.Change {
            let bytes = try await request.body.collect(upTo: Self.maxBodyBytes)
            let body: Body
            do { body = try JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)) } catch {
                if let key = WriteRoutes.field(of: error) {
                    throw Problem.badRequest(
                        key == "boundaries"
                            ? "'boundaries' must be an array of numbers" : "'\(key)' must be a number")
                }
                throw Problem.badRequest(
                    "the body is not a JSON object like {\"boundaries\": [120, 140, 155, 170]} or "
                        + "{\"maximumHeartRate\": 190, \"restingHeartRate\": 50}")
            }
            return ZoneSettingsChanges.Change(
                boundaries: body.boundaries, maximumHeartRate: body.maximumHeartRate,
                restingHeartRate: body.restingHeartRate, age: body.age, ftp: body.ftp)
        }

        /// `DELETE /v1/zones/{quantity}`: removes the person's own configuration (the figures stay); `204`.
        func delete(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.writing(.quantity(quantity.quantityType)))
            _ = try await ZoneSettingsChanges.clear(quantity, of: token.source, in: store)
            return Response(status: .noContent)
        }

        // MARK: One workout's (HealthKit's custom configuration saved with a workout)

        /// The workout when the token may read it, else `404`.
        func workout(_ context: RouteKitRequestContext, _ token: APIToken) async throws -> Workout {
            let store = try stores.store(context)
            let id = try ReadRoutes.id(context)
            guard let w = try await store.workout(id: id), token.mayRead(w.source) else {
                throw Problem.notFound("workout \(id) is not in the store")
            }
            return w
        }

        /// `GET /v1/workouts/{id}/zones`: the settings the workout's statistics use (those saved with it over its
        /// person's), in the shape of `GET /v1/zones` (`read:workouts`; the quantities the token may not read are left
        /// out).
        func workoutSettings(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.reading(.workouts))
            let w = try await workout(context, token)
            let settings = token.grant.redacted(try await ZoneSettingsChanges.settings(ofWorkout: w, in: store))
            var response = JSONBody.response(ZoneSettingsJSON(settings))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// `GET /v1/workouts/{id}/zones/{quantity}`: the configuration the workout's statistics use; `404` when
        /// nothing is known.
        func workoutGet(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.reading(.workouts), .reading(.quantity(quantity.quantityType)))
            let w = try await workout(context, token)
            guard let c = try await ZoneSettingsChanges.preferred(quantity, ofWorkout: w, in: store) else {
                throw Problem.notFound(
                    "no \(quantity.rawValue) zones are known for this workout: PUT boundaries "
                        + (quantity == .heartRate ? "or a maximumHeartRate" : "or an ftp"))
            }
            var response = JSONBody.response(ZoneConfigurationJSON(c))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }

        /// `PUT /v1/workouts/{id}/zones/{quantity}`: saves a configuration (origin `app`) or figures with the
        /// workout, as its source only (`403` for another); answers the configuration its statistics now use.
        func workoutPut(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.writing(.workouts), .writing(.quantity(quantity.quantityType)))
            let w = try await workout(context, token)
            let change = try await Self.change(request)
            let now = try await ZoneSettingsChanges.apply(
                change, to: quantity, ofWorkout: w, as: token.source, in: store)
            guard let now else { return Response(status: .noContent) }
            return JSONBody.response(ZoneConfigurationJSON(now))
        }

        /// `DELETE /v1/workouts/{id}/zones/{quantity}`: removes what is saved with the workout for the quantity;
        /// `204`.
        func workoutDelete(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let quantity = try Self.quantity(context)
            let token = try context.require(.writing(.workouts), .writing(.quantity(quantity.quantityType)))
            let w = try await workout(context, token)
            _ = try await ZoneSettingsChanges.clear(quantity, ofWorkout: w, as: token.source, in: store)
            return Response(status: .noContent)
        }

        static func quantity(_ context: RouteKitRequestContext) throws(Problem) -> ZoneConfiguration.Quantity {
            let text = context.parameters.get("quantity") ?? ""
            guard let q = ZoneConfiguration.Quantity(rawValue: text) else {
                throw Problem.notFound("no zones of '\(text)': heartRate or power")
            }
            return q
        }
    }
#endif
