public import RouteKit
import RouteKitIngest

/// The FIT profile numbers RouteKit reads (Garmin's FIT SDK profile, `Profile.xlsx`).
enum FITProfile {
    enum Message {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let deviceInfo: UInt16 = 23
        static let course: UInt16 = 31
        static let coursePoint: UInt16 = 32
        static let activity: UInt16 = 34
        static let fieldDescription: UInt16 = 206
        static let developerDataID: UInt16 = 207
    }

    static let fileTypes: [UInt8: String] = [
        1: "device", 2: "settings", 3: "sport", 4: "activity", 5: "workout", 6: "course", 7: "schedules",
        9: "weight", 10: "totals", 11: "goals", 14: "blood_pressure", 15: "monitoring_a", 20: "activity_summary",
        28: "monitoring_daily", 32: "monitoring_b", 34: "segment", 35: "segment_list", 40: "exd_configuration",
    ]

    static let sports: [UInt8: String] = [
        0: "generic", 1: "running", 2: "cycling", 3: "transition", 4: "fitness_equipment", 5: "swimming",
        6: "basketball", 7: "soccer", 8: "tennis", 9: "american_football", 10: "training", 11: "walking",
        12: "cross_country_skiing", 13: "alpine_skiing", 14: "snowboarding", 15: "rowing", 16: "mountaineering",
        17: "hiking", 18: "multisport", 19: "paddling", 20: "flying", 21: "e_biking", 22: "motorcycling",
        23: "boating", 24: "driving", 25: "golf", 26: "hang_gliding", 27: "horseback_riding", 28: "hunting",
        29: "fishing", 30: "inline_skating", 31: "rock_climbing", 32: "sailing", 33: "ice_skating",
        34: "sky_diving", 35: "snowshoeing", 36: "snowmobiling", 37: "stand_up_paddleboarding", 38: "surfing",
        39: "wakeboarding", 40: "water_skiing", 41: "kayaking", 42: "rafting", 43: "windsurfing",
        44: "kitesurfing", 45: "tactical", 46: "jumpmaster", 47: "boxing", 48: "floor_climbing", 53: "diving",
    ]

    /// `intensity` names.
    static let intensities: [UInt8: String] = [
        0: "active", 1: "rest", 2: "warmup", 3: "cooldown", 4: "recovery", 5: "interval", 6: "other",
    ]

    /// `lap_trigger` names.
    static let lapTriggers: [UInt8: String] = [
        0: "manual", 1: "time", 2: "distance", 3: "position_start", 4: "position_lap", 5: "position_waypoint",
        6: "position_marked", 7: "session_end", 8: "fitness_equipment",
    ]

    /// The `event` numbers whose `marker` events become marker events (gear changes, alerts and other device
    /// events are not: a ride can hold thousands of them).
    static let markerEvents: [UInt8: String] = [
        7: "off_course", 10: "course_point", 32: "user_marker", 33: "sport_point",
    ]

    /// RouteKit's activity type for a FIT sport number.
    static func activityType(sport: UInt8?) -> ActivityType {
        guard let sport, let name = sports[sport] else { return .other }
        switch name {
        case "running": return .running
        case "cycling", "e_biking": return .cycling
        case "walking": return .walking
        case "hiking", "mountaineering": return .hiking
        case "swimming": return .swimming
        case "generic": return .other
        default:
            // snake_case to the lowerCamelCase of RouteKit's names: "cross_country_skiing" → "crossCountrySkiing".
            let parts = name.split(separator: "_")
            let camel = parts.enumerated().map {
                $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst()
            }
            return ActivityType(rawValue: camel.joined())
        }
    }
}

