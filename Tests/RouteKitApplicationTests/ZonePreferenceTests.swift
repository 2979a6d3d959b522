import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitApplication
import RouteKitProcessing
import RouteKitTesting
import Testing

@Suite("Zones: the caller's, the person's, the system's, and the workout's only when nothing is known")
struct ZonePreferenceTests {
    @Test("a configuration: 3 to 9 zones, ascending, in range; each refusal names the boundary")
    func validation() throws {
        let ok = try ZoneConfiguration(quantity: .heartRate, origin: .user, boundaries: [120, 140])
        #expect(ok.lowerBounds == [0, 120, 140])
        let cases: [([Double], String)] = [
            ([120], "give 2 to 8 boundaries"), (Array(stride(from: 100.0, to: 190, by: 10)), "not 9"),
            ([120, 120], "boundary 2 (120.0) must be above boundary 1"), ([10, 120], "boundary 1 (10.0) is outside"),
            ([120, .nan], "boundary 2 (nan) is outside"),
        ]
        for (bounds, message) in cases {
            let e = #expect(throws: RouteKitError.self) {
                try ZoneConfiguration(quantity: .heartRate, origin: .user, boundaries: bounds)
            }
            #expect(e?.message.contains(message) == true, "\(String(describing: e?.message))")
        }
        #expect(throws: RouteKitError.self) {
            try ZoneConfiguration(quantity: .power, origin: .user, boundaries: [100, 6_000])
        }
        // A stored configuration is checked as it is read.
        let stored = Data(#"{"quantity":"heartRate","origin":"user","boundaries":[150,140]}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ZoneConfiguration.self, from: stored) }
    }

    @Test("the system's heart-rate zones: Karvonen with a resting rate, else % of the maximum, else from the age")
    func system() throws {
        let karvonen = try #require(
            ZonePreference.heartRate(ZoneSettings(maximumHeartRate: 200, restingHeartRate: 60)))
        #expect(karvonen.boundaries == [144, 158, 172, 186] && karvonen.origin == .system)
        let maximum = try #require(ZonePreference.heartRate(ZoneSettings(maximumHeartRate: 200)))
        #expect(maximum.boundaries == [120, 140, 160, 180])
        let age = try #require(ZonePreference.heartRate(ZoneSettings(age: 40)))
        #expect(age.boundaries.map { ($0 * 10).rounded() / 10 } == [108, 126, 144, 162])  // maximum 180
        let own = try ZoneConfiguration(quantity: .heartRate, origin: .user, boundaries: [100, 130])
        #expect(ZonePreference.heartRate(ZoneSettings(heartRate: own, maximumHeartRate: 200)) == own)
        #expect(ZonePreference.heartRate(ZoneSettings()) == nil)
        let power = try #require(ZonePreference.power(ZoneSettings(ftp: 200)))
        #expect(power.boundaries.map { $0.rounded() } == [112, 152, 182, 212, 242, 302] && power.basis == "FTP 200 W")
    }

    @Test("a change: figures and own zones kept, a refused one changes nothing, heart-rate figures not for power")
    func changes() async throws {
        let store = InMemoryStore()
        let alice = try Source(name: "alice")
        let c = try await ZoneSettingsChanges.apply(
            .init(maximumHeartRate: 190, restingHeartRate: 50), to: .heartRate, of: alice, in: store)
        #expect(c?.origin == .system)
        let before = try await store.zoneSettings(of: alice)
        for change in [
            ZoneSettingsChanges.Change(restingHeartRate: 195), .init(boundaries: [150, 140]), .init(),
            .init(ftp: 250),
        ] {
            await #expect(throws: RouteKitError.self) {
                _ = try await ZoneSettingsChanges.apply(change, to: .heartRate, of: alice, in: store)
            }
        }
        await #expect(throws: RouteKitError.self) {
            _ = try await ZoneSettingsChanges.apply(.init(age: 30), to: .power, of: alice, in: store)
        }
        #expect(try await store.zoneSettings(of: alice) == before)
        let own = try await ZoneSettingsChanges.apply(.init(boundaries: [130, 150]), to: .heartRate, of: alice, in: store)
        #expect(own?.origin == .user && own?.boundaries == [130, 150])
        let cleared = try await ZoneSettingsChanges.clear(.heartRate, of: alice, in: store)
        #expect(cleared == c)
    }
}
