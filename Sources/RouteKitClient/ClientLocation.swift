#if Client
    import Foundation

    /// A location as the API sends and takes it (`LocationInput`, one line of `GET /v1/routes/ID/locations`): what
    /// Core Location's `CLLocation` holds, field for field.
    ///
    /// Values that are not known are `nil` and left out of the JSON (Core Location's negative accuracies mean "not
    /// known": pass `nil` for them).
    public struct ClientLocation: Codable, Hashable, Sendable {
        /// Latitude in degrees (WGS 84), -90 to 90.
        public var latitude: Double
        /// Longitude in degrees, -180 to 180.
        public var longitude: Double
        /// When the location was measured.
        public var time: Date?
        /// Altitude in metres.
        public var altitude: Double?
        /// The horizontal accuracy in metres.
        public var horizontalAccuracy: Double?
        /// The vertical accuracy in metres.
        public var verticalAccuracy: Double?
        /// Speed in metres per second.
        public var speed: Double?
        /// The speed's accuracy in metres per second.
        public var speedAccuracy: Double?
        /// The direction of travel in degrees from true north.
        public var course: Double?
        /// The course's accuracy in degrees.
        public var courseAccuracy: Double?

        /// A location; every value but the coordinates is optional.
        public init(
            latitude: Double, longitude: Double, time: Date? = nil, altitude: Double? = nil,
            horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil, speed: Double? = nil,
            speedAccuracy: Double? = nil, course: Double? = nil, courseAccuracy: Double? = nil
        ) {
            self.latitude = latitude
            self.longitude = longitude
            self.time = time
            self.altitude = altitude
            self.horizontalAccuracy = horizontalAccuracy
            self.verticalAccuracy = verticalAccuracy
            self.speed = speed
            self.speedAccuracy = speedAccuracy
            self.course = course
            self.courseAccuracy = courseAccuracy
        }

        enum CodingKeys: String, CodingKey {
            case latitude, longitude, time, altitude, horizontalAccuracy, verticalAccuracy, speed, speedAccuracy
            case course, courseAccuracy
        }

        /// Decodes a location object; `time` is ISO 8601 text.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            latitude = try c.decode(Double.self, forKey: .latitude)
            longitude = try c.decode(Double.self, forKey: .longitude)
            if let text = try c.decodeIfPresent(String.self, forKey: .time) {
                guard let date = ISOTime.date(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .time, in: c, debugDescription: "the time is not ISO 8601")
                }
                time = date
            } else {
                time = nil
            }
            altitude = try c.decodeIfPresent(Double.self, forKey: .altitude)
            horizontalAccuracy = try c.decodeIfPresent(Double.self, forKey: .horizontalAccuracy)
            verticalAccuracy = try c.decodeIfPresent(Double.self, forKey: .verticalAccuracy)
            speed = try c.decodeIfPresent(Double.self, forKey: .speed)
            speedAccuracy = try c.decodeIfPresent(Double.self, forKey: .speedAccuracy)
            course = try c.decodeIfPresent(Double.self, forKey: .course)
            courseAccuracy = try c.decodeIfPresent(Double.self, forKey: .courseAccuracy)
        }

        /// Encodes the known values; `time` as ISO 8601 text in UTC, to the microsecond.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(latitude, forKey: .latitude)
            try c.encode(longitude, forKey: .longitude)
            if let time {
                guard let text = ISOTime.text(time) else {
                    throw EncodingError.invalidValue(
                        time,
                        EncodingError.Context(
                            codingPath: c.codingPath + [CodingKeys.time as any CodingKey],
                            debugDescription: "the time is outside the years 1 to 9999"))
                }
                try c.encode(text, forKey: .time)
            }
            try c.encodeIfPresent(altitude, forKey: .altitude)
            try c.encodeIfPresent(horizontalAccuracy, forKey: .horizontalAccuracy)
            try c.encodeIfPresent(verticalAccuracy, forKey: .verticalAccuracy)
            try c.encodeIfPresent(speed, forKey: .speed)
            try c.encodeIfPresent(speedAccuracy, forKey: .speedAccuracy)
            try c.encodeIfPresent(course, forKey: .course)
            try c.encodeIfPresent(courseAccuracy, forKey: .courseAccuracy)
        }
    }

    /// ISO 8601 times as the API writes and reads them, without a formatter: `YYYY-MM-DDTHH:MM:SS[.fraction]` with
    /// `Z`, an offset (`+02:00`, `+0200`, `+02`) or no zone (taken as UTC, as the server writes a time whose zone it
    /// does not know).
    enum ISOTime {
        /// The date of `text`, `nil` when it is not such a time.
        static func date(_ text: String) -> Date? {
            let b = Array(text.utf8)
            guard b.count >= 19 else { return nil }
            func number(_ from: Int, _ count: Int) -> Int? {
                guard from + count <= b.count else { return nil }
                var value = 0
                for i in from..<(from + count) {
                    guard b[i] >= 48 && b[i] <= 57 else { return nil }
                    value = value * 10 + Int(b[i] - 48)
                }
                return value
            }
            guard let year = number(0, 4), b[4] == 45, let month = number(5, 2), b[7] == 45, let day = number(8, 2),
                b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = number(11, 2), b[13] == 58,
                let minute = number(14, 2), b[16] == 58, let second = number(17, 2)
            else { return nil }
            guard year >= 1, (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60
            else { return nil }
            var i = 19
            var nanoseconds = 0
            if i < b.count && (b[i] == 46 || b[i] == 44) {
                i += 1
                var digits = 0
                while i < b.count && b[i] >= 48 && b[i] <= 57 {
                    if digits < 9 { nanoseconds = nanoseconds * 10 + Int(b[i] - 48) }
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
                for _ in min(digits, 9)..<9 { nanoseconds *= 10 }
            }
            var offset = 0
            if i < b.count {
                if b[i] == 90 || b[i] == 122 {
                    i += 1
                } else if b[i] == 43 || b[i] == 45 {
                    let negative = b[i] == 45
                    guard let hours = number(i + 1, 2), hours <= 14 else { return nil }
                    i += 3
                    var minutes = 0
                    if i < b.count {
                        if b[i] == 58 { i += 1 }
                        guard let m = number(i, 2), m <= 59 else { return nil }
                        minutes = m
                        i += 2
                    }
                    offset = (hours * 3600 + minutes * 60) * (negative ? -1 : 1)
                }
            }
            guard i == b.count else { return nil }
            let seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
        }

        /// `date` in UTC to the microsecond (`2024-05-01T06:10:10.25Z`), `nil` outside the years 1 to 9999.
        static func text(_ date: Date) -> String? {
            let t = date.timeIntervalSince1970
            // 0001-01-01 and 10000-01-01.
            guard t.isFinite, t >= -62_135_596_800, t < 253_402_300_800 else { return nil }
            var seconds = Int(t.rounded(.down))
            var micros = Int(((t - Double(seconds)) * 1_000_000).rounded())
            if micros >= 1_000_000 {
                seconds += 1
                micros -= 1_000_000
            }
            var days = seconds / 86_400
            var rest = seconds % 86_400
            if rest < 0 {
                rest += 86_400
                days -= 1
            }
            let (year, month, day) = civilFromDays(days)
            func pad(_ value: Int, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            text += "\(pad(rest / 3600, 2)):\(pad(rest / 60 % 60, 2)):\(pad(rest % 60, 2))"
            if micros > 0 {
                var fraction = pad(micros, 6)
                while fraction.hasSuffix("0") { fraction.removeLast() }
                text += "." + fraction
            }
            return text + "Z"
        }

        /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
        static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yoe = y - era * 400
            let mp = (month + 9) % 12
            let doy = (153 * mp + 2) / 5 + day - 1
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
            return era * 146_097 + doe - 719_468
        }

        /// The proleptic Gregorian date of a day count since 1970-01-01.
        static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let doe = z - era * 146_097
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
            let mp = (5 * doy + 2) / 153
            let d = doy - (153 * mp + 2) / 5 + 1
            let m = mp < 10 ? mp + 3 : mp - 9
            return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
        }
    }
#endif
