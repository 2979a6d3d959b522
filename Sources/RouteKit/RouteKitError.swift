/// The error every RouteKit API throws.
///
/// A `RouteKitError` is a struct with an extensible ``Code`` rather than an enum, so new codes can be
/// added without breaking callers that switch on them. Match a code with `catch let error as
/// RouteKitError where error.code == .invalidLocation`, or with the pattern `catch RouteKitError.Code.notOwner`.
///
/// Locations are personal data: ``description`` names the problem and where it is (file, line, column,
/// batch index) but never prints coordinates. Those appear only in ``debugDescription``
/// (`String(reflecting: error)`).
public struct RouteKitError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidLocation, missingSyncVersion, notOwner, invalidArgument
            case malformedXML, invalidGPX, invalidValue, unsupportedEncoding, compression, io
            case geos, invalidFIT, invalidTCX, invalidGeoJSON, unsupportedFormat
            case notFound, storage, storageFull, incompatibleStore, builderState, batchGap, unavailable
            case anchorMalformed, anchorForeign, anchorExpired, anchorAhead
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A location broke the model's rules (latitude, longitude or a number out of range, not finite).
        public static let invalidLocation = Code(.invalidLocation)
        /// A sync identifier was given without a sync version.
        public static let missingSyncVersion = Code(.missingSyncVersion)
        /// A source tried to delete or replace an object another source owns.
        public static let notOwner = Code(.notOwner)
        /// An argument to an API call was out of its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// The input is not well-formed XML (including namespace well-formedness).
        public static let malformedXML = Code(.malformedXML)
        /// The input is well-formed XML but not GPX (wrong root, GPX elements in the wrong place).
        public static let invalidGPX = Code(.invalidGPX)
        /// A value in a GPX or GeoJSON file could not be read (a number, a time, a coordinate out of range).
        public static let invalidValue = Code(.invalidValue)
        /// The input uses a character encoding RouteKit does not read.
        public static let unsupportedEncoding = Code(.unsupportedEncoding)
        /// A compressed input could not be decompressed.
        public static let compression = Code(.compression)
        /// Reading or writing a file failed.
        public static let io = Code(.io)
        /// The input is not a FIT file, or its FIT structure cannot be read (``RouteKitError/byteOffset`` says
        /// where).
        public static let invalidFIT = Code(.invalidFIT)
        /// The input is well-formed XML but not a TCX file (its root is not `TrainingCenterDatabase`).
        public static let invalidTCX = Code(.invalidTCX)
        /// The input is not GeoJSON RouteKit reads: not JSON, JSON that is not a `FeatureCollection`, `Feature` or
        /// geometry, a geometry other than a point or a line, `coordTimes` that do not match the coordinates, or a
        /// document larger than RouteKit reads whole. The message names the member at fault by its path
        /// (`features[2].geometry.coordinates[0][15]`), ``RouteKitError/line`` and ``RouteKitError/column`` where it
        /// is; a value that cannot be read (a coordinate out of range, a time that is not ISO 8601) is
        /// ``invalidValue`` instead.
        public static let invalidGeoJSON = Code(.invalidGeoJSON)
        /// The input is none of the formats RouteKit reads, and its first bytes say what it is instead (a PDF
        /// document, a picture, a zip archive where a route file was expected), or it is empty; or a zip archive holds
        /// no file RouteKit reads. The message says which: `not a route file: looks like a PDF document`.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The GEOS library reported an error.
        public static let geos = Code(.geos)
        /// The workout, route or builder named does not exist (or is no longer current).
        public static let notFound = Code(.notFound)
        /// The store failed: the database could not be opened, read or written.
        public static let storage = Code(.storage)
        /// The device holding the store (or a server's upload spool) is full or over its quota (`ENOSPC`, `EDQUOT`,
        /// `SQLITE_FULL`, PostgreSQL's `disk_full`). Nothing is wrong with the input: the same request succeeds once
        /// space is freed. Nothing stored before is lost.
        public static let storageFull = Code(.storageFull)
        /// Whether the store (or the device under it) failed, rather than the input or the request: ``storage``,
        /// ``storageFull`` and ``unavailable``.
        package var isStoreFailure: Bool { self == .storage || self == .storageFull || self == .unavailable }
        /// The store's server cannot be reached right now (connection refused or lost, server restarting). Nothing
        /// is wrong with the request: retrying later may succeed. A write that failed this way may or may not have
        /// been committed; every RouteKit write can be retried safely (sync identity makes it idempotent).
        public static let unavailable = Code(.unavailable)
        /// The store was written by a newer RouteKit, or is not a RouteKit store at all.
        public static let incompatibleStore = Code(.incompatibleStore)
        /// A route builder was used in a state that does not allow it (finished, discarded, empty).
        public static let builderState = Code(.builderState)
        /// A batch of a route builder's samples or events does not follow what the builder holds: it starts past the
        /// next index. ``RouteKitError/index`` is the index the next batch must start at (the count held). Nothing
        /// was stored.
        public static let batchGap = Code(.batchGap)
        /// A change-feed anchor is not an anchor this version of RouteKit can read. Start again without one.
        public static let anchorMalformed = Code(.anchorMalformed)
        /// A change-feed anchor comes from another store (or another epoch of this one). Start again without one.
        public static let anchorForeign = Code(.anchorForeign)
        /// A change-feed anchor is older than the deletion history the store keeps. Start again without one.
        public static let anchorExpired = Code(.anchorExpired)
        /// A change-feed anchor is newer than the store, or from a history it no longer has (the store was
        /// restored from an older copy). Start again without one.
        public static let anchorAhead = Code(.anchorAhead)

        /// Whether this is one of the anchor errors, after which a consumer starts again without an anchor.
        public var isAnchorError: Bool {
            self == .anchorMalformed || self == .anchorForeign || self == .anchorExpired || self == .anchorAhead
        }

        /// The code's stable name, as printed in JSON output (`"invalidValue"`).
        public var description: String { base.rawValue }

        /// Lets `catch RouteKitError.Code.notOwner` match.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? RouteKitError)?.code == code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, for a person. Never contains coordinates.
    public var message: String
    /// The file the error is about, if any.
    public var file: String?
    /// 1-based line in ``file``, if known.
    public var line: Int?
    /// 1-based column (in bytes) in ``line``, if known.
    public var column: Int?
    /// The index of the offending item in its batch or sequence, if any.
    public var index: Int?
    /// The byte offset in ``file`` (0-based), for binary formats such as FIT, if known.
    public var byteOffset: Int?
    /// Details that may contain personal data (coordinates). Only in ``debugDescription``.
    public var privateDetail: String?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil,
        index: Int? = nil, privateDetail: String? = nil, byteOffset: Int? = nil
    ) {
        self.byteOffset = byteOffset
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.index = index
        self.privateDetail = privateDetail
    }

    /// `file:line:column: message (code)`, without coordinates.
    public var description: String {
        var where_ = ""
        if let file { where_ += file }
        if let line {
            where_ += (where_.isEmpty ? "line " : ":") + String(line)
            if let column { where_ += ":" + String(column) }
        }
        if let byteOffset { where_ += (where_.isEmpty ? "" : ": ") + "byte \(byteOffset)" }
        var text = where_.isEmpty ? message : where_ + ": " + message
        if let index { text += " (index \(index))" }
        return text + " [\(code)]"
    }

    /// ``description`` plus the private detail (which may contain coordinates).
    public var debugDescription: String {
        guard let privateDetail else { return description }
        return description + " — " + privateDetail
    }

    /// The same error with a file name filled in (if it had none).
    package func inFile(_ name: String) -> RouteKitError {
        var copy = self
        if copy.file == nil { copy.file = name }
        return copy
    }
}
