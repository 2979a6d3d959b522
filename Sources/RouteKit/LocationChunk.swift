/// A compact, lossless binary form for a run of locations: what a store writes per chunk of a route.
///
/// Column by column (latitudes, then longitudes, then times…), each number column is stored as:
/// - **decimal**: when every value is exactly the `Double` nearest to `m · 10^-k` for one `k` in 0…9 (true of
///   every coordinate written with a fixed number of decimals, which is every GPX file), the integers `m` are
///   delta- and zigzag-varint coded (a 1 Hz track costs 1–3 bytes per coordinate);
/// - **raw**: the `Double` bit patterns otherwise (8 bytes each).
///
/// Decoding gives back bit-identical `Double`s (checked when encoding: `Double(m) / 10^k` is the correctly
/// rounded quotient, the same `Double` a decimal parser produces), times to the nanosecond with their written
/// UTC offset, and `nil` exactly where a field was missing. Optional columns carry a presence bitmap only when
/// some values are missing. Corrupt bytes give ``RouteKitError/Code/invalidArgument``, never a crash.
@_spi(RouteKitBackend)
public enum LocationChunk {
    /// The format version written in the first byte.
    public static let formatVersion: UInt8 = 1

    // MARK: Encoding

    /// Encodes locations in order.
    public static func encode(_ locations: [Location]) -> [UInt8] {
        var w = Writer()
        w.byte(formatVersion)
        w.varint(UInt64(locations.count))
        w.decimalColumn(locations.map(\.latitude))
        w.decimalColumn(locations.map(\.longitude))
        w.timestamps(locations.map(\.timestamp))
        for field in 0..<optionalFieldCount { w.optionalColumn(locations.map { optionalField($0, field) }) }
        return w.bytes
    }

    /// The optional fields, in their column order (a switch, not key paths: those are slow to read per value).
    static let optionalFieldCount = 7

    @inline(__always) static func optionalField(_ l: Location, _ field: Int) -> Double? {
        switch field {
        case 0: l.altitude
        case 1: l.horizontalAccuracy
        case 2: l.verticalAccuracy
        case 3: l.speed
        case 4: l.speedAccuracy
        case 5: l.course
        default: l.courseAccuracy
        }
    }

    static let powers: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    struct Writer {
        var bytes: [UInt8] = []

        mutating func byte(_ b: UInt8) { bytes.append(b) }

        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                bytes.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            bytes.append(UInt8(v))
        }

