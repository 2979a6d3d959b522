import Foundation

/// A zone configuration (HealthKit's workout zones): for one quantity, heart rate or cycling power, where it came
/// from, and 3 to 9 contiguous zones, the first from 0 and the last unbounded, given by their 2 to 8 inner
/// boundaries in the quantity's unit (beats per minute, watts).
///
/// A source (the person behind it) has a preferred configuration per quantity (``ZoneSettings``); without one,
/// RouteKit computes a system configuration from what it knows (a maximum and resting heart rate, an age, an FTP),
/// and only when it knows nothing from the workout itself, saying so in ``basis``.
public struct ZoneConfiguration: Hashable, Sendable, Codable {
    /// What the zones divide.
    public enum Quantity: String, Hashable, Sendable, Codable, CaseIterable {
        /// Heart rate, beats per minute.
        case heartRate
        /// Cycling power, watts.
        case power

        /// The unit of the boundaries: `bpm` or `W`.
        public var unit: String { self == .heartRate ? "bpm" : "W" }

        /// The values a boundary may take.
        var range: ClosedRange<Double> { self == .heartRate ? 20...260 : 1...5_000 }

        /// The quantity written as `heartRate` (or `heart-rate`, `hr`) or `power`.
        /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the text.
        public init(parsing text: String) throws(RouteKitError) {
            switch text.lowercased() {
            case "heartrate", "heart-rate", "hr": self = .heartRate
            case "power": self = .power
            default:
                throw RouteKitError(.invalidArgument, "zones are for heartRate or power, not '\(text)'")
            }
        }
    }

    /// Where a configuration came from (HealthKit's zone configuration source).
    public enum Origin: String, Hashable, Sendable, Codable {
        /// Computed by RouteKit from what it knows about the person (see ``ZoneConfiguration/basis``).
        case system
        /// Set by the person (`routekit zones set`, `PUT /v1/zones/…`).
        case user
        /// Supplied by an app for one workout or one computation.
        case app
    }

    /// What the zones divide.
    public let quantity: Quantity
    /// Where the configuration came from.
    public let origin: Origin
    /// The 2 to 8 inner boundaries, ascending, in ``Quantity/unit``: zone 1 is below the first, the last zone from
    /// the last up.
    public let boundaries: [Double]
    /// How a system configuration was made (`Karvonen: resting 50 bpm, maximum 190 bpm`; `the workout's own
    /// maximum heart rate: nothing else is known`); `nil` for a person's or an app's.
    public let basis: String?

    /// A configuration.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` for fewer than 2 or more than 8 boundaries (3 to 9 zones), a
    ///   boundary outside the quantity's range (20–260 bpm, 1–5000 W), or one not above the one before; the
    ///   message names the boundary.
    public init(quantity: Quantity, origin: Origin, boundaries: [Double], basis: String? = nil) throws(RouteKitError) {
        guard (2...8).contains(boundaries.count) else {
            throw RouteKitError(
                .invalidArgument,
                "\(quantity.rawValue) zones: give 2 to 8 boundaries (3 to 9 zones), not \(boundaries.count)")
        }
        for (i, b) in boundaries.enumerated() {
            guard b.isFinite, quantity.range.contains(b) else {
                throw RouteKitError(
                    .invalidArgument,
                    "\(quantity.rawValue) zones: boundary \(i + 1) (\(b)) is outside \(Int(quantity.range.lowerBound))–"
                        + "\(Int(quantity.range.upperBound)) \(quantity.unit)", index: i)
            }
            if i > 0 && b <= boundaries[i - 1] {
                throw RouteKitError(
                    .invalidArgument,
                    "\(quantity.rawValue) zones: boundary \(i + 1) (\(b)) must be above boundary \(i) (\(boundaries[i - 1]))",
                    index: i)
            }
        }
        self.quantity = quantity
        self.origin = origin
        self.boundaries = boundaries
        self.basis = basis
    }

    /// Each zone's lower bound: 0, then the boundaries.
    public var lowerBounds: [Double] { [0] + boundaries }

    enum CodingKeys: String, CodingKey { case quantity, origin, boundaries, basis }

