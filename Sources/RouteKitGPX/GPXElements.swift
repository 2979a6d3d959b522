internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Elements, where the tag layer meets the GPX layers: the stack of open elements (``FrameStack``, one ``Frame`` per
// element, their names in ``GPXStreamParser/names``). A start tag opens an element: its namespace declarations enter
// the scope (XMLNamespaces.swift), its attributes are checked, it is classified (GPXClassification.swift: a
// ``GPXElementKind`` and, for a value element, a ``GPXLeafField``), and its frame is pushed; then its semantics start
// (GPXSemantics.swift), or its capture when it is not a GPX element (GPXCapture.swift). An end tag closes it in the
// reverse order.

/// What an open element is for GPX: one of GPX's own elements (`root` is `<gpx>`), a Garmin TrackPointExtension
/// (`tpx`), a value element (`leaf`: its ``GPXLeafField`` says which), an element kept as XML (`capture`) or skipped
/// (`ignore`). `document` is no element: the owner of frames that own no extension list, and of empty cache entries.
enum GPXElementKind: UInt8 {
    case root, metadata, wpt, rte, rtept, trk, trkseg, trkpt
    case extensions, tpx, person, email, link, copyright, bounds
    case leaf, capture, ignore, document
}

/// Which value a value element holds (`<ele>`, `<time>`, `<hr>`…). The case names are the element names that errors
/// quote ("<ele> is not a number").
enum GPXLeafField: UInt8 {
    case none
    case ele, time, magvar, geoidheight, name, cmt, desc, src, sym, type, fix, sat, hdop, vdop, pdop
    case ageofdgpsdata, dgpsid, number, speed, course, url, urlname, email, keywords, linkText, linkType
    case year, license, author
    case hr, cad, atemp, wtemp, depth, power, hAcc, vAcc, speedAcc, courseAcc
}

/// An open element: what it is, its name (in ``GPXStreamParser/names``), and the namespace declarations it made.
struct Frame {
    var kind: GPXElementKind
    var field: GPXLeafField
    var nameStart: Int32
    var nameCount: Int32
    var bindingCount: Int32
    /// For `.extensions`, `.capture`, `.ignore`: the owner whose extension list receives captures.
    var owner: GPXElementKind

    /// Whether text inside this element is kept (values, captured fragments). Always inlined: the token loop asks
    /// it after every tag, and as a call it showed in the profile (`Benchmarks/README.md`, GPX parse).
    @inline(__always) var collectsText: Bool {
        kind == .leaf || kind == .capture || kind == .person || kind == .email
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

extension GPXStreamParser {
    /// Opens the element whose start tag was just read (its name at `nameStart..<nameEnd`, its attributes in
    /// ``attrs``): declares its namespaces, checks its attributes, classifies it (from the element cache when it
    /// can) and pushes its frame, then starts its semantics or its capture.
    mutating func openElement(_ nameStart: Int, _ nameEnd: Int, tagEnd: Int) throws(RouteKitError) {
        var declared: Int32 = 0
        if !attrs.isEmpty {
            declared = try declareNamespaces()
            // Attribute prefixes must be bound; no attribute may appear twice (pairwise for the usual few
            // attributes, a hash set beyond that so a hostile tag stays linear).
            let b = input.bytes.base
            var seen: Set<[UInt8]>? = attrs.count > 16 ? Set(minimumCapacity: attrs.count) : nil
            var prefixed = 0
            for i in 0..<attrs.count {
                let a = attrs.base[i]
                if a.colon >= 0 {
                    _ = try resolve(a.nameStart, a.colon, isAttribute: true)
                    prefixed += 1
                }
                if a.hasAmp { try input.checkEntities(a.valueStart, a.valueEnd) }
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
                        .malformedXML, "attribute '\(input.string(a.nameStart, a.nameEnd))' appears twice",
                        at: a.nameStart)
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
            words = GPXStreamParser.nameWords(input.bytes.base, nameStart, nameEnd, limit: input.bytes.count)
            if let w = words {
                let entry = elementCache[GPXStreamParser.cacheSlot(w, nameEnd - nameStart, parent)]
                if entry.generation == namespaces.generation && entry.length == nameEnd - nameStart
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
            let c = input.bytes.base[i]
            if !nameBytes[c] {
                throw error(
                    .malformedXML, "invalid character in the element name <\(input.string(nameStart, nameEnd))>", at: i)
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
                captureTag(nameStart, colon: colon, tagStart: input.tokenStart, tagEnd: tagEnd)
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
                    "<\(input.string(nameStart, nameEnd))> is not a GPX 1.1 element here; it is kept but cannot be written back into valid GPX 1.1"
                )
            }
            beginCapture(nameStart, nameEnd: nameEnd, colon: colon, tagStart: input.tokenStart, tagEnd: tagEnd)
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
                generation: namespaces.generation, length: nameEnd - nameStart, words: w, parentKind: parent.kind,
                parentOwner: parent.owner, kind: kind, field: field)
        }
        stack.append(frame)
        try startSemantics(kind: kind, field: field, parent: parent.kind)
    }

    /// Opens an element without attributes that the cache knows under this parent; false when it does not
    /// (the caller then takes the full path). Only kinds whose opening needs no more than a frame qualify.
    @inline(__always)
    mutating func openCached(_ nameStart: Int, _ nameEnd: Int) -> Bool {
        let depth = stack.count
        guard depth > 0 && depth < FrameStack.capacity - 1 else { return false }
        let parent = stack.base[depth - 1]
        guard parent.kind != .capture && parent.kind != .ignore,
            let w = GPXStreamParser.nameWords(input.bytes.base, nameStart, nameEnd, limit: input.bytes.count)
        else { return false }
        let n = nameEnd - nameStart
        let entry = elementCache[GPXStreamParser.cacheSlot(w, n, parent)]
        guard
            entry.generation == namespaces.generation && entry.length == n && entry.parentKind == parent.kind
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

    /// Copies an element's name to the name stack (whole words for the usual short names).
    @inline(__always)
    mutating func pushName(_ s: Int, _ e: Int) {
        let n = e - s
        names.reserve(n + 32)
        let src = UnsafeRawPointer(input.bytes.base + s)
        let dst = UnsafeMutableRawPointer(names.base + names.count)
        if n <= 32 && s + 32 <= input.bytes.count {
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

    /// Closes the open element (its end tag, or its start tag when it is empty, ends at `tagEnd`): the end of its
    /// semantics or of its capture, then its name and namespace declarations leave the stacks.
    mutating func closeElement(tagEnd: Int) throws(RouteKitError) {
        guard let frame = stack.popLast() else { return }
        if frame.kind == .capture {
            // An end tag is copied here; a self-closing tag was copied whole when it opened.
            let tagStart = input.tokenStart
            if input.bytes.base[tagStart + 1] == SLASH { captureAppend(input.bytes.base + tagStart, tagEnd - tagStart) }
            if stack.count + 1 == captureDepth { endCapture(owner: frame.owner) }
        } else {
            try endSemantics(frame)
        }
        names.count = Int(frame.nameStart)
        if frame.bindingCount > 0 { namespaces.removeLast(Int(frame.bindingCount)) }
    }
}
