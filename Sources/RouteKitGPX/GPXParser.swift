import Foundation
internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// ASCII bytes used by the scanner.
private let LT = UInt8(ascii: "<")
private let GT = UInt8(ascii: ">")
private let SLASH = UInt8(ascii: "/")
private let QMARK = UInt8(ascii: "?")
private let BANG = UInt8(ascii: "!")
private let EQ = UInt8(ascii: "=")
private let COLON = UInt8(ascii: ":")
private let AMP = UInt8(ascii: "&")
private let SEMI = UInt8(ascii: ";")
private let DQ = UInt8(ascii: "\"")
private let SQ = UInt8(ascii: "'")
private let NL: UInt8 = 0x0A

/// Known namespaces. GPX 1.0 and 1.1 are one for element matching; TrackPointExtension v1 and v2 too.
enum KnownNamespace: UInt8 {
    case none, gpx, tpx, power, gpxdata, routekit, xml, other

    static func classify(_ uri: String) -> KnownNamespace {
        switch uri {
        case "http://www.topografix.com/GPX/1/1", "http://www.topografix.com/GPX/1/0": return .gpx
        case GPXNamespaces.routeKit: return .routekit
        case "http://www.garmin.com/xmlschemas/PowerExtension/v1": return .power
        case "http://www.cluetrust.com/XML/GPXDATA/1/0": return .gpxdata
        case "http://www.w3.org/XML/1998/namespace": return .xml
        default:
            if uri.hasSuffix("/TrackPointExtension/v1") || uri.hasSuffix("/TrackPointExtension/v2"),
                uri.contains("garmin.com/xmlschem")
            {
                return .tpx
            }
            return .other
        }
    }
}

/// Namespace URIs RouteKit reads and writes.
public enum GPXNamespaces {
    /// GPX 1.1.
    public static let gpx11 = "http://www.topografix.com/GPX/1/1"
    /// GPX 1.0.
    public static let gpx10 = "http://www.topografix.com/GPX/1/0"
    /// Garmin TrackPointExtension v1 (hr, cad, atemp, wtemp, depth).
    public static let trackPointExtensionV1 = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
    /// Garmin TrackPointExtension v2 (adds speed and course).
    public static let trackPointExtensionV2 = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"
    /// Garmin PowerExtension v1 (`PowerInWatts`).
    public static let powerExtension = "http://www.garmin.com/xmlschemas/PowerExtension/v1"
    /// RouteKit's own extension for `CLLocation` fields GPX has no element for (accuracies).
    public static let routeKit = "https://routekit.dev/xmlns/gpx/v1"
}

/// Element kinds on the parser's stack.
enum GPXElementKind: UInt8 {
    case root, metadata, wpt, rte, rtept, trk, trkseg, trkpt
    case extensions, tpx, person, email, link, copyright, bounds
    case leaf, capture, ignore, document
}

/// Leaf fields (elements whose text is a value).
enum GPXLeafField: UInt8 {
    case none
    case ele, time, magvar, geoidheight, name, cmt, desc, src, sym, type, fix, sat, hdop, vdop, pdop
    case ageofdgpsdata, dgpsid, number, speed, course, url, urlname, email, keywords, linkText, linkType
    case year, license, author
    case hr, cad, atemp, wtemp, depth, power, hAcc, vAcc, speedAcc, courseAcc
}

struct Frame {
    var kind: GPXElementKind
    var field: GPXLeafField
    var nameStart: Int32
    var nameCount: Int32
    var bindingCount: Int32
    /// For `.extensions`, `.capture`, `.ignore`: the owner whose extension list receives captures.
    var owner: GPXElementKind

    /// Whether text inside this element is kept (values, captured fragments).
    var collectsText: Bool {
        kind == .leaf || kind == .capture || kind == .person || kind == .email
    }
}

/// What an element resolved to the last time it appeared under the same kind of parent, so that the usual
/// stream of identical `<trkpt>`, `<ele>`, `<time>`… skips prefix resolution and classification. Valid while
/// the namespace bindings are unchanged (``GPXStreamParser/bindingsGeneration``).
struct ElementCacheEntry {
    var generation = 0
    var length = 0
    var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    var parentKind = GPXElementKind.document
    var parentOwner = GPXElementKind.document
    var kind = GPXElementKind.ignore
    var field = GPXLeafField.none
}

/// The element cache: 64 slots of ``ElementCacheEntry``, indexed by a hash of the name and the parent
/// (``GPXStreamParser/cacheSlot(_:_:_:)``). Not copyable: it owns its memory and frees it when it ends.
struct ElementCache: ~Copyable {
    static let slotCount = 64
    let slots: UnsafeMutablePointer<ElementCacheEntry>

    init() {
        slots = .allocate(capacity: ElementCache.slotCount)
        slots.initialize(repeating: ElementCacheEntry(), count: ElementCache.slotCount)
    }

    deinit { slots.deallocate() }

    @inline(__always) subscript(slot: Int) -> ElementCacheEntry {
        get { slots[slot] }
        nonmutating set { slots[slot] = newValue }
    }
}

/// The open elements, on manually managed memory of fixed capacity (the nesting limit), so pushing and
/// popping needs no uniqueness or capacity checks. Not copyable: it owns that memory and frees it when it ends.
struct FrameStack: ~Copyable {
    static let capacity = 513
    let base: UnsafeMutablePointer<Frame> = .allocate(capacity: FrameStack.capacity)
    var count = 0

    deinit { base.deallocate() }

    @inline(__always) var isEmpty: Bool { count == 0 }
    @inline(__always) subscript(i: Int) -> Frame { base[i] }

    @inline(__always) var last: Frame? { count > 0 ? base[count - 1] : nil }

    /// Pushes a frame; the caller keeps `count` below ``capacity``.
    @inline(__always) mutating func append(_ frame: Frame) {
        (base + count).initialize(to: frame)
        count += 1
    }

    @inline(__always) mutating func popLast() -> Frame? {
        guard count > 0 else { return nil }
        count -= 1
        return (base + count).move()
    }
}

/// The attributes of the current tag, on manually managed memory (reused for every tag). Not copyable: it owns
/// that memory and frees it when it ends.
struct AttributeList: ~Copyable {
    var base: UnsafeMutablePointer<Attribute>
    var count = 0
    var capacity = 16

    init() { base = .allocate(capacity: 16) }
    deinit { base.deallocate() }

    @inline(__always) var isEmpty: Bool { count == 0 }
    @inline(__always) subscript(i: Int) -> Attribute { base[i] }

    @inline(__always) mutating func append(_ a: Attribute) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Attribute>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: a)
        count += 1
    }
}

struct Binding {
    var prefixStart: Int32
    var prefixCount: Int32
    var uriStart: Int32
    var uriCount: Int32
    var ns: KnownNamespace
}

struct Attribute {
    var nameStart: Int
    var nameEnd: Int
    var colon: Int  // offset of ':' in the name, or -1
    var valueStart: Int
    var valueEnd: Int
    /// Whether the value contains '&' (its references are checked even when RouteKit does not read it).
    var hasAmp: Bool
}

/// Options for reading GPX.
public struct GPXReadOptions: Sendable {
    /// Points per ``GPXEvent/trackPoints(_:)`` or ``GPXEvent/routePoints(_:)`` batch. Default 1024 (1 to 2^20).
    public var batchSize: Int = 1024
    /// Bytes read from the file at a time. Default 1 MiB (1 byte to 64 MiB). Memory stays near this whatever the
    /// file size.
    public var chunkSize: Int = 1 << 20
    /// The largest single XML token (a tag, a text node, a comment) held in memory while more input is read, in
    /// bytes. Default 64 MiB. With the read buffer, this bounds the reader's memory whatever the input.
    public var maxTokenSize: Int = 64 << 20
    /// Whether a point (`<trkpt>`, `<rtept>`, `<wpt>`) whose latitude is outside -90...90 or whose longitude is
    /// outside -180...180 is skipped (with its time, values and extensions), with one warning that counts such
    /// points, instead of failing the file. Default `false`: such a file is refused with an error naming the
    /// line and column. OpenTracks' lat=100/lat=200 pause markers are read as pauses either way.
    ///
    /// A point without a `lat` or `lon` attribute, or with one that is not a number, is always skipped and
    /// counted in a warning (it has no position to keep); its children are still checked as any point's, so a
    /// malformed value inside it (`<ele>oops</ele>`) still refuses the file.
    public var skipInvalidPoints: Bool = false
    /// Creates default options.
    public init() {}
}

/// The push parser: bytes in, ``GPXEvent``s out. Not thread-safe; one owner.
///
/// Feed it chunks of any size (one byte at a time works): it parses every complete token and keeps the
/// incomplete tail for the next chunk. It checks XML well-formedness (tag nesting, attribute syntax,
/// entity references, namespace prefixes bound everywhere, a single root) while it maps GPX elements to
/// ``GPXPoint``s; it never builds a tree.
/// Word-at-a-time byte tests (SWAR): the high bit of each byte of the result is set where the byte of `x`
/// equals `c` (``bytesEqual``) or is below `n` (``bytesBelow``, n ≤ 0x80). Bits above the first flagged byte
/// may be wrong (borrows); the lowest one is exact, which is all the scanners use.
@inline(__always) func bytesEqual(_ x: UInt64, _ c: UInt8) -> UInt64 {
    let y = x ^ (0x0101_0101_0101_0101 &* UInt64(c))
    return (y &- 0x0101_0101_0101_0101) & ~y & 0x8080_8080_8080_8080
}

@inline(__always) func bytesBelow(_ x: UInt64, _ n: UInt8) -> UInt64 {
    (x &- 0x0101_0101_0101_0101 &* UInt64(n)) & ~x & 0x8080_8080_8080_8080
}

/// A table of XML name bytes (anything but whitespace and the delimiters), one per parser. Not copyable: it owns
/// its memory and frees it when it ends.
struct NameByteTable: ~Copyable {
    let table: UnsafeMutablePointer<Bool>

    init() {
        let t = UnsafeMutablePointer<Bool>.allocate(capacity: 256)
        for c in 0..<256 {
            let b = UInt8(c)
            t[c] =
                !(b <= 0x20 || b == UInt8(ascii: ">") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=")
                || b == UInt8(ascii: "<") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")
                || b == UInt8(ascii: "&"))
        }
        table = t
    }

    deinit { table.deallocate() }

    @inline(__always) subscript(c: UInt8) -> Bool { table[Int(c)] }
}

struct GPXStreamParser: ~Copyable {
    let options: GPXReadOptions
    let nameBytes = NameByteTable()
    /// Limits that keep hostile input linear: attributes on one element, namespace declarations in scope.
    static let maxAttributes = 10_000
    static let maxBindings = 1_000
    /// Longest element name or namespace declaration: keeps the name and namespace stacks' Int32 offsets safe.
    static let maxNameLength = 65_536
    /// Largest unknown extension element kept for writing back (bytes).
    static let maxCaptureSize = 1 << 20
    let fileName: String?

    // Input buffer.
    var buf: RawBytes
    var pos = 0
    /// Absolute file offset of `buf.base[0]`.
    var base = 0
    var line = 1
    var lineStart = 0  // absolute offset of the current line's first byte
    var tokLine = 1
    var tokLineStart = 0
    var tokStart = 0
    /// Whether the input is in a single-byte encoding being transcoded to UTF-8.
    var latin1 = false
    /// Code points of bytes 0x80-0xFF for windows-1252 or ISO-8859-15 (empty: ISO-8859-1, byte = code point).
    var upperHalf: [UInt32] = []
    var atStart = true
    var declarationOffset = 0  // where an XML declaration may stand (after a BOM)
    var incompleteLength = 0  // length of the incomplete token the last parse stopped at
    var finished = false