        mutating func signed(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        /// Whether `v` is exactly the `Double` nearest `m · 10^-k` for an integer `m` below 2^53; `m` if so.
        @inline(__always) static func mantissa(_ v: Double, _ k: Int) -> Int64? {
            let scaled = (v * powers[k]).rounded()
            guard abs(scaled) < 9_007_199_254_740_992 else { return nil }  // 2^53: exact integers only
            // Checked through the stored integer, so -0.0 (whose mantissa is 0) falls back to raw.
            let m = Int64(scaled)
            return (Double(m) / powers[k]).bitPattern == v.bitPattern ? m : nil
        }

        /// The smallest `k` for which every value is exactly `m · 10^-k`, with its mantissas. One pass raises `k`
        /// as needed (a value exact at `k` is exact at every larger `k`: the same rational, the same nearest
        /// `Double`), a second computes the mantissas.
        static func decimalScale(_ values: [Double]) -> (Int, [Int64])? {
            var k = 0
            for v in values {
                while mantissa(v, k) == nil {
                    k += 1
                    if k == powers.count { return nil }
                }
            }
            var mantissas: [Int64] = []
            mantissas.reserveCapacity(values.count)
            for v in values {
                guard let m = mantissa(v, k) else { return nil }
                mantissas.append(m)
            }
            return (k, mantissas)
        }

        /// Tag 0: decimal (k, delta mantissas); tag 1: raw bit patterns.
        mutating func decimalColumn(_ values: [Double]) {
            if let (k, mantissas) = Writer.decimalScale(values) {
                byte(0)
                byte(UInt8(k))
                var previous: Int64 = 0
                for m in mantissas {
                    signed(m &- previous)
                    previous = m
                }
            } else {
                byte(1)
                for v in values {
                    var bits = v.bitPattern
                    for _ in 0..<8 {
                        bytes.append(UInt8(bits & 0xFF))
                        bits >>= 8
                    }
                }
            }
        }

        /// Presence: tag 0 none present, 1 all present, 2 bitmap then the present values.
        mutating func presence(_ present: [Bool]) -> Bool {
            if !present.contains(true) {
                byte(0)
                return false
            }
            if !present.contains(false) {
                byte(1)
                return true
            }
            byte(2)
            var current: UInt8 = 0
            for (i, p) in present.enumerated() {
                if p { current |= 1 << UInt8(i % 8) }
                if i % 8 == 7 {
                    bytes.append(current)
                    current = 0
                }
            }
            if present.count % 8 != 0 { bytes.append(current) }
            return true
        }

        mutating func optionalColumn(_ values: [Double?]) {
            if presence(values.map { $0 != nil }) { decimalColumn(values.compactMap { $0 }) }
        }

        /// Times: presence, then second deltas, then nanoseconds at a common scale, then offsets.
        mutating func timestamps(_ values: [Timestamp?]) {
            guard presence(values.map { $0 != nil }) else { return }
            let present = values.compactMap { $0 }
            var previous: Int64 = 0
            for t in present {
                signed(t.instant.seconds &- previous)
                previous = t.instant.seconds
            }
            // The largest power of ten dividing every nanosecond count (10^9 when all are whole seconds).
            var scale = 9
            for t in present {
                while scale > 0 && Int64(t.instant.nanoseconds) % Int64(powers[scale]) != 0 { scale -= 1 }
            }
            byte(UInt8(scale))
            if scale < 9 {
                for t in present { varint(UInt64(t.instant.nanoseconds) / UInt64(powers[scale])) }
            }
            // Offsets: 0 = none written, else zigzag(offset) + 1; one value when all are the same.
            let codes = present.map { t -> UInt64 in
                guard let o = t.utcOffsetSeconds else { return 0 }
                let v = Int64(o)
                return UInt64(bitPattern: (v << 1) ^ (v >> 63)) + 1
            }
            if let first = codes.first, codes.allSatisfy({ $0 == first }) {
                byte(0)
                varint(first)
            } else {
                byte(1)
                for c in codes { varint(c) }
            }
        }
    }

    // MARK: Decoding

    /// Decodes what ``encode(_:)`` wrote.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` if the bytes are not a chunk of this format.
    public static func decode(_ bytes: [UInt8]) throws(RouteKitError) -> [Location] {
        var r = Reader(bytes: bytes)
        guard try r.byte() == formatVersion else {
            throw RouteKitError(.invalidArgument, "not a location chunk of format version \(formatVersion)")
        }
        let count64 = try r.varint()
        // Every location costs at least one byte per coordinate column: bound the count by the data.
        guard count64 <= UInt64(bytes.count) else { throw Reader.corrupt("count") }
        let count = Int(count64)
        let latitudes = try r.decimalColumn(count)
        let longitudes = try r.decimalColumn(count)
        let times = try r.timestamps(count)
        var optionals: [[Double?]] = []
        for _ in 0..<optionalFieldCount { optionals.append(try r.optionalColumn(count)) }
        guard r.offset == bytes.count else { throw Reader.corrupt("trailing bytes") }
        var out: [Location] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            out.append(
                Location(
                    latitude: latitudes[i], longitude: longitudes[i], timestamp: times[i], altitude: optionals[0][i],
                    horizontalAccuracy: optionals[1][i], verticalAccuracy: optionals[2][i], speed: optionals[3][i],
                    speedAccuracy: optionals[4][i], course: optionals[5][i], courseAccuracy: optionals[6][i]))
        }
        return out
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        static func corrupt(_ what: String) -> RouteKitError {
            RouteKitError(.invalidArgument, "the location chunk is corrupt (\(what))")
        }