/// One `session` of an activity file: an activity of its workout (a multisport file has one per sport, and
/// transitions).
@_spi(RouteKitInternals)
public struct FITSession: Sendable, Hashable {
    /// When it started, FIT seconds.
    public var startTime: UInt32?
    /// When it ended (the message's timestamp), FIT seconds.
    public var timestamp: UInt32?
    /// Elapsed time in seconds, pauses included.
    public var totalElapsedTime: Double?
    /// Timer time in seconds, pauses excluded.
    public var totalTimerTime: Double?
    /// Distance in metres.
    public var totalDistance: Double?
    /// The FIT sport number.
    public var sport: UInt8?
    /// The FIT sub-sport number.
    public var subSport: UInt8?
    /// Calories (kcal).
    public var totalCalories: Double?
    /// `enhanced_avg_speed` over `avg_speed`, m/s.
    public var averageSpeed: Double?
    /// `enhanced_max_speed` over `max_speed`, m/s.
    public var maximumSpeed: Double?
    /// `avg_heart_rate`, bpm.
    public var averageHeartRate: Double?
    /// `max_heart_rate`, bpm.
    public var maximumHeartRate: Double?
    /// `avg_cadence`, rpm.
    public var averageCadence: Double?
    /// `max_cadence`, rpm.
    public var maximumCadence: Double?
    /// `avg_power`, W.
    public var averagePower: Double?
    /// `max_power`, W.
    public var maximumPower: Double?
    /// `total_ascent`, m.
    public var totalAscent: Double?
    /// `total_descent`, m.
    public var totalDescent: Double?
    /// The sport's FIT name (`"running"`), or `"sport N"` for numbers RouteKit does not name.
    public var sportName: String? { sport.map { FITProfile.sports[$0] ?? "sport \($0)" } }

    /// The totals the device recorded for the session as activity metadata (`MetadataKey` names, as a lap's), with
    /// its sport and sub-sport (`fitSport`, `fitSubSport`).
    public var metadata: [String: MetadataValue] {
        var out: [String: MetadataValue] = [:]
        let values: [(String, Double?)] = [
            (MetadataKey.totalElapsedTime, totalElapsedTime), (MetadataKey.totalTimerTime, totalTimerTime),
            (MetadataKey.totalDistance, totalDistance), (MetadataKey.totalCalories, totalCalories),
            (MetadataKey.averageSpeed, averageSpeed), (MetadataKey.maximumSpeed, maximumSpeed),
            (MetadataKey.averageHeartRate, averageHeartRate), (MetadataKey.maximumHeartRate, maximumHeartRate),
            (MetadataKey.averageCadence, averageCadence), (MetadataKey.maximumCadence, maximumCadence),
            (MetadataKey.averagePower, averagePower), (MetadataKey.maximumPower, maximumPower),
            (MetadataKey.totalAscent, totalAscent), (MetadataKey.totalDescent, totalDescent),
        ]
        for (key, value) in values { if let value, value.isFinite { out[key] = .double(value) } }
        if let s = sportName { out["fitSport"] = .string(s) }
        if let s = subSport { out["fitSubSport"] = .integer(Int64(s)) }
        return out
    }
}

/// One `lap`: its start and end, and the totals the device recorded (scale applied, invalid values `nil`).
@_spi(RouteKitInternals)
public struct FITLap: Sendable, Hashable {
    /// When it started, FIT seconds.
    public var startTime: UInt32?
    /// When it ended (the message's timestamp), FIT seconds.
    public var timestamp: UInt32?
    /// `total_elapsed_time`, seconds.
    public var totalElapsedTime: Double?
    /// `total_timer_time`, seconds.
    public var totalTimerTime: Double?
    /// `total_distance`, metres.
    public var totalDistance: Double?
    /// `total_calories`, kcal.
    public var totalCalories: Double?
    /// `enhanced_avg_speed` over `avg_speed`, m/s.
    public var averageSpeed: Double?
    /// `enhanced_max_speed` over `max_speed`, m/s.
    public var maximumSpeed: Double?
    /// `avg_heart_rate`, bpm.
    public var averageHeartRate: Double?
    /// `max_heart_rate`, bpm.
    public var maximumHeartRate: Double?
    /// `avg_cadence`, rpm.
    public var averageCadence: Double?
    /// `max_cadence`, rpm.
    public var maximumCadence: Double?
    /// `avg_power`, W.
    public var averagePower: Double?
    /// `max_power`, W.
    public var maximumPower: Double?
    /// `total_ascent`, m.
    public var totalAscent: Double?
    /// `total_descent`, m.
    public var totalDescent: Double?
    /// `intensity` (0 active, 1 rest, 2 warmup, 3 cooldown, 4 recovery, 5 interval, 6 other).
    public var intensity: UInt8?
    /// `lap_trigger` (0 manual, 1 time, 2 distance, 3–6 position, 7 session end, 8 fitness equipment).
    public var trigger: UInt8?