    /// Decodes a configuration and checks it as ``init(quantity:origin:boundaries:basis:)`` does.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            quantity: try c.decode(Quantity.self, forKey: .quantity),
            origin: try c.decode(Origin.self, forKey: .origin),
            boundaries: try c.decode([Double].self, forKey: .boundaries),
            basis: try c.decodeIfPresent(String.self, forKey: .basis))
    }
}

/// What a store keeps about the person behind a source for zones: their preferred configurations, and the
/// figures a system configuration is computed from.
public struct ZoneSettings: Hashable, Sendable, Codable {
    /// The preferred heart-rate zones, when the person (or an app) set them.
    public var heartRate: ZoneConfiguration?
    /// The preferred power zones, when set.
    public var power: ZoneConfiguration?
    /// Maximum heart rate (bpm), when known.
    public var maximumHeartRate: Double?
    /// Resting heart rate (bpm), when known: with the maximum, zones of heart-rate reserve (Karvonen).
    public var restingHeartRate: Double?
    /// Age in years, when known: a maximum of 208 − 0.7 × age when no maximum is.
    public var age: Double?
    /// Functional threshold power (W), when known.
    public var ftp: Double?

    /// Settings.
    public init(
        heartRate: ZoneConfiguration? = nil, power: ZoneConfiguration? = nil, maximumHeartRate: Double? = nil,
        restingHeartRate: Double? = nil, age: Double? = nil, ftp: Double? = nil
    ) {
        self.heartRate = heartRate
        self.power = power
        self.maximumHeartRate = maximumHeartRate
        self.restingHeartRate = restingHeartRate
        self.age = age
        self.ftp = ftp
    }

    /// Whether nothing is known.
    public var isEmpty: Bool { self == ZoneSettings() }

    /// These settings where they have a value, `base`'s elsewhere: a workout's own settings over its person's.
    public func over(_ base: ZoneSettings) -> ZoneSettings {
        ZoneSettings(
            heartRate: heartRate ?? base.heartRate, power: power ?? base.power,
            maximumHeartRate: maximumHeartRate ?? base.maximumHeartRate,
            restingHeartRate: restingHeartRate ?? base.restingHeartRate, age: age ?? base.age, ftp: ftp ?? base.ftp)
    }

    /// Checks the figures: a maximum heart rate of 61–260 bpm, a resting one of 20–150 bpm below the maximum, an age
    /// of 1–120, an FTP of 20–2000 W, and each configuration of its own quantity.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the figure.
    public func validate() throws(RouteKitError) {
        func check(_ value: Double?, _ name: String, _ range: ClosedRange<Double>, _ unit: String) throws(RouteKitError)
        {
            guard let value else { return }
            guard value.isFinite, range.contains(value) else {
                throw RouteKitError(
                    .invalidArgument,
                    "\(name) must be from \(Int(range.lowerBound)) to \(Int(range.upperBound))\(unit), not \(value)")
            }
        }
        try check(maximumHeartRate, "maximumHeartRate", 61...260, " bpm")
        try check(restingHeartRate, "restingHeartRate", 20...150, " bpm")
        try check(age, "age", 1...120, "")
        try check(ftp, "ftp", 20...2_000, " W")
        if let r = restingHeartRate, let m = maximumHeartRate, r >= m {
            throw RouteKitError(
                .invalidArgument, "restingHeartRate (\(r)) must be below maximumHeartRate (\(m))")
        }
        if let c = heartRate, c.quantity != .heartRate {
            throw RouteKitError(.invalidArgument, "the heart-rate configuration is for \(c.quantity.rawValue)")
        }
        if let c = power, c.quantity != .power {
            throw RouteKitError(.invalidArgument, "the power configuration is for \(c.quantity.rawValue)")
        }
    }

    /// The stored configuration of `quantity`, if any.
    public subscript(quantity: ZoneConfiguration.Quantity) -> ZoneConfiguration? {
        get { quantity == .heartRate ? heartRate : power }
        set {
            if quantity == .heartRate { heartRate = newValue } else { power = newValue }
        }
    }
}
