public import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A streaming scanner of the elements of an XML document, written for Apple Health's `export.xml` (gigabytes of
/// flat, attribute-only elements) instead of Foundation's `XMLParser`.
///
/// It reads its `ByteSource` (RouteKitIngest's) a chunk at a time and hands out start and end tags with their
/// attributes; memory stays at the chunk size plus the largest single tag, whatever the document's size.
///
/// - **Attributes** in single or double quotes, with `&amp; &lt; &gt; &quot; &apos;` and numeric character
///   references decoded. Any other entity reference in an attribute is an error: entities are never expanded.
/// - **Skipped**: text content (entity references in text are not even looked at), comments, processing
///   instructions, CDATA sections, and the document type declaration with its internal subset, read quote-aware
///   and never interpreted. A billion-laughs or external-entity DTD is therefore inert, and Apple's malformed
///   iOS 16 DTD (an unclosed `ATTLIST`, stray control characters) does not matter.
/// - **Checked**: tags nest and close properly, attribute syntax, references. Several top-level elements (a
///   fragment of an export) are accepted. The encoding is taken to be UTF-8.
/// - **Errors** are `RouteKitError.Code.malformedXML` with the file, line and column; they never quote the
///   document's content.
///
/// `@_spi(RouteKitInternals)`: the importer's scanner, public only to the Health fuzzer (FuzzTesting) and the tests;
/// applications import exports with `HealthImporter`.
@_spi(RouteKitInternals)
public final class HealthXMLScanner {
    /// What ``next()`` found.
    public enum Event: Sendable, Hashable {
        /// A start tag (a self-closing tag gives a start and then an end).
        case start
        /// An end tag.
        case end
    }

    struct Attribute {
        var nameStart: Int
        var nameEnd: Int
        var valueStart: Int
        var valueEnd: Int
        var hasReference: Bool
    }

    /// The name in errors.
    public let fileName: String
    private let stream: any ByteSource
    private let chunkSize: Int
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The largest single tag (or kept stretch of the buffer) before the scanner gives up.
    private let maxMarkup: Int
    private let maxDepth: Int
    private var pos = 0
    private var end = 0
    private var eof = false
    /// File offset of `buffer[0]`.
    private var base = 0
    /// Newlines before `buffer[0]`, and the file offset of the last of them (-1 for none).
    private var linesBefore = 0
    private var lastNewlineBefore = -1
    // The current tag.
    private var nameStart = 0
    private var nameEnd = 0
    private var tagStart = 0
    private var pendingEnd = false
    private var attributes: [Attribute] = []
    // Open elements: their names, end to end, and where each starts.
    private var stackBytes: [UInt8] = []
    private var stackStarts: [Int] = []
    /// Attribute names with spaces in them (2015 exports) read as one name.
    public private(set) var namesWithSpaces = 0

    /// A scanner over `stream`.
    /// - Parameters:
    ///   - stream: where the document's bytes come from.
    ///   - fileName: the name errors give for the document.
    ///   - chunkSize: bytes asked of the stream at a time.
    ///   - maxMarkup: the largest single tag accepted (a longer one is an error, not unbounded memory).
    ///   - maxDepth: the most elements open at once (``defaultMaxDepth``); a deeper document is an error naming the
    ///     offset of the tag that went too deep. A real export nests six levels.
    ///   - startOffset: where in the document `stream` starts (a second pass over part of it); offsets count from
    ///     the document's start, line numbers from there.
    package init(
        stream: any ByteSource, fileName: String, chunkSize: Int = 1 << 20, maxMarkup: Int = 64 << 20,
        maxDepth: Int = HealthXMLScanner.defaultMaxDepth, startOffset: Int = 0
    ) {
        self.maxDepth = max(1, maxDepth)
        self.base = startOffset
        self.stream = stream
        self.fileName = fileName
        self.chunkSize = max(1, chunkSize)
        self.maxMarkup = max(4096, maxMarkup)
        self.capacity = max(2 * self.chunkSize, 4096)
        self.buffer = .allocate(capacity: capacity)
    }

