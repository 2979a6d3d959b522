import Foundation
import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Apple Health's dates: `2019-06-11 15:00:00 -0700`, the offset kept.
package enum HealthDate {
    /// The timestamp written as `YYYY-MM-DD HH:MM:SS ±HHMM`; `nil` for anything else.
    package static func parse(_ text: String) -> Timestamp? {
        Array(text.utf8).withUnsafeBufferPointer { parse($0) }
    }

    /// The timestamp in `b` (see ``parse(_:)-(String)``).
    package static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20
        else { return nil }
        func num(_ from: Int, _ n: Int) -> Int64? {
            var v: Int64 = 0
            for k in from..<(from + n) {
                let d = b[k] &- 0x30
                guard d < 10 else { return nil }
                v = v * 10 + Int64(d)
            }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
            let s = num(17, 2), let oh = num(21, 2), let om = num(23, 2), (1...12).contains(mo), (1...31).contains(d),
            h < 24, mi < 60, s < 61, oh < 24, om < 60
        else { return nil }
        let sign: Int64
        switch b[20] {
        case 0x2B: sign = 1
        case 0x2D: sign = -1
        default: return nil
        }
        let offset = sign * (oh * 3600 + om * 60)
        let local = daysFromCivil(year: y, month: mo, day: d) * 86400 + h * 3600 + mi * 60 + s
        return Timestamp(Instant(seconds: local - offset), utcOffsetSeconds: Int32(offset))
    }
}

/// An effort score record (`HKQuantityTypeIdentifierWorkoutEffortScore` or `…EstimatedWorkoutEffortScore`).
struct EffortRecord {
    var manual: Bool
    var sourceName: String
    var start: Timestamp?
    var end: Timestamp?
    var created: Timestamp?
    var value: Double?
}

/// One `WorkoutRoute`: a GPX file of the export, or (before iOS 13) its `Location` elements.
struct HealthRoute {
    var path: String?
    var metadata: [String: MetadataValue] = [:]
    var syncIdentifier: String?
    var syncVersion: Int64?
    var locations: [Location] = []
}

/// One `Workout` element, as the first pass reads it.
final class HealthWorkout {
    let number: Int
    var activityType = ""
    var sourceName = ""
    var start: Timestamp?
    var end: Timestamp?
    var duration: String?
    var metadata: [String: MetadataValue] = [:]
    var events: [WorkoutEvent] = []
    var statistics: [String: [String: String]] = [:]
    var activities: [[String: Any]] = []
    var routes: [HealthRoute] = []
    var efforts: [EffortRecord] = []
    var otherChildren: [String: Int] = [:]
    /// Series samples matched in the second pass, in file order.
    var samples: [(QuantityType, QuantitySample)] = []

    init(number: Int) { self.number = number }

    /// `health-` and a hash of what identifies the workout in every export: activity, source, times, duration.
    var syncIdentifier: String {
        var h = ContentHasher(domain: "health-workout-v1")
        h.combine(activityType)
        h.combine(sourceName)
        h.combine(start)
        h.combine(end)
        h.combine(duration)
        return "health-" + h.hexDigest
    }
}

/// HealthKit names mapped to RouteKit's.
enum HealthNames {
    static let running: [UInt8] = Array("HKWorkoutActivityTypeRunning".utf8)

    /// `HKWorkoutActivityTypeRunning` → `running`; unknown types keep their name after the prefix, lower camel case.
    static func activityType(_ name: String) -> ActivityType {
        let prefix = "HKWorkoutActivityType"
        guard name.hasPrefix(prefix), name.count > prefix.count else { return .other }
        let rest = String(name.dropFirst(prefix.count))
        switch rest {
        case "Running": return .running
        case "Cycling": return .cycling
        case "Walking": return .walking
        case "Hiking": return .hiking
        case "Swimming": return .swimming
        case "Other": return .other
        default:
            return ActivityType(rawValue: rest.prefix(1).lowercased() + rest.dropFirst())
        }
    }

    /// The record types that become series of a workout, with their unit in the export.
    static let series: [String: (QuantityType, String)] = [
        "HKQuantityTypeIdentifierHeartRate": (.heartRate, "count/min"),
        "HKQuantityTypeIdentifierCyclingCadence": (.cadence, "count/min"),
        "HKQuantityTypeIdentifierCyclingPower": (.power, "W"),
        "HKQuantityTypeIdentifierRunningPower": (.power, "W"),
    ]

    static let effortManual = "HKQuantityTypeIdentifierWorkoutEffortScore"
    static let effortEstimated = "HKQuantityTypeIdentifierEstimatedWorkoutEffortScore"

    /// A metadata value: a plain number as a number, anything else (values with units, `"6575 cm"`) as written.
    static func value(_ text: String) -> MetadataValue {
        if let i = Int64(text) { return .integer(i) }
        if let d = Double(text), d.isFinite, text.first != "+", !text.contains(where: \.isLetter) { return .double(d) }
        return .string(text)
    }

