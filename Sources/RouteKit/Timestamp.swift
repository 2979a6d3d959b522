import Foundation

/// A point in time with nanosecond resolution, independent of any time zone.
///
/// Unlike `Date` (a `Double`), an `Instant` keeps every digit a GPX file can carry (up to nine
/// fractional digits) for any year, including 1901.
public struct Instant: Hashable, Comparable, Sendable, Codable {
    /// Whole seconds since 1970-01-01T00:00:00Z (negative before).
    public var seconds: Int64
    /// Nanoseconds within the second, `0..<1_000_000_000`.
    public var nanoseconds: Int32

    /// Creates an instant; `nanoseconds` must be in `0..<1_000_000_000`.
    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The instant nearest to `date` (microsecond precision).
    public init(_ date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let s = (micros / 1_000_000).rounded(.down)
        self.seconds = Int64(s)
        self.nanoseconds = Int32((micros - s * 1_000_000) * 1000)
    }

    /// The instant as a `Date` (loses precision below about a microsecond).
    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    /// Seconds from `self` to `other` (positive when `other` is later).
    public func seconds(to other: Instant) -> Double {
        Double(other.seconds - seconds) + Double(other.nanoseconds - nanoseconds) / 1e9
    }

    public static func < (a: Instant, b: Instant) -> Bool {
        a.seconds != b.seconds ? a.seconds < b.seconds : a.nanoseconds < b.nanoseconds
    }
}

/// A time as a GPX file writes it: an ``Instant`` plus the UTC offset it was written with.
///
/// The offset is kept so that a time is written back as it was read: `+02:00` stays `+02:00`, `Z`
/// stays `Z`, and a time written without any zone designator (``utcOffsetSeconds`` `nil`) is written
/// back without one. A time without a zone is taken as UTC for ordering and arithmetic.
///
/// Two timestamps are equal when both the instant and the written offset are equal; order and compare
/// by ``instant``.
public struct Timestamp: Hashable, Sendable, Codable {
    /// The moment in time.
    public var instant: Instant
    /// The UTC offset it was written with, in seconds (`0` for `Z`); `nil` when none was written.
    public var utcOffsetSeconds: Int32?

