#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A growable byte buffer on manually managed memory: no uniqueness checks, no bounds checks in the
/// hot path. Not copyable: exactly one owner (a parser, a writer, a local), which frees the memory when it ends.
///
/// Package access for the writers outside this module (RouteKitApplication's CSV and GeoJSON writers), the appends
/// they call per value inlinable there.
package struct RawBytes: ~Copyable {
    @usableFromInline package var base: UnsafeMutablePointer<UInt8>
    @usableFromInline package var count: Int = 0
    @usableFromInline package var capacity: Int

    package init(capacity: Int) {
        self.capacity = max(capacity, 16)
        self.base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inlinable @inline(__always) package mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    @usableFromInline package mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inlinable @inline(__always) package mutating func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inlinable @inline(__always) package mutating func append(_ p: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        (base + count).update(from: p, count: n)
        count += n
    }

    /// Appends a character as UTF-8.
    package mutating func append(_ scalar: Unicode.Scalar) {
        for u in scalar.utf8 { append(u) }
    }

    package mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { u in
            if let b = u.baseAddress { append(b, u.count) }
        }
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { u in
            if let b = u.baseAddress { append(b, u.count) }
        }
    }

    /// Inserts bytes at `offset`, moving the rest up.
    mutating func insert(_ bytes: [UInt8], at offset: Int) {
        reserve(bytes.count)
        (base + offset + bytes.count).update(from: base + offset, count: count - offset)
        bytes.withUnsafeBufferPointer { u in
            if let b = u.baseAddress { (base + offset).update(from: b, count: u.count) }
        }
        count += bytes.count
    }

    /// Drops the first `n` bytes.
    mutating func removeFirst(_ n: Int) {
        if n == 0 { return }
        if n < count { base.update(from: base + n, count: count - n) }
        count -= n
    }

    /// Appends `value` in decimal digits, without an intermediate string.
    @inlinable @inline(__always) package mutating func appendInteger(_ value: Int64) {
        reserve(20)
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        count += digits
        var i = count
        repeat {
            i -= 1
            base[i] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    /// Appends a `Double` in the shortest decimal text that reads back as the same `Double`, never in
    /// exponent notation (integers without a fraction, `-0.0` as `-0`).
    package mutating func appendDecimal(_ value: Double) {
        if value == value.rounded() && abs(value) < 1e15 {
            if value == 0 && value.sign == .minus {
                append(UInt8(ascii: "-"))
                append(UInt8(ascii: "0"))
            } else {
                appendInteger(Int64(value))
            }
            return
        }
        if appendShortDecimal(value) { return }
        // Swift's description is the shortest round-trip text; it is copied unless it has an exponent.
        var text = value.description
        let plain = text.withUTF8 { u -> Bool in
            guard let b = u.baseAddress, !u.contains(UInt8(ascii: "e")) else { return false }
            append(b, u.count)
            return true
        }
        if !plain {
            var digits = [UInt8]()
            RouteKitGPX.appendDecimal(value, to: &digits)
            append(digits)
        }
    }

    /// Appends a value with at most four decimals (an altitude in fifths of a metre, a speed in mm/s) as
    /// `value.description` would write it, without formatting it; returns `false`, appending nothing, for any other.
    ///
    /// `I / 10^k` for the smallest `k` whose `(value × 10^k).rounded() / 10^k` gives `value` back is the text:
    /// it reads back as `value`, and no other decimal with as few digits does, since two such decimals are at
    /// least 10^-k apart and below 10^9 the doubles around `value` are far closer together than that.
    @inline(__always) mutating func appendShortDecimal(_ value: Double) -> Bool {
        guard abs(value) < 1e9 else { return false }
        // Most other values (a latitude) are told at once: ten thousand times them is far from a whole number.
        let most = value * 10000
        if abs(most - most.rounded()) > 0.01 { return false }
        var scale = 10.0
        var power: UInt64 = 10
        for k in 1...4 {
            let scaled = (value * scale).rounded()
            if scaled / scale == value {
                let i = Int64(scaled)
                if i < 0 { append(UInt8(ascii: "-")) }
                let magnitude = i.magnitude
                appendInteger(Int64(magnitude / power))
                reserve(k + 1)
                let point = count
                base[point] = UInt8(ascii: ".")
                // The k fraction digits, leading zeros kept, the last first.
                var fraction = magnitude % power
                for j in stride(from: point + k, to: point, by: -1) {
                    base[j] = UInt8(truncatingIfNeeded: 48 + fraction % 10)
                    fraction /= 10
                }
                count = point + k + 1
                return true
            }
            scale *= 10
            power *= 10
        }
        return false
    }

    var string: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }
}

@inline(__always) func memchrOffset(_ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int, _ byte: UInt8) -> Int? {
    guard from < to, let r = memchr(base + from, Int32(byte), to - from) else { return nil }
    return UnsafePointer<UInt8>(r.assumingMemoryBound(to: UInt8.self)) - base
}

/// The offset of `pattern` in `base[from..<to]`, if it occurs.
func find(_ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int, _ pattern: StaticString) -> Int? {
    let p = pattern.utf8Start
    let n = pattern.utf8CodeUnitCount
    var i = from
    while i + n <= to {
        guard let j = memchrOffset(base, i, to - n + 1, p[0]) else { return nil }
        if memcmp(base + j, p, n) == 0 { return j }
        i = j + 1
    }
    return nil
}