    // Structure.
    var stack = FrameStack()
    let elementCache = ElementCache()
    var bindingsGeneration = 1
    var dayCache = Timestamp.DayCache()
    var names: RawBytes
    var bindings: [Binding] = []
    var nsArena: RawBytes
    var attrs = AttributeList()
    var rootSeen = false
    var rootHasNamespace = true

    // Output.
    var events: [GPXEvent] = []
    var batch: [GPXPoint] = []
    var warned: Set<String> = []

    // Current objects.
    var text: RawBytes
    var location = Location(latitude: 0, longitude: 0)
    var values = GPXPointValues()
    var extras = GPXPointExtras()
    var hasExtras = false
    var marker: UInt8 = 0
    /// Whether the open point is skipped (no usable coordinates): its children are read and checked, then it is
    /// dropped with its time and values.
    var skipPoint = false
    /// Points skipped since the last report (``reportSkippedPoints()``), by ``SkipReason`` × element
    /// (trkpt, rtept, wpt): how many, and the line of the first.
    var skippedCounts = [Int](repeating: 0, count: 6)
    var skippedLines = [Int](repeating: 0, count: 6)
    var path = GPXPathInfo()
    var pathStarted = false
    var meta = GPXMetadata()
    var metaEmitted = false
    var emittedMeta = GPXMetadata()
    var person = GPXPerson()
    var link = GPXLink(href: "")
    var segmentExtensions: [String] = []
    var rootExtensions: [String] = []

    // Capture of unknown elements as standalone XML.
    var capture: RawBytes
    var captureDepth = 0  // stack depth of the captured root (0: not capturing)
    var captureInsert = 0
    var captureUsed: Set<[UInt8]> = []
    var captureUsesDefault = false
    var captureBindingMark = 0
    var captureTooLarge = false  // bindings in scope outside the captured fragment

    init(options: GPXReadOptions, fileName: String?) {
        self.options = options
        self.fileName = fileName
        self.buf = RawBytes(capacity: options.chunkSize + 4096)
        self.names = RawBytes(capacity: 1024)
        self.nsArena = RawBytes(capacity: 1024)
        self.text = RawBytes(capacity: 256)
        self.capture = RawBytes(capacity: 256)
        batch.reserveCapacity(options.batchSize)
    }

    // MARK: - Errors and positions

    func error(_ code: RouteKitError.Code, _ message: String, at offset: Int? = nil, detail: String? = nil)
        -> RouteKitError
    {
        let o = offset ?? tokStart
        // The line of `o`: counted from the token's start (newlines inside the token up to `o`).
        var l = tokLine
        var ls = tokLineStart
        if o >= tokStart {
            var i = tokStart
            while i < o && i < buf.count {
                if buf.base[i] == NL {
                    l += 1
                    ls = base + i + 1
                }
                i += 1
            }
        }
        return RouteKitError(code, message, file: fileName, line: l, column: base + o - ls + 1, privateDetail: detail)
    }

    mutating func warn(_ kind: String, _ message: String) {
        guard !warned.contains(kind) else { return }
        warned.insert(kind)
        events.append(.warning(GPXWarning(kind: kind, message: message, line: tokLine)))
    }

    // MARK: - Input

    /// Moves unparsed bytes to the front of the buffer.
    mutating func compact() {
        if pos > 0 {
            buf.removeFirst(pos)
            base += pos
            pos = 0
        }
    }

    /// Appends bytes (transcoding ISO-8859-1 to UTF-8 when the document declared it).
    mutating func append(_ p: UnsafePointer<UInt8>, _ n: Int) {
        compact()
        if latin1 { appendRaw(p, n) } else { buf.append(p, n) }
    }

    /// Checks the token-size limit after a parse stopped on an incomplete token.
    mutating func checkTokenLimit() throws(RouteKitError) {
        // The incomplete token's own length (the tail may hold more than one token while a retry is deferred).
        if incompleteLength > options.maxTokenSize {
            throw error(.malformedXML, "a single XML token is larger than \(options.maxTokenSize) bytes")
        }
    }

    // MARK: - Tokenizer

    /// Parses every complete token in the buffer. With `final`, the input has ended.
    /// - Parameter force: parse the tail now even if an incomplete token was just retried (used before reporting
    ///   a decompression error, so that errors come in stream order whatever the chunk sizes).
    mutating func parse(final: Bool, force: Bool = false) throws(RouteKitError) {
        if atStart {
            guard try detectStart(final: final) else { return }
        }
        // After an incomplete token of length L, wait until the tail has at least doubled before scanning
        // it again: rescanning a long token (a big text, comment or extension) on every small chunk would
        // be quadratic; this keeps the total work linear and changes no result.
        if !final && !force && incompleteLength > 0 && buf.count - pos < 2 * incompleteLength { return }
        incompleteLength = 0
        var p = pos
        while p < buf.count {
            // Re-read each time: an ISO-8859-1 declaration transcodes (and may move) the buffer.
            let b = buf.base
            let end = buf.count
            tokStart = p
            tokLine = line
            tokLineStart = lineStart
            let next: Int?
            if b[p] == LT {
                if p + 1 >= end {
                    next = nil
                } else {
                    let c = b[p + 1]
                    if c == SLASH {
                        next = try endTag(p, end)
                    } else if c == QMARK {
                        next = try processingInstruction(p, end)
                    } else if c == BANG {
                        next = try markup(p, end, final: final)
                    } else {
                        next = try startTag(p, end)
                    }
                }
            } else {
                // Fast path: whitespace between tags, counted as it is skipped.
                let (q, newlines, lastNL) = GPXStreamParser.scanSpaces(b, p, end)
                if q < end && b[q] == LT && (stack.isEmpty || !stack[stack.count - 1].collectsText) {
                    line += newlines
                    if lastNL >= 0 { lineStart = base + lastNL + 1 }
                    next = q
                } else if let top = stack.last, top.kind == .leaf {
                    // A value (<ele>, <time>, <hr>…): one pass finds its end and whether it has references.
                    var r = q
                    var special = false
                    while r < end {
                        let c = b[r]
                        if c == LT { break }
                        if c == AMP || c < 0x20 { special = true }
                        r &+= 1
                    }
                    if r < end {
                        line += newlines
                        if lastNL >= 0 { lineStart = base + lastNL + 1 }
                        countLines(q, r)
                        if special {
                            try appendText(p, r)
                        } else {
                            text.append(b + p, r - p)
                        }
                        next = r
                    } else if final {
                        try textToken(p, end)
                        next = end
                    } else {
                        next = nil
                    }
                } else if stack.isEmpty && q < end {
                    // Outside the root only markup may follow: fail now rather than buffer up to the next '<'.
                    throw error(
                        .malformedXML,
                        rootSeen
                            ? "text after the root element"
                            : "not XML: expected '<' but found other content before the root element", at: q)
                } else if let lt = memchrOffset(b, q, end, LT) {
                    try textToken(p, lt)
                    next = lt
                } else if final {
                    try textToken(p, end)
                    next = end
                } else {
                    next = nil
                }
            }
            guard let n = next else {
                // Incomplete token: undo line counting inside it, wait for more input.
                line = tokLine
                lineStart = tokLineStart
                if final {
                    pos = p
                    throw unexpectedEnd()
                }
                incompleteLength = end - p
                break
            }
            p = n
        }
        pos = p
        if final && p >= buf.count { try finishDocument() }
    }

    /// Skips XML whitespace from `p`: where it stops, how many newlines it passed and where the last one was.
    /// Runs of spaces (indentation) go eight bytes at a time.
    @inline(__always)
    static func scanSpaces(_ b: UnsafeMutablePointer<UInt8>, _ p: Int, _ end: Int) -> (Int, Int, Int) {
        var q = p
        var newlines = 0
        var lastNL = -1
        while q < end {
            if q + 8 <= end {
                let x = UnsafeRawPointer(b + q).loadUnaligned(as: UInt64.self) ^ 0x2020_2020_2020_2020
                if x == 0 {
                    q &+= 8
                    continue
                }
                q &+= x.trailingZeroBitCount >> 3
            }
            let c = b[q]
            if c == NL {
                newlines &+= 1
                lastNL = q
            } else if c != 0x20 && c != 0x09 && c != 0x0D {
                break
            }
            q &+= 1
        }
        return (q, newlines, lastNL)
    }

    /// After a tag: skips the whitespace up to the next tag when the open element keeps no text, so the token
    /// loop goes straight to that tag. Returns `q` unchanged otherwise.
    @inline(__always)
    mutating func skipToNextTag(_ q: Int, _ end: Int) -> Int {
        if stack.count > 0 && stack.base[stack.count - 1].collectsText { return q }
        let (r, newlines, lastNL) = GPXStreamParser.scanSpaces(buf.base, q, end)
        guard r < end && buf.base[r] == LT else { return q }
        line &+= newlines
        if lastNL >= 0 { lineStart = base + lastNL + 1 }
        return r
    }

    func unexpectedEnd() -> RouteKitError {
        if let top = stack.last {
            let name = String(
                decoding: UnsafeBufferPointer(start: names.base + Int(top.nameStart), count: Int(top.nameCount)),
                as: UTF8.self)
            return error(.malformedXML, "unexpected end of file: <\(name)> is not closed", at: buf.count)
        }
        return error(.malformedXML, "unexpected end of file inside a tag or comment", at: buf.count)
    }

    /// BOM, UTF-16 and gzip detection at the very start. Returns false when more bytes are needed.
    mutating func detectStart(final: Bool) throws(RouteKitError) -> Bool {
        let b = buf.base
        let n = buf.count - pos
        if n < 4 && !final { return false }
        atStart = false
        if n >= 3 && b[pos] == 0xEF && b[pos + 1] == 0xBB && b[pos + 2] == 0xBF {
            pos += 3
            declarationOffset = base + pos
            lineStart = base + pos
            tokLineStart = lineStart
        } else if n >= 2 && ((b[pos] == 0xFE && b[pos + 1] == 0xFF) || (b[pos] == 0xFF && b[pos + 1] == 0xFE)) {
            throw error(.unsupportedEncoding, "the file is UTF-16; RouteKit reads UTF-8 and ISO-8859-1", at: pos)
        } else if n >= 2 && ((b[pos] == 0 && b[pos + 1] == LT) || (b[pos] == LT && b[pos + 1] == 0)) {
            throw error(
                .unsupportedEncoding,
                "the file looks like UTF-16 without a byte order mark; RouteKit reads UTF-8 and ISO-8859-1", at: pos)
        } else if n >= 2 && b[pos] == 0x1F && b[pos + 1] == 0x8B {
            throw error(.malformedXML, "the data is gzip-compressed but was not decompressed", at: pos)
        }
        return true
    }

    mutating func finishDocument() throws(RouteKitError) {
        if finished { return }
        // Errors here are at the end of the input: the line counters are exact there, whatever token came last
        // (its offsets may predate a compaction of the buffer).
        tokStart = pos
        tokLine = line
        tokLineStart = lineStart
        if !stack.isEmpty { throw unexpectedEnd() }
        guard rootSeen else {
            throw error(
                .malformedXML,
                buf.count == 0 && base == 0
                    ? "the file is empty: no <gpx> root element" : "no root element: the file holds no XML element",
                at: pos)
        }
        finished = true
    }