    /// Creates a timestamp.
    public init(_ instant: Instant, utcOffsetSeconds: Int32? = 0) {
        self.instant = instant
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The instants a duration read from a file may reach: the years 1 to 9999, as ISO 8601 writes them.
    package static let writableSeconds: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    /// This timestamp moved by `seconds` (a duration read from a file: a lap's total time, an event's duration),
    /// with the same UTC offset; `nil` when `seconds` is not finite or the result falls outside the years 1 to 9999.
    /// The one checked way from a duration in input to a time: `Int64(seconds)` traps past 2^63, and the sum can
    /// overflow.
    package func adding(seconds: Double) -> Timestamp? {
        guard seconds.isFinite, abs(seconds) <= 1e12 else { return nil }
        let whole = seconds.rounded(.down)
        guard let wholeSeconds = Int64(exactly: whole),
            let fraction = Int64(exactly: ((seconds - whole) * 1e9).rounded())
        else { return nil }
        var ns = Int64(instant.nanoseconds) + fraction
        // |instant.seconds| is whatever a store holds; 1e12 added to it cannot overflow unless it is near the limits.
        let (sum, overflow) = instant.seconds.addingReportingOverflow(wholeSeconds)
        guard !overflow else { return nil }
        var s = sum
        if ns >= 1_000_000_000 {
            s += ns / 1_000_000_000
            ns %= 1_000_000_000
        }
        guard Self.writableSeconds.contains(s) else { return nil }
        return Timestamp(Instant(seconds: s, nanoseconds: Int32(ns)), utcOffsetSeconds: utcOffsetSeconds)
    }

    /// A UTC timestamp (`Z`) for `date`, to microsecond precision.
    public init(_ date: Date) {
        self.init(Instant(date), utcOffsetSeconds: 0)
    }

    /// The timestamp as a `Date`.
    public var date: Date { instant.date }

    /// ISO 8601 text with the offset as written and the shortest fraction that keeps every digit
    /// (`2024-05-01T06:00:00Z`, `2021-01-07T21:51:59.179+01:15`, `1901-12-13T20:45:52.2073437Z`).
    public var iso8601: String {
        var out = [UInt8]()
        out.reserveCapacity(36)
        appendISO8601(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends ``iso8601`` as UTF-8 bytes (no allocation beyond `out`'s growth).
    public func appendISO8601(to out: inout [UInt8]) {
        writeISO8601 { out.append($0) }
    }

    /// Hands ``iso8601``'s UTF-8 bytes to `emit`, one at a time, without allocating.
    @inlinable
    package func writeISO8601(_ emit: (UInt8) -> Void) {
        let offset = Int64(utcOffsetSeconds ?? 0)
        let local = instant.seconds + offset
        var days = local / 86_400
        var secs = local % 86_400
        if secs < 0 {
            secs += 86_400
            days -= 1
        }
        let (y, m, d) = civilFromDays(days)
        func two(_ v: Int64) {
            emit(UInt8(48 + v / 10))
            emit(UInt8(48 + v % 10))
        }
        var year = y
        if year < 0 {
            emit(UInt8(ascii: "-"))
            year = -year
        }
        if year >= 10_000 {
            for byte in String(year).utf8 { emit(byte) }
        } else {
            two(year / 100)
            two(year % 100)
        }
        emit(UInt8(ascii: "-"))
        two(m)
        emit(UInt8(ascii: "-"))
        two(d)
        emit(UInt8(ascii: "T"))
        two(secs / 3600)
        emit(UInt8(ascii: ":"))
        two(secs / 60 % 60)
        emit(UInt8(ascii: ":"))
        two(secs % 60)
        var ns = Int(instant.nanoseconds)
        if ns > 0 {
            emit(UInt8(ascii: "."))
            var digits = 9
            while ns % 10 == 0 {
                ns /= 10
                digits -= 1
            }
            var div = 1
            for _ in 1..<digits { div *= 10 }
            while div > 0 {
                emit(UInt8(48 + ns / div % 10))
                div /= 10
            }
        }
        guard let off = utcOffsetSeconds else { return }
        if off == 0 {
            emit(UInt8(ascii: "Z"))
            return
        }
        emit(UInt8(ascii: off < 0 ? "-" : "+"))
        let a = Int64(abs(Int(off)))
        two(a / 3600)
        emit(UInt8(ascii: ":"))
        two(a / 60 % 60)
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
@inlinable
package func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = (month + 9) % 12
    let doy = (153 * mp + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
@inlinable
package func civilFromDays(_ z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}

@inline(__always) private func isoDigit(_ p: UnsafePointer<UInt8>, _ i: Int) -> Int64? {
    let d = p[i] &- 48
    return d <= 9 ? Int64(d) : nil
}

@inline(__always) private func isISOSpace(_ c: UInt8) -> Bool {
    c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D
}

extension Timestamp {
    /// Parses an ISO 8601 / `xsd:dateTime` time: `YYYY-MM-DDTHH:MM:SS[.f{1,9}][Z|±HH:MM|±HHMM|±HH]`, with
    /// surrounding whitespace allowed. Any year from 0001 to 9999 (a leading `-` or more digits are refused);
    /// a time without a zone keeps `utcOffsetSeconds == nil`. Leap second `:60` is taken as the next second.
    ///
    /// No allocation.
    package static func parse(_ s0: UnsafePointer<UInt8>, _ count0: Int) -> Timestamp? {
        var cache = DayCache()
        return parse(s0, count0, dayCache: &cache)
    }

    /// The date part of the last time parsed and its day number, so that a run of times on the same day (every
    /// GPS track) skips date validation and calendar arithmetic.
    package struct DayCache: Sendable {
        var word: UInt64 = 0
        var tail: UInt16 = 0
        var days: Int64 = 0
        var valid = false
        /// An empty cache.
        package init() {}
    }

    /// ``parse(_:_:)`` with a cache of the last date seen (see ``DayCache``).
    package static func parse(_ s0: UnsafePointer<UInt8>, _ count0: Int, dayCache: inout DayCache) -> Timestamp? {
        var s = s0
        var count = count0
        while count > 0 && isISOSpace(s[0]) {
            s += 1
            count -= 1
        }
        while count > 0 && isISOSpace(s[count - 1]) { count -= 1 }
        guard count >= 19 else { return nil }
        let word = UnsafeRawPointer(s).loadUnaligned(as: UInt64.self)
        let tail = UnsafeRawPointer(s + 8).loadUnaligned(as: UInt16.self)
        let days: Int64
        if dayCache.valid && word == dayCache.word && tail == dayCache.tail {
            days = dayCache.days
        } else {
            guard let y0 = isoDigit(s, 0), let y1 = isoDigit(s, 1), let y2 = isoDigit(s, 2), let y3 = isoDigit(s, 3),
                s[4] == UInt8(ascii: "-"), let mo0 = isoDigit(s, 5), let mo1 = isoDigit(s, 6),
                s[7] == UInt8(ascii: "-"), let d0 = isoDigit(s, 8), let d1 = isoDigit(s, 9)
            else { return nil }
            let year = y0 * 1000 + y1 * 100 + y2 * 10 + y3
            let month = mo0 * 10 + mo1
            let day = d0 * 10 + d1
            guard year >= 1, month >= 1, month <= 12, day >= 1 else { return nil }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let monthDays: Int64 =
                month == 2 ? (leap ? 29 : 28) : (month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31)
            guard day <= monthDays else { return nil }
            days = daysFromCivil(year: year, month: month, day: day)
            dayCache.word = word
            dayCache.tail = tail
            dayCache.days = days
            dayCache.valid = true
        }
        guard s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t") || s[10] == 0x20,
            let h0 = isoDigit(s, 11), let h1 = isoDigit(s, 12), s[13] == UInt8(ascii: ":"), let mi0 = isoDigit(s, 14),
            let mi1 = isoDigit(s, 15), s[16] == UInt8(ascii: ":"), let se0 = isoDigit(s, 17), let se1 = isoDigit(s, 18)
        else { return nil }
        let hour = h0 * 10 + h1
        let minute = mi0 * 10 + mi1
        let second = se0 * 10 + se1
        guard hour <= 24, minute <= 59, second <= 60 else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if i < count && (s[i] == UInt8(ascii: ".") || s[i] == UInt8(ascii: ",")) {
            i += 1
            var n = 0
            while i < count, let d = isoDigit(s, i) {
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
                guard i + 2 <= count, let a = isoDigit(s, i), let b = isoDigit(s, i + 1) else { return nil }
                i += 2
                var minutes: Int64 = 0
                if i < count {
                    if s[i] == UInt8(ascii: ":") { i += 1 }
                    guard i + 2 <= count, let e = isoDigit(s, i), let f = isoDigit(s, i + 1) else { return nil }
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
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        let utc = local - Int64(offset ?? 0)
        return Timestamp(Instant(seconds: utc, nanoseconds: Int32(nanos)), utcOffsetSeconds: offset)
    }

    /// Parses an ISO 8601 time as GPX writes it; `nil` if it is not one.
    public init?(iso8601 text: String) {
        var copy = text
        let parsed = copy.withUTF8 { buffer -> Timestamp? in
            guard let base = buffer.baseAddress else { return nil }
            return Timestamp.parse(base, buffer.count)
        }
        guard let parsed else { return nil }
        self = parsed
    }
}
