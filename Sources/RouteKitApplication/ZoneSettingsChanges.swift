internal import Foundation
package import RouteKit
internal import RouteKitProcessing

/// Reading and changing a source's zone settings, as every door does it (`routekit zones`, `GET`/`PUT`/`DELETE
/// /v1/zones/{quantity}`).
package enum ZoneSettingsChanges {
    /// What a change sets; `nil` fields stay as they are.
    package struct Change: Sendable, Hashable {
        /// The person's own zones: 2 to 8 inner boundaries in the quantity's unit.
        package var boundaries: [Double]?
        /// Maximum heart rate (bpm).
        package var maximumHeartRate: Double?
        /// Resting heart rate (bpm).
        package var restingHeartRate: Double?
        /// Age (years).
        package var age: Double?
        /// Functional threshold power (W).
        package var ftp: Double?

        /// A change.
        package init(
            boundaries: [Double]? = nil, maximumHeartRate: Double? = nil, restingHeartRate: Double? = nil,
            age: Double? = nil, ftp: Double? = nil
        ) {
            self.boundaries = boundaries
            self.maximumHeartRate = maximumHeartRate
            self.restingHeartRate = restingHeartRate
            self.age = age
            self.ftp = ftp
        }

        /// Whether it sets nothing.
        package var isEmpty: Bool { self == Change() }
    }

    /// The configuration of `quantity` that `source`'s workouts use when a caller gives none: the person's own,
    /// or the system's from what is known; `nil` when nothing is known (then each workout's own maximum is used,
    /// and its statistics say so).
    package static func preferred(
        _ quantity: ZoneConfiguration.Quantity, of source: Source, in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        ZonePreference.preferred(quantity, try await store.zoneSettings(of: source))
    }

    /// Applies `change` to `source`'s settings for `quantity` and answers the configuration now preferred.
    /// Boundaries become the person's own configuration; figures (a maximum or resting heart rate, an age, an FTP)
    /// are kept for the system's. A refused change (a bad boundary or figure) changes nothing.
    /// - Throws: `RouteKitError.Code.invalidArgument` naming the boundary or the figure (a heart-rate figure for
    ///   power zones, an FTP for heart-rate zones, nothing to set).
    package static func apply(
        _ change: Change, to quantity: ZoneConfiguration.Quantity, of source: Source, in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        try check(change, quantity)
        let settings = try changed(try await store.zoneSettings(of: source), change, quantity, origin: .user)
        try await store.setZoneSettings(settings, of: source)
        return ZonePreference.preferred(quantity, settings)
    }

    /// Removes the person's own configuration of `quantity` (the figures stay) and answers the one now preferred.
    package static func clear(
        _ quantity: ZoneConfiguration.Quantity, of source: Source, in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        var settings = try await store.zoneSettings(of: source)
        settings[quantity] = nil
        try await store.setZoneSettings(settings, of: source)
        return ZonePreference.preferred(quantity, settings)
    }

    // MARK: One workout's

    /// The settings one workout's statistics use: those saved with it over its person's.
    package static func settings(ofWorkout workout: Workout, in store: any RouteStore) async throws(RouteKitError)
        -> ZoneSettings
    {
        try await ZonePreference.settings(of: workout, in: store)
    }

    /// The configuration of `quantity` one workout's statistics use when a caller gives none.
    package static func preferred(
        _ quantity: ZoneConfiguration.Quantity, ofWorkout workout: Workout, in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        ZonePreference.preferred(quantity, try await settings(ofWorkout: workout, in: store))
    }

    /// Applies `change` to the settings saved with `workout` (HealthKit's custom configuration an app supplies for a
    /// workout: boundaries become a configuration of origin `app`), as `source`, and answers the configuration the
    /// workout's statistics now use.
    /// - Throws: as ``apply(_:to:of:in:)``; `notOwner` when `source` did not write the workout.
    package static func apply(
        _ change: Change, to quantity: ZoneConfiguration.Quantity, ofWorkout workout: Workout, as source: Source,
        in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        try check(change, quantity)
        let own = try changed(try await store.zoneSettings(ofWorkout: workout.id), change, quantity, origin: .app)
        try await store.setZoneSettings(own, ofWorkout: workout.id, as: source)
        return ZonePreference.preferred(quantity, own.over(try await store.zoneSettings(of: workout.source)))
    }

    /// Removes what is saved with `workout` for `quantity` (its configuration and that quantity's figures), as
    /// `source`, and answers the configuration its statistics now use (the person's).
    package static func clear(
        _ quantity: ZoneConfiguration.Quantity, ofWorkout workout: Workout, as source: Source,
        in store: any RouteStore
    ) async throws(RouteKitError) -> ZoneConfiguration? {
        var own = try await store.zoneSettings(ofWorkout: workout.id)
        own[quantity] = nil
        if quantity == .heartRate {
            own.maximumHeartRate = nil
            own.restingHeartRate = nil
            own.age = nil
        } else {
            own.ftp = nil
        }
        try await store.setZoneSettings(own, ofWorkout: workout.id, as: source)
        return ZonePreference.preferred(quantity, own.over(try await store.zoneSettings(of: workout.source)))
    }

    // MARK: The rules

    static func check(_ change: Change, _ quantity: ZoneConfiguration.Quantity) throws(RouteKitError) {
        if change.isEmpty {
            throw RouteKitError(
                .invalidArgument,
                quantity == .heartRate
                    ? "give boundaries, or a maximumHeartRate (with a restingHeartRate), or an age"
                    : "give boundaries or an ftp")
        }
        switch quantity {
        case .heartRate where change.ftp != nil:
            throw RouteKitError(.invalidArgument, "ftp is a figure of power zones, not of heartRate zones")
        case .power where change.maximumHeartRate != nil || change.restingHeartRate != nil || change.age != nil:
            throw RouteKitError(
                .invalidArgument,
                "maximumHeartRate, restingHeartRate and age are figures of heartRate zones, not of power")
        default: break
        }
    }

    /// `settings` with `change` applied (validated).
    static func changed(
        _ settings: ZoneSettings, _ change: Change, _ quantity: ZoneConfiguration.Quantity,
        origin: ZoneConfiguration.Origin
    ) throws(RouteKitError) -> ZoneSettings {
        var settings = settings
        if let b = change.boundaries {
            settings[quantity] = try ZoneConfiguration(quantity: quantity, origin: origin, boundaries: b)
        }
        if let v = change.maximumHeartRate { settings.maximumHeartRate = v }
        if let v = change.restingHeartRate { settings.restingHeartRate = v }
        if let v = change.age { settings.age = v }
        if let v = change.ftp { settings.ftp = v }
        try settings.validate()
        return settings
    }
}

