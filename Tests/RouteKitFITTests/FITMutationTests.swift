import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitGPX
import RouteKitIngest
import RouteKitTesting
import Testing

/// What a decode produced, for comparing a whole-input decode with a chunked one.
struct DecodeTrace: Equatable {
    var rows: [[Int]] = []
    var warnings: [FITDecoder.Warning] = []
    var error: RouteKitError?

    static func of(_ bytes: [UInt8], chunk: Int) -> DecodeTrace {
        var t = DecodeTrace()
        var decoder = FITDecoder()
        let body: (FITDecoder.Event) throws -> Void = { e in
            switch e {
            case .header(let h): t.rows.append([-1, h.offset, h.size])
            case .fileEnd(let ok): t.rows.append([-2, ok ? 1 : 0])
            case .message(let m):
                var row = [Int(m.globalNumber), m.offset, Int(m.timestamp ?? 0)]
                for f in m.definition.fields { row.append(Int(m.integer(field: f.number) ?? -1)) }
                t.rows.append(row)
            }
        }
        do {
            var i = 0
            while i < bytes.count {
                let end = min(bytes.count, i + chunk)
                try bytes.withUnsafeBytes { b in try decoder.feed(UnsafeRawBufferPointer(rebasing: b[i..<end]), body) }
                i = end
            }
            try decoder.finish(body)
        } catch {
            t.error = error as? RouteKitError
        }
        t.warnings = decoder.warnings
        return t
    }
}

/// The fuzz target's rules (FuzzTesting/Sources/FuzzFITDecoder), run on seeded mutations of real files in every
/// test run, and on the fuzzer's saved fail cases (FuzzTesting/FailCases/fit-*).
@Suite("FIT decoder under damage")
struct FITMutationTests {
    static let seeds: [[UInt8]] = {
        var out = [activityFIT(records: 30).file(), activityFIT(records: 5).file() + activityFIT(records: 3).file()]
        if let root = FormatCorpus.root {
            for name in [
                "dtcooper__python-fitparse__tests__files__compressed-speed-distance.fit",
                "GPSBabel__gpsbabel__reference__track__wahoo-element-bolt.fit",
                "dtcooper__python-fitparse__tests__files__DeveloperData.fit",
                "viking-gps__viking__test__Stonehenge.fit",
            ] {
                if let d = FileManager.default.contents(atPath: root + "/" + name) { out.append(Array(d)) }
            }
        }
        return out
    }()

    static func check(_ bytes: [UInt8], chunk: Int) {
        let whole = DecodeTrace.of(bytes, chunk: max(bytes.count, 1))
        let parts = DecodeTrace.of(bytes, chunk: chunk)
        #expect(whole == parts, "whole and \(chunk)-byte chunks differ")
        #expect(inspectDisagreement(bytes) == nil)
        if let e = whole.error {
            #expect(e.code == .invalidFIT)
            #expect(e.byteOffset != nil)
            return
        }
        // The summary and the conversion never crash; their errors are typed.
        do {
            let s = try FITFile.summary(bytes)
            var points = 0
            try FITFile.gpxEvents(bytes) { (e: GPXEvent) throws(RouteKitError) in
                if case .trackPoints(let p) = e { points += p.count }
            }
            #expect(points <= s.recordsWithPosition)
        } catch {
            #expect(error.code == .invalidFIT)
        }
    }

    @Test("seeded mutations: flipped bits, cut and repeated bytes; whole and chunked decodes agree, errors are typed")
    func mutations() {
        var rng = SplitMix64(seed: 14)
        var cases = 0
        for seed in Self.seeds {
            for _ in 0..<60 {
                var b = seed
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    guard !b.isEmpty else { break }
                    let i = Int.random(in: 0..<b.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: b[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
                    case 1: b.removeSubrange(i..<min(b.count, i + Int.random(in: 1...16, using: &rng)))
                    case 2: b = Array(b[0..<i])
                    default: b.insert(contentsOf: b[i..<min(b.count, i + 8)], at: i)
                    }
                }
                Self.check(b, chunk: Int.random(in: 1...64, using: &rng))
                cases += 1
            }
        }
        #expect(cases >= 120)
    }

    @Test("the fuzzer's saved FIT fail cases replay cleanly")
    func failCases() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("FuzzTesting/FailCases").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasPrefix("fit-") } ?? []
        for name in names {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)))
            for chunk in [1, 3, 64] { Self.check(bytes, chunk: chunk) }
        }
    }
}

/// The first difference between `FITFile.inspect`'s one pass and the two passes it replaces (the summary, then
/// the GPX events counted by `GPXSummary.add`), `nil` when they agree: same error, or the same summaries.
func inspectDisagreement(_ bytes: [UInt8]) -> String? {
    func twoPasses() throws(RouteKitError) -> (FITSummary, GPXSummary) {
        let fit = try FITFile.summary(bytes)
        var s = GPXSummary(file: "f")
        try FITFile.gpxEvents(FITInput(bytes: bytes), summary: fit) { (e: GPXEvent) throws(RouteKitError) in s.add(e) }
        return (fit, s)
    }
    let expected: (FITSummary, GPXSummary)
    do {
        expected = try twoPasses()
    } catch {
        do {
            _ = try FITFile.inspect(bytes, file: "f")
            return "two passes fail (\(error)), one pass does not"
        } catch let e {
            return e == error ? nil : "errors differ: \(e) against \(error)"
        }
    }
    let got: (FITSummary, GPXSummary)
    do {
        got = try FITFile.inspect(bytes, file: "f")
    } catch {
        return "one pass fails (\(error)), two passes do not"
    }
    let (f1, g1) = got
    let (f2, g2) = expected
    let fit: [(String, AnyHashable, AnyHashable)] = [
        ("fileType", f1.fileType, f2.fileType), ("sessions", f1.sessions, f2.sessions),
        ("records", f1.records, f2.records), ("messages", f1.messages, f2.messages),
        ("messageCounts", f1.messageCounts, f2.messageCounts), ("warnings", f1.warnings, f2.warnings),
        ("timerEvents", f1.timerEvents, f2.timerEvents), ("utcOffsetSeconds", f1.utcOffsetSeconds, f2.utcOffsetSeconds),
    ]
    let gpx: [(String, AnyHashable, AnyHashable)] = [
        ("version", g1.version, g2.version), ("creator", g1.creator, g2.creator), ("tracks", g1.tracks, g2.tracks),
        ("segments", g1.segments, g2.segments), ("trackPoints", g1.trackPoints, g2.trackPoints),
        ("routes", g1.routes, g2.routes), ("routePoints", g1.routePoints, g2.routePoints),
        ("waypoints", g1.waypoints, g2.waypoints), ("pauses", g1.pauses, g2.pauses),
        ("firstTime", g1.firstTime, g2.firstTime), ("lastTime", g1.lastTime, g2.lastTime),
        ("timeReversals", g1.timeReversals, g2.timeReversals),
        ("pointsWithHeartRate", g1.pointsWithHeartRate, g2.pointsWithHeartRate),
        ("pointsWithCadence", g1.pointsWithCadence, g2.pointsWithCadence),
        ("pointsWithPower", g1.pointsWithPower, g2.pointsWithPower),
        ("pointsWithTemperature", g1.pointsWithTemperature, g2.pointsWithTemperature),
        ("gpx warnings", g1.warnings, g2.warnings),
    ]
    for (name, a, b) in fit + gpx where a != b { return "\(name): \(a) against \(b)" }
    return nil
}