    /// A scanner over `bytes` held in memory, handed to it at most `readSize` at a time (the fuzzer and the tests use
    /// small reads to put chunk boundaries everywhere); the other parameters as for a scanner over a stream.
    public convenience init(
        bytes: [UInt8], readSize: Int = .max, fileName: String, chunkSize: Int = 1 << 20, maxMarkup: Int = 64 << 20,
        maxDepth: Int = HealthXMLScanner.defaultMaxDepth
    ) {
        self.init(
            stream: MemoryByteSource(bytes, readSize: readSize), fileName: fileName, chunkSize: chunkSize,
            maxMarkup: maxMarkup, maxDepth: maxDepth)
    }

    deinit { buffer.deallocate() }

    /// The document's bytes scanned so far: the offset just past the current tag.
    public var bytesScanned: Int { base + pos }

    /// The offset of the current tag's `<` in the document.
    public var tagOffset: Int { base + tagStart }

    /// The most elements a document may have open at once unless a scanner is given another bound: 256.
    public static let defaultMaxDepth = 256

    /// How many elements are open (the current start tag's element included).
    public var depth: Int { stackStarts.count }

    // MARK: Reading

    /// Brings more bytes in, keeping everything from `pos`; `false` at the end of the stream.
    private func fill() throws(RouteKitError) -> Bool {
        if eof { return false }
        if end == capacity {
            if pos > 0 {
                countNewlines(upTo: pos)
                memmove(buffer, buffer + pos, end - pos)
                base += pos
                end -= pos
                pos = 0
            } else {
                guard capacity < maxMarkup else {
                    throw error("a tag is longer than \(maxMarkup) bytes", at: pos)
                }
                let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                bigger.update(from: buffer, count: end)
                buffer.deallocate()
                buffer = bigger
                capacity *= 2
            }
        }
        let n = try stream.read(
            into: UnsafeMutableRawBufferPointer(start: buffer + end, count: min(chunkSize, capacity - end)))
        if n == 0 {
            eof = true
            return false
        }
        end += n
        return true
    }

    /// At least `n` bytes from `pos` in the buffer; `false` when the stream ends first.
    private func ensure(_ n: Int) throws(RouteKitError) -> Bool {
        while end - pos < n {
            if !(try fill()) { return false }
        }
        return true
    }

    private func countNewlines(upTo limit: Int) {
        var p = 0
        while p < limit {
            guard let hit = memchr(buffer + p, 0x0A, limit - p) else { break }
            let i = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            linesBefore += 1
            lastNewlineBefore = base + i
            p = i + 1
        }
    }

    /// 1-based line and column (in bytes) of buffer index `i`.
    func lineColumn(_ i: Int) -> (line: Int, column: Int) {
        var line = linesBefore
        var last = lastNewlineBefore
        var p = 0
        let limit = min(max(i, 0), end)
        while p < limit {
            guard let hit = memchr(buffer + p, 0x0A, limit - p) else { break }
            let k = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            line += 1
            last = base + k
            p = k + 1
        }
        return (line + 1, base + limit - last)
    }

    private func error(_ message: String, at i: Int) -> RouteKitError {
        let (line, column) = lineColumn(i)
        return RouteKitError(.malformedXML, message, file: fileName, line: line, column: column)
    }

    /// The line and column of the current tag.
    public var position: (line: Int, column: Int) { lineColumn(tagStart) }

    // MARK: Scanning

    /// The next start or end tag, `nil` at the end of the document.
    /// - Throws: `RouteKitError.Code.malformedXML` with file, line and column; `RouteKitError.Code.io`.
    public func next() throws(RouteKitError) -> Event? {
        if pendingEnd {
            pendingEnd = false
            popName()
            return .end
        }
        while true {
            // Text: up to the next '<'.
            if pos >= end {
                if !(try fill()) {
                    if let open = stackStarts.indices.last {
                        let name = String(decoding: stackBytes[stackStarts[open]...], as: UTF8.self)
                        throw error("the document ends inside <\(name)>", at: end)
                    }
                    return nil
                }
                continue
            }
            guard let hit = memchr(buffer + pos, 0x3C, end - pos) else {
                pos = end
                continue
            }
            pos = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            guard try ensure(2) else { throw error("the document ends inside a tag", at: pos) }
            switch buffer[pos + 1] {
            case UInt8(ascii: "/"):
                return try endTag()
            case UInt8(ascii: "?"):
                try skip(past: [0x3F, 0x3E], from: 2, what: "a processing instruction")
            case UInt8(ascii: "!"):
                _ = try ensure(9)
                if matches("<!--") {
                    try skip(past: [0x2D, 0x2D, 0x3E], from: 4, what: "a comment")
                } else if matches("<![CDATA[") {
                    if stackStarts.isEmpty { throw error("CDATA outside the root element", at: pos) }
                    try skip(past: [0x5D, 0x5D, 0x3E], from: 9, what: "a CDATA section")
                } else if matches("<!DOCTYPE") {
                    if !stackStarts.isEmpty { throw error("a document type declaration inside an element", at: pos) }
                    try skipDoctype()
                } else {
                    throw error("'<!' starts no comment, CDATA section or document type declaration", at: pos)
                }
            default:
                return try startTag()
            }
        }
    }

