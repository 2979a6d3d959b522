#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX

    /// Writes to stored objects (`write` scope, or the object type's: `write:workouts` to delete a workout with
    /// what it has, `write:routes` to delete a route, `write:effort` for effort scores), as the token's source:
    /// deleting a workout or a route, relating an effort score to a workout and unrelating it. The decisions are the
    /// application's (``StoreDeletion``, ``WorkoutEffort``), as `routekit delete` and `routekit effort` make them;
    /// these routes only translate.
    ///
    /// Only the source that wrote an object may change it: another source's object answers `403`, unless the token
    /// may not read that source, when it answers `404` as if it did not exist (as reads do). A refused request
    /// changes nothing.
    struct WriteRoutes: Sendable {
        let stores: PersonStores
        /// Each person's storage quota: a deletion frees space at once (``StorageQuota/forget(_:)``).
        let quota: StorageQuota?

        /// `DELETE /v1/workouts/ID`: the workout with its routes, series and effort scores; `204`. Each of its
        /// current routes reaches the change feed as deleted.
        func deleteWorkout(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            try await delete(.workout, context: context)
        }

        /// `DELETE /v1/routes/ID`: a current route with every kept version of its sync identity; `204`. It reaches
        /// the change feed as deleted.
        func deleteRoute(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            try await delete(.route, context: context)
        }

        func delete(_ kind: StoreDeletion.Kind, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.writing(kind == .route ? .routes : .workouts))
            let id = try ReadRoutes.id(context)
            _ = try await StoreDeletion.delete(
                id, kind: kind, as: token.source, readableSources: token.readableSources, in: store)
            quota?.forget(store.person)
            return Response(status: .noContent)
        }

        /// The body of `POST /v1/workouts/ID/effort`.
        struct EffortBody: Decodable {
            /// 1 to 10.
            var score: Double
            /// An estimate rather than a person's own rating (`false` by default: manual, as `routekit effort --set`).
            var estimated: Bool?
        }

        /// The longest body `POST /v1/workouts/ID/effort` reads.
        static let maxEffortBodyBytes = 16 * 1024

        /// `POST /v1/workouts/ID/effort` with `{"score": 7, "estimated": false}`: relates the score as the token's
        /// source and answers `201` with it, in the shape of `GET /v1/workouts/ID/effort`'s scores.
        func relateEffort(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.writing(.effort))
            let id = try ReadRoutes.id(context)
            let bytes = try await request.body.collect(upTo: Self.maxEffortBodyBytes)
            let body = try Self.effortBody(bytes)
            let (score, scores) = try await WorkoutEffort.relate(
                score: body.score, manual: !(body.estimated ?? false), toWorkout: id, as: token.source,
                readableSources: token.readableSources, in: store)
            return JSONBody.response(
                EffortScoreJSON(score, effective: scores.isEffective(score)), status: .created)
        }

        /// The effort body in `bytes`, or a `400` naming the field at fault.
        static func effortBody(_ bytes: ByteBuffer) throws(Problem) -> EffortBody {
            let body: EffortBody
            do {
                body = try JSONDecoder().decode(EffortBody.self, from: Data(bytes.readableBytesView))
            } catch {
                switch field(of: error) {
                case "score"?: throw Problem.badRequest("'score' is required, a number from 1 to 10")
                case "estimated"?: throw Problem.badRequest("'estimated' must be true or false")
                default:
                    throw Problem.badRequest(
                        "the body is not a JSON object like {\"score\": 7, \"estimated\": false} ('score' from 1 to 10)"
                    )
                }
            }
            guard body.score.isFinite, (1...10).contains(body.score) else {
                throw Problem.badRequest("'score' must be from 1 to 10, not \(decimalText(body.score))")
            }
            return body
        }

        /// The key a decoding error is about, when it names one.
        static func field(of error: any Error) -> String? {
            switch error as? DecodingError {
            case .keyNotFound(let key, _)?: return key.stringValue
            case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
                return context.codingPath.last?.stringValue
            default: return nil
            }
        }

        /// `DELETE /v1/workouts/ID/effort/SCORE`: unrelates a score the token's source related; `204`.
        func unrelateEffort(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.writing(.effort))
            let id = try ReadRoutes.id(context)
            let text = context.parameters.get("scoreID") ?? ""
            guard let scoreID = UUID(uuidString: text) else {
                throw Problem.badRequest("'\(text)' is not a uuid (an effort score's)")
            }
            try await WorkoutEffort.unrelate(
                scoreID, fromWorkout: id, as: token.source, readableSources: token.readableSources, in: store)
            return Response(status: .noContent)
        }
    }
#endif
