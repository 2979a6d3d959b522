import Foundation
import RouteKit
import RouteKitProcessing
import Testing

/// A fix `i` seconds after the start at (`lat`, `lon`).
func fix(_ i: Int, _ lat: Double, _ lon: Double = 10, altitude: Double? = nil) -> Location {
    Location(
        latitude: lat, longitude: lon, timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64(i))),
        altitude: altitude)
}

func at(_ i: Int) -> Instant { Instant(seconds: 1_700_000_000 + Int64(i)) }

func statistics(
    _ locations: [Location], activity: ActivityType = .running, segmentStarts: [Int] = [],
    pauses: [ClosedRange<Instant>] = [], heartRate: [QuantitySample] = [], zones: Zones? = nil
) -> RouteStatistics {
    var acc = StatisticsAccumulator(
        options: StatisticsOptions(activity: activity), segmentStarts: segmentStarts, pauses: pauses)
    // In uneven batches, as a route query hands them over.
    var start = 0
    var size = 1
    while start < locations.count {
        acc.add(Array(locations[start..<min(locations.count, start + size)]))
        start += size
        size = size % 7 + 1
    }
    return acc.finish(heartRate: heartRate, cadence: [], zones: zones)
}

@Suite("Workout statistics")
struct StatisticsTests {
    @Test("distance is ellipsoidal: 0.001° of latitude at 45° N is 111.132 m, at the equator 110.574 m")
    func ellipsoid() {
        let north = (0...10).map { fix($0 * 30, 45 + Double($0) * 0.001) }
        #expect(abs(statistics(north).distanceMetres - 1111.32) < 0.1)
        let equator = (0...10).map { fix($0 * 30, Double($0) * 0.001) }
        #expect(abs(statistics(equator).distanceMetres - 1105.74) < 0.1)
    }

    @Test("moving time leaves out a stop longer than the grace period, pauses and segment gaps")
    func movingTime() {
        // 3 m/s north for 100 s, one more 3 m step, stopped 59 s, then 3 m/s for 100 s: 201 steps of 3 m.
        var track: [Location] = []
        var lat = 45.0
        let step = 3 / 111_132.0
        for i in 0...100 {
            track.append(fix(i, lat))
            lat += step
        }
        for i in 101...160 { track.append(fix(i, lat)) }
        for i in 161...260 {
            lat += step
            track.append(fix(i, lat))
        }
        let s = statistics(track)
        #expect(s.elapsedSeconds == 260)
        #expect(s.movingSeconds.map { abs($0 - 200) <= 1 } == true, "\(String(describing: s.movingSeconds))")
        #expect(abs(s.distanceMetres - 603) < 0.01)
        #expect(s.averageSpeed.map { abs($0 - 3) < 0.02 } == true)
        #expect(s.maxSpeed.map { abs($0 - 3) < 0.05 } == true, "\(String(describing: s.maxSpeed))")
        // A pause from 20 s to 50 s, and a new segment at fix 200.
        let p = statistics(track, segmentStarts: [200], pauses: [at(20)...at(50)])
        #expect(p.movingSeconds.map { abs($0 - 169) <= 1 } == true, "\(String(describing: p.movingSeconds))")
        // The segment gap (one 3 m step) is not distance; fixes recorded during a pause are.
        #expect(abs(p.distanceMetres - 600) < 0.01, "distance \(p.distanceMetres)")
    }

    @Test("a single 500 m spike changes neither distance nor speeds")
    func spike() {
        var track = (0...120).map { fix($0, 45 + Double($0) * 3 / 111_132.0) }
        let clean = statistics(track)
        track[60].longitude += 500 / 78_850.0  // 500 m east at 45° N
        let spiked = statistics(track)
        #expect(abs(spiked.distanceMetres - clean.distanceMetres) < 7)
        #expect(spiked.maxSpeed.map { $0 < 3.2 } == true, "\(String(describing: spiked.maxSpeed))")
        #expect(abs((spiked.movingSeconds ?? 0) - (clean.movingSeconds ?? 0)) <= 1)
    }

    @Test("elevation gain and loss count changes beyond the 3 m band; missing elevations are skipped")
    func elevation() {
        let altitudes: [Double?] = [100, 101, 99, 100, 104, 103, 105, nil, 110, 108, 111, 100, 101, 99]
        let track = altitudes.enumerated().map { fix($0.offset, 45 + Double($0.offset) * 0.0001, altitude: $0.element) }
        let s = statistics(track)
        // Up 100 → 104 (+4), → 110 (+6), → 111 is within the band of 110… → 100 (−10).
        #expect(s.elevationGainMetres == 10)
        #expect(s.elevationLossMetres == 10)
        #expect(s.minElevation == 99 && s.maxElevation == 111)
        let flat = statistics((0..<10).map { fix($0, 45 + Double($0) * 0.0001) })
        #expect(flat.elevationGainMetres == nil, "no elevation is not zero gain")
    }