    /// Creates a lap.
    public init(startTime: UInt32? = nil, timestamp: UInt32? = nil) {
        self.startTime = startTime
        self.timestamp = timestamp
    }

    /// The lap's fields from its message.
    init(_ m: FITMessage) {
        startTime = m.uint32(field: 2)
        timestamp = m.timestamp
        totalElapsedTime = m.double(field: 7, scale: 1000)
        totalTimerTime = m.double(field: 8, scale: 1000)
        totalDistance = m.double(field: 9, scale: 100)
        totalCalories = m.double(field: 11)
        averageSpeed = m.double(field: 110, scale: 1000) ?? m.double(field: 13, scale: 1000)
        maximumSpeed = m.double(field: 111, scale: 1000) ?? m.double(field: 14, scale: 1000)
        averageHeartRate = m.double(field: 15)
        maximumHeartRate = m.double(field: 16)
        averageCadence = m.double(field: 17)
        maximumCadence = m.double(field: 18)
        averagePower = m.double(field: 19)
        maximumPower = m.double(field: 20)
        totalAscent = m.double(field: 21)
        totalDescent = m.double(field: 22)
        intensity = m.integer(field: 23).map { UInt8(truncatingIfNeeded: $0) }
        trigger = m.integer(field: 24).map { UInt8(truncatingIfNeeded: $0) }
    }

    /// The totals as event metadata (`MetadataKey` names; FIT's names for intensity and trigger).
    public var metadata: [String: MetadataValue] {
        var out: [String: MetadataValue] = [:]
        let values: [(String, Double?)] = [
            (MetadataKey.totalElapsedTime, totalElapsedTime), (MetadataKey.totalTimerTime, totalTimerTime),
            (MetadataKey.totalDistance, totalDistance), (MetadataKey.totalCalories, totalCalories),
            (MetadataKey.averageSpeed, averageSpeed), (MetadataKey.maximumSpeed, maximumSpeed),
            (MetadataKey.averageHeartRate, averageHeartRate), (MetadataKey.maximumHeartRate, maximumHeartRate),
            (MetadataKey.averageCadence, averageCadence), (MetadataKey.maximumCadence, maximumCadence),
            (MetadataKey.averagePower, averagePower), (MetadataKey.maximumPower, maximumPower),
            (MetadataKey.totalAscent, totalAscent), (MetadataKey.totalDescent, totalDescent),
        ]
        for (key, value) in values { if let value, value.isFinite { out[key] = .double(value) } }
        if let i = intensity { out[MetadataKey.intensity] = .string(FITProfile.intensities[i] ?? "intensity \(i)") }
        if let t = trigger { out[MetadataKey.lapTrigger] = .string(FITProfile.lapTriggers[t] ?? "trigger \(t)") }
        return out
    }
}

/// A timer event: the timer started, or stopped (a pause), by hand or by the device (auto pause).
@_spi(RouteKitInternals)
public struct FITTimerEvent: Sendable, Hashable {
    /// FIT seconds.
    public var timestamp: UInt32
    /// `true` for start, `false` for stop and stop_all.
    public var isStart: Bool
    /// `true` when the device started or stopped the timer on its own (`timer_trigger` auto: an auto pause).
    public var isAuto: Bool

    /// Creates a timer event.
    public init(timestamp: UInt32, isStart: Bool, isAuto: Bool = false) {
        self.timestamp = timestamp
        self.isStart = isStart
        self.isAuto = isAuto
    }
}

/// A marker event: a user marker, a course point reached, off course, a sport point (`event_type` marker).
@_spi(RouteKitInternals)
public struct FITMarker: Sendable, Hashable {
    /// FIT seconds.
    public var timestamp: UInt32
    /// The `event` number (32 user_marker, 10 course_point, 7 off_course, 33 sport_point).
    public var event: UInt8
    /// The event's FIT name.
    public var name: String { FITProfile.markerEvents[event] ?? "event \(event)" }
}

/// A developer field's description (`field_description`), as the file gives it.
@_spi(RouteKitInternals)
public struct FITDeveloperField: Sendable, Hashable {
    /// Which `developer_data_id`.
    public var developerIndex: UInt8
    /// The field's number among that developer's fields.
    public var number: UInt8
    /// Its name, if given.
    public var name: String?
    /// Its units, if given.
    public var units: String?
}