    /// Counts newlines in `b[from..<to]` into the line counter.
    @inline(__always) mutating func countLines(_ from: Int, _ to: Int) {
        let b = buf.base
        var i = from
        while let j = memchrOffset(b, i, to, NL) {
            line += 1
            lineStart = base + j + 1
            i = j + 1
        }
    }

    /// Text between tags.
    mutating func textToken(_ from: Int, _ to: Int) throws(RouteKitError) {
        let b = buf.base
        if let top = stack.last {
            switch top.kind {
            case .leaf, .person, .email:
                countLines(from, to)
                try appendText(from, to)
                return
            case .capture:
                countLines(from, to)
                try checkEntities(from, to)
                captureAppend(b + from, to - from)
                return
            default:
                break
            }
        }
        // Whitespace between elements (the common case): count newlines while checking.
        var i = from
        while i < to {
            let c = b[i]
            if c == NL {
                line += 1
                lineStart = base + i + 1
            } else if c != 0x20 && c != 0x09 && c != 0x0D {
                break
            }
            i += 1
        }
        if i == to { return }
        countLines(i, to)
        if stack.isEmpty {
            if rootSeen {
                throw error(.malformedXML, "text after the root element", at: i)
            }
            throw error(.malformedXML, "not XML: expected '<' but found other content before the root element", at: i)
        }
        try checkEntities(from, to)
        if stack.last?.kind != .ignore {
            warn("ignoredText", "text inside a GPX element that holds no text was ignored")
        }
    }

    /// Appends text to `text`, decoding entity and character references.
    mutating func appendText(_ from: Int, _ to: Int) throws(RouteKitError) {
        try checkChars(from, to)
        let b = buf.base
        var i = from
        while i < to {
            guard let amp = memchrOffset(b, i, to, AMP) else {
                text.append(b + i, to - i)
                return
            }
            text.append(b + i, amp - i)
            let reference = try decodeReference(amp, to)
            text.append(reference.scalar)
            i = reference.next
        }
    }

    /// XML 1.0 allows no control character but tab, line feed and carriage return.
    @inline(__always) static func isForbiddenControl(_ c: UInt8) -> Bool {
        c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D
    }

    /// Refuses the control characters XML 1.0 does not allow in `b[from..<to]`.
    mutating func checkChars(_ from: Int, _ to: Int) throws(RouteKitError) {
        let b = buf.base
        var i = from
        while i < to {
            if GPXStreamParser.isForbiddenControl(b[i]) {
                let hex = String(b[i], radix: 16, uppercase: true)
                throw error(
                    .malformedXML, "control character U+\(hex.count < 2 ? "000" : "00")\(hex) is not allowed in XML",
                    at: i)
            }
            i += 1
        }
    }

    /// Checks that every `&` in `b[from..<to]` starts a valid reference.
    mutating func checkEntities(_ from: Int, _ to: Int) throws(RouteKitError) {
        try checkChars(from, to)
        var i = from
        while let amp = memchrOffset(buf.base, i, to, AMP) {
            i = try decodeReference(amp, to).next
        }
    }

    /// Decodes the reference at `b[amp]`: the character it stands for, and the offset after its `;`.
    func decodeReference(_ amp: Int, _ to: Int) throws(RouteKitError) -> (scalar: Unicode.Scalar, next: Int) {
        let b = buf.base
        guard let semi = memchrOffset(b, amp + 1, min(to, amp + 64), SEMI) else {
            throw error(.malformedXML, "'&' does not start an entity or character reference (write &amp;)", at: amp)
        }
        let n = semi - amp - 1
        let s = b + amp + 1
        func eq(_ lit: StaticString) -> Bool {
            n == lit.utf8CodeUnitCount && memcmp(s, lit.utf8Start, n) == 0
        }
        let scalar: Unicode.Scalar
        if eq("lt") {
            scalar = "<"
        } else if eq("gt") {
            scalar = ">"
        } else if eq("amp") {
            scalar = "&"
        } else if eq("quot") {
            scalar = "\""
        } else if eq("apos") {
            scalar = "'"
        } else if n >= 2 && s[0] == UInt8(ascii: "#") {
            var value: UInt32 = 0
            var ok = true
            if s[1] == UInt8(ascii: "x") {
                ok = n >= 3
                for k in 2..<max(n, 2) {
                    let c = s[k] | 0x20
                    let d: UInt32
                    if c >= 48 && c <= 57 {
                        d = UInt32(c - 48)
                    } else if c >= 97 && c <= 102 {
                        d = UInt32(c - 87)
                    } else {
                        ok = false
                        break
                    }
                    // Past U+10FFFF it is invalid anyway: stop before the arithmetic can overflow.
                    value = min(value, 0x11_0000) * 16 + d
                }
            } else {
                for k in 1..<n {
                    let d = s[k] &- 48
                    if d > 9 {
                        ok = false
                        break
                    }
                    value = min(value, 0x11_0000) * 10 + UInt32(d)
                }
            }
            guard ok, let decoded = Unicode.Scalar(value),
                value == 0x9 || value == 0xA || value == 0xD || value >= 0x20,
                value != 0xFFFE && value != 0xFFFF
            else {
                throw error(.malformedXML, "invalid character reference", at: amp)
            }
            scalar = decoded
        } else {
            throw error(
                .malformedXML,
                "unknown entity reference (only &lt; &gt; &amp; &quot; &apos; and &#…; exist without a DTD)", at: amp)
        }
        return (scalar, semi + 1)
    }

    /// `<?…?>`: the XML declaration (encoding) or another processing instruction (skipped).
    mutating func processingInstruction(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = buf.base
        guard let close = find(b, p + 2, end, "?>") else { return nil }
        try checkChars(p + 2, close)
        countLines(p, close)
        var t = p + 2
        while t < close && !isXMLSpace(b[t]) { t += 1 }
        let target = String(decoding: UnsafeBufferPointer(start: b + p + 2, count: t - p - 2), as: UTF8.self)
        if target.lowercased() == "xml" {
            guard base + p == declarationOffset else {
                throw error(.malformedXML, "the XML declaration must be at the very start of the file")
            }
            let decl = String(decoding: UnsafeBufferPointer(start: b + t, count: close - t), as: UTF8.self)
            try applyDeclaration(decl)
        } else if captureDepth > 0 {
            captureAppend(b + p, close + 2 - p)
        }
        return close + 2
    }

    mutating func applyDeclaration(_ decl: String) throws(RouteKitError) {
        guard let r = decl.range(of: "encoding") else { return }
        let rest = decl[r.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let q = rest.first, q == "\"" || q == "'" else { return }
        let value = rest.dropFirst().prefix(while: { $0 != q }).lowercased()
        switch value {
        case "utf-8", "utf8", "us-ascii", "ascii":
            break
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-8859-15", "iso8859-15",
            "latin-9", "windows-1252", "cp1252":
            upperHalf = singleByteTable(value)
            latin1 = true
            // Transcode what is already buffered after the declaration.
            let startOfRest = tokStart  // the declaration itself is ASCII
            let tail = buf.count - startOfRest
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(tail, 1))
            copy.update(from: buf.base + startOfRest, count: tail)
            buf.count = startOfRest
            // `append` compacts; keep the declaration in place by appending after it.
            let savedPos = pos
            latin1 = true
            appendRaw(copy, tail)
            pos = savedPos
            copy.deallocate()
        case "utf-16", "utf16", "ucs-2":
            throw error(
                .unsupportedEncoding, "the file declares encoding '\(value)'; RouteKit reads UTF-8 and ISO-8859-1")
        default:
            throw error(
                .unsupportedEncoding,
                "the file declares encoding '\(value)', which RouteKit does not read (it reads UTF-8, ISO-8859-1, ISO-8859-15 and windows-1252)"
            )
        }
    }

    /// The code points of bytes 0x80-0xFF in windows-1252 and ISO-8859-15 (empty for ISO-8859-1).
    func singleByteTable(_ encoding: String) -> [UInt32] {
        var table = (0x80..<0x100).map { UInt32($0) }
        if encoding == "windows-1252" || encoding == "cp1252" {
            let high: [UInt32] = [
                0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
                0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
                0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
            ]
            for (i, cp) in high.enumerated() { table[i] = cp }
            return table
        }
        if encoding.hasSuffix("15") || encoding == "latin-9" {
            for (byte, cp) in [
                (0xA4, 0x20AC), (0xA6, 0x0160), (0xA8, 0x0161), (0xB4, 0x017D), (0xB8, 0x017E), (0xBC, 0x0152),
                (0xBD, 0x0153), (0xBE, 0x0178),
            ] {
                table[byte - 0x80] = UInt32(cp)
            }
            return table
        }
        return []
    }

    /// Appends with transcoding but without compacting (used mid-parse).
    mutating func appendRaw(_ p: UnsafePointer<UInt8>, _ n: Int) {
        guard latin1 else {
            buf.append(p, n)
            return
        }
        // A single-byte encoding: bytes 0x80-0xFF through the declared code page, to UTF-8.
        buf.reserve(3 * n)
        var o = buf.count
        let table = upperHalf
        for i in 0..<n {
            let c = p[i]
            if c < 0x80 {
                buf.base[o] = c
                o += 1
                continue
            }
            let cp = table.isEmpty ? UInt32(c) : table[Int(c) - 0x80]
            if cp < 0x800 {
                buf.base[o] = UInt8(0xC0 | (cp >> 6))
                buf.base[o + 1] = UInt8(0x80 | (cp & 0x3F))
                o += 2
            } else {
                buf.base[o] = UInt8(0xE0 | (cp >> 12))
                buf.base[o + 1] = UInt8(0x80 | ((cp >> 6) & 0x3F))
                buf.base[o + 2] = UInt8(0x80 | (cp & 0x3F))
                o += 3
            }
        }
        buf.count = o
    }

    /// `<!--…-->`, `<![CDATA[…]]>`, `<!DOCTYPE…>`.
    mutating func markup(_ p: Int, _ end: Int, final: Bool) throws(RouteKitError) -> Int? {
        let b = buf.base
        func starts(_ lit: StaticString) -> Bool? {
            let n = lit.utf8CodeUnitCount
            if p + n > end {
                // Not enough bytes to tell: compare what there is.
                if memcmp(b + p, lit.utf8Start, end - p) != 0 { return false }
                return nil
            }
            return memcmp(b + p, lit.utf8Start, n) == 0
        }
        guard let isComment = starts("<!--") else { return nil }
        if isComment {
            guard let close = find(b, p + 4, end, "-->") else { return nil }
            if find(b, p + 4, close, "--") != nil || b[close - 1] == UInt8(ascii: "-") && close - 1 >= p + 4 {
                throw error(.malformedXML, "'--' is not allowed inside a comment")
            }
            try checkChars(p + 4, close)
            countLines(p, close)
            if captureDepth > 0 { captureAppend(b + p, close + 3 - p) }
            return close + 3
        }
        guard let isCDATA = starts("<![CDATA[") else { return nil }
        if isCDATA {
            guard let close = find(b, p + 9, end, "]]>") else { return nil }
            try checkChars(p + 9, close)
            countLines(p, close)
            guard let top = stack.last else {
                throw error(.malformedXML, "CDATA outside the root element")
            }
            switch top.kind {
            case .leaf, .person, .email:
                text.append(b + p + 9, close - p - 9)
            case .capture:
                captureAppend(b + p, close + 3 - p)
            default:
                var i = p + 9
                while i < close && isXMLSpace(b[i]) { i += 1 }
                if i < close { warn("ignoredText", "text inside a GPX element that holds no text was ignored") }
            }
            return close + 3
        }
        guard let isDoctype = starts("<!DOCTYPE") else { return nil }
        if isDoctype {
            guard !rootSeen else { throw error(.malformedXML, "a DOCTYPE is only allowed before the root element") }
            guard let close = memchrOffset(b, p, end, GT) else { return nil }
            if memchrOffset(b, p, close, UInt8(ascii: "[")) != nil {
                throw error(
                    .malformedXML, "DTDs with an internal subset are not supported (entity expansion is refused)")
            }
            countLines(p, close)
            return close + 1
        }
        throw error(.malformedXML, "unexpected '<!': expected a comment, CDATA section or DOCTYPE")
    }