    @Test("time in zones adds up to the moving time with heart rate; averages are time-weighted")
    func zones() throws {
        let track = (0...300).map { fix($0, 45 + Double($0) * 3 / 111_132.0) }
        let hr = (0...300).map { QuantitySample(timestamp: Timestamp(at($0)), value: $0 < 100 ? 120 : 160) }
        let zones = try Zones.heartRate(maximum: 190)
        let s = statistics(track, pauses: [at(200)...at(230)], heartRate: hr, zones: zones)
        let inZones = (s.zones ?? []).reduce(0) { $0 + $1.seconds }
        #expect(abs(inZones - (s.movingSeconds ?? -1)) < 1e-6, "\(inZones) vs \(String(describing: s.movingSeconds))")
        #expect(s.zones?.count == 5 && s.zones?.last?.upper == nil)
        // 100 s at 120 (zone 2: 114–133), the rest at 160 (zone 4: 152–171).
        #expect(s.zones?[1].seconds == 100)
        #expect(s.heartRateMax == 160)
        #expect(s.heartRateAverage.map { abs($0 - (100 * 120 + 170 * 160) / 270.0) < 0.01 } == true)
    }

    @Test("live zones weigh a series as the statistics do: the same seconds per zone, a gap held 10 s, no 0 bpm")
    func liveZones() throws {
        let zones = try Zones(lowerBounds: [0, 120, 140, 160])
        // 60 s at 110 bpm (zone 1), 30 s at 150 (zone 3), a 40 s gap, 20 s at 130 (zone 2), then a 0 (no sensor).
        let first: [(Int, Double)] = (0..<60).map { ($0, 110.0) }
        let second: [(Int, Double)] = (60..<90).map { ($0, 150.0) }
        let third: [(Int, Double)] = (130..<150).map { ($0, 130.0) }
        let values = first + second + third
        let hr =
            values.map { QuantitySample(timestamp: Timestamp(at($0.0)), value: $0.1) }
            + [QuantitySample(timestamp: Timestamp(at(150)), value: 0)]
        var live = LiveZones(zones: zones, quantity: .heartRate)
        #expect(live.current == nil)
        live.add(hr[0..<60])
        #expect(live.current == 1)
        live.add(hr[60..<90])
        #expect(live.current == 3)
        live.add(hr[90...])
        #expect(live.current == 2)
        #expect(live.time == at(149))
        // Zone 3's last sample holds 10 s into the gap, not 40; the 0 bpm sample is no measurement.
        #expect(live.seconds == [60, 19, 39, 0])
        var acc = StatisticsAccumulator(options: StatisticsOptions(activity: .running))
        acc.weighSeriesWithoutFixes(over: at(0)...at(149))
        let s = acc.finish(heartRate: hr, cadence: [], zones: zones)
        let statistics = (s.zones ?? []).map(\.seconds)
        #expect(statistics == live.seconds)
    }

    @Test("a workout re-bucketed into another zone configuration keeps its total")
    func rebucket() throws {
        let track = (0...300).map { fix($0, 45 + Double($0) * 3 / 111_132.0) }
        let hr = (0...300).map { QuantitySample(timestamp: Timestamp(at($0)), value: 100 + Double($0 % 90)) }
        var acc = StatisticsAccumulator(options: StatisticsOptions(activity: .running))
        acc.add(track)
        let five = try Zones.heartRate(maximum: 190)
        let s = acc.finish(heartRate: hr, cadence: [], zones: five)
        let three = acc.timeInZones(hr, zones: try Zones(lowerBounds: [0, 130, 160]))
        #expect(three.count == 3)
        let total5 = (s.zones ?? []).reduce(0) { $0 + $1.seconds }
        let total3 = three.reduce(0) { $0 + $1.seconds }
        #expect(abs(total5 - total3) < 1e-9 && total3 > 0)
        #expect(three[0].seconds > 0 && three[1].seconds > 0 && three[2].seconds > 0)
    }

    @Test("zone configurations are validated")
    func zoneValidation() {
        #expect(throws: RouteKitError.self) { try Zones(lowerBounds: [0, 100]) }
        #expect(throws: RouteKitError.self) { try Zones(lowerBounds: [10, 100, 150]) }
        #expect(throws: RouteKitError.self) { try Zones(lowerBounds: [0, 150, 120]) }
        #expect(throws: RouteKitError.self) { try Zones(lowerBounds: Array(stride(from: 0.0, to: 200, by: 20))) }
        #expect(throws: RouteKitError.self) { try Zones.heartRate(maximum: .nan) }
        #expect((try? Zones(lowerBounds: [0, 100, 140]))?.zone(of: 139.9) == 1)
        #expect(abs(Zones.maximumHeartRate(age: 40) - 180) < 1e-9)
    }

