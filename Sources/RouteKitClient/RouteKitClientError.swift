#if Client
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    /// Why a call of ``RouteKitClient/RouteKitClient`` (or of a ``RouteUploader`` or a ``ChangeFeed``) failed: the
    /// server's problem, a server that cannot be reached, an answer the API does not document, a file that cannot be
    /// read.
    ///
    /// Its ``description`` names the operation and the problem's type and detail (the server's details never hold
    /// coordinates); it never holds the API token.
    public struct RouteKitClientError: Error, Sendable, CustomStringConvertible {
        /// The kind of failure: match on it (`error.code == .problem`), new kinds may be added.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// The kind's name.
            public let name: String

            /// The server answered with an error status and an RFC 9457 problem: see ``RouteKitClientError/problem``
            /// and ``RouteKitClientError/status``.
            public static let problem = Code(name: "problem")
            /// The server could not be reached, or the connection broke before the answer came.
            public static let transport = Code(name: "transport")
            /// The server answered something the API does not document (a status, a body that does not decode).
            public static let unexpectedResponse = Code(name: "unexpected-response")
            /// A file to upload cannot be read.
            public static let file = Code(name: "file")
            /// A value the client refuses before sending it (a time that is no date, a batch size under 1).
            public static let invalidArgument = Code(name: "invalid-argument")
            /// The task was cancelled.
            public static let cancelled = Code(name: "cancelled")

            /// The kind's name.
            public var description: String { name }
        }

        /// The kind of failure.
        public var code: Code
        /// What failed, and why.
        public var message: String
        /// The problem the server answered (``Code/problem``), else `nil`.
        public var problem: ClientProblem?
        /// The HTTP status the server answered, when it answered.
        public var status: Int?
        /// How long the server asked to wait before trying again (`Retry-After`, seconds), when it did.
        public var retryAfter: Double?

        /// An error of kind `code`.
        public init(
            _ code: Code, _ message: String, problem: ClientProblem? = nil, status: Int? = nil,
            retryAfter: Double? = nil
        ) {
            self.code = code
            self.message = message
            self.problem = problem
            self.status = status
            self.retryAfter = retryAfter
        }

        /// `CODE: MESSAGE`.
        public var description: String { "\(code): \(message)" }

        /// Whether the same request may succeed later: the server could not be reached, timed out (`408`), was busy
        /// (`429`, `503`) or failed (`5xx`). A problem that is the request's (`4xx`) is not retried, nor a person's
        /// full storage quota (`507 storage-quota`: waiting frees nothing).
        public var isTransient: Bool {
            if code == .transport { return true }
            guard code == .problem || code == .unexpectedResponse, let status else { return false }
            if problem?.name == "storage-quota" { return false }
            return status == 408 || status == 429 || status >= 500
        }

        /// The error for what a generated operation, a transport or the middleware threw.
        static func wrapping(_ error: any Error, operation: String) -> RouteKitClientError {
            if let error = error as? RouteKitClientError { return error }
            if error is CancellationError { return RouteKitClientError(.cancelled, "\(operation): cancelled") }
            if error is EncodingError {
                return RouteKitClientError(.invalidArgument, "\(operation): \(Self.summary(error))")
            }
            if error is DecodingError {
                return RouteKitClientError(.unexpectedResponse, "\(operation): \(Self.summary(error))")
            }
            if let error = error as? ClientError {
                let inner = error.underlyingError
                if inner is RouteKitClientError || inner is CancellationError || inner is EncodingError
                    || inner is DecodingError
                {
                    return wrapping(inner, operation: operation)
                }
                // Failed after an answer came: the answer was not what the API documents. Without one: the request
                // did not get through.
                guard let response = error.response else { return transport(inner, operation: operation) }
                return RouteKitClientError(
                    .unexpectedResponse, "\(operation): \(Self.summary(inner))", status: response.status.code)
            }
            return RouteKitClientError(.unexpectedResponse, "\(operation): \(Self.summary(error))")
        }

        /// The error for what a transport threw: the request did not get through (or the task was cancelled).
        static func transport(_ error: any Error, operation: String) -> RouteKitClientError {
            if error is CancellationError { return RouteKitClientError(.cancelled, "\(operation): cancelled") }
            return RouteKitClientError(.transport, "\(operation): \(Self.summary(error))")
        }

        /// A short text for an underlying error: a coding error's kind and coding path (never the values it read or
        /// was given: they may be coordinates), else the error's own description.
        static func summary(_ error: any Error) -> String {
            if let encoding = error as? EncodingError, case .invalidValue(_, let context) = encoding {
                return "a value cannot be sent: it is not valid at '\(Self.path(context.codingPath))'"
            }
            guard let decoding = error as? DecodingError else { return String(describing: error) }
            guard let found = Self.parts(of: decoding) else { return "the answer cannot be decoded" }
            return "the answer cannot be decoded: \(found.what) at '\(Self.path(found.context.codingPath))'"
        }

        /// A coding path as `a.b.3.c`.
        static func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }

        /// What a decoding error found, and where.
        static func parts(of error: DecodingError) -> (what: String, context: DecodingError.Context)? {
            if case .typeMismatch(_, let context) = error { return ("a value of another type", context) }
            if case .valueNotFound(_, let context) = error { return ("a missing value", context) }
            if case .keyNotFound(let key, let context) = error { return ("no '\(key.stringValue)'", context) }
            if case .dataCorrupted(let context) = error { return ("data that cannot be read", context) }
            return nil
        }

        /// The error for an answer of status 400 or more (or, for a raw request, any but 200): its problem when the
        /// body is one (at most 1 MiB is read), with `Retry-After`.
        static func answered(_ response: HTTPResponse, body: HTTPBody?, operation: String) async
            -> RouteKitClientError
        {
            let status = response.status.code
            let retryAfter = response.headerFields[.retryAfter].flatMap { Double($0) }
            var problem: ClientProblem?
            if let body, let bytes = try? await Data(collecting: body, upTo: 1 << 20) {
                problem = try? JSONDecoder().decode(ClientProblem.self, from: bytes)
            }
            guard let problem else {
                return RouteKitClientError(
                    status >= 400 ? .problem : .unexpectedResponse,
                    "\(operation): HTTP \(status) without a problem", status: status, retryAfter: retryAfter)
            }
            return RouteKitClientError(
                .problem, "\(operation): \(status) \(problem.name): \(problem.detail)", problem: problem,
                status: status, retryAfter: retryAfter)
        }
    }
#endif
