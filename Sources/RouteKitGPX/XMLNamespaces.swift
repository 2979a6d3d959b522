import Foundation
internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Namespaces, the third layer of the GPX reader (``GPXStreamParser``): the `xmlns` declarations of each start tag
// enter a ``NamespaceScope`` (left again when their element closes), every prefix of an element or attribute name
// must be declared, and no two attributes of a tag may have the same namespace and local name. What it hands on: the
// ``KnownNamespace`` of each element name, which the GPX classification (GPXClassification.swift) uses with the
// local name; and the scope's ``NamespaceScope/generation``, which the element cache keys on.

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
package enum GPXNamespaces {
    /// GPX 1.1.
    package static let gpx11 = "http://www.topografix.com/GPX/1/1"
    /// GPX 1.0.
    package static let gpx10 = "http://www.topografix.com/GPX/1/0"
    /// Garmin TrackPointExtension v1 (hr, cad, atemp, wtemp, depth).
    package static let trackPointExtensionV1 = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"
    /// Garmin TrackPointExtension v2 (adds speed and course).
    package static let trackPointExtensionV2 = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"
    /// Garmin PowerExtension v1 (`PowerInWatts`).
    package static let powerExtension = "http://www.garmin.com/xmlschemas/PowerExtension/v1"
    /// RouteKit's own extension for `CLLocation` fields GPX has no element for (accuracies).
    package static let routeKit = "https://routekit.dev/xmlns/gpx/v1"
}

/// A namespace declaration in scope: its prefix and URI, as offsets into ``NamespaceScope/arena``, and what the URI is.
struct NamespaceBinding {
    var prefixStart: Int32
    var prefixCount: Int32
    var uriStart: Int32
    var uriCount: Int32
    var namespace: KnownNamespace
}

/// The namespace declarations in scope, innermost last; their prefixes and URIs in one arena. Not copyable: it owns
/// the arena.
struct NamespaceScope: ~Copyable {
    var bindings: [NamespaceBinding] = []
    /// The bytes of every prefix and URI in scope, in declaration order.
    var arena = RawBytes(capacity: 1024)
    /// Changes whenever a declaration enters or leaves the scope: what an element resolved to is valid while it is
    /// unchanged (the element cache).
    var generation = 1

    /// The index of the innermost binding of the `count` bytes of `prefix` (count 0: the default namespace).
    func lookup(_ prefix: UnsafePointer<UInt8>, _ count: Int) -> Int? {
        var i = bindings.count - 1
        while i >= 0 {
            let bd = bindings[i]
            if Int(bd.prefixCount) == count
                && (count == 0 || memcmp(arena.base + Int(bd.prefixStart), prefix, count) == 0)
            {
                return i
            }
            i -= 1
        }
        return nil
    }

    /// The index of the innermost binding of `prefix` among `bindings[range]` (an empty prefix: the default
    /// namespace).
    func lastBinding(of prefix: [UInt8], in range: Range<Int>) -> Int? {
        for i in range.reversed() {
            let bd = bindings[i]
            if Int(bd.prefixCount) == prefix.count
                && prefix.withUnsafeBufferPointer({ p in
                    p.baseAddress.map { memcmp(arena.base + Int(bd.prefixStart), $0, prefix.count) == 0 } ?? true
                })
            {
                return i
            }
        }
        return nil
    }

    /// The URI of a binding.
    func uri(_ bd: NamespaceBinding) -> String {
        String(
            decoding: UnsafeBufferPointer(start: arena.base + Int(bd.uriStart), count: Int(bd.uriCount)), as: UTF8.self)
    }

    /// The URI bytes of a binding, for comparing expanded names.
    func uriBytes(_ bd: NamespaceBinding) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: arena.base + Int(bd.uriStart), count: Int(bd.uriCount))
    }

    /// Declares `prefix` (count 0: the default namespace) bound to `uri`.
    mutating func declare(
        prefix: UnsafePointer<UInt8>, _ prefixCount: Int, uri: UnsafePointer<UInt8>, _ uriCount: Int,
        namespace: KnownNamespace
    ) {
        let ps = Int32(arena.count)
        arena.append(prefix, prefixCount)
        let us = Int32(arena.count)
        arena.append(uri, uriCount)
        generation += 1
        bindings.append(
            NamespaceBinding(
                prefixStart: ps, prefixCount: Int32(prefixCount), uriStart: us, uriCount: Int32(uriCount),
                namespace: namespace))
    }

    /// Ends the scope of the innermost `count` declarations (their element closed).
    mutating func removeLast(_ count: Int) {
        let keep = bindings.count - count
        arena.count = Int(bindings[keep].prefixStart)
        bindings.removeLast(count)
        generation += 1
    }
}

