import Foundation
import RouteKit

/// Which zone configuration a workout's statistics use: the one the caller gives, else the person's preferred
/// one (``ZoneSettings``), else a system configuration from what is known about the person, and only when
/// nothing is known, one from the workout itself (its ``ZoneConfiguration/basis`` says so).
package enum ZonePreference {
    /// The settings one workout's statistics use: those saved with it over its person's, field by field.
    package static func settings(of workout: Workout, in store: any RouteStore) async throws(RouteKitError)
        -> ZoneSettings
    {
        try await store.zoneSettings(ofWorkout: workout.id).over(try await store.zoneSettings(of: workout.source))
    }

    /// Heart-rate reserve fractions of the five Karvonen zones' inner boundaries (60, 70, 80, 90 %, the percentages
    /// `Zones.heartRate(maximum:)` takes of a maximum).
    static let heartRateFractions = [0.6, 0.7, 0.8, 0.9]

    /// The person's heart-rate zones without a workout: their own, or a system configuration from their maximum
    /// and resting heart rate (Karvonen), their maximum, or their age; `nil` when nothing is known.
    package static func heartRate(_ settings: ZoneSettings) -> ZoneConfiguration? {
        if let own = settings.heartRate { return own }
        let f = heartRateFractions
        if let m = settings.maximumHeartRate, let r = settings.restingHeartRate, r < m {
            return try? ZoneConfiguration(
                quantity: .heartRate, origin: .system, boundaries: f.map { r + $0 * (m - r) },
                basis: "Karvonen: resting \(format(r)) bpm, maximum \(format(m)) bpm")
        }
        if let m = settings.maximumHeartRate {
            return ofMaximum(m, origin: .system, basis: "maximum heart rate \(format(m)) bpm")
        }
        if let age = settings.age {
            let m = Zones.maximumHeartRate(age: age)
            return ofMaximum(
                m, origin: .system, basis: "age \(format(age)): maximum heart rate 208 − 0.7 × age = \(format(m)) bpm")
        }
        return nil
    }

    /// `Zones.heartRate(maximum:)` (60, 70, 80, 90 % of `maximum`) as a configuration.
    static func ofMaximum(_ maximum: Double, origin: ZoneConfiguration.Origin, basis: String) -> ZoneConfiguration? {
        (try? Zones.heartRate(maximum: maximum)).flatMap { configuration($0, .heartRate, origin: origin, basis: basis) }
    }

    /// `zones` as a configuration of `quantity` (its lower bounds after the first are the boundaries).
    static func configuration(
        _ zones: Zones, _ quantity: ZoneConfiguration.Quantity, origin: ZoneConfiguration.Origin, basis: String?
    ) -> ZoneConfiguration? {
        try? ZoneConfiguration(
            quantity: quantity, origin: origin, boundaries: Array(zones.lowerBounds.dropFirst()), basis: basis)
    }

    /// The person's power zones without a workout: their own, or Coggan's seven from their FTP.
    package static func power(_ settings: ZoneSettings) -> ZoneConfiguration? {
        if let own = settings.power { return own }
        guard let ftp = settings.ftp else { return nil }
        return coggan(ftp: ftp, basis: "FTP \(format(ftp)) W")
    }

    /// The person's configuration of `quantity` without a workout.
    package static func preferred(_ quantity: ZoneConfiguration.Quantity, _ settings: ZoneSettings)
        -> ZoneConfiguration?
    {
        quantity == .heartRate ? heartRate(settings) : power(settings)
    }

    /// Heart-rate zones when nothing about the person is known: from the workout's own highest heart rate.
    static func fromWorkout(maximum: Double) -> ZoneConfiguration? {
        ofMaximum(
            maximum, origin: .system,
            basis: "the workout's own maximum heart rate (\(format(maximum)) bpm): nothing else is known; "
                + "set a maximum (and resting) heart rate or zones with routekit zones set")
    }

    /// Coggan's seven power zones from an FTP.
    static func coggan(ftp: Double, basis: String) -> ZoneConfiguration? {
        (try? Zones.power(ftp: ftp)).flatMap { configuration($0, .power, origin: .system, basis: basis) }
    }

    /// `zones` (a caller's explicit lower bounds) as a configuration supplied for this computation.
    static func supplied(_ zones: Zones, _ quantity: ZoneConfiguration.Quantity, basis: String? = nil)
        -> ZoneConfiguration?
    {
        configuration(zones, quantity, origin: .app, basis: basis)
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }
}

extension Zones {
    /// The zones of a configuration.
    package init(_ configuration: ZoneConfiguration) throws(RouteKitError) {
        try self.init(lowerBounds: configuration.lowerBounds)
    }
}
