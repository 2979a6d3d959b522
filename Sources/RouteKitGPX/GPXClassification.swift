internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// GPX classification, the fourth layer of the GPX reader (``GPXStreamParser``): from an element's namespace
// (``KnownNamespace``), local name and parent to what it is for GPX, a ``GPXElementKind`` and, for a value element
// (`<ele>`, `<time>`, `<hr>`…), a ``GPXLeafField``. Garmin's TrackPointExtension and PowerExtension, cluetrust's
// gpxdata, RouteKit's own namespace and the unqualified extensions of Apple Health and Strava are recognised here.
// The ``ElementCache`` remembers the answer per name and parent, so the usual stream of identical points skips
// prefix resolution and classification. What it hands on: the kind and field, to GPXElements.swift, which pushes the
// frame and starts the semantics (GPXSemantics.swift).

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

extension GPXStreamParser {
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

    /// The element cache's slot for a name (its words and length) under a parent.
    @inline(__always)
    static func cacheSlot(_ words: (UInt64, UInt64, UInt64, UInt64), _ n: Int, _ parent: Frame) -> Int {
        var h = words.0 &* 0x9E37_79B9_7F4A_7C15
        h ^= words.1 &+ UInt64(n) &+ (UInt64(parent.kind.rawValue) << 8) &+ (UInt64(parent.owner.rawValue) << 16)
        return Int(truncatingIfNeeded: (h ^ (h >> 29)) & 63)
    }

    /// Whether an element in namespace `ns` is a GPX element: in the GPX namespace, or in none when the root
    /// declared none.
    @inline(__always) mutating func isGPX(_ ns: KnownNamespace) -> Bool {
        ns == .gpx || (ns == .none && !rootHasNamespace)
    }

    /// Which kind an element is, given its parent, its namespace and its local name: a GPX structural element in
    /// the wrong place is an error; an element GPX does not define is captured (kept as XML) where extensions are
    /// allowed, ignored inside value elements.
    mutating func classify(parent: Frame, ns: KnownNamespace, localStart: Int, localEnd: Int) throws(RouteKitError) -> (
        GPXElementKind, GPXLeafField
    ) {
        let b = input.bytes.base
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
            return error(.invalidGPX, "<\(input.string(localStart, localEnd))> is not allowed inside <\(parentName)>")
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
}
