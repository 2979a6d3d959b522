internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Exact powers of ten representable as `Double`.
private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22,
]

@inline(__always) func isXMLSpace(_ c: UInt8) -> Bool {
    c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D
}

/// Parses a decimal number (`[+-]digits[.digits][(e|E)[+-]digits]`, surrounding XML whitespace allowed)
/// into the correctly rounded `Double`, exactly as `strtod` would, or `nil`.
///
/// The common case (at most 19 significant digits that fit Clinger's fast path) is one integer loop and one
/// IEEE multiplication or division, which is exact; anything else goes to `strtod`.
@inline(__always)
func parseDecimal(_ start: UnsafePointer<UInt8>, _ count: Int) -> Double? {
    // Fast path: -?digits[.digits] with at most 15 significant digits (47.3769123, 512.4, 120).
    if count > 0 && count <= 17 {
        var i = 0
        let negative = start[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var m: UInt64 = 0
        let intStart = i
        while i < count {
            let d = start[i] &- 48
            if d > 9 { break }
            m = m &* 10 &+ UInt64(d)
            i += 1
        }
        var fraction = 0
        if i < count && start[i] == UInt8(ascii: ".") && i > intStart {
            i += 1
            let fracStart = i
            while i < count {
                let d = start[i] &- 48
                if d > 9 { break }
                m = m &* 10 &+ UInt64(d)
                i += 1
            }
            fraction = i - fracStart
            if fraction == 0 { i = -1 }  // "12." → the general path decides
        }
        if i == count && i > intStart && m < (1 << 53) {
            let v = fraction == 0 ? Double(m) : Double(m) / powersOfTen[fraction]
            return negative ? -v : v
        }
    }
    var p = 0
    var end = count
    while p < end && isXMLSpace(start[p]) { p += 1 }
    while end > p && isXMLSpace(start[end - 1]) { end -= 1 }
    if p == end { return nil }
    let first = p
    var negative = false
    if start[p] == UInt8(ascii: "-") {
        negative = true
        p += 1
    } else if start[p] == UInt8(ascii: "+") {
        p += 1
    }
    var mantissa: UInt64 = 0
    var digits = 0  // significant digits accumulated (leading zeros skipped)
    var sawDigit = false
    var exponent = 0
    var overflow = false
    while p < end {
        let d = start[p] &- 48
        if d > 9 { break }
        sawDigit = true
        if mantissa == 0 && d == 0 {
            p += 1
            continue
        }
        if digits < 19 {
            mantissa = mantissa &* 10 &+ UInt64(d)
            digits += 1
        } else {
            overflow = true
            exponent += 1
        }
        p += 1
    }
    if p < end && start[p] == UInt8(ascii: ".") {
        p += 1
        while p < end {
            let d = start[p] &- 48
            if d > 9 { break }
            sawDigit = true
            if mantissa == 0 && d == 0 {
                exponent -= 1
                p += 1
                continue
            }
            if digits < 19 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
                exponent -= 1
            } else if d != 0 {
                overflow = true
            }
            p += 1
        }
    }
    guard sawDigit else { return nil }
    if p < end && (start[p] == UInt8(ascii: "e") || start[p] == UInt8(ascii: "E")) {
        p += 1
        var expNegative = false
        if p < end && (start[p] == UInt8(ascii: "-") || start[p] == UInt8(ascii: "+")) {
            expNegative = start[p] == UInt8(ascii: "-")
            p += 1
        }
        var e = 0
        var expDigits = 0
        while p < end {
            let d = start[p] &- 48
            if d > 9 { break }
            if e < 100_000 { e = e * 10 + Int(d) }
            expDigits += 1
            p += 1
        }
        guard expDigits > 0 else { return nil }
        exponent += expNegative ? -e : e
    }
    guard p == end else { return nil }
    if !overflow {
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        if mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            var value = Double(mantissa)
            if exponent < 0 { value /= powersOfTen[-exponent] } else { value *= powersOfTen[exponent] }
            return negative ? -value : value
        }
    }
    // Slow path: strtod on a NUL-terminated copy (correctly rounded in glibc and Darwin).
    let length = end - first
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { tmp -> Double? in
        guard let base = tmp.baseAddress else { return nil }
        for i in 0..<length { base[i] = CChar(bitPattern: start[first + i]) }
        base[length] = 0
        var endPointer: UnsafeMutablePointer<CChar>? = nil
        let value = strtod(base, &endPointer)
        guard let endPointer, endPointer - base == length, value.isFinite else { return nil }
        return value
    }
}

/// Parses an integer with optional surrounding whitespace.
func parseInteger(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    guard let d = parseDecimal(start, count), d == d.rounded(), abs(d) < 1e15 else { return nil }
    return Int(d)
}

/// Parses a GPX time (see ``Timestamp/parse(_:_:)``).
@inline(__always)
func parseTimestamp(_ s: UnsafePointer<UInt8>, _ count: Int) -> Timestamp? {
    Timestamp.parse(s, count)
}

/// Parses a GPX time with a cache of the last date (see ``Timestamp/DayCache``).
@inline(__always)
func parseTimestamp(_ s: UnsafePointer<UInt8>, _ count: Int, cache: inout Timestamp.DayCache) -> Timestamp? {
    Timestamp.parse(s, count, dayCache: &cache)
}
