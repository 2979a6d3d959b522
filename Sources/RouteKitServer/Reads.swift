#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitGPX

    /// The read routes: workouts, routes, one route's locations (NDJSON, streamed) and its export (GPX, GeoJSON,
    /// CSV). A route version's content never changes, so its answers carry an `ETag` and
    /// `Cache-Control: private, immutable`, and revalidation gets `304`. An object of a source the token may not
    /// read is answered `404`, as if it did not exist. Workouts need `read:workouts` (or `read`), routes
    /// `read:routes`; what carries quantities (an export, a picture, a profile, statistics) leaves out the types the
    /// token may not read (the store it is given is narrowed to them), and its `ETag` says which it holds.
    struct ReadRoutes: Sendable {
        let stores: PersonStores
        let configuration: ServerConfiguration

        /// One page of workouts, oldest saved first (`order=newest`: newest first). `next` is the cursor of the
        /// page after (`after=`), `null` on the last page; `anchor` is the change feed's anchor read before the
        /// list, so that a client following the feed from it misses no change made after the list. A page is one
        /// keyset query of the store (a few when the token may read only some sources) and one routes query per
        /// workout of the page; only a cursor whose workout has gone since costs a listing of the whole store.
        func workouts(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.reading(.workouts))
            let q = request.uri.queryParameters
            let limit = try Query.int(q.get("limit"), "limit", default: 500, 1...configuration.maxLimit)
            let source = try Query.source(q.get("source"))
            let after = try WorkoutCursor(q.get("after"))
            let order = q.get("order") ?? "oldest"
            guard order == "oldest" || order == "newest" else {
                throw Problem.badRequest("'order' must be oldest or newest, not '\(order)'")
            }
            let newest = order == "newest"
            let anchor = try await store.currentAnchor()
            var (page, more) = try await readablePage(
                in: store, after: after?.id, source: source, newest: newest, limit: limit, token: token)
            let start = after?.position ?? 0
            if let after, page.isEmpty, try await store.workout(id: after.id) == nil {
                // The cursor's workout was deleted or replaced since: continue at the same position.
                var all = try await store.workouts(matching: WorkoutFilter(source: source, newestFirst: newest))
                all.removeAll { !token.mayRead($0.source) }
                let from = min(after.position, all.count)
                page = Array(all[from..<min(all.count, from + limit)])
                more = from + page.count < all.count
            }
            var items: [(workout: Workout, routes: [RouteSample])] = []
            items.reserveCapacity(page.count)
            for w in page { items.append((w, try await store.routes(matching: RouteFilter(workout: w.id)))) }
            let out = try await WorkoutJSON.list(items, in: store)
            struct Body: Encodable {
                var workouts: [WorkoutJSON]
                @ExplicitNull var next: String?
                var anchor: String

                enum CodingKeys: String, CodingKey { case workouts, next, anchor }
            }
            let next = more ? page.last.map { WorkoutCursor(position: start + page.count, id: $0.id).text } : nil
            return JSONBody.response(
                Body(workouts: out, next: next, anchor: TokenAnchors.text(anchor, for: token)))
        }

        /// Up to `limit` workouts after `after` that `token` may read, and whether more follow: keyset queries of
        /// the store, more than one only when the token's sources leave some out.
        func readablePage(
            in store: any RouteStore, after: UUID?, source: Source?, newest: Bool, limit: Int, token: APIToken
        )
            async throws(RouteKitError) -> (page: [Workout], more: Bool)
        {
            let batch = token.readableSources == nil ? limit + 1 : max(limit + 1, 1000)
            var out: [Workout] = []
            var cursor = after
            while true {
                let rows = try await store.workouts(
                    matching: WorkoutFilter(source: source, limit: batch, newestFirst: newest, after: cursor))
                out += rows.filter { token.mayRead($0.source) }
                if out.count > limit { return (Array(out.prefix(limit)), true) }
                guard rows.count == batch, let last = rows.last else { return (out, false) }
                cursor = last.id
            }
        }

        func workout(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let w = try await readableWorkout(context)
            let routes = try await store.routes(matching: RouteFilter(workout: w.id))
            struct Body: Encodable {
                var workout: WorkoutJSON
                var routes: [RouteJSON]
            }
            let workout = try await WorkoutJSON(w, routes: routes, in: store)
            // The routes themselves are for `read:routes` (the workout's figures and counts are the workout's).
            let readsRoutes = try context.requireToken().grant.mayRead(.routes)
            return JSONBody.response(Body(workout: workout, routes: readsRoutes ? routes.map(RouteJSON.init) : []))
        }

        /// Current routes a page at a time, as ``workouts(_:context:)`` pages workouts: keyset queries of the store,
        /// `next` the cursor of the following page, `anchor` the feed's anchor read before the list.
        func routes(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let token = try context.require(.reading(.routes))
            let q = request.uri.queryParameters
            let limit = try Query.int(q.get("limit"), "limit", default: 500, 1...configuration.maxLimit)
            let after = try WorkoutCursor(q.get("after"))
            let order = q.get("order") ?? "oldest"
            guard order == "oldest" || order == "newest" else {
                throw Problem.badRequest("'order' must be oldest or newest, not '\(order)'")
            }
            var filter = RouteFilter(
                workout: try Query.uuid(q.get("workout"), "workout"), source: try Query.source(q.get("source")),
                syncIdentifier: q.get("syncIdentifier"), newestFirst: order == "newest")
            let anchor = try await store.currentAnchor()
            var (page, more) = try await readableRoutePage(
                in: store, after: after?.id, filter: filter, limit: limit, token: token)
            let start = after?.position ?? 0
            if let after, page.isEmpty, try await store.route(id: after.id) == nil {
                // The cursor's route was deleted since: continue at the same position.
                filter.after = nil
                filter.limit = nil
                let all = try await store.routes(matching: filter).filter { token.mayRead($0.source) }
                let from = min(after.position, all.count)
                page = Array(all[from..<min(all.count, from + limit)])
                more = from + page.count < all.count
            }
            struct Body: Encodable {
                var routes: [RouteJSON]
                @ExplicitNull var next: String?
                var anchor: String
            }
            let next = more ? page.last.map { WorkoutCursor(position: start + page.count, id: $0.id).text } : nil
            return JSONBody.response(
                Body(routes: page.map(RouteJSON.init), next: next, anchor: TokenAnchors.text(anchor, for: token)))
        }

        /// Up to `limit` routes of `filter` after `after` that `token` may read, and whether more follow.
        func readableRoutePage(in store: any RouteStore, after: UUID?, filter: RouteFilter, limit: Int, token: APIToken)
            async throws(RouteKitError) -> (page: [RouteSample], more: Bool)
        {
            var filter = filter
            filter.limit = token.readableSources == nil ? limit + 1 : max(limit + 1, 1000)
            filter.after = after
            var out: [RouteSample] = []
            while true {
                let rows = try await store.routes(matching: filter)
                out += rows.filter { token.mayRead($0.source) }
                if out.count > limit { return (Array(out.prefix(limit)), true) }
                guard rows.count == filter.limit, let last = rows.last else { return (out, false) }
                filter.after = last.id
            }
        }

        /// The route when it exists and the token may read it, else `404`; `403` without `read:routes` (or `read`).
        func readableRoute(_ context: RouteKitRequestContext) async throws -> RouteSample {
            let store = try stores.store(context)
            let token = try context.require(.reading(.routes))
            let id = try Self.id(context)
            guard let route = try await store.route(id: id), token.mayRead(route.source) else {
                throw Problem.notFound("route \(id) is not in the store")
            }
            return route
        }

        func route(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let route = try await readableRoute(context)
            let tag = Self.etag(route, "json")
            if Self.matches(request, tag) { return Self.notModified(tag) }
            var response = JSONBody.response(RouteJSON(route), headers: Self.immutable(tag))
            response.headers[.cacheControl] = "private, immutable, max-age=31536000"
            return response
        }

        /// One JSON object per location, one per line, streamed batch by batch. With `max=N`, at most N of them,
        /// evenly spread (every k-th, with the first and the last): a map of a million-point route needs a few
        /// thousand.
        func locations(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let route = try await readableRoute(context)
            let max = try Query.int(request.uri.queryParameters.get("max"), "max", default: .max, 2...Int.max)
            let count = route.locationCount
            let step = count > max ? (count - 1 + max - 2) / (max - 1) : 1
            let tag = Self.etag(route, step > 1 ? "ndjson-max\(max)" : "ndjson")
            if Self.matches(request, tag) { return Self.notModified(tag) }
            var headers = Self.immutable(tag)
            headers[.contentType] = "application/x-ndjson"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    var index = 0
                    var skipped: Location?  // the last location not written, written at the end
                    for try await batch in store.locations(of: route.id, batchSize: 4096) {
                        var buffer = ByteBuffer()
                        buffer.reserveCapacity(batch.locations.count / step * 96 + 96)
                        for l in batch.locations {
                            if index % step == 0 {
                                buffer.writeString(Self.line(l))
                                skipped = nil
                            } else {
                                skipped = l
                            }
                            index += 1
                        }
                        if buffer.readableBytes > 0 { try await writer.write(buffer) }
                    }
                    if let last = skipped { try await writer.write(ByteBuffer(string: Self.line(last))) }
                    try await writer.finish(nil)
                })
        }

        /// One NDJSON line: the location as every door writes it (``LocationWire``).
        static func line(_ l: Location) -> String { LocationWire.json(l) + "\n" }

        /// The route as GPX 1.1 (with its workout's series merged into the points), GeoJSON or CSV. Written to a
        /// spool file first (memory stays at one chunk), then streamed.
        func export(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let route = try await readableRoute(context)
            let text = request.uri.queryParameters.get("format") ?? "gpx"
            guard let format = ExportFormat(rawValue: text) else {
                throw Problem.badRequest("'format' must be gpx, geojson or csv, not '\(text)'")
            }
            // The quantities it holds depend on the token's scopes: so does its tag.
            let grant = try context.requireToken().grant
            let tag = Self.etag(route, format.rawValue + grant.quantityTag)
            if Self.matches(request, tag) { return Self.notModified(tag) }
            let path = (configuration.uploadDirectory as NSString).appendingPathComponent(
                Spool.name(Spool.exportPrefix, suffix: "." + format.rawValue))
            // Written to the file and opened again on the blocking executor: file I/O never holds a cooperative
            // thread.
            let opened = try await BlockingExecutor.shared.withPreference { () async throws -> FileHandle? in
                do {
                    let sink = try OutputSink(path: path)
                    try await StoreExport.write([route], from: store, as: format, to: sink)
                    try sink.close()
                } catch {
                    unlink(path)
                    throw error
                }
                return FileHandle(forReadingAtPath: path)
            }
            guard let handle = opened else {
                unlink(path)
                throw Problem(
                    status: .internalServerError, type: "internal", title: "The server failed",
                    detail: "the export could not be read back")
            }
            unlink(path)  // the open handle keeps the data until it is closed
            var headers = Self.immutable(tag)
            headers[.contentType] = format.contentType
            let name = "route-\(route.id.uuidString.lowercased()).\(format.rawValue)"
            headers[.contentDisposition] = "attachment; filename=\"\(name)\""
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    defer { try? handle.close() }
                    try await BlockingExecutor.shared.withPreference {
                        while let data = try handle.read(upToCount: 256 * 1024), !data.isEmpty {
                            try await writer.write(ByteBuffer(bytes: data))
                        }
                    }
                    try await writer.finish(nil)
                })
        }

        static func id(_ context: RouteKitRequestContext) throws(Problem) -> UUID {
            let text = context.parameters.get("id") ?? ""
            guard let id = UUID(uuidString: text) else { throw Problem.badRequest("'\(text)' is not a uuid") }
            return id
        }

        static func etag(_ route: RouteSample, _ form: String) -> String {
            "\"\(route.id.uuidString.lowercased())-\(form)\""
        }

        static func immutable(_ tag: String) -> HTTPFields {
            [.eTag: tag, .cacheControl: "private, immutable, max-age=31536000"]
        }

        static func matches(_ request: Request, _ tag: String) -> Bool {
            guard let header = request.headers[.ifNoneMatch] else { return false }
            return header == "*"
                || header.split(separator: ",").contains {
                    let t = $0.trimmingCharacters(in: .whitespaces)
                    return t == tag || t == "W/" + tag
                }
        }

        static func notModified(_ tag: String) -> Response {
            Response(status: .notModified, headers: immutable(tag))
        }
    }

    /// Where a page of `GET /v1/workouts` ends: how many workouts came before the next page, and the last one's
    /// uuid (`50.0f1e…`). The next page starts after that workout, or at the same position when it is gone.
    struct WorkoutCursor: Sendable, Equatable {
        var position: Int
        var id: UUID

        init(position: Int, id: UUID) {
            self.position = position
            self.id = id
        }

        /// The cursor in `text`; `nil` for none; a `400` for text that is not one.
        init?(_ text: String?) throws(Problem) {
            guard let text else { return nil }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let position = Int(parts[0]), position >= 0, parts[0].count <= 18,
                let id = UUID(uuidString: String(parts[1]))
            else {
                throw Problem.badRequest("'after' must be a cursor from a page's 'next', not '\(text)'")
            }
            self.init(position: position, id: id)
        }

        var text: String { "\(position).\(id.uuidString.lowercased())" }
    }
#endif
