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
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        var year = y
        if year < 0 {
            out.append(UInt8(ascii: "-"))
            year = -year
        }
        if year >= 10_000 {
            out.append(contentsOf: Array(String(year).utf8))
        } else {
            two(year / 100)
            two(year % 100)
        }
        out.append(UInt8(ascii: "-"))
        two(m)
        out.append(UInt8(ascii: "-"))
        two(d)
        out.append(UInt8(ascii: "T"))
        two(secs / 3600)
        out.append(UInt8(ascii: ":"))
        two(secs / 60 % 60)
        out.append(UInt8(ascii: ":"))
        two(secs % 60)
        var ns = Int(instant.nanoseconds)
        if ns > 0 {
            out.append(UInt8(ascii: "."))
            var digits = 9
            while ns % 10 == 0 {
                ns /= 10
                digits -= 1
            }
            var div = 1
            for _ in 1..<digits { div *= 10 }
            while div > 0 {
                out.append(UInt8(48 + ns / div % 10))
                div /= 10
            }
        }
        guard let off = utcOffsetSeconds else { return }
        if off == 0 {
            out.append(UInt8(ascii: "Z"))
            return
        }
        out.append(UInt8(ascii: off < 0 ? "-" : "+"))
        let a = Int64(abs(Int(off)))
        two(a / 3600)
        out.append(UInt8(ascii: ":"))
        two(a / 60 % 60)
    }
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
@inlinable
public func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
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
public func civilFromDays(_ z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
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
