#if Client
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    #if os(Linux)
        import OpenAPIAsyncHTTPClient
    #endif
    #if canImport(Darwin)
        import OpenAPIURLSession
    #endif

    /// RouteKit's HTTP API (`routekit serve`) for an app: uploads, the route builder, reads, and the change feed.
    ///
    /// Every call sends the API token as `Authorization: Bearer …` and throws a ``RouteKitClientError``: a problem
    /// the server answered (``RouteKitClientError/problem``, with its `urn:routekit:problem:NAME` type), a server
    /// that cannot be reached, or an answer the API does not document. The token never appears in an error or a
    /// description.
    ///
    /// ```
    /// let client = RouteKitClient(baseURL: serverURL, token: token)
    /// let results = try await client.upload(file: gpxFile)
    /// for try await changes in client.changes(since: savedAnchor) { … }
    /// ```
    ///
    /// The JSON operations go through a client generated from the server's OpenAPI document (swift-openapi-generator);
    /// the event stream and the NDJSON locations are read through the same transport, as they arrive.
    public struct RouteKitClient: Sendable {
        /// The server's address, such as `http://127.0.0.1:8080` (paths such as `/v1/uploads` are added to it).
        public let baseURL: URL
        /// `Bearer TOKEN`.
        let authorization: String
        /// What sends the requests.
        let transport: any ClientTransport
        /// The generated client of the JSON operations.
        let api: Client

        #if os(Linux) || canImport(Darwin)
            /// A client of the server at `baseURL` with the API token `token` (`routekit tokens create`), sending
            /// through `transport`: by default AsyncHTTPClient's shared client on Linux, URLSession's shared
            /// session on Apple platforms.
            public init(
                baseURL: URL, token: String, transport: any ClientTransport = RouteKitClient.platformTransport
            ) {
                self.init(baseURL: baseURL, token: token, using: transport)
            }
        #else
            /// A client of the server at `baseURL` with the API token `token` (`routekit tokens create`), sending
            /// through `transport`.
            public init(baseURL: URL, token: String, transport: any ClientTransport) {
                self.init(baseURL: baseURL, token: token, using: transport)
            }
        #endif

        init(baseURL: URL, token: String, using transport: any ClientTransport) {
            self.baseURL = baseURL
            authorization = "Bearer " + token
            self.transport = transport
            let middleware = RouteKitMiddleware(authorization: authorization)
            api = Client(serverURL: baseURL, transport: transport, middlewares: [middleware])
        }

        #if os(Linux)
            /// The transport of this platform: AsyncHTTPClient's, over its shared `HTTPClient`.
            public static var platformTransport: any ClientTransport { AsyncHTTPClientTransport() }
        #elseif canImport(Darwin)
            /// The transport of this platform: URLSession's, over the shared session.
            public static var platformTransport: any ClientTransport { URLSessionTransport() }
        #endif

        /// Runs a generated operation, its errors as ``RouteKitClientError``s.
        func call<T: Sendable>(_ operation: String, _ body: @Sendable () async throws -> T)
            async throws(RouteKitClientError) -> T
        {
            do {
                return try await body()
            } catch {
                throw RouteKitClientError.wrapping(error, operation: operation)
            }
        }

        /// Sends a request the generated client does not make (an event stream, NDJSON) through the transport, with
        /// the token, and returns the response and its body when the status is `200`; any other status is thrown as
        /// the problem the server answered.
        func send(
            _ operation: String, path: String, query: [(String, String)] = [], headers: HTTPFields = [:]
        ) async throws(RouteKitClientError) -> (HTTPResponse, HTTPBody?) {
            var fields = headers
            fields[.authorization] = authorization
            let request = HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: path + Self.queryString(query), headerFields: fields)
            let answer: (HTTPResponse, HTTPBody?)
            do {
                answer = try await transport.send(request, body: nil, baseURL: baseURL, operationID: operation)
            } catch {
                throw RouteKitClientError.transport(error, operation: operation)
            }
            guard answer.0.status.code == 200 else {
                let error = await RouteKitClientError.answered(answer.0, body: answer.1, operation: operation)
                throw error
            }
            return answer
        }

        /// `?name=value&…`, each value percent-encoded (nothing when `query` is empty).
        static func queryString(_ query: [(String, String)]) -> String {
            guard !query.isEmpty else { return "" }
            var unreserved = CharacterSet.alphanumerics
            unreserved.insert(charactersIn: "-._~")
            let pairs = query.map { name, value in
                name + "=" + (value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
            }
            return "?" + pairs.joined(separator: "&")
        }
    }

    /// What every generated operation goes through: the token in, and any status of 400 or more out as the problem
    /// the server answered (before the generated code sees the response).
    struct RouteKitMiddleware: ClientMiddleware {
        let authorization: String

        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            var request = request
            request.headerFields[.authorization] = authorization
            let (response, responseBody) = try await next(request, body, baseURL)
            guard response.status.code >= 400 else { return (response, responseBody) }
            let error = await RouteKitClientError.answered(response, body: responseBody, operation: operationID)
            throw error
        }
    }
#endif
