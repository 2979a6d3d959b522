import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitTesting
import Testing

@Suite("Location chunks")
struct LocationChunkTests {
    static func value(_ rng: inout SplitMix64, _ range: ClosedRange<Double>) -> Double {
        let v = Double.random(in: range, using: &rng)
        switch Int.random(in: 0...3, using: &rng) {
        case 0: return v  // full precision: raw column
        case 1: return -0.0
        default:
            let p = pow(10, Double(Int.random(in: 0...9, using: &rng)))
            return min(max((v * p).rounded() / p, range.lowerBound), range.upperBound)
        }
    }

    static func randomLocations(seed: UInt64) -> [Location] {
        var rng = SplitMix64(seed: seed)
        let mode = seed % 3  // decimal-friendly, mixed, or anything goes
        return (0..<Int.random(in: 0...300, using: &rng)).map { _ in
            func maybe(_ p: Double, _ make: (inout SplitMix64) -> Double) -> Double? {
                Double.random(in: 0..<1, using: &rng) < p ? make(&rng) : nil
            }
            let lat = mode == 0 ? (Double(Int.random(in: -900_000_000...900_000_000, using: &rng)) / 1e7) : value(&rng, -90...90)
            let lon = mode == 0 ? (Double(Int.random(in: -1_800_000_000...1_800_000_000, using: &rng)) / 1e7) : value(&rng, -180...180)
            var time: Timestamp?
            if Double.random(in: 0..<1, using: &rng) < 0.9 {
                let offsets: [Int32?] = [0, nil, 3600, -25_200, 4500]
                time = Timestamp(
                    Instant(
                        seconds: Int64.random(in: -5_000_000_000...250_000_000_000, using: &rng),
                        nanoseconds: Int32.random(in: 0...999_999_999, using: &rng)
                            / [1, 1000, 1_000_000, 1_000_000_000][Int.random(in: 0...3, using: &rng)]),
                    utcOffsetSeconds: offsets.randomElement(using: &rng) ?? nil)
            }
            return Location(
                latitude: lat, longitude: lon, timestamp: time, altitude: maybe(0.8) { value(&$0, -400...9000) },
                horizontalAccuracy: maybe(0.3) { value(&$0, 0...100) }, verticalAccuracy: maybe(0.3) { value(&$0, 0...100) },
                speed: maybe(0.3) { value(&$0, 0...80) }, speedAccuracy: maybe(0.1) { value(&$0, 0...5) },
                course: maybe(0.3) { value(&$0, 0...359.9) }, courseAccuracy: maybe(0.1) { value(&$0, 0...180) })
        }
    }

    /// Bitwise: -0.0 and 0.0 differ, as they do in the file.
    static func identical(_ a: Location, _ b: Location) -> Bool {
        func same(_ x: Double?, _ y: Double?) -> Bool { x?.bitPattern == y?.bitPattern }
        return a.timestamp == b.timestamp && same(a.latitude, b.latitude) && same(a.longitude, b.longitude)
            && same(a.altitude, b.altitude) && same(a.horizontalAccuracy, b.horizontalAccuracy)
            && same(a.verticalAccuracy, b.verticalAccuracy) && same(a.speed, b.speed)
            && same(a.speedAccuracy, b.speedAccuracy) && same(a.course, b.course) && same(a.courseAccuracy, b.courseAccuracy)
    }

    @Test("encode → decode gives bit-identical locations", arguments: 0..<200)
    func roundTrip(seed: UInt64) throws {
        let locations = Self.randomLocations(seed: seed)
        let decoded = try LocationChunk.decode(LocationChunk.encode(locations))
        #expect(decoded.count == locations.count)
        if let i = locations.indices.first(where: { !Self.identical(locations[$0], decoded[$0]) }) {
            Issue.record("location \(i) differs: \(String(reflecting: locations[i])) vs \(String(reflecting: decoded[i]))")
        }
    }

    @Test("a 1 Hz GPS track (7-decimal coordinates, 0.1 m elevation, whole-second UTC times) costs under 24 bytes a point")
    func compact() throws {
        var rng = SplitMix64(seed: 42)
        var lat = 47.3769
        var lon = 8.5417
        var ele = 500.0
        let locations = (0..<4096).map { i -> Location in
            lat += Double.random(in: -0.0001...0.0001, using: &rng)
            lon += Double.random(in: -0.00015...0.00015, using: &rng)
            ele += Double.random(in: -0.5...0.5, using: &rng)
            return Location(
                latitude: (lat * 1e7).rounded() / 1e7, longitude: (lon * 1e7).rounded() / 1e7,
                timestamp: Timestamp(Instant(seconds: 1_714_543_200 + Int64(i)), utcOffsetSeconds: 0),
                altitude: (ele * 10).rounded() / 10)
        }
        let bytes = LocationChunk.encode(locations)
        #expect(Double(bytes.count) / Double(locations.count) < 24)
        #expect(Double(bytes.count) / Double(locations.count) < 10)  // about 7: 2-3 per coordinate, 1-2 elevation, 1 time
        #expect(try LocationChunk.decode(bytes) == locations)
    }

    @Test("corrupt or truncated bytes give a typed error, never a crash", arguments: 0..<100)
    func corrupt(seed: UInt64) {
        var rng = SplitMix64(seed: seed &+ 1000)
        var bytes = LocationChunk.encode(Self.randomLocations(seed: seed))
        guard !bytes.isEmpty else { return }
        switch seed % 3 {
        case 0: bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
        case 1:
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
        default: bytes.append(contentsOf: (0..<Int.random(in: 1...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        do {
            _ = try LocationChunk.decode(bytes)  // may decode to something else; it must not trap
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test("hostile counts do not allocate gigabytes")
    func hugeCount() {
        #expect(throws: RouteKitError.self) { try LocationChunk.decode([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]) }
    }
}
