import Foundation
import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// What the first pass over `export.xml` found: the workouts (small), the effort scores, and counts of everything.
struct FirstPass {
    var workouts: [HealthWorkout] = []
    var efforts: [EffortRecord] = []
    /// Top-level records by type.
    var recordTypes: [String: Int] = [:]
    /// Other top-level elements by name (`ActivitySummary`, `Correlation`, `ClinicalRecord`…).
    var otherElements: [String: Int] = [:]
    var seriesRecords = 0
    /// From the first top-level series record's `<` to just past the last one's end.
    var seriesRange: Range<Int>?
    var exportDate: String?
    var rootName: String?
    var namesWithSpaces = 0
}

/// The kind of the records of one type, looked up once per run of equal types (exports group records by type).
private enum RecordKind {
    case other
    case series(QuantityType, String)
    case effort(manual: Bool)

    init(_ type: String) {
        if let s = HealthNames.series[type] {
            self = .series(s.0, s.1)
        } else if type == HealthNames.effortManual {
            self = .effort(manual: true)
        } else if type == HealthNames.effortEstimated {
            self = .effort(manual: false)
        } else {
            self = .other
        }
    }
}

/// Counts records by type without making a string per record.
private struct TypeRun {
    var bytes: [UInt8] = []
    var name = ""
    var count = 0
    var kind = RecordKind.other

    /// Moves to the type of the scanner's current record.
    mutating func advance(_ scanner: HealthXMLScanner, into counts: inout [String: Int]) {
        let same =
            scanner.withAttribute("type") { b in
                sameBytes(b, bytes)
            } ?? bytes.isEmpty
        if same {
            count += 1
            return
        }
        flush(into: &counts)
        bytes = scanner.withAttribute("type") { Array($0) } ?? []
        name = String(decoding: bytes, as: UTF8.self)
        kind = RecordKind(name)
        count = 1
    }

    mutating func flush(into counts: inout [String: Int]) {
        if count > 0 { counts[name.isEmpty ? "(no type)" : name, default: 0] += count }
        count = 0
    }
}

enum HealthExportReader {
    static func effort(_ s: HealthXMLScanner, manual: Bool) -> EffortRecord {
        EffortRecord(
            manual: manual, sourceName: s.attribute("sourceName") ?? "",
            start: s.withAttribute("startDate", HealthDate.parse) ?? nil,
            end: s.withAttribute("endDate", HealthDate.parse) ?? nil,
            created: s.withAttribute("creationDate", HealthDate.parse) ?? nil,
            value: s.withAttribute("value", parseDouble) ?? nil)
    }

