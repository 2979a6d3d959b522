#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit

    /// An RFC 9457 problem: every error the server answers, as `application/problem+json` with a stable `type`
    /// (`urn:routekit:problem:<name>`). Its text comes from `RouteKitError.message`, which never holds
    /// coordinates, and never carries a token.
    package struct Problem: Error, HTTPResponseError, Sendable {
        /// The status.
        package var status: HTTPResponse.Status
        /// The short name in the `type` URI (`anchor-expired`).
        package var type: String
        /// The same for every problem of a type.
        package var title: String
        /// This occurrence.
        package var detail: String
        /// Extra members (`line`, `column`, `results`, …), as JSON values.
        package var extra: [String: JSONValue] = [:]
        /// Extra headers (`Retry-After`, `WWW-Authenticate`).
        package var headers: HTTPFields = [:]

        /// The prefix of every `type`.
        package static let typePrefix = "urn:routekit:problem:"

        /// Creates a problem.
        package init(
            status: HTTPResponse.Status, type: String, title: String, detail: String,
            extra: [String: JSONValue] = [:], headers: HTTPFields = [:]
        ) {
            self.status = status
            self.type = type
            self.title = title
            self.detail = detail
            self.extra = extra
            self.headers = headers
        }

        /// The problem for a store or input error: its status and type by code, and where in the input.
        package init(_ error: RouteKitError) {
            let (status, type, title) = Self.mapping(error.code)
            self.init(status: status, type: type, title: title, detail: error.message)
            if let line = error.line { extra["line"] = .number(Double(line)) }
            if let column = error.column { extra["column"] = .number(Double(column)) }
            if let offset = error.byteOffset { extra["byteOffset"] = .number(Double(offset)) }
            if let index = error.index { extra["index"] = .number(Double(index)) }
            if let file = error.file { extra["file"] = .string(file) }
            if error.code.isAnchorError {
                extra["advice"] = .string("start again without an anchor (every current route, then changes)")
            }
            if error.code == .unavailable { headers[.retryAfter] = "2" }
            if error.code == .storage || error.code == .storageFull { headers[.retryAfter] = "30" }
        }

        /// Status, type and title for each ``RouteKitError/Code``.
        static func mapping(_ code: RouteKitError.Code) -> (HTTPResponse.Status, String, String) {
            switch code {
            case .anchorMalformed: (.badRequest, "anchor-malformed", "The anchor cannot be read")
            case .anchorForeign: (.conflict, "anchor-foreign", "The anchor belongs to another store or history")
            case .anchorAhead: (.conflict, "anchor-ahead", "The anchor is ahead of the store")
            case .anchorExpired: (.gone, "anchor-expired", "The anchor is older than the kept history")
            case .invalidArgument: (.badRequest, "invalid-argument", "A parameter is not valid")
            case .notFound: (.notFound, "not-found", "No such object")
            case .notOwner: (.forbidden, "foreign-source", "The object belongs to another source")
            case .builderState: (.conflict, "builder-state", "The route builder cannot do that now")
            case .batchGap: (.conflict, "builder-gap", "The batch does not follow what is held")
            case .unavailable: (.serviceUnavailable, "store-unavailable", "The store cannot be reached")
            case .missingSyncVersion: (.unprocessableContent, "missing-sync-version", "A sync version is missing")
            case .invalidLocation: (.unprocessableContent, "invalid-location", "A location is not valid")
            case .invalidValue: (.unprocessableContent, "invalid-value", "A value is not valid")
            case .malformedXML: (.unprocessableContent, "malformed-xml", "The XML is not well-formed")
            case .invalidGPX: (.unprocessableContent, "invalid-gpx", "The GPX is not valid")
            case .invalidFIT: (.unprocessableContent, "invalid-fit", "The FIT data is not valid")
            case .invalidTCX: (.unprocessableContent, "invalid-tcx", "The TCX is not valid")
            case .invalidGeoJSON: (.unprocessableContent, "invalid-geojson", "The GeoJSON is not valid")
            case .unsupportedEncoding:
                (.unprocessableContent, "unsupported-encoding", "The text encoding is not supported")
            case .unsupportedFormat:
                (.unprocessableContent, "unsupported-format", "The file is none of the formats RouteKit reads")
            case .compression: (.unprocessableContent, "compression", "The compressed data cannot be read")
            case .incompatibleStore: (.internalServerError, "incompatible-store", "The store cannot be used")
            case .storageFull: (.insufficientStorage, "insufficient-storage", "The server's storage is full")
            case .storage: (.serviceUnavailable, "store-failed", "The store failed")
            case .io, .geos: (.internalServerError, "internal", "The server failed")
            default: (.internalServerError, "internal", "The server failed")
            }
        }

        static let unauthenticated = Problem(
            status: .unauthorized, type: "unauthenticated", title: "No valid API token",
            detail: "send an API token as 'Authorization: Bearer TOKEN' (make one with `routekit tokens create`)",
            headers: [.wwwAuthenticate: "Bearer realm=\"routekit\""])

        static func notFound(_ what: String) -> Problem {
            Problem(status: .notFound, type: "not-found", title: "No such object", detail: what)
        }

        static func badRequest(_ detail: String) -> Problem {
            Problem(status: .badRequest, type: "invalid-argument", title: "A parameter is not valid", detail: detail)
        }

        /// The JSON members: `type`, `title`, `status`, `detail` and the extra ones.
        func members() -> [String: JSONValue] {
            var members: [String: JSONValue] = extra
            members["type"] = .string(Self.typePrefix + type)
            members["title"] = .string(title)
            members["status"] = .number(Double(status.code))
            members["detail"] = .string(detail)
            return members
        }

        /// The JSON body.
        func body() -> [UInt8] { JSONValue.object(members()).encoded() }

        package func response(from request: Request, context: some RequestContext) throws -> Response {
            var fields = headers
            fields[.contentType] = "application/problem+json"
            fields[.cacheControl] = "no-store"
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body())))
        }
    }

    /// A JSON value, for problem members and small bodies.
    package enum JSONValue: Sendable, Hashable, Encodable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .number(let n):
                if n == n.rounded(), abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
            case .string(let s): try c.encode(s)
            case .array(let a): try c.encode(a)
            case .object(let o): try c.encode(o)
            }
        }

        /// Sorted-key JSON bytes.
        func encoded() -> [UInt8] { JSONBody.bytes(self) }
    }

    /// JSON bodies: sorted keys, slashes unescaped (as the CLI prints).
    enum JSONBody {
        static func bytes(_ value: some Encodable) -> [UInt8] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? Array(encoder.encode(value))) ?? Array("null".utf8)
        }

        /// A `200` JSON response of bytes already written, that must not be cached.
        static func raw(_ bytes: [UInt8], headers extra: HTTPFields = [:]) -> Response {
            var fields = extra
            fields[.contentType] = "application/json"
            fields[.cacheControl] = "no-store"
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }

        /// A `200` (or `status`) JSON response that must not be cached.
        static func response(
            _ value: some Encodable, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]
        ) -> Response {
            var fields = extra
            fields[.contentType] = "application/json"
            if fields[.cacheControl] == nil { fields[.cacheControl] = "no-store" }
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes(value))))
        }
    }

    extension HTTPResponse.Status {
        /// `507 Insufficient Storage` (RFC 4918): the server's storage is full.
        static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
    }
#endif