/// One `record` message with the fields RouteKit maps, scale and offset applied, invalid values as `nil`.
package struct FITRecord: Sendable, Hashable {
    /// FIT seconds (field 253 or a compressed timestamp).
    package var timestamp: UInt32?
    /// Degrees, from semicircles.
    package var latitude: Double?
    /// Degrees, from semicircles.
    package var longitude: Double?
    /// Metres (`enhanced_altitude` over `altitude`).
    package var altitude: Double?
    /// Metres per second (`enhanced_speed` over `speed` over `compressed_speed_distance`).
    package var speed: Double?
    /// Beats per minute.
    package var heartRate: Double?
    /// Revolutions or steps per minute (with `fractional_cadence`).
    package var cadence: Double?
    /// Watts.
    package var power: Double?
    /// Degrees Celsius.
    package var temperature: Double?
    /// Metres from the start.
    package var distance: Double?

    /// Whether it has a position.
    package var hasPosition: Bool { latitude != nil && longitude != nil }

    /// The record message `m` read: the fields RouteKit maps, scale and offset applied.
    package init(_ m: FITMessage) {
        timestamp = m.timestamp
        // One pass over the fields the message has (a record has about ten), instead of a lookup per field
        // RouteKit maps.
        var lat: Int64?
        var lon: Int64?
        var altitude16: Double?
        var speed16: Double?
        var fractionalCadence: Double?
        var packedSpeed: Double?
        let big = m.definition.bigEndian
        for f in m.definition.fields {
            let p = m.bytes + f.offset
            @inline(__always) func int() -> Int64? {
                FITMessage.integer(p, size: f.size, baseType: f.baseType, bigEndian: big)
            }
            switch f.number {
            case 0: lat = int()
            case 1: lon = int()
            case 2: altitude16 = int().map { Double($0) / 5 - 500 }
            case 3: heartRate = int().map(Double.init)
            case 4: cadence = int().map(Double.init)
            case 5: distance = int().map { Double($0) / 100 }
            case 6: speed16 = int().map { Double($0) / 1000 }
            case 7: power = int().map(Double.init)
            case 8:
                // compressed_speed_distance (FR60/70): 12 bits of speed in 1/100 m/s, then 12 bits of distance.
                if f.size >= 3 {
                    let b0 = p.load(as: UInt8.self)
                    let b1 = p.load(fromByteOffset: 1, as: UInt8.self)
                    let b2 = p.load(fromByteOffset: 2, as: UInt8.self)
                    if !(b0 == 0xFF && b1 == 0xFF && b2 == 0xFF) {
                        packedSpeed = Double(UInt16(b0) | UInt16(b1 & 0x0F) << 8) / 100
                    }
                }
            case 13: temperature = int().map(Double.init)
            case 53: fractionalCadence = int().map { Double($0) / 128 }
            case 73: speed = int().map { Double($0) / 1000 }
            case 78: altitude = int().map { Double($0) / 5 - 500 }
            default: break
            }
        }
        if let lat, let lon {
            latitude = Double(lat) * (180.0 / 2_147_483_648.0)
            longitude = Double(lon) * (180.0 / 2_147_483_648.0)
        }
        if altitude == nil { altitude = altitude16 }
        if speed == nil { speed = speed16 ?? packedSpeed }
        if let c = cadence, let f = fractionalCadence { cadence = c + f }
    }

    /// A record with only the fields given.
    package init(timestamp: UInt32?) { self.timestamp = timestamp }
}

/// What a FIT file holds, read in one pass without keeping its records: what kind of file, its sessions, laps,
/// timer events, developer fields, and counts.
///
/// `@_spi(RouteKitInternals)`, with `FITSession`, `FITLap`, `FITTimerEvent` and `FITDeveloperField`: the importer's
/// first pass and what `routekit inspect` shows, public only to the FIT fuzzer (FuzzTesting) and the tests.
@_spi(RouteKitInternals)
public struct FITSummary: Sendable {
    /// How many of each kind of message a summary keeps; the rest are counted in a warning of kind
    /// ``FITDecoder/Warning/Kind/limit``. Far above what devices write (an ultramarathon has hundreds of laps), they
    /// bound what a hostile file can make a summary hold.
    package enum Limits {
        /// Sessions (each becomes a workout).
        package static let sessions = 10_000
        /// Laps.
        package static let laps = 100_000
        /// Timer start and stop events.
        package static let timerEvents = 100_000
        /// Marker events.
        package static let markers = 100_000
        /// Developer field descriptions.
        package static let developerFields = 1_000
    }