    /// Pass 1: workouts with everything inside them, effort scores, counts.
    static func firstPass(_ s: HealthXMLScanner, progress: (Int) -> Void) throws(RouteKitError) -> FirstPass {
        var out = FirstPass()
        var run = TypeRun()
        var workout: HealthWorkout?
        var workoutDepth = 0
        var route: HealthRoute?
        var routeDepth = 0
        var activity: [String: Any]?
        // The open activity's children, appended in place (copying them out of `activity` for each child was
        // quadratic in their number).
        var activityChildren: [[String: Any]] = []
        var activityDepth = 0
        var elements = 0
        // The depth of a series record whose end is still to come.
        var seriesDepth = 0
        var seriesStart: Int?
        var seriesEnd = 0
        while let event = try s.next() {
            elements += 1
            if elements & 0xFFF == 0 { progress(s.bytesScanned) }
            let depth = s.depth
            guard event == .start else {
                if seriesDepth > 0 && depth < seriesDepth {
                    seriesEnd = s.bytesScanned
                    seriesDepth = 0
                }
                if let w = workout {
                    if route != nil && depth < routeDepth, let r = route {
                        w.routes.append(r)
                        route = nil
                    } else if activity != nil && depth < activityDepth, var a = activity {
                        if !activityChildren.isEmpty { a["children"] = activityChildren }
                        w.activities.append(a)
                        activity = nil
                        activityChildren = []
                    } else if depth < workoutDepth {
                        out.workouts.append(w)
                        workout = nil
                    }
                }
                continue
            }
            if depth == 1 && out.rootName == nil { out.rootName = s.name }
            guard let w = workout else {
                if depth > 2 { continue }
                if s.isNamed("Record") {
                    run.advance(s, into: &out.recordTypes)
                    switch run.kind {
                    case .other: break
                    case .series:
                        out.seriesRecords += 1
                        if seriesStart == nil { seriesStart = s.tagOffset }
                        seriesDepth = depth
                        // Inside an element other than HealthData (a fragment): the second pass could meet its end
                        // tag without its start, so it reads the whole document.
                        if depth == 2 && out.rootName != "HealthData" { seriesStart = 0 }
                    case .effort(let manual): out.efforts.append(effort(s, manual: manual))
                    }
                } else if s.isNamed("Workout") {
                    let w = HealthWorkout(number: out.workouts.count + 1)
                    readWorkout(s, into: w)
                    workout = w
                    workoutDepth = depth
                } else if s.isNamed("ExportDate") {
                    out.exportDate = s.attribute("value")
                } else if depth <= 2 && !s.isNamed("HealthData") {
                    out.otherElements[s.name, default: 0] += 1
                }
                continue
            }
            if route != nil {
                if s.isNamed("MetadataEntry"), let key = s.attribute("key") {
                    let value = s.attribute("value") ?? ""
                    switch key {
                    case "HKMetadataKeySyncIdentifier": route?.syncIdentifier = value
                    case "HKMetadataKeySyncVersion": route?.syncVersion = Int64(value)
                    default: route?.metadata[key] = HealthNames.value(value)
                    }
                } else if s.isNamed("FileReference") {
                    route?.path = s.attribute("path")
                } else if s.isNamed("Location") {
                    if let l = location(s) { route?.locations.append(l) }
                }
                continue
            }
            if activity != nil {
                var child: [String: Any] = ["element": s.name]
                for (k, v) in s.allAttributes { child[k] = v }
                activityChildren.append(child)
                continue
            }
            if depth == workoutDepth + 1 {
                if s.isNamed("MetadataEntry"), let key = s.attribute("key") {
                    w.metadata[key] = HealthNames.value(s.attribute("value") ?? "")
                } else if s.isNamed("WorkoutEvent") {
                    readEvent(s, into: w)
                } else if s.isNamed("WorkoutStatistics"), let type = s.attribute("type") {
                    var stats: [String: String] = [:]
                    for (k, v) in s.allAttributes where k != "type" { stats[k] = v }
                    w.statistics[type] = stats
                } else if s.isNamed("WorkoutRoute") {
                    route = HealthRoute()
                    routeDepth = depth
                    for (k, v) in s.allAttributes {
                        route?.metadata["healthRoute" + k.prefix(1).uppercased() + k.dropFirst()] = .string(v)
                    }
                } else if s.isNamed("WorkoutActivity") {
                    var a: [String: Any] = [:]
                    for (k, v) in s.allAttributes { a[k] = v }
                    activity = a
                    activityDepth = depth
                } else if s.isNamed("Record") {
                    readNestedRecord(s, into: w, counts: &out.recordTypes)
                } else {
                    w.otherChildren[s.name, default: 0] += 1
                }
            } else if s.isNamed("Record") {
                // An effort score nested deeper (inside a zone group, say).
                readNestedRecord(s, into: w, counts: &out.recordTypes)
            }
        }
        run.flush(into: &out.recordTypes)
        if let seriesStart, seriesEnd > seriesStart {
            out.seriesRange = seriesStart == 0 ? 0..<Int.max : seriesStart..<seriesEnd
        }
        out.namesWithSpaces = s.namesWithSpaces
        progress(s.bytesScanned)
        return out
    }

    private static func readNestedRecord(_ s: HealthXMLScanner, into w: HealthWorkout, counts: inout [String: Int]) {
        let type = s.attribute("type") ?? ""
        if type == HealthNames.effortManual || type == HealthNames.effortEstimated {
            w.efforts.append(effort(s, manual: type == HealthNames.effortManual))
        } else {
            w.otherChildren["Record " + type, default: 0] += 1
        }
    }

    private static func readWorkout(_ s: HealthXMLScanner, into w: HealthWorkout) {
        var durationUnit: String?
        for (k, v) in s.allAttributes {
            switch k {
            case "workoutActivityType":
                w.activityType = v
                w.metadata["healthActivityType"] = .string(v)
            case "sourceName":
                w.sourceName = v
                w.metadata["healthSourceName"] = .string(v)
            case "sourceVersion": w.metadata["healthSourceVersion"] = .string(v)
            case "device": w.metadata.merge(HealthNames.device(v)) { $1 }
            case "startDate": w.start = HealthDate.parse(v)
            case "endDate": w.end = HealthDate.parse(v)
            case "creationDate": w.metadata["healthCreationDate"] = .string(v)
            case "duration": w.duration = v
            case "durationUnit": durationUnit = v
            default:
                // Legacy totals (totalDistance, totalEnergyBurned and their units) and anything newer, as written.
                w.metadata["health" + k.prefix(1).uppercased() + k.dropFirst()] = .string(v)
            }
        }
        if let d = w.duration {
            w.metadata["healthDuration"] = .string(d + (durationUnit.map { " " + $0 } ?? ""))
        }
    }

