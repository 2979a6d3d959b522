/// The kind of a quantity sample related to a workout, and its unit.
///
/// GPX extensions carry these per track point; RouteKit stores them as series related to the workout
/// (as HealthKit relates heart-rate samples to a workout), keyed by timestamp.
public struct QuantityType: Hashable, Sendable, CustomStringConvertible, Codable {
    /// Stable identifier, used in JSON and CSV (`"heartRate"`).
    public let identifier: String
    /// The unit values are stored in (`"count/min"`, `"degC"`, `"W"`, `"m"`).
    public let unit: String

    private init(_ identifier: String, _ unit: String) {
        self.identifier = identifier
        self.unit = unit
    }

    /// Heart rate, beats per minute.
    public static let heartRate = QuantityType("heartRate", "count/min")
    /// Cadence: revolutions (cycling) or steps (running) per minute, as the device wrote it.
    public static let cadence = QuantityType("cadence", "count/min")
    /// Air temperature, degrees Celsius.
    public static let temperature = QuantityType("temperature", "degC")
    /// Water temperature, degrees Celsius.
    public static let waterTemperature = QuantityType("waterTemperature", "degC")
    /// Depth below the surface, metres.
    public static let depth = QuantityType("depth", "m")
    /// Power, watts.
    public static let power = QuantityType("power", "W")

    /// Every type RouteKit knows, in a stable order.
    public static let all: [QuantityType] = [.heartRate, .cadence, .temperature, .waterTemperature, .depth, .power]

    /// The type with this identifier, if RouteKit knows it.
    public init?(identifier: String) {
        guard let known = Self.all.first(where: { $0.identifier == identifier }) else { return nil }
        self = known
    }

    public var description: String { identifier }
}

/// One value of a quantity at one time.
public struct QuantitySample: Hashable, Sendable {
    /// When the value was measured.
    public var timestamp: Timestamp
    /// The value, in the type's unit.
    public var value: Double

    /// Creates a sample.
    public init(timestamp: Timestamp, value: Double) {
        self.timestamp = timestamp
        self.value = value
    }
}

/// A series of samples of one quantity type, in time order, related to one workout.
public struct QuantitySeries: Hashable, Sendable {
    /// What is measured.
    public var type: QuantityType
    /// The samples, ordered by time.
    public var samples: [QuantitySample]

    /// Creates a series.
    public init(type: QuantityType, samples: [QuantitySample] = []) {
        self.type = type
        self.samples = samples
    }
}