    /// `file_id.type` (4 activity, 6 course), `nil` without a `file_id`.
    public var fileType: UInt8?
    /// The file type's FIT name (`"activity"`), or `"type N"`.
    public var fileTypeName: String {
        guard let t = fileType else { return "unknown (no file_id)" }
        return FITProfile.fileTypes[t] ?? "type \(t)"
    }
    /// `file_id.manufacturer`.
    public var manufacturer: UInt16?
    /// `file_id.product`.
    public var product: UInt16?
    /// `file_id.serial_number`.
    public var serialNumber: UInt32?
    /// `file_id.time_created`, FIT seconds.
    public var timeCreated: UInt32?
    /// The sessions, in file order.
    public var sessions: [FITSession] = []
    /// The laps, in file order.
    public var laps: [FITLap] = []
    /// Timer start and stop events, in file order.
    public var timerEvents: [FITTimerEvent] = []
    /// Marker events (user markers, course points reached, off course, sport points), in file order.
    public var markers: [FITMarker] = []
    /// `activity.local_timestamp - activity.timestamp`, rounded to 15 minutes, in seconds.
    public var utcOffsetSeconds: Int32?
    /// For a file whose times are device-relative (FR60/70 and other early devices): what turns them into local
    /// wall-clock time, `activity.local_timestamp - activity.timestamp`.
    package var relativeToLocal: Int64?
    /// The course's name (course files).
    public var courseName: String?
    /// The course's sport (course files).
    public var courseSport: UInt8?
    /// The course's sport by its FIT name (`cycling`, or `sport 99` for a number the profile does not name).
    package var courseSportName: String? { courseSport.map { FITProfile.sports[$0] ?? "sport \($0)" } }
    /// Developer field descriptions.
    public var developerFields: [FITDeveloperField] = []
    /// `record` messages.
    public var records = 0
    /// `record` messages with a position.
    public var recordsWithPosition = 0
    /// `record` messages with a heart rate.
    public var recordsWithHeartRate = 0
    /// Data messages of every kind.
    public var messages = 0
    /// Data messages by global number.
    package var messageCounts: [UInt16: Int] = [:]
    /// Chained FIT files read.
    public var files = 0
    /// Data messages with a compressed-timestamp header.
    package var compressedTimestampMessages = 0
    /// Developer field values read.
    package var developerFieldValues = 0
    /// What the decoder read past or recovered from.
    public var warnings: [FITDecoder.Warning] = []
    /// Whether the decoder skipped or cut anything short.
    public var recovered = false
}

/// Reads FIT files held in memory: a summary pass and a record pass (FIT files are small next to the memory a
/// workout's points take; the decoder itself streams).
public enum FITFile {
    /// Whether `bytes` start like a FIT file (a header whose bytes 8–11 are `.FIT`).
    package static func isFIT(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 12, let size = bytes.first, size >= 12 else { return false }
        return Array(bytes.dropFirst(8).prefix(4)) == Array(".FIT".utf8)
    }

    /// Reads everything but the records' values.
    /// - Throws: `RouteKitError.Code.invalidFIT` naming the byte offset when there is no FIT file to read.
    @_spi(RouteKitInternals)
    public static func summary(_ bytes: [UInt8]) throws(RouteKitError) -> FITSummary {
        try summary(FITInput(bytes: bytes)) { _ in }
    }

    /// Reads everything but the records' values, a chunk at a time.
    package static func summary(_ input: FITInput) throws(RouteKitError) -> FITSummary {
        try summary(input) { _ in }
    }

    /// Reads everything but the records' values, handing each `record` message to `onRecord` on the way.
    static func summary(_ input: FITInput, onRecord: (FITMessage) -> Void) throws(RouteKitError) -> FITSummary {
        var pass = SummaryPass()
        var decoder = FITDecoder()
        do {
            // One access to `pass` a message: the captured variables of a closure are checked for exclusive
            // access at run time, each time.
            func body(_ event: FITDecoder.Event) {
                guard case .message(let m) = event else { return }
                if pass.add(m) { onRecord(m) }
            }
            try input.forEachChunk { chunk in try decoder.feed(chunk, body) }
            try decoder.finish(body)
        } catch let e as RouteKitError {
            throw e
        } catch {
            throw RouteKitError(.invalidFIT, "\(error)")
        }
        return pass.finish(decoder)
    }

