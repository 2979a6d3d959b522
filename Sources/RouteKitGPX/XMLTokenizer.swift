internal import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// The tokenizer, the second layer of the GPX reader (``GPXStreamParser``): it cuts the buffered bytes of the input
// layer (``XMLInput``) into complete tokens: text, comments, CDATA sections, DOCTYPE, processing instructions (the
// XML declaration goes back to the input layer, which may switch encodings), and tags, which XMLTags.swift reads.
// An incomplete token at the end of the buffer waits for more input. Text goes where the open element wants it: the
// value buffer `text` of a value element, the fragment of a captured unknown element (GPXCapture.swift), or nowhere
// (whitespace between elements, checked and counted). The whole document ends in ``finishDocument()``.

extension GPXStreamParser {
    /// Checks the token-size limit after a parse stopped on an incomplete token.
    mutating func checkTokenLimit() throws(RouteKitError) {
        // The incomplete token's own length (the tail may hold more than one token while a retry is deferred).
        if incompleteLength > options.maxTokenSize {
            throw error(.malformedXML, "a single XML token is larger than \(options.maxTokenSize) bytes")
        }
    }

    /// Parses every complete token in the buffer. With `final`, the input has ended.
    /// - Parameter force: parse the tail now even if an incomplete token was just retried (used before reporting
    ///   a decompression error, so that errors come in stream order whatever the chunk sizes).
    mutating func parse(final: Bool, force: Bool = false) throws(RouteKitError) {
        if input.atStart {
            guard try input.detectStart(final: final) else { return }
        }
        // After an incomplete token of length L, wait until the tail has at least doubled before scanning
        // it again: rescanning a long token (a big text, comment or extension) on every small chunk would
        // be quadratic; this keeps the total work linear and changes no result.
        if !final && !force && incompleteLength > 0 && input.bytes.count - input.pos < 2 * incompleteLength { return }
        incompleteLength = 0
        var p = input.pos
        while p < input.bytes.count {
            // Re-read each time: an ISO-8859-1 declaration transcodes (and may move) the buffer.
            let b = input.bytes.base
            let end = input.bytes.count
            input.startToken(at: p)
            let next: Int?
            if b[p] == LT {
                droppedSpaceLine = nil
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
                let (q, newlines, lastNL) = XMLInput.scanSpaces(b, p, end)
                if q < end && b[q] == LT && (stack.isEmpty || !stack[stack.count - 1].collectsText) {
                    input.passed(newlines, lastAt: lastNL)
                    next = q
                } else if q == end && q > p && !final && (stack.isEmpty || !stack[stack.count - 1].collectsText) {
                    // Whitespace up to the end of what is buffered, where no text is kept: counted and dropped now.
                    // Buffering it until the next '<' held gigabytes of a whitespace-padded file in memory.
                    if droppedSpaceLine == nil { droppedSpaceLine = input.tokenLine }
                    input.passed(newlines, lastAt: lastNL)
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
                        input.passed(newlines, lastAt: lastNL)
                        input.countLines(q, r)
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
                    throw rootSeen ? error(.malformedXML, "text after the root element", at: q) : notXML(at: q)
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
                input.rewindToTokenStart()
                if final {
                    input.pos = p
                    throw unexpectedEnd()
                }
                incompleteLength = end - p
                break
            }
            p = n
        }
        input.pos = p
        if final && p >= input.bytes.count { try finishDocument() }
    }

    /// After a tag: skips the whitespace up to the next tag when the open element keeps no text, so the token
    /// loop goes straight to that tag. Returns `q` unchanged otherwise.
    @inline(__always)
    mutating func skipToNextTag(_ q: Int, _ end: Int) -> Int {
        if stack.count > 0 && stack.base[stack.count - 1].collectsText { return q }
        let (r, newlines, lastNL) = XMLInput.scanSpaces(input.bytes.base, q, end)
        guard r < end && input.bytes.base[r] == LT else { return q }
        input.passed(newlines, lastAt: lastNL)
        return r
    }

    /// The error for content where XML must start (before the root element): what the file is instead when its first
    /// bytes say so (a PDF document, a picture: `InputFile.lookalike(ofHead:)`), else that it is not XML; at the
    /// start of the file, either names the formats RouteKit reads (`InputFile.readableFormats`).
    func notXML(at offset: Int) -> RouteKitError {
        let message = "not XML: expected '<' but found other content before the root element"
        guard input.fileOffset == 0 else { return error(.malformedXML, message, at: offset) }
        let count = min(input.bytes.count, 16)
        var head: [UInt8] = []
        head.reserveCapacity(count)
        for i in 0..<count { head.append(input.bytes.base[i]) }
        if let what = InputFile.lookalike(ofHead: head) {
            return error(
                .unsupportedFormat, "not a route file: looks like \(what); \(InputFile.readableFormats)", at: offset)
        }
        return error(.malformedXML, "\(message); \(InputFile.readableFormats)", at: offset)
    }

    /// Text between tags.
    mutating func textToken(_ from: Int, _ to: Int) throws(RouteKitError) {
        let b = input.bytes.base
        if let top = stack.last {
            switch top.kind {
            case .leaf, .person, .email:
                input.countLines(from, to)
                try appendText(from, to)
                return
            case .capture:
                input.countLines(from, to)
                try input.checkEntities(from, to)
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
                input.newline(at: i)
            } else if c != 0x20 && c != 0x09 && c != 0x0D {
                break
            }
            i += 1
        }
        if i == to { return }
        input.countLines(i, to)
        if stack.isEmpty {
            if rootSeen {
                throw error(.malformedXML, "text after the root element", at: i)
            }
            throw notXML(at: i)
        }
        try input.checkEntities(from, to)
        if stack.last?.kind != .ignore {
            warn("ignoredText", "text inside a GPX element that holds no text was ignored", line: droppedSpaceLine)
        }
        droppedSpaceLine = nil
    }

    /// Appends text to `text`, decoding entity and character references.
    mutating func appendText(_ from: Int, _ to: Int) throws(RouteKitError) {
        try input.checkChars(from, to)
        let b = input.bytes.base
        var i = from
        while i < to {
            guard let amp = memchrOffset(b, i, to, AMP) else {
                text.append(b + i, to - i)
                return
            }
            text.append(b + i, amp - i)
            let reference = try input.decodeReference(amp, to)
            text.append(reference.scalar)
            i = reference.next
        }
    }

    /// `<!--…-->`, `<![CDATA[…]]>`, `<!DOCTYPE…>`.
    mutating func markup(_ p: Int, _ end: Int, final: Bool) throws(RouteKitError) -> Int? {
        let b = input.bytes.base
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
            try input.checkChars(p + 4, close)
            input.countLines(p, close)
            if captureDepth > 0 { captureAppend(b + p, close + 3 - p) }
            return close + 3
        }
        guard let isCDATA = starts("<![CDATA[") else { return nil }
        if isCDATA {
            guard let close = find(b, p + 9, end, "]]>") else { return nil }
            try input.checkChars(p + 9, close)
            input.countLines(p, close)
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
            input.countLines(p, close)
            return close + 1
        }
        throw error(.malformedXML, "unexpected '<!': expected a comment, CDATA section or DOCTYPE")
    }