    // MARK: Tags

    @inline(__always) static func isNameByte(_ c: UInt8) -> Bool {
        // Anything but whitespace and the XML delimiters; non-ASCII bytes are name characters.
        !(c <= 0x20 || c == GT || c == SLASH || c == EQ || c == LT || c == DQ || c == SQ || c == AMP)
    }

    @inline(__always) static func isNameStart(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == UInt8(ascii: "_") || c == COLON || c >= 0x80
    }

    /// Checks a qualified name whose colons were counted while scanning it: a valid first byte, at most one
    /// colon, not first or last. Returns the colon's offset or -1.
    @inline(__always)
    mutating func checkQName(_ s: Int, _ e: Int, colon: Int, colons: Int) throws(RouteKitError) -> Int {
        let b = buf.base
        guard GPXStreamParser.isNameStart(b[s]), b[s] != COLON else {
            throw error(.malformedXML, "invalid name: a name must start with a letter or '_'", at: s)
        }
        if colons == 0 { return -1 }
        guard colons == 1, colon < e - 1, GPXStreamParser.isNameStart(b[colon + 1]), b[colon + 1] != COLON else {
            throw error(
                .malformedXML,
                "invalid qualified name '\(string(s, e))' (namespaces allow one ':' between prefix and local name)",
                at: s)
        }
        return colon
    }