    private func matches(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard end - pos >= n else { return false }
        return memcmp(buffer + pos, s.utf8Start, n) == 0
    }

    /// Skips to just past `terminator`, dropping what it passes.
    private func skip(past terminator: [UInt8], from offset: Int, what: String) throws(RouteKitError) {
        var j = pos + offset
        let first = terminator[0]
        let t = terminator.count
        while true {
            if j + t > end {
                // Keep the last bytes that might begin the terminator.
                let keep = max(pos, min(j, end - (t - 1)))
                let off = j - keep
                pos = keep
                guard try fill() else { throw error("the document ends inside \(what)", at: end) }
                j = pos + off
                continue
            }
            if buffer[j] == first {
                var k = 1
                while k < t && buffer[j + k] == terminator[k] { k += 1 }
                if k == t {
                    pos = j + t
                    return
                }
            }
            j += 1
        }
    }

    /// The byte at `pos + offset`, bringing more in as needed; `nil` at the end.
    private func byte(_ offset: inout Int) throws(RouteKitError) -> UInt8? {
        while pos + offset >= end {
            // Drop what was passed (a DTD can be long; it is never kept).
            if offset > 64 {
                pos += offset - 16
                offset = 16
            }
            guard try fill() else { return nil }
        }
        return buffer[pos + offset]
    }