    /// `<?…?>`: the XML declaration (encoding) or another processing instruction (skipped).
    mutating func processingInstruction(_ p: Int, _ end: Int) throws(RouteKitError) -> Int? {
        let b = input.bytes.base
        guard let close = find(b, p + 2, end, "?>") else { return nil }
        try input.checkChars(p + 2, close)
        input.countLines(p, close)
        var t = p + 2
        while t < close && !isXMLSpace(b[t]) { t += 1 }
        let target = String(decoding: UnsafeBufferPointer(start: b + p + 2, count: t - p - 2), as: UTF8.self)
        if target.lowercased() == "xml" {
            guard input.fileOffset + p == input.declarationOffset else {
                throw error(.malformedXML, "the XML declaration must be at the very start of the file")
            }
            let decl = String(decoding: UnsafeBufferPointer(start: b + t, count: close - t), as: UTF8.self)
            try input.applyDeclaration(decl)
        } else if captureDepth > 0 {
            captureAppend(b + p, close + 2 - p)
        }
        return close + 2
    }

    /// The error for input that ends inside an element, a tag or a comment.
    func unexpectedEnd() -> RouteKitError {
        if let top = stack.last {
            let name = String(
                decoding: UnsafeBufferPointer(start: names.base + Int(top.nameStart), count: Int(top.nameCount)),
                as: UTF8.self)
            return error(.malformedXML, "unexpected end of file: <\(name)> is not closed", at: input.bytes.count)
        }
        return error(.malformedXML, "unexpected end of file inside a tag or comment", at: input.bytes.count)
    }

    /// At the end of the input: every element closed, and there was a root element.
    mutating func finishDocument() throws(RouteKitError) {
        if finished { return }
        // Errors here are at the end of the input: the line counters are exact there, whatever token came last
        // (its offsets may predate a compaction of the buffer).
        input.startToken(at: input.pos)
        if !stack.isEmpty { throw unexpectedEnd() }
        guard rootSeen else {
            if input.bytes.count == 0 && input.fileOffset == 0 {
                let message = "not a route file: the file is empty; \(InputFile.readableFormats)"
                throw error(.unsupportedFormat, message, at: input.pos)
            }
            throw error(.malformedXML, "no root element: the file holds no XML element", at: input.pos)
        }
        finished = true
    }
}
