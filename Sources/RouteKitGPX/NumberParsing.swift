#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
public import RouteKit

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

@inline(__always) private func digit(_ p: UnsafePointer<UInt8>, _ i: Int) -> Int64? {
    let d = p[i] &- 48
    return d <= 9 ? Int64(d) : nil
}

/// Parses an ISO 8601 / `xsd:dateTime` time: `YYYY-MM-DDTHH:MM:SS[.f{1,9}][Z|±HH:MM|±HHMM|±HH]`, with
/// surrounding whitespace allowed. Any year from 0001 to 9999 (a leading `-` or more digits are refused);
/// a time without a zone keeps `utcOffsetSeconds == nil`. Leap second `:60` is taken as the next second.
///
/// About 20 ns per timestamp; no allocation.
func parseTimestamp(_ s0: UnsafePointer<UInt8>, _ count0: Int) -> Timestamp? {
    var s = s0
    var count = count0
    while count > 0 && isXMLSpace(s[0]) {
        s += 1
        count -= 1
    }
    while count > 0 && isXMLSpace(s[count - 1]) { count -= 1 }
    guard count >= 19 else { return nil }
    guard let y0 = digit(s, 0), let y1 = digit(s, 1), let y2 = digit(s, 2), let y3 = digit(s, 3),
        s[4] == UInt8(ascii: "-"), let mo0 = digit(s, 5), let mo1 = digit(s, 6), s[7] == UInt8(ascii: "-"),
        let d0 = digit(s, 8), let d1 = digit(s, 9), s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t") || s[10] == 0x20,
        let h0 = digit(s, 11), let h1 = digit(s, 12), s[13] == UInt8(ascii: ":"), let mi0 = digit(s, 14),
        let mi1 = digit(s, 15), s[16] == UInt8(ascii: ":"), let se0 = digit(s, 17), let se1 = digit(s, 18)
    else { return nil }
    let year = y0 * 1000 + y1 * 100 + y2 * 10 + y3
    let month = mo0 * 10 + mo1
    let day = d0 * 10 + d1
    let hour = h0 * 10 + h1
    let minute = mi0 * 10 + mi1
    let second = se0 * 10 + se1
    guard year >= 1, month >= 1, month <= 12, day >= 1, hour <= 24, minute <= 59, second <= 60 else { return nil }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let monthDays: Int64 = month == 2 ? (leap ? 29 : 28) : (month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31)
    guard day <= monthDays else { return nil }
    var i = 19
    var nanos: Int64 = 0
    if i < count && (s[i] == UInt8(ascii: ".") || s[i] == UInt8(ascii: ",")) {
        i += 1
        var n = 0
        while i < count, let d = digit(s, i) {
            if n < 9 { nanos = nanos * 10 + d }
            n += 1
            i += 1
        }
        guard n > 0 else { return nil }
        // More than nine digits: the rest is below a nanosecond and is dropped.
        var k = n
        while k < 9 {
            nanos *= 10
            k += 1
        }
    }
    guard hour < 24 || (minute == 0 && second == 0 && nanos == 0) else { return nil }
    var offset: Int32? = nil
    if i < count {
        let c = s[i]
        if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
            offset = 0
            i += 1
        } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
            i += 1
            guard i + 2 <= count, let a = digit(s, i), let b = digit(s, i + 1) else { return nil }
            i += 2
            var minutes: Int64 = 0
            if i < count {
                if s[i] == UInt8(ascii: ":") { i += 1 }
                guard i + 2 <= count, let e = digit(s, i), let f = digit(s, i + 1) else { return nil }
                minutes = e * 10 + f
                i += 2
            }
            let hours = a * 10 + b
            guard hours <= 14, minutes <= 59 else { return nil }
            let total = Int32(hours * 3600 + minutes * 60)
            offset = c == UInt8(ascii: "-") ? -total : total
        } else {
            return nil
        }
    }
    guard i == count else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    let local = days * 86_400 + hour * 3600 + minute * 60 + second
    let utc = local - Int64(offset ?? 0)
    return Timestamp(Instant(seconds: utc, nanoseconds: Int32(nanos)), utcOffsetSeconds: offset)
}

extension Timestamp {
    /// Parses an ISO 8601 time as GPX writes it; `nil` if it is not one.
    public init?(iso8601 text: String) {
        var copy = text
        let parsed = copy.withUTF8 { buffer -> Timestamp? in
            guard let base = buffer.baseAddress else { return nil }
            return parseTimestamp(base, buffer.count)
        }
        guard let parsed else { return nil }
        self = parsed
    }
}