    /// The summary as the messages go by.
    private struct SummaryPass {
        var s = FITSummary()
        var activityTimestamp: UInt32?
        var localTimestamp: UInt32?
        // Most messages have numbers below 256 (an array); the rest go to the dictionary directly.
        var counts = [Int](repeating: 0, count: 256)
        /// Messages past a limit, by what they were, with the offset of the first.
        var overLimit: [String: (count: Int, offset: Int)] = [:]

        /// Whether one more of `what` (holding `count` now) may be kept; counts it when not.
        mutating func room(_ count: Int, _ limit: Int, _ what: String, _ m: FITMessage) -> Bool {
            guard count >= limit else { return true }
            overLimit[what, default: (0, m.offset)].count += 1
            return false
        }

        /// Counts a message; returns whether it is a `record`.
        mutating func add(_ m: FITMessage) -> Bool {
            var isRecord = false
            s.messages += 1
            if m.globalNumber < 256 {
                counts[Int(m.globalNumber)] += 1
            } else {
                s.messageCounts[m.globalNumber, default: 0] += 1
            }
            if !m.definition.developerFields.isEmpty {
                s.developerFieldValues += m.definition.developerFields.count
            }
            switch m.globalNumber {
            case FITProfile.Message.record:
                s.records += 1
                if m.integer(field: 0) != nil && m.integer(field: 1) != nil { s.recordsWithPosition += 1 }
                if m.integer(field: 3) != nil { s.recordsWithHeartRate += 1 }
                isRecord = true
            case FITProfile.Message.fileID:
                if s.fileType == nil, let t = m.integer(field: 0) {
                    s.fileType = UInt8(truncatingIfNeeded: t)
                    s.manufacturer = m.integer(field: 1).map { UInt16(truncatingIfNeeded: $0) }
                    s.product = m.integer(field: 2).map { UInt16(truncatingIfNeeded: $0) }
                    s.serialNumber = m.uint32(field: 3)
                    s.timeCreated = m.uint32(field: 4)
                }
            case FITProfile.Message.session:
                guard room(s.sessions.count, FITSummary.Limits.sessions, "session", m) else { break }
                var session = FITSession(
                    startTime: m.uint32(field: 2), timestamp: m.timestamp,
                    totalElapsedTime: m.double(field: 7, scale: 1000),
                    totalTimerTime: m.double(field: 8, scale: 1000),
                    totalDistance: m.double(field: 9, scale: 100),
                    sport: m.integer(field: 5).map { UInt8(truncatingIfNeeded: $0) },
                    subSport: m.integer(field: 6).map { UInt8(truncatingIfNeeded: $0) },
                    totalCalories: m.double(field: 11))
                // The session's own numbers (the lap's fields, one number further on; enhanced speeds 124, 125).
                session.averageSpeed = m.double(field: 124, scale: 1000) ?? m.double(field: 14, scale: 1000)
                session.maximumSpeed = m.double(field: 125, scale: 1000) ?? m.double(field: 15, scale: 1000)
                session.averageHeartRate = m.double(field: 16)
                session.maximumHeartRate = m.double(field: 17)
                session.averageCadence = m.double(field: 18)
                session.maximumCadence = m.double(field: 19)
                session.averagePower = m.double(field: 20)
                session.maximumPower = m.double(field: 21)
                session.totalAscent = m.double(field: 22)
                session.totalDescent = m.double(field: 23)
                s.sessions.append(session)
            case FITProfile.Message.lap:
                guard room(s.laps.count, FITSummary.Limits.laps, "lap", m) else { break }
                s.laps.append(FITLap(m))
            case FITProfile.Message.event:
                // event 0 is the timer; event_type 0 start, 1 stop, 4 stop_all; data (timer_trigger) 1 is auto.
                let event = m.integer(field: 0)
                if event == 0, let type = m.integer(field: 1), let t = m.timestamp,
                    room(s.timerEvents.count, FITSummary.Limits.timerEvents, "timer event", m)
                {
                    let auto = m.integer(field: 3) == 1
                    if type == 0 {
                        s.timerEvents.append(FITTimerEvent(timestamp: t, isStart: true, isAuto: auto))
                    } else if type == 1 || type == 4 {
                        s.timerEvents.append(FITTimerEvent(timestamp: t, isStart: false, isAuto: auto))
                    }
                } else if let e = event, let number = UInt8(exactly: e), FITProfile.markerEvents[number] != nil,
                    m.integer(field: 1) == 3, let t = m.timestamp,
                    room(s.markers.count, FITSummary.Limits.markers, "marker event", m)
                {
                    s.markers.append(FITMarker(timestamp: t, event: number))
                }
            case FITProfile.Message.activity:
                activityTimestamp = m.timestamp
                localTimestamp = m.uint32(field: 5)
            case FITProfile.Message.course:
                s.courseName = m.string(field: 5)
                s.courseSport = m.integer(field: 4).map { UInt8(truncatingIfNeeded: $0) }
            case FITProfile.Message.fieldDescription:
                if let index = m.integer(field: 0), let number = m.integer(field: 1),
                    room(s.developerFields.count, FITSummary.Limits.developerFields, "developer field description", m)
                {
                    s.developerFields.append(
                        FITDeveloperField(
                            developerIndex: UInt8(truncatingIfNeeded: index),
                            number: UInt8(truncatingIfNeeded: number), name: m.string(field: 3),
                            units: m.string(field: 8)))
                }
            default:
                break
            }
            return isRecord
        }