    /// Skips `<!DOCTYPE … [ internal subset ]>`, quote-aware, never interpreting it.
    private func skipDoctype() throws(RouteKitError) {
        var o = 9
        var quote: UInt8 = 0
        var subset = false
        var subsetDone = false
        while true {
            guard let c = try byte(&o) else {
                throw error("the document ends inside the document type declaration", at: end)
            }
            if quote != 0 {
                if c == quote { quote = 0 }
                o += 1
                continue
            }
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                if subsetDone { throw error("unexpected text after the internal subset", at: pos + o) }
                quote = c
            case UInt8(ascii: "["):
                if subset || subsetDone { throw error("'[' in the document type declaration", at: pos + o) }
                subset = true
            case UInt8(ascii: "]") where subset:
                subset = false
                subsetDone = true
            case UInt8(ascii: ">") where !subset:
                pos += o + 1
                return
            case UInt8(ascii: "<") where subset:
                // A comment or processing instruction inside the subset: its quotes are not quotes.
                pos += o
                o = 0
                _ = try ensure(4)
                if matches("<!--") {
                    try skip(past: [0x2D, 0x2D, 0x3E], from: 4, what: "a comment")
                    continue
                }
                if matches("<?") {
                    try skip(past: [0x3F, 0x3E], from: 2, what: "a processing instruction")
                    continue
                }
            case 0x20, 0x09, 0x0A, 0x0D:
                break
            default:
                if subsetDone { throw error("unexpected text after the internal subset", at: pos + o) }
            }
            o += 1
        }
    }

    private func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D }

    private func isNameStart(_ c: UInt8) -> Bool {
        ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A) || c == 0x5F || c == 0x3A || c >= 0x80
    }

    private func isNameByte(_ c: UInt8) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2E
    }

    /// The index of the `>` that ends the tag at `pos`, outside quotes.
    private func tagEnd() throws(RouteKitError) -> Int {
        var j = pos + 1
        var quote: UInt8 = 0
        while true {
            if j >= end {
                let off = j - pos
                guard try fill() else { throw error("the document ends inside a tag", at: pos) }
                j = pos + off
                continue
            }
            if quote != 0 {
                if let hit = memchr(buffer + j, Int32(quote), end - j) {
                    j = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                    quote = 0
                } else {
                    j = end
                }
                continue
            }
            let c = buffer[j]
            if c == 0x3E { return j }
            if c == 0x22 || c == 0x27 {
                quote = c
            } else if c == 0x3C {
                throw error("'<' inside a tag", at: j)
            }
            j += 1
        }
    }

    private func startTag() throws(RouteKitError) -> Event {
        let gt = try tagEnd()
        tagStart = pos
        var i = pos + 1
        guard isNameStart(buffer[i]) else { throw error("a tag does not start with a name", at: i) }
        nameStart = i
        while i < gt && isNameByte(buffer[i]) { i += 1 }
        nameEnd = i
        attributes.removeAll(keepingCapacity: true)
        var selfClosing = false
        while true {
            let hadSpace = i < gt && isSpace(buffer[i])
            while i < gt && isSpace(buffer[i]) { i += 1 }
            if i == gt { break }
            if buffer[i] == 0x2F {
                guard i + 1 == gt else { throw error("'/' inside a tag", at: i) }
                selfClosing = true
                break
            }
            guard hadSpace, isNameStart(buffer[i]) else { throw error("an attribute name was expected", at: i) }
            let ns = i
            while i < gt && isNameByte(buffer[i]) { i += 1 }
            var ne = i
            while i < gt && isSpace(buffer[i]) { i += 1 }
            // 2015 exports wrote attribute names with spaces: read `a b="…"` as the name "a b".
            while i < gt && buffer[i] != 0x3D && isNameStart(buffer[i]) {
                while i < gt && isNameByte(buffer[i]) { i += 1 }
                ne = i
                namesWithSpaces += 1
                while i < gt && isSpace(buffer[i]) { i += 1 }
            }
            guard i < gt, buffer[i] == 0x3D else { throw error("'=' was expected after an attribute name", at: i) }
            i += 1
            while i < gt && isSpace(buffer[i]) { i += 1 }
            guard i < gt, buffer[i] == 0x22 || buffer[i] == 0x27 else {
                throw error("an attribute value must be quoted", at: i)
            }
            let q = buffer[i]
            i += 1
            let vs = i
            var reference = false
            while i < gt && buffer[i] != q {
                let c = buffer[i]
                if c == 0x26 {
                    reference = true
                    i = try checkReference(i, limit: gt)
                    continue
                }
                if c == 0x3C { throw error("'<' inside an attribute value", at: i) }
                i += 1
            }
            guard i < gt else { throw error("an attribute value is not closed", at: vs) }
            attributes.append(
                Attribute(nameStart: ns, nameEnd: ne, valueStart: vs, valueEnd: i, hasReference: reference))
            i += 1
        }
        guard stackStarts.count < maxDepth else {
            throw error("elements are nested more than \(maxDepth) deep", at: tagStart)
        }
        pos = gt + 1
        stackStarts.append(stackBytes.count)
        stackBytes.append(contentsOf: UnsafeBufferPointer(start: buffer + nameStart, count: nameEnd - nameStart))
        if selfClosing { pendingEnd = true }
        return .start
    }

    /// Checks the reference at `i` (`&`), returning the index after its `;`.
    private func checkReference(_ i: Int, limit: Int) throws(RouteKitError) -> Int {
        var j = i + 1
        while j < limit && j - i < 12 && buffer[j] != 0x3B { j += 1 }
        guard j < limit, buffer[j] == 0x3B else { throw error("'&' starts no reference", at: i) }
        guard decodeReference(i + 1, j) != nil else {
            throw error(
                "an undefined entity or invalid character reference (entities are never expanded)", at: i)
        }
        return j + 1
    }

    /// The scalar of the reference between `&` and `;` (`s..<e`).
    private func decodeReference(_ s: Int, _ e: Int) -> Unicode.Scalar? {
        let n = e - s
        guard n >= 2 else { return nil }
        if buffer[s] == 0x23 {
            var value: UInt32 = 0
            var k = s + 1
            let hex = buffer[k] == 0x78
            if hex { k += 1 }
            guard k < e else { return nil }
            while k < e {
                let c = buffer[k]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x61...0x66 where hex: d = UInt32(c - 0x61 + 10)
                case 0x41...0x46 where hex: d = UInt32(c - 0x41 + 10)
                default: return nil
                }
                value = value * (hex ? 16 : 10) + d
                if value > 0x10FFFF { return nil }
                k += 1
            }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return nil }
            return scalar
        }
        func eq(_ t: StaticString) -> Bool { n == t.utf8CodeUnitCount && memcmp(buffer + s, t.utf8Start, n) == 0 }
        if eq("amp") { return "&" }
        if eq("lt") { return "<" }
        if eq("gt") { return ">" }
        if eq("quot") { return "\"" }
        if eq("apos") { return "'" }
        return nil
    }

    private func endTag() throws(RouteKitError) -> Event {
        let gt = try tagEnd()
        tagStart = pos
        var i = pos + 2
        nameStart = i
        while i < gt && isNameByte(buffer[i]) { i += 1 }
        nameEnd = i
        while i < gt && isSpace(buffer[i]) { i += 1 }
        guard i == gt, nameEnd > nameStart else { throw error("a malformed end tag", at: pos) }
        guard let top = stackStarts.last else { throw error("an end tag without a start tag", at: pos) }
        let open = stackBytes.count - top
        var same = open == nameEnd - nameStart
        var k = 0
        while same && k < open {
            same = stackBytes[top + k] == buffer[nameStart + k]
            k += 1
        }
        guard same else {
            let name = String(decoding: stackBytes[top...], as: UTF8.self)
            throw error("the end tag does not match <\(name)>", at: pos)
        }
        popName()
        pos = gt + 1
        attributes.removeAll(keepingCapacity: true)
        return .end
    }

    private func popName() {
        if let top = stackStarts.popLast() { stackBytes.removeSubrange(top...) }
    }

    // MARK: The current tag

    /// The current tag's name.
    public var name: String {
        String(decoding: UnsafeBufferPointer(start: buffer + nameStart, count: nameEnd - nameStart), as: UTF8.self)
    }

    /// Whether the current tag's name is `s`.
    public func isNamed(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        return nameEnd - nameStart == n && memcmp(buffer + nameStart, s.utf8Start, n) == 0
    }

    private func attributeIndex(_ key: StaticString) -> Int? {
        let n = key.utf8CodeUnitCount
        for (k, a) in attributes.enumerated()
        where a.nameEnd - a.nameStart == n && memcmp(buffer + a.nameStart, key.utf8Start, n) == 0 {
            return k
        }
        return nil
    }

    /// The decoded value of the current start tag's attribute `key`.
    public func attribute(_ key: StaticString) -> String? {
        attributeIndex(key).map { decoded(attributes[$0]) }
    }

    /// Calls `body` with the raw bytes of attribute `key` (references decoded when it has any).
    public func withAttribute<R>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let k = attributeIndex(key) else { return nil }
        let a = attributes[k]
        if a.hasReference {
            return Array(decoded(a).utf8).withUnsafeBufferPointer(body)
        }
        return body(UnsafeBufferPointer(start: buffer + a.valueStart, count: a.valueEnd - a.valueStart))
    }

    /// Whether attribute `key` holds exactly `value` (compared byte for byte, undecoded).
    public func attribute(_ key: StaticString, is value: [UInt8]) -> Bool {
        guard let k = attributeIndex(key) else { return false }
        let a = attributes[k]
        return a.valueEnd - a.valueStart == value.count
            && memcmp(buffer + a.valueStart, value, value.count) == 0
    }

    /// Every attribute of the current start tag, decoded, in document order.
    public var allAttributes: [(name: String, value: String)] {
        attributes.map { a in
            (
                String(
                    decoding: UnsafeBufferPointer(start: buffer + a.nameStart, count: a.nameEnd - a.nameStart),
                    as: UTF8.self),
                decoded(a)
            )
        }
    }

    private func decoded(_ a: Attribute) -> String {
        let raw = UnsafeBufferPointer(start: buffer + a.valueStart, count: a.valueEnd - a.valueStart)
        guard a.hasReference else { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = a.valueStart
        while i < a.valueEnd {
            let c = buffer[i]
            if c == 0x26 {
                var j = i + 1
                while j < a.valueEnd && buffer[j] != 0x3B { j += 1 }
                if let scalar = decodeReference(i + 1, j) {
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                }
                i = j + 1
                continue
            }
            out.append(c)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