    /// The useful fields of HealthKit's device debug string
    /// (`<<HKDevice: 0x…>, name:Apple Watch, …, hardware:Watch7,2, software:11.6.1>`), without the object address.
    static func device(_ text: String) -> [String: MetadataValue] {
        var out: [String: MetadataValue] = [:]
        for key in ["name", "manufacturer", "model", "hardware", "software"] {
            guard let r = text.range(of: ", \(key):") else { continue }
            let rest = text[r.upperBound...]
            var value = rest.prefix { $0 != ">" }
            // The next field starts with ", word:"; hardware values have commas of their own ("Watch7,2").
            if let next = value.range(of: #", [a-z ]+:"#, options: .regularExpression) {
                value = value[..<next.lowerBound]
            }
            out["healthDevice" + key.prefix(1).uppercased() + key.dropFirst()] = .string(String(value))
        }
        return out
    }

    /// A `WorkoutEvent` type as a RouteKit event kind (HealthKit's `HKWorkoutEventType`); `nil` for kinds RouteKit
    /// does not keep (`HKWorkoutEventTypePauseOrResumeRequest`, unknown ones).
    static func eventKind(_ type: String) -> WorkoutEvent.Kind? {
        switch type {
        case "HKWorkoutEventTypePause": .pause
        case "HKWorkoutEventTypeResume": .resume
        case "HKWorkoutEventTypeMotionPaused": .motionPaused
        case "HKWorkoutEventTypeMotionResumed": .motionResumed
        case "HKWorkoutEventTypeLap": .lap
        case "HKWorkoutEventTypeSegment": .segment
        case "HKWorkoutEventTypeMarker": .marker
        default: nil
        }
    }

    /// A duration with its unit in seconds (`"6.42" "min"`).
    static func seconds(_ value: String?, unit: String?) -> Double? {
        guard let value, let v = Double(value), v.isFinite else { return nil }
        switch unit ?? "s" {
        case "s", "sec": return v
        case "min": return v * 60
        case "hr", "h": return v * 3600
        case "ms": return v / 1000
        default: return nil
        }
    }

    /// JSON text with sorted keys.
    /// iOS 16+ `WorkoutActivity` blocks (their attributes and children as read) as the workout's activities, of
    /// the workout's type: `startDate`/`endDate` as the interval; `uuid`, `duration` and its unit under
    /// `healthUUID`, `healthDuration`, `healthDurationUnit`; each `MetadataEntry` under its own key; the
    /// `WorkoutStatistics` (`healthStatistics`) and `WorkoutEvent`s (`healthEvents`, which the workout holds too) as
    /// JSON.
    static func activities(_ raw: [[String: Any]], type: ActivityType) -> [WorkoutActivity] {
        raw.map { a in
            var metadata: [String: MetadataValue] = [:]
            for (k, v) in a where k != "children" && k != "startDate" && k != "endDate" {
                if let text = v as? String {
                    metadata["health" + k.prefix(1).uppercased() + k.dropFirst()] = .string(text)
                }
            }
            var statistics: [[String: Any]] = []
            var events: [[String: Any]] = []
            for child in a["children"] as? [[String: Any]] ?? [] {
                var c = child
                let element = c.removeValue(forKey: "element") as? String
                switch element {
                case "MetadataEntry":
                    if let key = c["key"] as? String { metadata[key] = value(c["value"] as? String ?? "") }
                case "WorkoutStatistics": statistics.append(c)
                case "WorkoutEvent": events.append(c)
                default: break
                }
            }
            if !statistics.isEmpty { metadata["healthStatistics"] = .string(json(statistics)) }
            if !events.isEmpty { metadata["healthEvents"] = .string(json(events)) }
            return WorkoutActivity(
                activityType: type, start: (a["startDate"] as? String).flatMap(HealthDate.parse),
                end: (a["endDate"] as? String).flatMap(HealthDate.parse), metadata: metadata)
        }
    }

    static func json(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Parses a decimal number written in an attribute.
func parseDouble(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
    guard b.count > 0, b.count < 64 else { return nil }
    var tmp: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &tmp) { raw -> Double? in
        guard let p = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
        for k in 0..<b.count { p[k] = CChar(bitPattern: b[k]) }
        p[b.count] = 0
        var endp: UnsafeMutablePointer<CChar>?
        let v = strtod(p, &endp)
        guard let endp, endp == p + b.count, v.isFinite else { return nil }
        return v
    }
}

/// Whether `b` holds exactly the bytes of `a`.
func sameBytes(_ b: UnsafeBufferPointer<UInt8>, _ a: [UInt8]) -> Bool {
    guard b.count == a.count else { return false }
    guard let p = b.baseAddress else { return a.isEmpty }
    return memcmp(p, a, a.count) == 0
}