    @Test("time going backwards restarts measuring instead of dropping the rest; sub-second jitter is the same time")
    func clockTrouble() {
        // 100 fixes 3 m apart, 1 s apart, but the clock jumps back an hour after fix 50.
        var track = (0..<100).map { fix($0, 45 + Double($0) * 3 / 111_132) }
        for i in 50..<100 { track[i].timestamp = Timestamp(at(i - 3_600)) }
        let s = statistics(track)
        // Only the step across the jump is lost.
        #expect(abs(s.distanceMetres - 98 * 3) < 0.5, "\(s.distanceMetres)")
        // Alternating fractions 0.3 ms apart (GPSBabel): all the same time, the small steps still count.
        let jitter = (0..<10).map { i in
            Location(
                latitude: 45 + Double(i) * 3 / 111_132, longitude: 10,
                timestamp: Timestamp(Instant(seconds: 1_700_000_000, nanoseconds: i % 2 == 0 ? 207_343_700 : 207_000_000)))
        }
        #expect(abs(statistics(jitter).distanceMetres - 27) < 0.1)
    }

    @Test("heart rate of -1 is no measurement; power zones add up to the moving time; FTP estimate")
    func powerAndBadHeartRate() throws {
        let track = (0...1_800).map { fix($0, 45 + Double($0) * 3 / 111_132) }
        let bad = (0...1_800).map { QuantitySample(timestamp: Timestamp(at($0)), value: -1) }
        let power = (0...1_800).map { QuantitySample(timestamp: Timestamp(at($0)), value: $0 < 900 ? 150 : 250) }
        var acc = StatisticsAccumulator(options: StatisticsOptions(activity: .cycling))
        acc.add(track)
        let ftp = try #require(Zones.estimatedFTP(power))
        // The best 20 minutes are the last: the last sample holds 10 s, so 290 s at 150 W and 910 s at 250 W.
        #expect(abs(ftp - 0.95 * (290 * 150 + 910 * 250) / 1_200) < 0.01, "\(ftp)")
        let s = acc.finish(heartRate: bad, cadence: [], zones: nil, power: power, powerZones: try Zones.power(ftp: 200))
        #expect(s.heartRateAverage == nil && s.heartRateMax == nil)
        let zones = try #require(s.powerZones)
        #expect(zones.count == 7)
        #expect(abs(zones.map(\.seconds).reduce(0, +) - (s.movingSeconds ?? -1)) < 1e-6)
        #expect(s.powerMax == 250 && abs((s.powerAverage ?? 0) - 200) < 1)
        #expect(throws: RouteKitError.self) { try Zones.power(ftp: 5) }
    }
}

@Suite("Workout statistics: dense fixes")
struct DenseFixStatisticsTests {
    @Test("20 fixes a second for 10 minutes at 3 m/s: the max speed is 3 m/s (thousands of fixes leave the window)")
    func denseFixes() {
        let step = 0.15 / 111_132.0  // 3 m/s at 20 Hz, northwards at 45° N
        var track: [Location] = []
        for i in 0..<12_000 {
            let t = Instant(seconds: 1_700_000_000 + Int64(i / 20), nanoseconds: Int32(i % 20) * 50_000_000)
            track.append(Location(latitude: 45 + Double(i) * step, longitude: 10, timestamp: Timestamp(t)))
        }
        let s = statistics(track)
        #expect(s.maxSpeed.map { abs($0 - 3) < 0.05 } == true, "\(String(describing: s.maxSpeed))")
        #expect(abs(s.distanceMetres - 0.15 * 11_999) < 1, "\(s.distanceMetres)")
    }
}

@Suite("Workout statistics: many pauses")
struct ManyPausesStatisticsTests {
    @Test("pauses in any order, overlapping or not, count as the scan of every pause did")
    func pausesInAnyOrder() {
        var track: [Location] = []
        var lat = 45.0
        for i in 0...600 {
            track.append(fix(i, lat))
            lat += 3 / 111_132.0
        }
        // Every 20 s a 5 s pause, given backwards, plus one long pause overlapping several.
        var pauses: [ClosedRange<Instant>] = (0..<30).map { k in at(k * 20 + 3)...at(k * 20 + 8) }.reversed()
        pauses.append(at(400)...at(470))
        let s = statistics(track, pauses: pauses)
        // Moving time: 600 s less what the pauses cover (their union), give or take a second at each edge.
        var covered = Set<Int>()
        for p in pauses {
            let from = Int(p.lowerBound.seconds - 1_700_000_000)
            let to = Int(p.upperBound.seconds - 1_700_000_000)
            for second in from..<to { covered.insert(second) }
        }
        let expected = Double(600 - covered.count)
        #expect(
            s.movingSeconds.map { abs($0 - expected) <= 31 } == true,
            "\(String(describing: s.movingSeconds)) vs \(expected)")
        // The same pauses in order give the same figures.
        let ordered = statistics(track, pauses: pauses.sorted { $0.lowerBound < $1.lowerBound })
        #expect(ordered.movingSeconds == s.movingSeconds)
        #expect(ordered.distanceMetres == s.distanceMetres)
    }
}