/// `source`'s zone settings in `routekit zones show --json` and `GET /v1/zones`: the figures, and the configuration
/// each quantity's workouts use.
package struct ZoneSettingsJSON: Codable, Hashable, Sendable {
    /// The heart-rate configuration preferred, or `null` (each workout's own maximum).
    @ExplicitNull package var heartRate: ZoneConfigurationJSON?
    /// The power configuration preferred, or `null` (each workout's estimated FTP).
    @ExplicitNull package var power: ZoneConfigurationJSON?
    /// Maximum heart rate (bpm), or `null`.
    @ExplicitNull package var maximumHeartRate: Double?
    /// Resting heart rate (bpm), or `null`.
    @ExplicitNull package var restingHeartRate: Double?
    /// Age, or `null`.
    @ExplicitNull package var age: Double?
    /// FTP (W), or `null`.
    @ExplicitNull package var ftp: Double?

    /// The shape of `settings`.
    package init(_ settings: ZoneSettings) {
        heartRate = ZonePreference.heartRate(settings).map(ZoneConfigurationJSON.init)
        power = ZonePreference.power(settings).map(ZoneConfigurationJSON.init)
        maximumHeartRate = settings.maximumHeartRate
        restingHeartRate = settings.restingHeartRate
        age = settings.age
        ftp = settings.ftp
    }

    enum CodingKeys: String, CodingKey { case heartRate, power, maximumHeartRate, restingHeartRate, age, ftp }
}
