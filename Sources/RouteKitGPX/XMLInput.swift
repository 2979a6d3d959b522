internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// The first layer of the GPX reader (``GPXStreamParser``): the bytes of the document and where they are.
//
// ``XMLInput`` holds the buffered, UTF-8 bytes not yet parsed (single-byte encodings are transcoded as they arrive;
// see XMLEncoding.swift), the parse position in them, the line and column counters, and the start of the token being
// parsed, from which every error takes its line and column. It hands the tokenizer (XMLTokenizer.swift) a pointer
// and a count: the tokenizer reads `bytes.base[pos..<bytes.count]`, moves `pos` past each complete token and counts
// the newlines it passes.

// ASCII bytes used by the scanners.
let LT = UInt8(ascii: "<")
let GT = UInt8(ascii: ">")
let SLASH = UInt8(ascii: "/")
let QMARK = UInt8(ascii: "?")
let BANG = UInt8(ascii: "!")
let EQ = UInt8(ascii: "=")
let COLON = UInt8(ascii: ":")
let AMP = UInt8(ascii: "&")
let SEMI = UInt8(ascii: ";")
let DQ = UInt8(ascii: "\"")
let SQ = UInt8(ascii: "'")
let NL: UInt8 = 0x0A

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

/// The document's bytes as the parser sees them: UTF-8 in a growable buffer, a parse position, and the counters
/// that give every error its line and column. Not copyable: it owns the buffer.
struct XMLInput: ~Copyable {
    /// The name used in errors.
    let fileName: String?
    /// Buffered bytes, UTF-8 (transcoded when the document declared a single-byte encoding).
    var bytes: RawBytes
    /// Offset in `bytes` of the first byte not yet parsed.
    var pos = 0
    /// Absolute offset in the (decoded) document of `bytes.base[0]`.
    var fileOffset = 0
    /// The line of `pos`, from 1, and the absolute offset of that line's first byte.
    var line = 1
    var lineStart = 0
    /// The token being parsed: its offset in `bytes`, and the line it starts on (errors are reported from here).
    var tokenStart = 0
    var tokenLine = 1
    var tokenLineStart = 0
    /// Whether the input is in a single-byte encoding being transcoded to UTF-8.
    var isTranscoding = false
    /// Code points of bytes 0x80-0xFF for windows-1252 or ISO-8859-15 (empty: ISO-8859-1, byte = code point).
    var upperHalf: [UInt32] = []
    /// Whether the start of the document (a byte order mark, UTF-16, gzip) is still to be looked at.
    var atStart = true
    /// Where an XML declaration may stand (after a byte order mark), as an absolute offset.
    var declarationOffset = 0

    init(capacity: Int, fileName: String?) {
        self.fileName = fileName
        self.bytes = RawBytes(capacity: capacity)
    }

    /// Starts a token at `p`: errors from here on are reported from its line.
    @inline(__always) mutating func startToken(at p: Int) {
        tokenStart = p
        tokenLine = line
        tokenLineStart = lineStart
    }

    /// Sets the line counter back to the start of the current token (which turned out incomplete).
    @inline(__always) mutating func rewindToTokenStart() {
        line = tokenLine
        lineStart = tokenLineStart
    }

    /// Counts one newline, at `bytes.base[q]`.
    @inline(__always) mutating func newline(at q: Int) {
        line += 1
        lineStart = fileOffset + q + 1
    }

    /// Counts `newlines` newlines passed by a scan, the last at `bytes.base[last]` (`last` is -1 when there were
    /// none).
    @inline(__always) mutating func passed(_ newlines: Int, lastAt last: Int) {
        line &+= newlines
        if last >= 0 { lineStart = fileOffset + last + 1 }
    }

    /// An error at `offset` (default: the start of the current token), with its line and column.
    func error(_ code: RouteKitError.Code, _ message: String, at offset: Int? = nil, detail: String? = nil)
        -> RouteKitError
    {
        let o = offset ?? tokenStart
        // The line of `o`: counted from the token's start (newlines inside the token up to `o`).
        var l = tokenLine
        var ls = tokenLineStart
        if o >= tokenStart {
            var i = tokenStart
            while i < o && i < bytes.count {
                if bytes.base[i] == NL {
                    l += 1
                    ls = fileOffset + i + 1
                }
                i += 1
            }
        }
        return RouteKitError(
            code, message, file: fileName, line: l, column: fileOffset + o - ls + 1, privateDetail: detail)
    }

    /// Moves unparsed bytes to the front of the buffer.
    mutating func compact() {
        if pos > 0 {
            bytes.removeFirst(pos)
            fileOffset += pos
            pos = 0
        }
    }

    /// Appends bytes (transcoding ISO-8859-1 to UTF-8 when the document declared it).
    mutating func append(_ p: UnsafePointer<UInt8>, _ n: Int) {
        compact()
        if isTranscoding { appendTranscoded(p, n) } else { bytes.append(p, n) }
    }

    /// Counts newlines in `b[from..<to]` into the line counter.
    @inline(__always) mutating func countLines(_ from: Int, _ to: Int) {
        let b = bytes.base
        var i = from
        while let j = memchrOffset(b, i, to, NL) {
            line += 1
            lineStart = fileOffset + j + 1
            i = j + 1
        }
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

    /// The bytes `bytes.base[s..<e]` as a string.
    func string(_ s: Int, _ e: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: bytes.base + s, count: max(0, e - s)), as: UTF8.self)
    }
}