        mutating func finish(_ decoder: FITDecoder) -> FITSummary {
            for (n, c) in counts.enumerated() where c > 0 { s.messageCounts[UInt16(n)] = c }
            s.files = decoder.files
            s.compressedTimestampMessages = decoder.compressedTimestampMessages
            s.warnings = decoder.warnings
            for (what, over) in overLimit.sorted(by: { $0.value.offset < $1.value.offset }) {
                s.warnings.append(
                    FITDecoder.Warning(
                        kind: .limit, offset: over.offset,
                        message: "\(over.count) \(what) message(s) past the first ones kept were counted, not read"))
            }
            s.recovered = decoder.recovered
            if let u = activityTimestamp, let l = localTimestamp, u < FITDecoder.minimumAbsoluteTime,
                l >= FITDecoder.minimumAbsoluteTime
            {
                s.relativeToLocal = Int64(l) - Int64(u)
            } else if let u = activityTimestamp, let l = localTimestamp {
                let offset = Int64(l) - Int64(u)
                // Time zones are whole quarters of an hour; the two times were taken a moment apart.
                let quarter = (Double(offset) / 900).rounded() * 900
                if abs(quarter) <= 14 * 3600 { s.utcOffsetSeconds = Int32(quarter) }
            }
            return s
        }
    }

    /// Hands every `record` message to `body`, in file order.
    package static func records(_ bytes: [UInt8], _ body: (FITRecord) throws -> Void) throws {
        try records(FITInput(bytes: bytes), body)
    }

    /// Hands every `record` message to `body`, in file order, reading the input a chunk at a time.
    package static func records(_ input: FITInput, _ body: (FITRecord) throws -> Void) throws {
        var decoder = FITDecoder(checksCRC: false)
        func handle(_ event: FITDecoder.Event) throws {
            guard case .message(let m) = event, m.globalNumber == FITProfile.Message.record else { return }
            try body(FITRecord(m))
        }
        try input.forEachChunk { chunk in try decoder.feed(chunk, handle) }
        try decoder.finish(handle)
    }

    /// Hands every `course_point` to `body`: its time, position, name.
    static func coursePoints(_ input: FITInput, _ body: (UInt32?, Double?, Double?, String?) throws -> Void) throws {
        var decoder = FITDecoder(checksCRC: false)
        func handle(_ event: FITDecoder.Event) throws {
            guard case .message(let m) = event, m.globalNumber == FITProfile.Message.coursePoint else { return }
            var lat: Double?
            var lon: Double?
            if let a = m.integer(field: 2), let b = m.integer(field: 3) {
                lat = Double(a) * (180.0 / 2_147_483_648.0)
                lon = Double(b) * (180.0 / 2_147_483_648.0)
            }
            try body(m.timestamp ?? m.uint32(field: 1), lat, lon, m.string(field: 6))
        }
        try input.forEachChunk { chunk in try decoder.feed(chunk, handle) }
        try decoder.finish(handle)
    }

}

