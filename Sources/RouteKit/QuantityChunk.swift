/// A compact, lossless binary form for a run of quantity samples (heart rate, cadence, power…), in the same
/// column coding as `LocationChunk`: times as second deltas plus scaled nanoseconds and their UTC offsets,
/// values as delta-coded decimal mantissas when exact (raw `Double`s otherwise).
package enum QuantityChunk {
    /// The format version written in the first byte.
    package static let formatVersion: UInt8 = 1

    /// Encodes samples in order.
    package static func encode(_ samples: [QuantitySample]) -> [UInt8] {
        var w = LocationChunk.Writer()
        w.byte(formatVersion)
        w.varint(UInt64(samples.count))
        w.timestamps(samples.map { Optional($0.timestamp) })
        w.decimalColumn(samples.map(\.value))
        return w.bytes
    }

    /// Decodes what ``encode(_:)`` wrote.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` if the bytes are not a quantity chunk of this format.
    package static func decode(_ bytes: [UInt8]) throws(RouteKitError) -> [QuantitySample] {
        var r = LocationChunk.Reader(bytes: bytes)
        guard try r.byte() == formatVersion else {
            throw RouteKitError(.invalidArgument, "not a quantity chunk of format version \(formatVersion)")
        }
        let count64 = try r.varint()
        guard count64 <= UInt64(bytes.count) else { throw LocationChunk.Reader.corrupt("count") }
        let count = Int(count64)
        let times = try r.timestamps(count)
        let values = try r.decimalColumn(count)
        guard r.offset == bytes.count else { throw LocationChunk.Reader.corrupt("trailing bytes") }
        var out: [QuantitySample] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            guard let t = times[i] else { throw LocationChunk.Reader.corrupt("a quantity sample without a time") }
            out.append(QuantitySample(timestamp: t, value: values[i]))
        }
        return out
    }
}

/// A 128-bit content hash, fed field by field: how RouteKit derives sync identifiers from parsed content
/// (the importer hashes a track's points and fields, never the file's bytes), and checkpoints a builder's
/// progress through its origin.
///
/// It is not a cryptographic hash: it tells contents apart, it does not resist a forger. A forger could
/// only collide tracks of their own source, since sync identifiers are scoped to one source.
package struct ContentHasher: Hashable, Sendable {
    private var a: UInt64
    private var b: UInt64
    private var count: UInt64

    /// A fresh hasher; `domain` separates uses (`"gpx-track-v1"`).
    package init(domain: String) {
        a = 0x243F_6A88_85A3_08D3
        b = 0x1319_8A2E_0370_7344
        count = 0
        combine(domain)
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) private static func fmix(_ k0: UInt64) -> UInt64 {
        var k = k0
        k ^= k >> 33
        k &*= 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k &*= 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return k
    }

    /// Feeds one 64-bit word.
    @inline(__always) package mutating func combine(_ word: UInt64) {
        // MurmurHash3 x64-128's block step, one 64-bit lane at a time alternating a and b.
        count &+= 1
        var k = word &* 0x87C3_7B91_1142_53D5
        k = Self.rotl(k, 31) &* 0x4CF5_AD43_2745_937F
        if count & 1 == 1 {
            a ^= k
            a = Self.rotl(a, 27) &+ b
            a = a &* 5 &+ 0x52DC_E729
        } else {
            b ^= k
            b = Self.rotl(b, 31) &+ a
            b = b &* 5 &+ 0x3849_5AB5
        }
    }

    /// Feeds a `Double`'s exact bits (so `-0.0` and `0.0` differ, as they do when written back).
    @inline(__always) package mutating func combine(_ value: Double) { combine(value.bitPattern) }

    /// Feeds an optional `Double`; `nil` differs from every number.
    @inline(__always) package mutating func combine(_ value: Double?) {
        if let value { combine(value.bitPattern) } else { combine(0x7FF8_DEAD_0000_0001 as UInt64) }
    }

    /// Feeds an integer.
    @inline(__always) package mutating func combine(_ value: Int64) { combine(UInt64(bitPattern: value)) }

    /// Feeds a string (its UTF-8 bytes and length).
    package mutating func combine(_ text: String) {
        var word: UInt64 = 0
        var n = 0
        for byte in text.utf8 {
            word |= UInt64(byte) << UInt64(8 * (n % 8))
            n += 1
            if n % 8 == 0 {
                combine(word)
                word = 0
            }
        }
        combine(word)
        combine(UInt64(n))
    }

    /// Feeds an optional string; `nil` differs from `""`.
    package mutating func combine(_ text: String?) {
        if let text {
            combine(1 as UInt64)
            combine(text)
        } else {
            combine(0 as UInt64)
        }
    }

    /// Feeds a timestamp: its instant and its written UTC offset.
    @inline(__always) package mutating func combine(_ t: Timestamp?) {
        guard let t else { return combine(0x7FF8_DEAD_0000_0002 as UInt64) }
        combine(t.instant.seconds)
        let offset = t.utcOffsetSeconds.map { UInt64(UInt32(bitPattern: $0)) } ?? 0x1_0000_0000
        combine(UInt64(UInt32(bitPattern: t.instant.nanoseconds)) | offset << 32)
    }

    /// Feeds every field of a location.
    @inline(__always) package mutating func combine(_ l: Location) {
        combine(l.timestamp)
        combine(l.latitude)
        combine(l.longitude)
        // The NaN-backed storage: missing is one fixed NaN pattern, so the raw bits are canonical.
        combine(l.altitude)
        combine(l.horizontalAccuracy)
        combine(l.verticalAccuracy)
        combine(l.speed)
        combine(l.speedAccuracy)
        combine(l.course)
        combine(l.courseAccuracy)
    }

    /// The 128-bit digest as 32 lowercase hex digits. The hasher can go on being fed afterwards.
    package var hexDigest: String {
        var h1 = a ^ count
        var h2 = b ^ count
        h1 &+= h2
        h2 &+= h1
        h1 = Self.fmix(h1)
        h2 = Self.fmix(h2)
        h1 &+= h2
        h2 &+= h1
        return Self.hex(h1) + Self.hex(h2)
    }

    /// The hasher's whole state, to compare a resumed hash with a recorded one (``init(state:)`` reads it).
    package var state: String { Self.hex(a) + Self.hex(b) + Self.hex(count) }

    /// Restores a hasher from ``state``; `nil` when the text is not a state.
    package init?(state text: String) {
        let u = Array(text.utf8)
        guard u.count == 48 else { return nil }
        var words: [UInt64] = []
        for w in 0..<3 {
            guard let v = UInt64(String(decoding: u[(w * 16)..<(w * 16 + 16)], as: UTF8.self), radix: 16) else {
                return nil
            }
            words.append(v)
        }
        a = words[0]
        b = words[1]
        count = words[2]
    }

    private static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
