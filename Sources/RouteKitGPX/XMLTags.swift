internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Tags, part of the tokenizer layer: start tags with their attributes (into ``AttributeList``, offsets into the input
// buffer, nothing copied), end tags matched against the open element, qualified names checked. What it hands on: a
// start tag goes to ``GPXStreamParser/openElement(_:_:tagEnd:)`` (or the element cache's shortcut,
// ``GPXStreamParser/openCached(_:_:)``) in GPXElements.swift, an end tag to
// ``GPXStreamParser/closeElement(tagEnd:)``. A value element whose whole value is already buffered
// (`<ele>512.4</ele>`) is read here in one go (``GPXStreamParser/leafValue(_:_:)``).

/// One attribute of the current tag, as offsets into the input buffer.
struct Attribute {
    var nameStart: Int
    var nameEnd: Int
    var colon: Int  // offset of ':' in the name, or -1
    var valueStart: Int
    var valueEnd: Int
    /// Whether the value contains '&' (its references are checked even when RouteKit does not read it).
    var hasAmp: Bool
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

extension GPXStreamParser {
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
        let b = input.bytes.base
        guard GPXStreamParser.isNameStart(b[s]), b[s] != COLON else {
            throw error(.malformedXML, "invalid name: a name must start with a letter or '_'", at: s)
        }
        if colons == 0 { return -1 }
        guard colons == 1, colon < e - 1, GPXStreamParser.isNameStart(b[colon + 1]), b[colon + 1] != COLON else {
            throw error(
                .malformedXML,
                "invalid qualified name '\(input.string(s, e))' (namespaces allow one ':' between prefix and local name)",
                at: s)
        }
        return colon
    }

    /// A start tag or an empty-element tag at `p` (`<name attr="value"…>` or `…/>`): reads its name and attributes
    /// into ``attrs``, opens the element, and closes it again when it is empty. Returns the offset after the tag
    /// (or after the whitespace that follows it), or nil when the tag is not complete in the buffer.
    mutating func startTag(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = input.bytes.base
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
                    input.newline(at: q)
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
                    .malformedXML,
                    "expected whitespace, '>' or '/>' in the tag of <\(input.string(nameStart, nameEnd))>",
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
                throw error(
                    .malformedXML, "unexpected character in the tag of <\(input.string(nameStart, nameEnd))>", at: q)
            }
            while q < end && isXMLSpace(b[q]) {
                if b[q] == NL {
                    input.newline(at: q)
                }
                q &+= 1
            }
            if q >= end { return nil }
            guard b[q] == EQ else {
                throw error(.malformedXML, "attribute '\(input.string(an, ae))' has no '=' and value", at: q)
            }
            q &+= 1
            while q < end && isXMLSpace(b[q]) {
                if b[q] == NL {
                    input.newline(at: q)
                }
                q &+= 1
            }
            if q >= end { return nil }
            let quote = b[q]
            guard quote == DQ || quote == SQ else {
                throw error(.malformedXML, "the value of attribute '\(input.string(an, ae))' is not in quotes", at: q)
            }
            // One pass over the (short) value: its end, a stray '<', and newlines.
            var close = q + 1
            var valueHasAmp = false
            while close < end {
                let c = b[close]
                if c == quote { break }
                if c == AMP { valueHasAmp = true }
                if XMLInput.isForbiddenControl(c) {
                    throw error(
                        .malformedXML, "a control character is not allowed in the value of an attribute", at: close)
                }
                if c == LT {
                    throw error(
                        .malformedXML, "'<' is not allowed in the value of attribute '\(input.string(an, ae))'", at: q)
                }
                if c == NL {
                    input.newline(at: close)
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
        let b = input.bytes.base
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
        input.startToken(at: r)
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

    /// An end tag at `p`: it must name the open element, which it closes.
    mutating func endTag(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = input.bytes.base
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
            throw error(.malformedXML, "end tag </\(input.string(p + 2, ne))> without a matching start tag")
        }
        let n = ne - p - 2
        guard n == Int(top.nameCount), memcmp(b + p + 2, names.base + Int(top.nameStart), n) == 0 else {
            let open = String(
                decoding: UnsafeBufferPointer(start: names.base + Int(top.nameStart), count: Int(top.nameCount)),
                as: UTF8.self)
            throw error(
                .malformedXML, "end tag </\(input.string(p + 2, ne))> does not match the open element <\(open)>")
        }
        input.countLines(ne, gt)
        try closeElement(tagEnd: gt + 1)
        return gt + 1
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
}