    func string(_ s: Int, _ e: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: buf.base + s, count: max(0, e - s)), as: UTF8.self)
    }

    mutating func startTag(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = buf.base
        var q = p + 1
        let nameStart = q
        let table = nameBytes.table
        // The name ends at whitespace, '>' or '/': found eight bytes at a time. Its characters are checked in
        // openElement, only when the element cache has not seen exactly this name before.
        var found = false
        while q + 8 <= end {
            let x = UnsafeRawPointer(b + q).loadUnaligned(as: UInt64.self)
            let m = bytesBelow(x, 0x21) | bytesEqual(x, GT) | bytesEqual(x, SLASH)
            if m != 0 {
                q += m.trailingZeroBitCount >> 3
                found = true
                break
            }
            q &+= 8
        }
        if !found {
            while q < end {
                let c = b[q]
                if c <= 0x20 || c == GT || c == SLASH { break }
                q &+= 1
            }
        }
        if q >= end { return nil }
        let nameEnd = q
        if nameEnd - nameStart > GPXStreamParser.maxNameLength {
            throw error(
                .malformedXML,
                "an element name is longer than \(GPXStreamParser.maxNameLength) bytes (RouteKit's limit)")
        }
        if nameEnd == nameStart {
            throw error(.malformedXML, "'<' is not followed by an element name")
        }
        attrs.count = 0
        var selfClosing = false
        while true {
            var sawSpace = false
            while q < end && isXMLSpace(b[q]) {
                if b[q] == NL {
                    line += 1
                    lineStart = base + q + 1
                }
                sawSpace = true
                q &+= 1
            }
            if q >= end { return nil }
            let c = b[q]
            if c == GT {
                q &+= 1
                break
            }
            if c == SLASH {
                if q + 1 >= end { return nil }
                guard b[q + 1] == GT else { throw error(.malformedXML, "expected '>' after '/' in a tag", at: q) }
                q += 2
                selfClosing = true
                break
            }
            guard sawSpace else {
                throw error(
                    .malformedXML, "expected whitespace, '>' or '/>' in the tag of <\(string(nameStart, nameEnd))>",
                    at: q)
            }
            let an = q
            var attrColon = -1
            var attrColons = 0
            while q < end {
                let c = b[q]
                if !table[Int(c)] { break }
                if c == COLON {
                    attrColon = q
                    attrColons += 1
                }
                q &+= 1
            }
            if q >= end { return nil }
            let ae = q
            if ae == an {
                throw error(.malformedXML, "unexpected character in the tag of <\(string(nameStart, nameEnd))>", at: q)
            }
            while q < end && isXMLSpace(b[q]) {
                if b[q] == NL {
                    line += 1
                    lineStart = base + q + 1
                }
                q &+= 1
            }
            if q >= end { return nil }
            guard b[q] == EQ else {
                throw error(.malformedXML, "attribute '\(string(an, ae))' has no '=' and value", at: q)
            }
            q &+= 1
            while q < end && isXMLSpace(b[q]) {
                if b[q] == NL {
                    line += 1
                    lineStart = base + q + 1
                }
                q &+= 1
            }
            if q >= end { return nil }
            let quote = b[q]
            guard quote == DQ || quote == SQ else {
                throw error(.malformedXML, "the value of attribute '\(string(an, ae))' is not in quotes", at: q)
            }
            // One pass over the (short) value: its end, a stray '<', and newlines.
            var close = q + 1
            var valueHasAmp = false
            while close < end {
                let c = b[close]
                if c == quote { break }
                if c == AMP { valueHasAmp = true }
                if GPXStreamParser.isForbiddenControl(c) {
                    throw error(
                        .malformedXML, "a control character is not allowed in the value of an attribute", at: close)
                }
                if c == LT {
                    throw error(
                        .malformedXML, "'<' is not allowed in the value of attribute '\(string(an, ae))'", at: q)
                }
                if c == NL {
                    line += 1
                    lineStart = base + close + 1
                }
                close &+= 1
            }
            if close >= end { return nil }
            let colon = try checkQName(an, ae, colon: attrColon, colons: attrColons)
            if attrs.count >= GPXStreamParser.maxAttributes {
                throw error(
                    .malformedXML,
                    "an element has more than \(GPXStreamParser.maxAttributes) attributes (RouteKit's limit)")
            }
            attrs.append(
                Attribute(
                    nameStart: an, nameEnd: ae, colon: colon, valueStart: q + 1, valueEnd: close, hasAmp: valueHasAmp))
            q = close + 1
        }
        if !(attrs.count == 0 && openCached(nameStart, nameEnd)) {
            try openElement(nameStart, nameEnd, tagEnd: q)
        }
        if selfClosing {
            try closeElement(tagEnd: q)
        } else if stack.count > 0 && stack.base[stack.count - 1].kind == .leaf, let after = try leafValue(q, end) {
            return after
        }
        return skipToNextTag(q, end)
    }

    /// Fast path for a value element just opened (`<ele>512.4</ele>`): when its text has no reference, no
    /// newline and no markup, and its end tag is already buffered, reads the value and closes the element
    /// here, skipping two trips through the token loop. Returns nil (having consumed nothing) otherwise.
    @inline(__always)
    mutating func leafValue(_ q: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = buf.base
        var r = q
        // Eight bytes at a time to the first '<', '&' or newline.
        var found = false
        while r + 8 <= end {
            let x = UnsafeRawPointer(b + r).loadUnaligned(as: UInt64.self)
            let m = bytesEqual(x, LT) | bytesEqual(x, AMP) | bytesBelow(x, 0x20)
            if m != 0 {
                r &+= m.trailingZeroBitCount >> 3
                found = true
                break
            }
            r &+= 8
        }
        if !found {
            while r < end {
                let c = b[r]
                if c == LT || c == AMP || c < 0x20 { break }
                r &+= 1
            }
        }
        guard r < end, b[r] == LT else { return nil }
        let top = stack.base[stack.count - 1]
        let n = Int(top.nameCount)
        guard r + 2 + n < end, b[r + 1] == SLASH, b[r + 2 + n] == GT,
            GPXStreamParser.sameBytes(b + r + 2, names.base + Int(top.nameStart), n)
        else { return nil }
        text.count = 0
        text.append(b + q, r - q)
        // Errors in the value point at its end tag, as on the normal path.
        tokStart = r
        tokLine = line
        tokLineStart = lineStart
        let parentKind = stack.count > 1 ? stack.base[stack.count - 2].kind : GPXElementKind.root
        if top.bindingCount == 0
            && (parentKind == .trkpt || parentKind == .rtept || parentKind == .wpt || parentKind == .tpx
                || parentKind == .extensions)
        {
            // A point's value: pop and store it directly (what closeElement → setLeaf would do).
            stack.count -= 1
            names.count = Int(top.nameStart)
            try setPointField(top.field)
        } else {
            try closeElement(tagEnd: r + 3 + n)
        }
        return skipToNextTag(r + 3 + n, end)
    }

    mutating func endTag(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = buf.base
        // Fast path: the expected name followed directly by '>'.
        if let top = stack.last {
            let n = Int(top.nameCount)
            if p + 2 + n < end && b[p + 2 + n] == GT
                && GPXStreamParser.sameBytes(b + p + 2, names.base + Int(top.nameStart), n)
            {
                try closeElement(tagEnd: p + 3 + n)
                return skipToNextTag(p + 3 + n, end)
            }
        }
        guard let gt = memchrOffset(b, p + 2, end, GT) else { return nil }
        var ne = p + 2
        while ne < gt && GPXStreamParser.isNameByte(b[ne]) { ne += 1 }
        var i = ne
        while i < gt && isXMLSpace(b[i]) { i += 1 }
        guard i == gt else { throw error(.malformedXML, "unexpected character in an end tag", at: i) }
        guard let top = stack.last else {
            throw error(.malformedXML, "end tag </\(string(p + 2, ne))> without a matching start tag")
        }
        let n = ne - p - 2
        guard n == Int(top.nameCount), memcmp(b + p + 2, names.base + Int(top.nameStart), n) == 0 else {
            let open = String(
                decoding: UnsafeBufferPointer(start: names.base + Int(top.nameStart), count: Int(top.nameCount)),
                as: UTF8.self)
            throw error(.malformedXML, "end tag </\(string(p + 2, ne))> does not match the open element <\(open)>")
        }
        countLines(ne, gt)
        try closeElement(tagEnd: gt + 1)
        return gt + 1
    }

    // MARK: Namespaces

    mutating func lookup(_ prefixStart: Int, _ prefixCount: Int) -> Int? {
        var i = bindings.count - 1
        while i >= 0 {
            let bd = bindings[i]
            if Int(bd.prefixCount) == prefixCount
                && (prefixCount == 0
                    || memcmp(nsArena.base + Int(bd.prefixStart), buf.base + prefixStart, prefixCount) == 0)
            {
                return i
            }
            i -= 1
        }
        return nil
    }

    /// Two prefixed attributes may not have the same namespace and local name (`x:a` and `y:a` with `x` and `y`
    /// bound to one URI), as the Namespaces in XML recommendation requires.
    mutating func checkExpandedNames() throws(RouteKitError) {
        var seen = Set<[UInt8]>()
        let b = buf.base
        for ai in 0..<attrs.count where attrs[ai].colon >= 0 {
            let a = attrs[ai]
            let n = a.colon - a.nameStart
            if isXMLPrefix(a.nameStart, n) || (n == 5 && memcmp(b + a.nameStart, "xmlns", 5) == 0) { continue }
            guard let i = lookup(a.nameStart, n) else { continue }
            var key = Array(
                UnsafeBufferPointer(start: nsArena.base + Int(bindings[i].uriStart), count: Int(bindings[i].uriCount)))
            key.append(0)
            key += UnsafeBufferPointer(start: b + a.colon + 1, count: a.nameEnd - a.colon - 1)
            if !seen.insert(key).inserted {
                throw error(
                    .malformedXML,
                    "attribute '\(string(a.nameStart, a.nameEnd))' repeats another attribute's namespace and name",
                    at: a.nameStart)
            }
        }
    }

    @inline(__always) mutating func isXMLPrefix(_ s: Int, _ n: Int) -> Bool {
        n == 3 && buf.base[s] == UInt8(ascii: "x") && buf.base[s + 1] == UInt8(ascii: "m")
            && buf.base[s + 2] == UInt8(ascii: "l")
    }

    /// Declares the namespaces of the current tag's `xmlns` attributes.
    mutating func declareNamespaces() throws(RouteKitError) -> Int32 {
        var declared: Int32 = 0
        let b = buf.base
        for ai in 0..<attrs.count {
            let a = attrs.base[ai]
            let n = a.nameEnd - a.nameStart
            guard n >= 5, b[a.nameStart] == UInt8(ascii: "x"), memcmp(b + a.nameStart, "xmlns", 5) == 0 else {
                continue
            }
            let prefixStart: Int
            let prefixCount: Int
            if n == 5 {
                prefixStart = a.nameEnd
                prefixCount = 0
            } else if a.colon == a.nameStart + 5 {
                prefixStart = a.colon + 1
                prefixCount = a.nameEnd - prefixStart
            } else {
                continue
            }
            var uriBytes = RawBytes(capacity: a.valueEnd - a.valueStart + 1)
            var i = a.valueStart
            while i < a.valueEnd {
                guard let amp = memchrOffset(b, i, a.valueEnd, AMP) else {
                    uriBytes.append(b + i, a.valueEnd - i)
                    break
                }
                uriBytes.append(b + i, amp - i)
                let reference = try decodeReference(amp, a.valueEnd)
                uriBytes.append(reference.scalar)
                i = reference.next
            }
            let uri = uriBytes.string
            if prefixCount > 0 && uri.isEmpty {
                throw error(
                    .malformedXML,
                    "namespace prefix '\(string(prefixStart, a.nameEnd))' cannot be bound to an empty URI")
            }
            if prefixCount == 5 && memcmp(b + prefixStart, "xmlns", 5) == 0 {
                throw error(.malformedXML, "the prefix 'xmlns' cannot be declared")
            }
            if prefixCount + uriBytes.count > GPXStreamParser.maxNameLength {
                throw error(
                    .malformedXML,
                    "a namespace declaration is longer than \(GPXStreamParser.maxNameLength) bytes (RouteKit's limit)")
            }
            if bindings.count >= GPXStreamParser.maxBindings {
                throw error(
                    .malformedXML,
                    "more than \(GPXStreamParser.maxBindings) namespace declarations in scope (RouteKit's limit)")
            }
            let ps = Int32(nsArena.count)
            nsArena.append(b + prefixStart, prefixCount)
            let us = Int32(nsArena.count)
            nsArena.append(uriBytes.base, uriBytes.count)
            bindingsGeneration += 1
            bindings.append(
                Binding(
                    prefixStart: ps, prefixCount: Int32(prefixCount), uriStart: us, uriCount: Int32(uriBytes.count),
                    ns: uri.isEmpty ? .none : KnownNamespace.classify(uri)))
            declared += 1
        }
        return declared
    }

    /// Resolves a prefix to its namespace, or throws for an undeclared prefix.
    mutating func resolve(_ s: Int, _ colon: Int, isAttribute: Bool) throws(RouteKitError) -> KnownNamespace {
        if colon < 0 {
            if isAttribute { return .none }
            guard let i = lookup(s, 0) else { return .none }
            return bindings[i].ns
        }
        let n = colon - s
        if isXMLPrefix(s, n) { return .xml }
        if n == 5 && memcmp(buf.base + s, "xmlns", 5) == 0 { return .other }
        guard let i = lookup(s, n) else {
            throw error(.malformedXML, "namespace prefix '\(string(s, colon))' is not declared", at: s)
        }
        return bindings[i].ns
    }

    // MARK: Elements

    /// The words of a qualified name of at most 32 bytes, zero-padded (nil for longer names).
    @inline(__always)
    static func nameWords(_ b: UnsafeMutablePointer<UInt8>, _ s: Int, _ e: Int, limit: Int)
        -> (UInt64, UInt64, UInt64, UInt64)?
    {
        let n = e - s
        // Whole-word loads need 32 readable bytes from `s`: a tag never ends at its name, so this holds except
        // right at the end of the buffered data, where the cache is simply not used.
        if n > 32 || s + 32 > limit { return nil }
        let p = UnsafeRawPointer(b + s)
        @inline(__always) func word(_ k: Int) -> UInt64 {
            let len = n - 8 * k
            if len <= 0 { return 0 }
            let v = p.loadUnaligned(fromByteOffset: 8 * k, as: UInt64.self)
            return len >= 8 ? v : v & ((1 << UInt64(8 * len)) - 1)
        }
        return (word(0), word(1), word(2), word(3))
    }

    @inline(__always)
    static func cacheSlot(_ words: (UInt64, UInt64, UInt64, UInt64), _ n: Int, _ parent: Frame) -> Int {
        var h = words.0 &* 0x9E37_79B9_7F4A_7C15
        h ^= words.1 &+ UInt64(n) &+ (UInt64(parent.kind.rawValue) << 8) &+ (UInt64(parent.owner.rawValue) << 16)
        return Int(truncatingIfNeeded: (h ^ (h >> 29)) & 63)
    }

    /// Copies an element's name to the name stack (whole words for the usual short names).
    @inline(__always)
    mutating func pushName(_ s: Int, _ e: Int) {
        let n = e - s
        names.reserve(n + 32)
        let src = UnsafeRawPointer(buf.base + s)
        let dst = UnsafeMutableRawPointer(names.base + names.count)
        if n <= 32 && s + 32 <= buf.count {
            dst.storeBytes(of: src.loadUnaligned(as: UInt64.self), as: UInt64.self)
            dst.storeBytes(of: src.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
            dst.storeBytes(
                of: src.loadUnaligned(fromByteOffset: 16, as: UInt64.self), toByteOffset: 16, as: UInt64.self)
            dst.storeBytes(
                of: src.loadUnaligned(fromByteOffset: 24, as: UInt64.self), toByteOffset: 24, as: UInt64.self)
        } else {
            dst.copyMemory(from: src, byteCount: n)
        }
        names.count += n
    }

    /// Whether `n` bytes at `a` equal `n` bytes at `b` (short names compare in words, without a call).
    @inline(__always)
    static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self)
                != UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        while i < n {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// Opens an element without attributes that the cache knows under this parent; false when it does not
    /// (the caller then takes the full path). Only kinds whose opening needs no more than a frame qualify.
    @inline(__always)
    mutating func openCached(_ nameStart: Int, _ nameEnd: Int) -> Bool {
        let depth = stack.count
        guard depth > 0 && depth < FrameStack.capacity - 1 else { return false }
        let parent = stack.base[depth - 1]
        guard parent.kind != .capture && parent.kind != .ignore,
            let w = GPXStreamParser.nameWords(buf.base, nameStart, nameEnd, limit: buf.count)
        else { return false }
        let n = nameEnd - nameStart
        let entry = elementCache[GPXStreamParser.cacheSlot(w, n, parent)]
        guard
            entry.generation == bindingsGeneration && entry.length == n && entry.parentKind == parent.kind
                && entry.parentOwner == parent.owner && entry.words == w
                && (entry.kind == .leaf || entry.kind == .extensions || entry.kind == .tpx)
        else { return false }
        stack.append(
            Frame(
                kind: entry.kind, field: entry.field, nameStart: Int32(names.count), nameCount: Int32(n),
                bindingCount: 0, owner: entry.kind == .extensions ? parent.kind : .document))
        pushName(nameStart, nameEnd)
        if entry.kind == .leaf { text.count = 0 }
        return true
    }

    mutating func openElement(_ nameStart: Int, _ nameEnd: Int, tagEnd: Int) throws(RouteKitError) {
        var declared: Int32 = 0
        if !attrs.isEmpty {
            declared = try declareNamespaces()
            // Attribute prefixes must be bound; no attribute may appear twice (pairwise for the usual few
            // attributes, a hash set beyond that so a hostile tag stays linear).
            let b = buf.base
            var seen: Set<[UInt8]>? = attrs.count > 16 ? Set(minimumCapacity: attrs.count) : nil
            var prefixed = 0
            for i in 0..<attrs.count {
                let a = attrs.base[i]
                if a.colon >= 0 {
                    _ = try resolve(a.nameStart, a.colon, isAttribute: true)
                    prefixed += 1
                }
                if a.hasAmp { try checkEntities(a.valueStart, a.valueEnd) }
                let n = a.nameEnd - a.nameStart
                var duplicate = false
                if seen != nil {
                    duplicate =
                        seen?.insert(Array(UnsafeBufferPointer(start: b + a.nameStart, count: n))).inserted == false
                } else {
                    for j in 0..<i where attrs.base[j].nameEnd - attrs.base[j].nameStart == n {
                        if GPXStreamParser.sameBytes(b + attrs.base[j].nameStart, b + a.nameStart, n) {
                            duplicate = true
                        }
                    }
                }
                if duplicate {
                    throw error(
                        .malformedXML, "attribute '\(string(a.nameStart, a.nameEnd))' appears twice", at: a.nameStart)
                }
            }
            if prefixed > 1 { try checkExpandedNames() }
        }
        if stack.count >= FrameStack.capacity - 1 {
            throw error(.malformedXML, "elements are nested more than 512 deep")
        }
        let parent = stack.last
        // Fast path: the same name under the same kind of parent, with the same namespace bindings.
        var words: (UInt64, UInt64, UInt64, UInt64)? = nil
        if declared == 0, let parent, parent.kind != .capture && parent.kind != .ignore {
            words = GPXStreamParser.nameWords(buf.base, nameStart, nameEnd, limit: buf.count)
            if let w = words {
                let entry = elementCache[GPXStreamParser.cacheSlot(w, nameEnd - nameStart, parent)]
                if entry.generation == bindingsGeneration && entry.length == nameEnd - nameStart
                    && entry.parentKind == parent.kind && entry.parentOwner == parent.owner && entry.words == w
                {
                    let frame = Frame(
                        kind: entry.kind, field: entry.field, nameStart: Int32(names.count),
                        nameCount: Int32(nameEnd - nameStart), bindingCount: 0,
                        owner: entry.kind == .extensions ? parent.kind : .document)
                    pushName(nameStart, nameEnd)
                    stack.append(frame)
                    try startSemantics(kind: entry.kind, field: entry.field, parent: parent.kind)
                    return
                }
            }
        }
        // Not seen before: check every character of the name and find its colon.
        var nameColon = -1
        var colons = 0
        for i in nameStart..<nameEnd {
            let c = buf.base[i]
            if !nameBytes[c] {
                throw error(
                    .malformedXML, "invalid character in the element name <\(string(nameStart, nameEnd))>", at: i)
            }
            if c == COLON {
                nameColon = i
                colons += 1
            }
        }
        let colon = try checkQName(nameStart, nameEnd, colon: nameColon, colons: colons)
        let ns = try resolve(nameStart, colon, isAttribute: false)
        let localStart = colon >= 0 ? colon + 1 : nameStart
        var frame = Frame(
            kind: .ignore, field: .none, nameStart: Int32(names.count), nameCount: Int32(nameEnd - nameStart),
            bindingCount: declared, owner: .document)
        pushName(nameStart, nameEnd)

        guard let parent else {
            try openRoot(ns: ns, localStart: localStart, nameEnd: nameEnd)
            frame.kind = .root
            frame.owner = .root
            stack.append(frame)
            return
        }
        if parent.kind == .capture || parent.kind == .ignore {
            frame.kind = parent.kind
            frame.owner = parent.owner
            stack.append(frame)
            if frame.kind == .capture {
                captureTag(nameStart, colon: colon, tagStart: tokStart, tagEnd: tagEnd)
            } else if frame.kind == .ignore && parent.kind != .ignore {
                warn("ignoredElement", "an element inside a value element was ignored")
            }
            return
        }
        let (kind, field) = try classify(parent: parent, ns: ns, localStart: localStart, localEnd: nameEnd)
        frame.kind = kind
        frame.field = field
        switch kind {
        case .capture:
            frame.owner = captureOwner()
            stack.append(frame)
            if ns == .gpx || ns == .none, parent.kind != .extensions {
                warn(
                    "nonStandardElement",
                    "<\(string(nameStart, nameEnd))> is not a GPX 1.1 element here; it is kept but cannot be written back into valid GPX 1.1"
                )
            }
            beginCapture(nameStart, nameEnd: nameEnd, colon: colon, tagStart: tokStart, tagEnd: tagEnd)
            return
        case .ignore:
            warn("ignoredElement", "an element inside a value element was ignored")
            frame.owner = parent.kind
        case .extensions:
            frame.owner = parent.kind
        default:
            break
        }
        if let w = words {
            elementCache[GPXStreamParser.cacheSlot(w, nameEnd - nameStart, parent)] = ElementCacheEntry(
                generation: bindingsGeneration, length: nameEnd - nameStart, words: w, parentKind: parent.kind,
                parentOwner: parent.owner, kind: kind, field: field)
        }
        stack.append(frame)
        try startSemantics(kind: kind, field: field, parent: parent.kind)
    }

    mutating func openRoot(ns: KnownNamespace, localStart: Int, nameEnd: Int) throws(RouteKitError) {
        if rootSeen {
            throw error(.malformedXML, "a second root element: a document has exactly one")
        }
        let local = string(localStart, nameEnd)
        guard local == "gpx" else {
            throw error(
                .invalidGPX, "the root element is <\(string(tokStart + 1, nameEnd))>, not <gpx>: this is not a GPX file"
            )
        }
        guard ns == .gpx || ns == .none else {
            throw error(.invalidGPX, "the root <gpx> is in a namespace that is not GPX 1.0 or 1.1")
        }
        rootSeen = true
        rootHasNamespace = ns == .gpx
        var info = GPXDocumentInfo()
        for ai in 0..<attrs.count {
            let a = attrs[ai]
            let name = string(a.nameStart, a.nameEnd)
            let value = attributeValue(a)
            switch name {
            case "version": info.version = value
            case "creator": info.creator = value
            case "xmlns": info.namespace = value
            default: break
            }
        }
        events.append(.document(info))
        if attrs.isEmpty {
            warn(
                "rootWithoutAttributes",
                "the <gpx> root has no attributes (no version, creator or namespace); read as GPX 1.1")
        } else if !rootHasNamespace {
            warn("rootWithoutNamespace", "the <gpx> root declares no GPX namespace; read as GPX 1.1")
        }
    }

    mutating func attributeValue(_ a: Attribute) -> String {
        let b = buf.base
        if memchrOffset(b, a.valueStart, a.valueEnd, AMP) == nil {
            return string(a.valueStart, a.valueEnd)
        }
        var out = RawBytes(capacity: a.valueEnd - a.valueStart)
        var i = a.valueStart
        while i < a.valueEnd {
            guard let amp = memchrOffset(b, i, a.valueEnd, AMP) else {
                out.append(b + i, a.valueEnd - i)
                break
            }
            out.append(b + i, amp - i)
            guard let reference = try? decodeReference(amp, a.valueEnd) else { break }
            out.append(reference.scalar)
            i = reference.next
        }
        return out.string
    }

    /// The attribute with this unprefixed name, if present.
    mutating func attribute(_ name: StaticString) -> Attribute? {
        let n = name.utf8CodeUnitCount
        let lit = name.utf8Start
        let b = buf.base
        for ai in 0..<attrs.count where attrs.base[ai].nameEnd - attrs.base[ai].nameStart == n {
            let a = attrs.base[ai]
            var i = 0
            while i < n && b[a.nameStart + i] == lit[i] { i += 1 }
            if i == n { return a }
        }
        return nil
    }

    @inline(__always) mutating func isGPX(_ ns: KnownNamespace) -> Bool {
        ns == .gpx || (ns == .none && !rootHasNamespace)
    }

    /// Which kind an element is, given its parent.
    mutating func classify(parent: Frame, ns: KnownNamespace, localStart: Int, localEnd: Int) throws(RouteKitError) -> (
        GPXElementKind, GPXLeafField
    ) {
        let b = buf.base
        let n = localEnd - localStart
        let s = b + localStart
        @inline(__always) func eq(_ lit: StaticString) -> Bool {
            n == lit.utf8CodeUnitCount && memcmp(s, lit.utf8Start, n) == 0
        }
        let gpx = isGPX(ns)
        // A GPX structural element in the wrong place is an error, never silently skipped.
        func misplaced() -> RouteKitError {
            let parentName = String(
                decoding: UnsafeBufferPointer(start: names.base + Int(parent.nameStart), count: Int(parent.nameCount)),
                as: UTF8.self)
            return error(.invalidGPX, "<\(string(localStart, localEnd))> is not allowed inside <\(parentName)>")
        }
        func isStructural() -> Bool {
            eq("gpx") || eq("metadata") || eq("wpt") || eq("rte") || eq("rtept") || eq("trk") || eq("trkseg")
                || eq("trkpt")
        }
        func pointLeaf() -> GPXLeafField? {
            switch n {
            case 3:
                if eq("ele") { return .ele }
                if eq("src") { return .src }
                if eq("sym") { return .sym }
                if eq("fix") { return .fix }
                if eq("sat") { return .sat }
                if eq("cmt") { return .cmt }
                if eq("url") { return .url }
            case 4:
                if eq("time") { return .time }
                if eq("name") { return .name }
                if eq("desc") { return .desc }
                if eq("type") { return .type }
                if eq("hdop") { return .hdop }
                if eq("vdop") { return .vdop }
                if eq("pdop") { return .pdop }
            case 5: if eq("speed") { return .speed }
            case 6:
                if eq("magvar") { return .magvar }
                if eq("course") { return .course }
                if eq("dgpsid") { return .dgpsid }
            case 7: if eq("urlname") { return .urlname }
            case 11: if eq("geoidheight") { return .geoidheight }
            case 13: if eq("ageofdgpsdata") { return .ageofdgpsdata }
            default: break
            }
            return nil
        }
        switch parent.kind {
        case .trkseg:
            if gpx {
                if eq("trkpt") { return (.trkpt, .none) }
                if eq("extensions") { return (.extensions, .none) }
                if isStructural() { throw misplaced() }
            }
            return (.capture, .none)
        case .trkpt, .rtept, .wpt:
            if gpx {
                if let f = pointLeaf() { return (.leaf, f) }
                if eq("extensions") { return (.extensions, .none) }
                if eq("link") { return (.link, .none) }
                if isStructural() { throw misplaced() }
            }
            return (.capture, .none)
        case .extensions:
            if parent.owner == .trkpt || parent.owner == .rtept || parent.owner == .wpt {
                switch ns {
                case .tpx:
                    if eq("TrackPointExtension") { return (.tpx, .none) }
                    // Some Apple Watch exporters nest power in the TrackPointExtension namespace.
                    if eq("PowerExtension") { return (.tpx, .none) }
                case .power:
                    if eq("PowerInWatts") { return (.leaf, .power) }
                case .gpxdata:
                    if eq("hr") { return (.leaf, .hr) }
                    if eq("cadence") { return (.leaf, .cad) }
                    if eq("temp") { return (.leaf, .atemp) }
                case .routekit:
                    if eq("hAcc") { return (.leaf, .hAcc) }
                    if eq("vAcc") { return (.leaf, .vAcc) }
                    if eq("speedAcc") { return (.leaf, .speedAcc) }
                    if eq("courseAcc") { return (.leaf, .courseAcc) }
                    if eq("speed") { return (.leaf, .speed) }
                    if eq("course") { return (.leaf, .course) }
                case .gpx, .none:
                    // Apple Health and Strava write these unqualified, in the GPX namespace.
                    if eq("speed") { return (.leaf, .speed) }
                    if eq("course") { return (.leaf, .course) }
                    if eq("hAcc") { return (.leaf, .hAcc) }
                    if eq("vAcc") { return (.leaf, .vAcc) }
                    if eq("power") { return (.leaf, .power) }
                    if eq("hr") || eq("heartrate") { return (.leaf, .hr) }
                    if eq("cad") || eq("cadence") { return (.leaf, .cad) }
                default: break
                }
            }
            return (.capture, .none)
        case .tpx:
            if ns == .tpx {
                switch n {
                case 2: if eq("hr") { return (.leaf, .hr) }
                case 3: if eq("cad") { return (.leaf, .cad) }
                case 5:
                    if eq("atemp") { return (.leaf, .atemp) }
                    if eq("wtemp") { return (.leaf, .wtemp) }
                    if eq("depth") { return (.leaf, .depth) }
                    if eq("speed") { return (.leaf, .speed) }
                case 6: if eq("course") { return (.leaf, .course) }
                case 12: if eq("PowerInWatts") { return (.leaf, .power) }
                default: break
                }
            }
            return (.capture, .none)
        case .trk, .rte:
            if gpx {
                if parent.kind == .trk && eq("trkseg") { return (.trkseg, .none) }
                // OpenRouteService writes its waypoints inside <trk>: read them as waypoints.
                if eq("wpt") { return (.wpt, .none) }
                if parent.kind == .rte && eq("rtept") { return (.rtept, .none) }
                if eq("name") { return (.leaf, .name) }
                if eq("cmt") { return (.leaf, .cmt) }
                if eq("desc") { return (.leaf, .desc) }
                if eq("src") { return (.leaf, .src) }
                if eq("number") { return (.leaf, .number) }
                if eq("type") { return (.leaf, .type) }
                if eq("url") { return (.leaf, .url) }
                if eq("urlname") { return (.leaf, .urlname) }
                if eq("link") { return (.link, .none) }
                if eq("extensions") { return (.extensions, .none) }
                if isStructural() { throw misplaced() }
            }
            return (.capture, .none)
        case .root, .metadata:
            if gpx {
                if parent.kind == .root {
                    if eq("wpt") { return (.wpt, .none) }
                    if eq("rte") { return (.rte, .none) }
                    if eq("trk") { return (.trk, .none) }
                    if eq("metadata") { return (.metadata, .none) }
                }
                if eq("name") { return (.leaf, .name) }
                if eq("desc") { return (.leaf, .desc) }
                if eq("author") { return (.person, .author) }
                if eq("email") { return (.email, .email) }
                if eq("url") { return (.leaf, .url) }
                if eq("urlname") { return (.leaf, .urlname) }
                if eq("time") { return (.leaf, .time) }
                if eq("keywords") { return (.leaf, .keywords) }
                if eq("bounds") { return (.bounds, .none) }
                if eq("link") { return (.link, .none) }
                if eq("copyright") { return (.copyright, .none) }
                if eq("extensions") { return (.extensions, .none) }
                if isStructural() { throw misplaced() }
            }
            return (.capture, .none)
        case .person:
            if gpx {
                if eq("name") { return (.leaf, .name) }
                if eq("email") { return (.email, .email) }
                if eq("link") { return (.link, .none) }
                if isStructural() { throw misplaced() }
            }
            return (.ignore, .none)
        case .copyright:
            if gpx {
                if eq("year") { return (.leaf, .year) }
                if eq("license") { return (.leaf, .license) }
                if isStructural() { throw misplaced() }
            }
            return (.ignore, .none)
        case .link:
            if gpx {
                if eq("text") { return (.leaf, .linkText) }
                if eq("type") { return (.leaf, .linkType) }
                if isStructural() { throw misplaced() }
            }
            return (.ignore, .none)
        default:
            if gpx && isStructural() { throw misplaced() }
            return (.ignore, .none)
        }
    }

    /// The nearest element whose extension list receives a captured fragment.
    mutating func captureOwner() -> GPXElementKind {
        for i in stride(from: stack.count - 1, through: 0, by: -1) {
            let f = stack[i]
            switch f.kind {
            case .trkpt, .rtept, .wpt, .trk, .rte, .trkseg, .metadata, .root: return f.kind
            default: continue
            }
        }
        return .root
    }

    mutating func startSemantics(kind: GPXElementKind, field: GPXLeafField, parent: GPXElementKind)
        throws(RouteKitError)
    {
        switch kind {
        case .leaf:
            text.count = 0
        case .trkpt, .rtept, .wpt:
            if kind == .wpt && parent != .root {
                warn("waypointInPath", "<wpt> elements inside a <trk> or <rte> were read as waypoints")
            }
            try beginPoint(kind)
        case .trk, .rte:
            flushMetadata()
            path = GPXPathInfo()
            pathStarted = false
        case .trkseg:
            if !pathStarted {
                events.append(.trackStart(path))
                pathStarted = true
            }
            segmentExtensions = []
            events.append(.segmentStart)
        case .metadata:
            break
        case .person:
            person = GPXPerson()
            text.count = 0
        case .email:
            text.count = 0
            if let id = attribute("id"), let domain = attribute("domain") {
                person.email = attributeValue(id) + "@" + attributeValue(domain)
            }
        case .link:
            var href = ""
            if let a = attribute("href") { href = attributeValue(a) }
            link = GPXLink(href: href)
        case .copyright:
            var author = ""
            if let a = attribute("author") { author = attributeValue(a) }
            meta.copyright = GPXCopyright(author: author)
        case .bounds:
            // A <bounds> is only a summary of the points: one that cannot be read (an attribute missing, Link2GPS's
            // min_lat-style names, a value that is not a number) is dropped with a warning, never fatal.
            func v(_ name: StaticString) -> Double? {
                guard let a = attribute(name) else { return nil }
                return coordinate(a)
            }
            if let minLatitude = v("minlat"), let minLongitude = v("minlon"), let maxLatitude = v("maxlat"),
                let maxLongitude = v("maxlon")
            {
                meta.bounds = GPXBounds(
                    minLatitude: minLatitude, minLongitude: minLongitude, maxLatitude: maxLatitude,
                    maxLongitude: maxLongitude)
            } else {
                warn(
                    "invalidBounds",
                    "a <bounds> without numeric minlat, minlon, maxlat and maxlon attributes was dropped")
            }
        default:
            break
        }
    }

    mutating func flushMetadata() {
        if !metaEmitted {
            metaEmitted = true
            emittedMeta = meta
            if !meta.isEmpty { events.append(.metadata(meta)) }
        }
    }

    /// A coordinate attribute's number (character references decoded first, as XML requires).
    mutating func coordinate(_ a: Attribute) -> Double? {
        if !a.hasAmp { return parseDecimal(buf.base + a.valueStart, a.valueEnd - a.valueStart) }
        var text = Array(attributeValue(a).utf8)
        return text.withUnsafeMutableBufferPointer { t in
            guard let base = t.baseAddress else { return nil }
            return parseDecimal(base, t.count)
        }
    }

    mutating func beginPoint(_ kind: GPXElementKind) throws(RouteKitError) {
        if kind == .wpt { flushMetadata() }
        if kind == .rtept && !pathStarted {
            events.append(.routeStart(path))
            pathStarted = true
        }
        let element = kind == .trkpt ? "trkpt" : kind == .rtept ? "rtept" : "wpt"
        // A fresh point either way: a skipped point's children are read into it, then dropped.
        marker = 0
        skipPoint = false
        values = GPXPointValues()
        if hasExtras {
            extras = GPXPointExtras()
            hasExtras = false
        }
        // No lat or lon, or not a number (a Garmin eTrex 30 writes a <trkpt> without them): nothing to keep.
        guard let la = attribute("lat"), let lo = attribute("lon"), let lat = coordinate(la), let lon = coordinate(lo)
        else {
            skip(kind, .withoutCoordinates)
            return
        }
        if kind == .trkpt && (lat == 100 || lat == 200) {
            // OpenTracks' legacy pause (100) and resume (200) markers.
            marker = lat == 100 ? 1 : 2
        } else {
            guard lat >= -90 && lat <= 90 else {
                if options.skipInvalidPoints {
                    skip(kind, .outOfRange)
                    return
                }
                throw error(
                    .invalidValue, "the latitude of <\(element)> is outside -90...90", at: la.valueStart,
                    detail: "lat=\(lat)")
            }
            guard lon >= -180 && lon <= 180 else {
                if options.skipInvalidPoints {
                    skip(kind, .outOfRange)
                    return
                }
                throw error(
                    .invalidValue, "the longitude of <\(element)> is outside -180...180", at: lo.valueStart,
                    detail: "lon=\(lon)")
            }
        }
        location = Location(latitude: lat, longitude: lon)
    }

    /// Why a point was skipped.
    enum SkipReason: Int {
        /// No `lat` or `lon` attribute, or one that is not a number.
        case withoutCoordinates = 0
        /// A latitude or longitude out of range, with ``GPXReadOptions/skipInvalidPoints``.
        case outOfRange = 1
    }

    /// Marks the open point as skipped and counts it (reported by ``reportSkippedPoints()``).
    mutating func skip(_ kind: GPXElementKind, _ reason: SkipReason) {
        skipPoint = true
        location = Location(latitude: 0, longitude: 0)
        let slot = reason.rawValue * 3 + (kind == .trkpt ? 0 : kind == .rtept ? 1 : 2)
        if skippedCounts[slot] == 0 { skippedLines[slot] = tokLine }
        skippedCounts[slot] += 1
    }

    /// One warning per element kind and reason for the points skipped since the last report, counting them; it
    /// names the line of the first, never coordinates. `<trkpt>`s are reported at the end of their `<trk>`,
    /// `<rtept>`s at the end of their `<rte>` (`only`), `<wpt>`s at the end of the document.
    mutating func reportSkippedPoints(only: GPXElementKind? = nil) {
        for slot in 0..<6 where skippedCounts[slot] > 0 {
            if let only, only != (slot % 3 == 0 ? .trkpt : slot % 3 == 1 ? .rtept : .wpt) { continue }
            let n = skippedCounts[slot]
            let element = ["trkpt", "rtept", "wpt"][slot % 3]
            let points = "\(n) <\(element)>"
            let verb = n == 1 ? "was skipped, with its time and values" : "were skipped, with their time and values"
            let warning: GPXWarning
            if slot < 3 {
                warning = GPXWarning(
                    kind: "pointsWithoutCoordinates",
                    message: "\(points) without lat/lon (missing or not a number) \(verb)",
                    line: skippedLines[slot])
            } else {
                warning = GPXWarning(
                    kind: "pointsOutOfRange",
                    message: "\(points) with a latitude or longitude out of range \(verb)",
                    line: skippedLines[slot])
            }
            events.append(.warning(warning))
            skippedCounts[slot] = 0
        }
    }

    // MARK: Capture of unknown elements

    mutating func beginCapture(_ nameStart: Int, nameEnd: Int, colon: Int, tagStart: Int, tagEnd: Int) {
        captureDepth = stack.count
        captureTooLarge = false
        captureBindingMark = bindings.count - Int(stack[stack.count - 1].bindingCount)
        capture.count = 0
        captureUsed.removeAll(keepingCapacity: true)
        captureUsesDefault = false
        captureTag(nameStart, colon: colon, tagStart: tagStart, tagEnd: tagEnd)
        captureInsert = nameEnd - tagStart
    }

    /// Appends to the fragment being captured, up to ``maxCaptureSize``; past it the fragment is dropped (with a
    /// warning) so that one huge unknown extension cannot grow memory without bound.
    mutating func captureAppend(_ p: UnsafePointer<UInt8>, _ n: Int) {
        if captureTooLarge { return }
        if capture.count + n > GPXStreamParser.maxCaptureSize {
            captureTooLarge = true
            capture.count = 0
            return
        }
        capture.append(p, n)
    }

    mutating func captureTag(_ nameStart: Int, colon: Int, tagStart: Int, tagEnd: Int) {
        captureAppend(buf.base + tagStart, tagEnd - tagStart)
        func use(_ s: Int, _ e: Int) {
            let prefix = Array(UnsafeBufferPointer(start: buf.base + s, count: e - s))
            captureUsed.insert(prefix)
        }
        if colon >= 0 { use(nameStart, colon) } else { captureUsesDefault = true }
        for ai in 0..<attrs.count {
            let a = attrs[ai]
            if a.colon >= 0 && !(a.colon - a.nameStart == 5 && memcmp(buf.base + a.nameStart, "xmlns", 5) == 0) {
                use(a.nameStart, a.colon)
            }
        }
    }

    /// Closes the captured fragment: declares, on its root, every namespace it uses from outside.
    mutating func endCapture(owner: GPXElementKind) {
        if captureTooLarge {
            captureDepth = 0
            warn("largeExtension", "an unknown extension element larger than 1 MiB was skipped")
            return
        }
        var decls = ""
        // Only namespaces declared outside the fragment need declaring on its root.
        let rootBindings = Array(bindings[0..<captureBindingMark])
        let own = Array(bindings[captureBindingMark...])
        func declaredOnRoot(_ prefix: [UInt8]) -> Bool {
            own.contains { bd in
                Int(bd.prefixCount) == prefix.count
                    && prefix.withUnsafeBufferPointer { p in
                        p.baseAddress.map { memcmp(nsArena.base + Int(bd.prefixStart), $0, prefix.count) == 0 } ?? true
                    }
            }
        }
        func uri(_ bd: Binding) -> String {
            String(
                decoding: UnsafeBufferPointer(start: nsArena.base + Int(bd.uriStart), count: Int(bd.uriCount)),
                as: UTF8.self)
        }
        for prefix in captureUsed {
            if prefix == Array("xml".utf8) || declaredOnRoot(prefix) { continue }
            if let bd = rootBindings.last(where: { bd in
                Int(bd.prefixCount) == prefix.count
                    && prefix.withUnsafeBufferPointer { p in
                        p.baseAddress.map { memcmp(nsArena.base + Int(bd.prefixStart), $0, prefix.count) == 0 }
                            ?? (prefix.count == 0)
                    }
            }) {
                let p = String(decoding: prefix, as: UTF8.self)
                decls += " xmlns:\(p)=\"\(escapeAttribute(uri(bd)))\""
            }
        }
        if captureUsesDefault, !declaredOnRoot([]), let bd = rootBindings.last(where: { $0.prefixCount == 0 }) {
            decls += " xmlns=\"\(escapeAttribute(uri(bd)))\""
        }
        if !decls.isEmpty { capture.insert(Array(decls.utf8), at: captureInsert) }
        let fragment = capture.string
        captureDepth = 0
        switch owner {
        case .trkpt, .rtept, .wpt:
            extras.extensions.append(fragment)
            hasExtras = true
        case .trk, .rte:
            path.extensions.append(fragment)
        case .trkseg:
            segmentExtensions.append(fragment)
        case .metadata:
            meta.extensions.append(fragment)
        default:
            rootExtensions.append(fragment)
        }
    }

    // MARK: End of element

    mutating func closeElement(tagEnd: Int) throws(RouteKitError) {
        guard let frame = stack.popLast() else { return }
        if frame.kind == .capture {
            // An end tag is copied here; a self-closing tag was copied whole when it opened.
            if buf.base[tokStart + 1] == SLASH { captureAppend(buf.base + tokStart, tagEnd - tokStart) }
            if stack.count + 1 == captureDepth { endCapture(owner: frame.owner) }
        } else {
            try endSemantics(frame)
        }
        names.count = Int(frame.nameStart)
        if frame.bindingCount > 0 {
            let keep = bindings.count - Int(frame.bindingCount)
            nsArena.count = Int(bindings[keep].prefixStart)
            bindings.removeLast(Int(frame.bindingCount))
            bindingsGeneration += 1
        }
    }

    mutating func textString() -> String {
        String(decoding: UnsafeBufferPointer(start: text.base, count: text.count), as: UTF8.self)
    }

    mutating func textIsBlank() -> Bool {
        for i in 0..<text.count where !isXMLSpace(text.base[i]) { return false }
        return true
    }

    /// Speed, course and accuracies: Core Location writes -1 for "unknown"; RouteKit keeps no value in disguise,
    /// so a negative value is read as missing, with a warning.
    mutating func nonNegative(_ field: GPXLeafField) throws(RouteKitError) -> Double? {
        guard let v = try number(field) else { return nil }
        if v < 0 {
            warn(
                "negativeValue",
                "negative speed, course or accuracy values (Core Location's -1 for unknown) were read as missing")
            return nil
        }
        return v
    }

    mutating func number(_ field: GPXLeafField) throws(RouteKitError) -> Double? {
        if let v = parseDecimal(text.base, text.count) { return v }
        if textIsBlank() { return nil }  // <ele></ele> or <ele> </ele>: no value
        throw error(.invalidValue, "<\(field)> is not a number")
    }

    mutating func endSemantics(_ frame: Frame) throws(RouteKitError) {
        if skipPoint && (frame.kind == .trkpt || frame.kind == .rtept || frame.kind == .wpt) {
            // Its children were read and checked; the point, its time and values are dropped (counted).
            skipPoint = false
            return
        }
        switch frame.kind {
        case .leaf:
            let parent = stack.last?.kind ?? .root
            try setLeaf(frame.field, parent: parent)
        case .trkpt:
            if marker != 0 {
                flushBatch(track: true)
                events.append(marker == 1 ? .pause(location.timestamp) : .resume(location.timestamp))
                warn(
                    "pauseMarkers",
                    "OpenTracks' legacy lat=100/lat=200 points were read as pause and resume, not as locations")
            } else {
                batch.append(currentPoint())
                if batch.count >= options.batchSize { flushBatch(track: true) }
            }
        case .rtept:
            batch.append(currentPoint())
            if batch.count >= options.batchSize { flushBatch(track: false) }
        case .wpt:
            events.append(.waypoint(currentPoint()))
        case .trkseg:
            flushBatch(track: true)
            events.append(.segmentEnd(extensions: segmentExtensions))
            segmentExtensions = []
        case .trk:
            if !pathStarted {
                events.append(.trackStart(path))
                pathStarted = true
            }
            reportSkippedPoints(only: .trkpt)
            events.append(.trackEnd(path))
        case .rte:
            if !pathStarted {
                events.append(.routeStart(path))
                pathStarted = true
            }
            flushBatch(track: false)
            reportSkippedPoints(only: .rtept)
            events.append(.routeEnd(path))
        case .metadata:
            metaEmitted = true
            emittedMeta = meta
            events.append(.metadata(meta))
        case .root:
            flushMetadata()
            reportSkippedPoints()
            if meta != emittedMeta {
                // GPX 1.0 descriptive elements after the first waypoint, route or track: said again, complete.
                warn(
                    "lateMetadata",
                    "file-level name, time or other metadata came after the first waypoint, route or track")
                events.append(.metadata(meta))
            }
            if !rootExtensions.isEmpty { events.append(.documentExtensions(rootExtensions)) }
        case .person:
            if person.name == nil && !textIsBlank() { person.name = textString() }
            let parent = stack.last?.kind ?? .root
            if parent == .metadata || parent == .root { meta.author = person }
        case .email:
            if person.email == nil && !textIsBlank() { person.email = textString() }
            let parent = stack.last?.kind ?? .root
            if parent == .metadata || parent == .root {
                var author = meta.author ?? GPXPerson()
                author.email = person.email
                meta.author = author
            }
        case .link:
            let parent = stack.last?.kind ?? .root
            switch parent {
            case .trkpt, .rtept, .wpt:
                extras.links.append(link)
                hasExtras = true
            case .trk, .rte:
                path.links.append(link)
            case .person:
                person.link = link
            default:
                meta.links.append(link)
            }
        default:
            break
        }
    }

    mutating func currentPoint() -> GPXPoint {
        var point = GPXPoint(location: location, values: values)
        if hasExtras { point.extras = extras }
        return point
    }

    mutating func flushBatch(track: Bool) {
        guard !batch.isEmpty else { return }
        events.append(track ? .trackPoints(batch) : .routePoints(batch))
        batch.removeAll(keepingCapacity: true)
    }

    mutating func setLeaf(_ field: GPXLeafField, parent: GPXElementKind) throws(RouteKitError) {
        switch parent {
        case .trkpt, .rtept, .wpt, .tpx, .extensions:
            try setPointField(field)
        case .trk, .rte:
            switch field {
            case .name: path.name = textString()
            case .cmt: path.comment = textString()
            case .desc: path.description = textString()
            case .src: path.source = textString()
            case .type: path.type = textString()
            case .number:
                guard textIsBlank() || parseInteger(text.base, text.count) != nil else {
                    throw error(.invalidValue, "<number> is not an integer")
                }
                path.number = parseInteger(text.base, text.count)
            case .url: path.links.append(GPXLink(href: textString()))
            case .urlname:
                if path.links.isEmpty { path.links.append(GPXLink(href: "")) }
                path.links[path.links.count - 1].text = textString()
            default: break
            }
        case .root, .metadata:
            switch field {
            case .name: meta.name = textString()
            case .desc: meta.description = textString()
            case .time:
                meta.time = try timestamp()
            case .keywords: meta.keywords = textString()
            case .url: meta.links.append(GPXLink(href: textString()))
            case .urlname:
                if meta.links.isEmpty { meta.links.append(GPXLink(href: "")) }
                meta.links[meta.links.count - 1].text = textString()
            default: break
            }
        case .person:
            if field == .name { person.name = textString() }
        case .copyright:
            let value = textString()
            if field == .year { meta.copyright?.year = value }
            if field == .license { meta.copyright?.license = value }
        case .link:
            if field == .linkText { link.text = textString() }
            if field == .linkType { link.type = textString() }
        default:
            break
        }
    }

    mutating func timestamp() throws(RouteKitError) -> Timestamp? {
        if let t = parseTimestamp(text.base, text.count, cache: &dayCache) { return t }
        if textIsBlank() { return nil }
        throw error(.invalidValue, "<time> is not an ISO 8601 time", detail: "<time>\(textString().prefix(60))</time>")
    }

    mutating func setPointField(_ field: GPXLeafField) throws(RouteKitError) {
        switch field {
        case .ele: location.altitude = try number(field)
        case .time: location.timestamp = try timestamp()
        case .hr: values.storage.0 = try number(field) ?? .nan
        case .cad: values.storage.1 = try number(field) ?? .nan
        case .atemp: values.storage.2 = try number(field) ?? .nan
        case .wtemp: values.storage.3 = try number(field) ?? .nan
        case .depth: values.storage.4 = try number(field) ?? .nan
        case .power: values.storage.5 = try number(field) ?? .nan
        case .speed: location.speed = try nonNegative(field)
        case .course: location.course = try nonNegative(field)
        case .hAcc: location.horizontalAccuracy = try nonNegative(field)
        case .vAcc: location.verticalAccuracy = try nonNegative(field)
        case .speedAcc: location.speedAccuracy = try nonNegative(field)
        case .courseAcc: location.courseAccuracy = try nonNegative(field)
        default:
            hasExtras = true
            switch field {
            case .name: extras.name = textString()
            case .cmt: extras.comment = textString()
            case .desc: extras.description = textString()
            case .src: extras.source = textString()
            case .sym: extras.symbol = textString()
            case .type: extras.type = textString()
            case .fix: extras.fix = textString()
            case .sat: extras.satellites = try integer(field)
            case .dgpsid: extras.dgpsID = try integer(field)
            case .hdop: extras.hdop = try number(field)
            case .vdop: extras.vdop = try number(field)
            case .pdop: extras.pdop = try number(field)
            case .magvar: extras.magneticVariation = try number(field)
            case .geoidheight: extras.geoidHeight = try number(field)
            case .ageofdgpsdata: extras.ageOfDGPSData = try number(field)
            case .url: extras.links.append(GPXLink(href: textString()))
            case .urlname:
                if extras.links.isEmpty { extras.links.append(GPXLink(href: "")) }
                extras.links[extras.links.count - 1].text = textString()
            default: break
            }
        }
    }

    mutating func integer(_ field: GPXLeafField) throws(RouteKitError) -> Int? {
        if textIsBlank() { return nil }
        guard let v = parseInteger(text.base, text.count) else {
            throw error(.invalidValue, "<\(field)> is not an integer")
        }
        return v
    }
}

func escapeAttribute(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case "\"": out += "&quot;"
        default: out.append(c)
        }
    }
    return out
}
