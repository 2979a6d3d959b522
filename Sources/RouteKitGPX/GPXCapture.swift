internal import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Capture of unknown elements, part of the GPX semantics layer: an element GPX does not define, where extensions are
// allowed, is kept whole as a standalone XML fragment (its tags, text, comments and CDATA copied as they are, the
// namespace declarations it uses from outside added to its root), up to ``GPXStreamParser/maxCaptureSize``. What it
// hands on: the fragment, in the extension list of its owner (a point, a path, a segment, the metadata or the
// document), which the writer writes back.

extension GPXStreamParser {
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

    /// Starts capturing an element GPX does not define (its start tag ends at `tagEnd`).
    mutating func beginCapture(_ nameStart: Int, nameEnd: Int, colon: Int, tagStart: Int, tagEnd: Int) {
        captureDepth = stack.count
        captureTooLarge = false
        captureBindingMark = namespaces.bindings.count - Int(stack[stack.count - 1].bindingCount)
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

    /// Copies a start tag into the fragment, noting the namespace prefixes it uses.
    mutating func captureTag(_ nameStart: Int, colon: Int, tagStart: Int, tagEnd: Int) {
        let b = input.bytes.base
        captureAppend(b + tagStart, tagEnd - tagStart)
        // The prefixes it uses (their declarations may have to be copied onto the fragment's root).
        if colon >= 0 {
            captureUsed.insert(Array(UnsafeBufferPointer(start: b + nameStart, count: colon - nameStart)))
        } else {
            captureUsesDefault = true
        }
        for ai in 0..<attrs.count {
            let a = attrs[ai]
            if a.colon >= 0 && !(a.colon - a.nameStart == 5 && memcmp(b + a.nameStart, "xmlns", 5) == 0) {
                captureUsed.insert(Array(UnsafeBufferPointer(start: b + a.nameStart, count: a.colon - a.nameStart)))
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
        let outside = 0..<captureBindingMark
        let own = captureBindingMark..<namespaces.bindings.count
        for prefix in captureUsed {
            if prefix == Array("xml".utf8) || namespaces.lastBinding(of: prefix, in: own) != nil { continue }
            if let i = namespaces.lastBinding(of: prefix, in: outside) {
                let p = String(decoding: prefix, as: UTF8.self)
                decls += " xmlns:\(p)=\"\(escapeAttribute(namespaces.uri(namespaces.bindings[i])))\""
            }
        }
        if captureUsesDefault, namespaces.lastBinding(of: [], in: own) == nil,
            let i = namespaces.lastBinding(of: [], in: outside)
        {
            decls += " xmlns=\"\(escapeAttribute(namespaces.uri(namespaces.bindings[i])))\""
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
}

/// `s` escaped for a double-quoted XML attribute value.
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
