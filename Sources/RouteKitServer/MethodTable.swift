#if Server
    import HTTPTypes
    import Hummingbird
    import RouteKit

    /// The paths the server serves and the methods each takes, recorded as the routes are added, so that a request
    /// whose path is served but not with its method gets `405 Method Not Allowed` with an `Allow` header, not `404`.
    /// Every `GET` path takes `HEAD` too (``RecordingRouter/get(_:use:)``).
    final class MethodTable: Sendable {
        private let routes = Locked<[(segments: [Substring], methods: [HTTPRequest.Method])]>([])

        func add(_ method: HTTPRequest.Method, _ path: String) {
            let segments = path.split(separator: "/")
            routes.withLock { routes in
                if let i = routes.firstIndex(where: { $0.segments == segments }) {
                    routes[i].methods.append(method)
                } else {
                    routes.append((segments, [method]))
                }
            }
        }

        /// Whether `path` is served, but not with `method`.
        func refuses(_ method: HTTPRequest.Method, path: String) -> Bool {
            let allowed = methods(for: path)
            return !allowed.isEmpty && !allowed.contains(method)
        }

        /// The methods `path` is served with; empty when no route has its shape (`:name` matches any segment).
        func methods(for path: String) -> [HTTPRequest.Method] {
            let parts = path.split(separator: "/")
            return routes.withLock { routes in
                routes.first { route in
                    route.segments.count == parts.count
                        && zip(route.segments, parts).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
                }?.methods ?? []
            }
        }
    }

    /// A router whose routes are also recorded in a ``MethodTable``.
    struct RecordingRouter {
        let router: Router<RouteKitRequestContext>
        let table: MethodTable

        func on(
            _ method: HTTPRequest.Method, _ path: String,
            use handler: @Sendable @escaping (Request, RouteKitRequestContext) async throws -> some ResponseGenerator
        ) {
            router.on(RouterPath(path), method: method, use: handler)
            table.add(method, path)
        }

        /// Adds `GET path`, and `HEAD path` answered as the `GET` is without its body (RFC 9110 §9.3.2).
        func get(
            _ path: String,
            use handler: @Sendable @escaping (Request, RouteKitRequestContext) async throws -> some ResponseGenerator
        ) {
            on(.get, path, use: handler)
            on(.head, path) { request, context -> Response in
                let response = try await handler(request, context).response(from: request, context: context)
                return Self.withoutBody(response)
            }
        }

        /// `response`'s status and headers without its body. A body of known length keeps its `Content-Length`; a
        /// streamed one (NDJSON, an event stream) has none, as its `GET` has none, and is never started.
        static func withoutBody(_ response: Response) -> Response {
            let length = response.body.contentLength
            var head = Response(status: response.status, headers: response.headers)
            if let length {
                head.headers[.contentLength] = String(length)
            } else {
                head.headers[.contentLength] = nil
            }
            return head
        }

        func post(
            _ path: String,
            use handler: @Sendable @escaping (Request, RouteKitRequestContext) async throws -> some ResponseGenerator
        ) { on(.post, path, use: handler) }

        func put(
            _ path: String,
            use handler: @Sendable @escaping (Request, RouteKitRequestContext) async throws -> some ResponseGenerator
        ) { on(.put, path, use: handler) }

        func delete(
            _ path: String,
            use handler: @Sendable @escaping (Request, RouteKitRequestContext) async throws -> some ResponseGenerator
        ) { on(.delete, path, use: handler) }
    }
#endif