extension FITSummary {
    /// A FIT time as a RouteKit timestamp: UTC, with the file's UTC offset when it gives one. A device-relative
    /// time (below 0x10000000) becomes local wall-clock time without a zone when the file says how
    /// (`relativeToLocal`), else `nil`.
    @_spi(RouteKitInternals)
    public func timestamp(_ fit: UInt32?) -> Timestamp? {
        FITClock(self).timestamp(fit)
    }
}

/// What turns a file's FIT times into timestamps (`FITSummary.timestamp(_:)`), apart from the summary: a
/// per-record call then copies two numbers, not the summary.
struct FITClock {
    let utcOffsetSeconds: Int32?
    let relativeToLocal: Int64?

    init(_ summary: FITSummary) {
        utcOffsetSeconds = summary.utcOffsetSeconds
        relativeToLocal = summary.relativeToLocal
    }

    @inline(__always) func timestamp(_ fit: UInt32?) -> Timestamp? {
        guard let fit else { return nil }
        if fit >= FITDecoder.minimumAbsoluteTime {
            return Timestamp(
                Instant(seconds: Int64(fit) + FITDecoder.epochOffset), utcOffsetSeconds: utcOffsetSeconds ?? 0)
        }
        guard let shift = relativeToLocal else { return nil }
        return Timestamp(Instant(seconds: Int64(fit) + shift + FITDecoder.epochOffset), utcOffsetSeconds: nil)
    }
}

/// Decodes a FIT file's `record` messages a slice of the file at a time: memory holds one slice's records,
/// whatever the file's length.
package struct FITRecordReader {
    private let input: FITInput
    private var source: (any ByteSource)?
    private var chunk: [UInt8] = []
    /// A second pass: the summary pass checked the CRCs.
    private var decoder = FITDecoder(checksCRC: false)
    private var finished = false
    /// Bytes decoded per ``next()``.
    package var sliceSize = 64 * 1024

    /// A reader of `bytes`.
    package init(_ bytes: [UInt8]) { self.input = FITInput(bytes: bytes) }

    /// A reader of `input`, opened at the first ``next()``.
    package init(_ input: FITInput) { self.input = input }

    /// The records of the next slice (possibly none), or `nil` at the end.
    /// - Throws: `RouteKitError.Code.invalidFIT` when the bytes are not FIT; the input's reading errors.
    package mutating func next() throws -> [FITRecord]? {
        if finished { return nil }
        var out: [FITRecord] = []
        let handle: (FITDecoder.Event) throws -> Void = { event in
            guard case .message(let m) = event, m.globalNumber == FITProfile.Message.record else { return }
            out.append(FITRecord(m))
        }
        let source = try self.source ?? input.open()
        self.source = source
        if chunk.count != sliceSize { chunk = [UInt8](repeating: 0, count: max(1, sliceSize)) }
        let n = try chunk.withUnsafeMutableBytes { b throws(RouteKitError) in try source.read(into: b) }
        if n > 0 {
            try chunk.withUnsafeBytes { b in try decoder.feed(UnsafeRawBufferPointer(rebasing: b[0..<n]), handle) }
        } else {
            try decoder.finish(handle)
            finished = true
            self.source = nil
        }
        return out
    }
}

/// A FIT file's bytes, read from the start as often as a reader needs (an import reads twice: the summary, then
/// the records): held in memory, or opened again from a file or an archive's entry and read a chunk at a time, so
/// that memory does not grow with the file, whatever its (decompressed) size.
package struct FITInput {
    /// Opens the bytes from their start.
    package let open: () throws(RouteKitError) -> any ByteSource

    /// Bytes opened by `open` (a file, an archive's entry).
    package init(open: @escaping () throws(RouteKitError) -> any ByteSource) { self.open = open }

    /// Bytes held in memory.
    package init(bytes: [UInt8]) {
        self.open = { () throws(RouteKitError) in MemoryByteSource(bytes) }
    }

    /// The file at `path`, plain or gzip-compressed (inflated as it is read, up to `limit` bytes).
    package init(path: String, limit: Int = InputFile.defaultLimit) {
        self.open = { () throws(RouteKitError) in try StreamingFile(path: path, limit: limit) }
    }

    /// Reads the bytes from the start, handing them to `body` 64 KiB at a time.
    package func forEachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let source = try open()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let n = try source.read(into: buffer)
            if n == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }
}