        mutating func byte() throws(RouteKitError) -> UInt8 {
            guard offset < bytes.count else { throw Reader.corrupt("ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(RouteKitError) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw Reader.corrupt("varint too long") }
                result |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return result }
                shift += 7
            }
        }

        mutating func signed() throws(RouteKitError) -> Int64 {
            let v = try varint()
            return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
        }

        mutating func decimalColumn(_ count: Int) throws(RouteKitError) -> [Double] {
            var values: [Double] = []
            values.reserveCapacity(count)
            switch try byte() {
            case 0:
                let k = Int(try byte())
                guard k < powers.count else { throw Reader.corrupt("scale") }
                var m: Int64 = 0
                for _ in 0..<count {
                    m = m &+ (try signed())
                    values.append(Double(m) / powers[k])
                }
            case 1:
                guard bytes.count - offset >= 8 * count else { throw Reader.corrupt("raw column") }
                for _ in 0..<count {
                    var bits: UInt64 = 0
                    for j in 0..<8 { bits |= UInt64(bytes[offset + j]) << UInt64(8 * j) }
                    offset += 8
                    values.append(Double(bitPattern: bits))
                }
            default:
                throw Reader.corrupt("column tag")
            }
            return values
        }

        mutating func presence(_ count: Int) throws(RouteKitError) -> [Bool] {
            switch try byte() {
            case 0: return [Bool](repeating: false, count: count)
            case 1: return [Bool](repeating: true, count: count)
            case 2:
                let n = (count + 7) / 8
                guard bytes.count - offset >= n else { throw Reader.corrupt("bitmap") }
                let present = (0..<count).map { i in bytes[offset + i / 8] & (1 << UInt8(i % 8)) != 0 }
                offset += n
                return present
            default:
                throw Reader.corrupt("presence tag")
            }
        }

        mutating func optionalColumn(_ count: Int) throws(RouteKitError) -> [Double?] {
            let present = try presence(count)
            let n = present.filter { $0 }.count
            var values = n > 0 ? try decimalColumn(n) : []
            values.reverse()
            return present.map { $0 ? values.popLast() : nil }
        }

        mutating func timestamps(_ count: Int) throws(RouteKitError) -> [Timestamp?] {
            let present = try presence(count)
            let n = present.filter { $0 }.count
            if n == 0 { return [Timestamp?](repeating: nil, count: count) }
            var seconds: [Int64] = []
            var s: Int64 = 0
            for _ in 0..<n {
                s = s &+ (try signed())
                seconds.append(s)
            }
            let scale = Int(try byte())
            guard scale <= 9 else { throw Reader.corrupt("time scale") }
            var nanos = [Int32](repeating: 0, count: n)
            if scale < 9 {
                for i in 0..<n {
                    let v = try varint()
                    let ns = v &* UInt64(powers[scale])
                    guard v < 1_000_000_000, ns < 1_000_000_000 else { throw Reader.corrupt("nanoseconds") }
                    nanos[i] = Int32(ns)
                }
            }
            var offsets = [Int32?](repeating: nil, count: n)
            func offset(_ code: UInt64) throws(RouteKitError) -> Int32? {
                if code == 0 { return nil }
                let z = code - 1
                let v = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
                guard abs(v) <= 24 * 3600 else { throw Reader.corrupt("offset") }
                return Int32(v)
            }
            switch try byte() {
            case 0:
                let o = try offset(try varint())
                for i in 0..<n { offsets[i] = o }
            case 1:
                for i in 0..<n { offsets[i] = try offset(try varint()) }
            default:
                throw Reader.corrupt("offset tag")
            }
            var result: [Timestamp?] = []
            result.reserveCapacity(count)
            var j = 0
            for p in present {
                if p {
                    result.append(
                        Timestamp(Instant(seconds: seconds[j], nanoseconds: nanos[j]), utcOffsetSeconds: offsets[j]))
                    j += 1
                } else {
                    result.append(nil)
                }
            }
            return result
        }
    }
}