extension GPXStreamParser {
    /// Declares the namespaces of the current tag's `xmlns` attributes.
    mutating func declareNamespaces() throws(RouteKitError) -> Int32 {
        var declared: Int32 = 0
        let b = input.bytes.base
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
                let reference = try input.decodeReference(amp, a.valueEnd)
                uriBytes.append(reference.scalar)
                i = reference.next
            }
            let uri = uriBytes.string
            if prefixCount > 0 && uri.isEmpty {
                throw error(
                    .malformedXML,
                    "namespace prefix '\(input.string(prefixStart, a.nameEnd))' cannot be bound to an empty URI")
            }
            if prefixCount == 5 && memcmp(b + prefixStart, "xmlns", 5) == 0 {
                throw error(.malformedXML, "the prefix 'xmlns' cannot be declared")
            }
            if prefixCount + uriBytes.count > GPXStreamParser.maxNameLength {
                throw error(
                    .malformedXML,
                    "a namespace declaration is longer than \(GPXStreamParser.maxNameLength) bytes (RouteKit's limit)")
            }
            if namespaces.bindings.count >= GPXStreamParser.maxBindings {
                throw error(
                    .malformedXML,
                    "more than \(GPXStreamParser.maxBindings) namespace declarations in scope (RouteKit's limit)")
            }
            namespaces.declare(
                prefix: b + prefixStart, prefixCount, uri: uriBytes.base, uriBytes.count,
                namespace: uri.isEmpty ? .none : KnownNamespace.classify(uri))
            declared += 1
        }
        return declared
    }

    /// Resolves a prefix to its namespace, or throws for an undeclared prefix.
    mutating func resolve(_ s: Int, _ colon: Int, isAttribute: Bool) throws(RouteKitError) -> KnownNamespace {
        if colon < 0 {
            if isAttribute { return .none }
            guard let i = namespaces.lookup(input.bytes.base + s, 0) else { return .none }
            return namespaces.bindings[i].namespace
        }
        let n = colon - s
        if isXMLPrefix(s, n) { return .xml }
        if n == 5 && memcmp(input.bytes.base + s, "xmlns", 5) == 0 { return .other }
        guard let i = namespaces.lookup(input.bytes.base + s, n) else {
            throw error(.malformedXML, "namespace prefix '\(input.string(s, colon))' is not declared", at: s)
        }
        return namespaces.bindings[i].namespace
    }

    /// Two prefixed attributes may not have the same namespace and local name (`x:a` and `y:a` with `x` and `y`
    /// bound to one URI), as the Namespaces in XML recommendation requires.
    mutating func checkExpandedNames() throws(RouteKitError) {
        var seen = Set<[UInt8]>()
        let b = input.bytes.base
        for ai in 0..<attrs.count where attrs[ai].colon >= 0 {
            let a = attrs[ai]
            let n = a.colon - a.nameStart
            if isXMLPrefix(a.nameStart, n) || (n == 5 && memcmp(b + a.nameStart, "xmlns", 5) == 0) { continue }
            guard let i = namespaces.lookup(input.bytes.base + a.nameStart, n) else { continue }
            var key = Array(namespaces.uriBytes(namespaces.bindings[i]))
            key.append(0)
            key += UnsafeBufferPointer(start: b + a.colon + 1, count: a.nameEnd - a.colon - 1)
            if !seen.insert(key).inserted {
                throw error(
                    .malformedXML,
                    "attribute '\(input.string(a.nameStart, a.nameEnd))' repeats another attribute's namespace and name",
                    at: a.nameStart)
            }
        }
    }

    /// Whether the `n` bytes at `s` are the reserved prefix `xml`.
    @inline(__always) mutating func isXMLPrefix(_ s: Int, _ n: Int) -> Bool {
        n == 3 && input.bytes.base[s] == UInt8(ascii: "x") && input.bytes.base[s + 1] == UInt8(ascii: "m")
            && input.bytes.base[s + 2] == UInt8(ascii: "l")
    }
}