    private static func readEvent(_ s: HealthXMLScanner, into w: HealthWorkout) {
        let type = s.attribute("type") ?? ""
        guard let kind = HealthNames.eventKind(type) else {
            w.otherChildren["WorkoutEvent " + type, default: 0] += 1
            return
        }
        let start = s.withAttribute("date", HealthDate.parse) ?? nil
        var end: Timestamp?
        if kind == .segment || kind == .lap || kind == .marker, let start,
            let seconds = HealthNames.seconds(s.attribute("duration"), unit: s.attribute("durationUnit"))
        {
            end = start.adding(seconds: seconds)
        }
        w.events.append(WorkoutEvent(kind: kind, start: start, end: end))
    }

    /// A pre-iOS 13 `Location` element.
    private static func location(_ s: HealthXMLScanner) -> Location? {
        guard let lat = s.withAttribute("latitude", parseDouble) ?? nil,
            let lon = s.withAttribute("longitude", parseDouble) ?? nil
        else { return nil }
        func value(_ key: StaticString) -> Double? { s.withAttribute(key, parseDouble) ?? nil }
        let speed = value("speed").flatMap { $0 >= 0 ? $0 : nil }
        let course = value("course").flatMap { $0 >= 0 ? $0 : nil }
        let l = Location(
            latitude: lat, longitude: lon, timestamp: s.withAttribute("date", HealthDate.parse) ?? nil,
            altitude: value("altitude"), horizontalAccuracy: value("horizontalAccuracy"),
            verticalAccuracy: value("verticalAccuracy"), speed: speed, course: course)
        return (try? l.validate()) != nil ? l : nil
    }

    /// Pass 2: the series records of each workout's source within its time.
    static func secondPass(_ s: HealthXMLScanner, until end: Int, workouts: [HealthWorkout], progress: (Int) -> Void)
        throws(RouteKitError) -> (matched: Int, otherUnit: Int)
    {
        // By source, in start order.
        var bySource: [String: [HealthWorkout]] = [:]
        for w in workouts where w.start != nil && w.end != nil { bySource[w.sourceName, default: []].append(w) }
        for k in bySource.keys {
            bySource[k]?.sort { ($0.start?.instant ?? .init(seconds: 0)) < ($1.start?.instant ?? .init(seconds: 0)) }
        }
        var typeBytes: [UInt8] = []
        var kind = RecordKind.other
        var sourceBytes: [UInt8] = []
        var candidates: [HealthWorkout] = []
        var matched = 0
        var otherUnit = 0
        var inWorkout = 0
        var elements = 0
        while s.bytesScanned < end, let event = try s.next() {
            elements += 1
            if elements & 0xFFF == 0 { progress(s.bytesScanned) }
            let depth = s.depth
            if event == .end {
                if inWorkout > 0 && depth < inWorkout { inWorkout = 0 }
                continue
            }
            if inWorkout > 0 || depth > 2 { continue }
            if s.isNamed("Workout") {
                inWorkout = depth
                continue
            }
            guard s.isNamed("Record") else { continue }
            let sameType =
                s.withAttribute("type") { b in
                    sameBytes(b, typeBytes)
                } ?? false
            if !sameType {
                typeBytes = s.withAttribute("type") { Array($0) } ?? []
                kind = RecordKind(String(decoding: typeBytes, as: UTF8.self))
            }
            guard case .series(let type, let unit) = kind else { continue }
            let sameSource =
                s.withAttribute("sourceName") { b in
                    sameBytes(b, sourceBytes)
                } ?? false
            if !sameSource {
                sourceBytes = s.withAttribute("sourceName") { Array($0) } ?? []
                candidates = bySource[String(decoding: sourceBytes, as: UTF8.self)] ?? []
            }
            guard !candidates.isEmpty, let t = s.withAttribute("startDate", HealthDate.parse) ?? nil else { continue }
            // The last workout that started at or before t, and those before it that still run.
            var lo = 0
            var hi = candidates.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if let st = candidates[mid].start?.instant, st <= t.instant { lo = mid + 1 } else { hi = mid }
            }
            var k = lo - 1
            var owner: HealthWorkout?
            while k >= 0 && k >= lo - 4 {
                if let e = candidates[k].end?.instant, t.instant <= e {
                    owner = candidates[k]
                    break
                }
                k -= 1
            }
            guard let owner else { continue }
            guard s.attribute("unit", is: Array(unit.utf8)) else {
                otherUnit += 1
                continue
            }
            guard let v = s.withAttribute("value", parseDouble) ?? nil else { continue }
            owner.samples.append((type, QuantitySample(timestamp: t, value: v)))
            matched += 1
        }
        progress(s.bytesScanned)
        return (matched, otherUnit)
    }
}
