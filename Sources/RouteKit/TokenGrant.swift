import Foundation

/// One type of object a scope can be narrowed to (`read:routes`, `write:workouts`, `read:heartRate`), as HealthKit
/// authorizes reading and sharing per data type.
public enum ScopeTarget: Hashable, Sendable, CustomStringConvertible {
    /// Workouts: their fields, events, activities and recorded totals, their statistics and splits, the change feed's
    /// workout objects.
    case workouts
    /// Routes: their locations, exports, pictures and profiles, a workout's waypoints and planned routes, the change
    /// feed's routes.
    case routes
    /// Effort scores.
    case effort
    /// A workout's samples of one quantity type (its series), and every figure computed from them: heart rate is
    /// `read:heartRate`.
    case quantity(QuantityType)

    /// Every target, in a stable order: `workouts`, `routes`, `effort`, then the quantity types (``QuantityType/all``).
    public static var all: [ScopeTarget] { [.workouts, .routes, .effort] + QuantityType.all.map { .quantity($0) } }

    /// Its name in a scope word: `workouts`, `routes`, `effort`, or the quantity type's identifier (`heartRate`).
    public var description: String {
        switch self {
        case .workouts: "workouts"
        case .routes: "routes"
        case .effort: "effort"
        case .quantity(let type): type.identifier
        }
    }

    /// The target named `name` (see ``description``); `nil` for a name that is none.
    public init?(name: String) {
        switch name {
        case "workouts": self = .workouts
        case "routes": self = .routes
        case "effort": self = .effort
        default:
            guard let type = QuantityType(identifier: name) else { return nil }
            self = .quantity(type)
        }
    }

    /// Its position in ``all``.
    var order: Int { Self.all.firstIndex(of: self) ?? Self.all.count }
}

/// What a set of scopes lets an API token read and write, type by type: the questions every door of the HTTP service
/// asks of a token, answered in one place.
///
/// Plain `read` and `write` mean every type of object; `read:TYPE` and `write:TYPE` one (``ScopeTarget``). A token
/// without `read:heartRate` (nor `read`) never sees heart-rate series, nor what is computed from them: heart-rate
/// figures and zones in statistics, profiles and pictures, heart rate in exports and archives, the change feed's
/// heart-rate series, a workout's recorded heart-rate totals, the heart-rate part of zone settings. The other quantity
/// types likewise. Writing is narrowed the same way: a file uploaded with a token without `write:heartRate` (nor
/// `write`) is stored without its heart rate, samples and recorded totals alike (``writable(_:)``).
///
/// ```swift
/// let grant = try TokenGrant(parsing: "read:workouts,read:routes")
/// grant.mayRead(.routes)                 // true
/// grant.mayRead(quantity: .heartRate)    // false
/// grant.mayWrite(.workouts)              // false
/// ```
public struct TokenGrant: Hashable, Sendable {
    /// The scopes.
    public var scopes: Set<APIScope>

    /// The grant of `scopes`.
    public init(_ scopes: Set<APIScope>) { self.scopes = scopes }

    /// The grant of the scope words in `text`, separated by commas or spaces (`read:workouts,read:routes`).
    /// - Throws: ``RouteKitError/Code/invalidArgument`` naming the first word that is not a scope.
    public init(parsing text: String) throws(RouteKitError) {
        self.init(try APIToken.scopes(from: text))
    }

    /// Reads and writes every type of object (and administers nothing): what a store object that no token narrowed
    /// answers to ``RouteStore``'s `readGrant`.
    public static let full = TokenGrant([.read, .write])

    // MARK: Reading

    /// Whether it may read objects of `target`: with `read`, or with `read:TARGET`.
    public func mayRead(_ target: ScopeTarget) -> Bool { scopes.contains(.read) || scopes.contains(.reading(target)) }

    /// Whether it may read series of `quantity` and what is computed from them.
    public func mayRead(quantity: QuantityType) -> Bool { mayRead(.quantity(quantity)) }

    /// Whether it may read some type of object (`read`, or any `read:TYPE`): enough for the change feed, whose
    /// objects are then filtered by type.
    public var readsAnything: Bool { scopes.contains { $0.access == .read } }

    /// Whether it may read every type of object (`read`, or every `read:TYPE`).
    public var readsEverything: Bool { scopes.contains(.read) || ScopeTarget.all.allSatisfy { mayRead($0) } }

    /// Whether it may read every quantity type.
    public var readsEveryQuantity: Bool { QuantityType.all.allSatisfy { mayRead(quantity: $0) } }

    /// The quantity types it may read, in ``QuantityType/all``'s order.
    public var readableQuantities: [QuantityType] { QuantityType.all.filter { mayRead(quantity: $0) } }

    /// Whether it may read a change feed object of this key's type (a series: of its quantity type).
    public func mayRead(key: ChangeObjectKey) -> Bool {
        switch key.type {
        case .route: mayRead(.routes)
        case .workout: mayRead(.workouts)
        case .effort: mayRead(.effort)
        case .series: key.quantityType.map { mayRead(quantity: $0) } ?? readsEveryQuantity
        }
    }

    /// Whether it may read a change feed object of this type (a series: of its quantity type).
    public func mayRead(object: ChangedObject) -> Bool { mayRead(key: object.key) }

    /// Whether it may read the zones of `quantity` (heart-rate zones: `read:heartRate`; power zones: `read:power`).
    public func mayRead(zones quantity: ZoneConfiguration.Quantity) -> Bool {
        mayRead(quantity: quantity.quantityType)
    }

    // MARK: Writing

    /// Whether it may write objects of `target`: with `write`, or with `write:TARGET`.
    public func mayWrite(_ target: ScopeTarget) -> Bool {
        scopes.contains(.write) || scopes.contains(.writing(target))
    }

    /// Whether it may write series of `quantity`.
    public func mayWrite(quantity: QuantityType) -> Bool { mayWrite(.quantity(quantity)) }

    /// Whether it may write some type of object (`write`, or any `write:TYPE`).
    public var writesAnything: Bool { scopes.contains { $0.access == .write } }

    // MARK: Requirements

    /// Whether it holds what `scope` asks for: plain `read`, `write` or `admin` only that scope itself (a door that
    /// asks for plain `read` needs every type); `read:TYPE` is held by `read` or `read:TYPE`, `write:TYPE` by `write`
    /// or `write:TYPE`.
    public func allows(_ scope: APIScope) -> Bool {
        guard let target = scope.target else { return scopes.contains(scope) }
        switch scope.access {
        case .read: return mayRead(target)
        case .write: return mayWrite(target)
        case .admin: return scopes.contains(.admin)
        }
    }

    // MARK: What it may not see, left out

    /// The recorded totals of each quantity type in metadata (``MetadataKey``'s names).
    static let figureKeys: [QuantityType: [String]] = [
        .heartRate: [MetadataKey.averageHeartRate, MetadataKey.maximumHeartRate],
        .cadence: [MetadataKey.averageCadence, MetadataKey.maximumCadence],
        .power: [MetadataKey.averagePower, MetadataKey.maximumPower],
    ]

    /// `metadata` without the recorded totals of the quantity types it may not read (``MetadataKey/averageHeartRate``
    /// and ``MetadataKey/maximumHeartRate`` without `read:heartRate`, and so on for cadence and power).
    public func redacted(_ metadata: [String: MetadataValue]) -> [String: MetadataValue] {
        Self.removingTotals(of: QuantityType.all.filter { !mayRead(quantity: $0) }, from: metadata)
    }

    /// `workout` without the recorded totals of the quantity types it may not read: in its metadata, its events' (a
    /// lap's totals) and its activities'.
    public func redacted(_ workout: Workout) -> Workout {
        guard !readsEveryQuantity else { return workout }
        return Self.removingTotals(of: QuantityType.all.filter { !mayRead(quantity: $0) }, from: workout)
    }

    /// `metadata` without the recorded totals of `types`.
    static func removingTotals(of types: [QuantityType], from metadata: [String: MetadataValue])
        -> [String: MetadataValue]
    {
        var out = metadata
        for type in types {
            for key in figureKeys[type] ?? [] { out[key] = nil }
        }
        return out
    }

    /// `workout` without the recorded totals of `types`: in its metadata, its events' and its activities'.
    static func removingTotals(of types: [QuantityType], from workout: Workout) -> Workout {
        guard !types.isEmpty else { return workout }
        var out = workout
        out.metadata = removingTotals(of: types, from: out.metadata)
        for i in out.events.indices { out.events[i].metadata = removingTotals(of: types, from: out.events[i].metadata) }
        for i in out.activities.indices {
            out.activities[i].metadata = removingTotals(of: types, from: out.activities[i].metadata)
        }
        return out
    }

    /// Whether `workout` records a total of `type` (in its metadata, an event's or an activity's).
    static func recordsTotals(of type: QuantityType, in workout: Workout) -> Bool {
        let keys = figureKeys[type] ?? []
        let all: [[String: MetadataValue]] =
            [workout.metadata] + workout.events.map(\.metadata) + workout.activities.map(\.metadata)
        return all.contains { metadata in keys.contains { metadata[$0] != nil } }
    }

    // MARK: What it may not write, left out

    /// `workout` without the recorded totals of the quantity types it may not write (``MetadataKey/averageHeartRate``
    /// and ``MetadataKey/maximumHeartRate`` without `write:heartRate`, and so on for cadence and power; in its
    /// metadata, its events' and its activities'), and the types whose totals were left out, in
    /// ``QuantityType/all``'s order: what a file uploaded with this grant stores of the workout it describes.
    public func writable(_ workout: Workout) -> (workout: Workout, leftOut: [QuantityType]) {
        let refused = QuantityType.all.filter { !mayWrite(quantity: $0) }
        let leftOut = refused.filter { Self.recordsTotals(of: $0, in: workout) }
        return (Self.removingTotals(of: leftOut, from: workout), leftOut)
    }

    /// `settings` without what belongs to the quantity types it may not read: the heart-rate zones, maximum and
    /// resting heart rate and age without `read:heartRate`; the power zones and FTP without `read:power`.
    public func redacted(_ settings: ZoneSettings) -> ZoneSettings {
        var out = settings
        if !mayRead(quantity: .heartRate) {
            out.heartRate = nil
            out.maximumHeartRate = nil
            out.restingHeartRate = nil
            out.age = nil
        }
        if !mayRead(quantity: .power) {
            out.power = nil
            out.ftp = nil
        }
        return out
    }

    /// A short text that tells apart what grants may see of an answer that carries quantities (a picture, an export):
    /// empty when every quantity type may be read, else `-q` and the readable types as hexadecimal bits of
    /// ``QuantityType/all``. A cache validator (`ETag`) carries it, so that a copy made for one grant is never
    /// revalidated for another.
    package var quantityTag: String {
        guard !readsEveryQuantity else { return "" }
        var bits = 0
        for (i, type) in QuantityType.all.enumerated() where mayRead(quantity: type) { bits |= 1 << i }
        return "-q" + String(bits, radix: 16)
    }
}

extension ZoneConfiguration.Quantity {
    /// The quantity type whose samples the zones divide: ``QuantityType/heartRate`` or ``QuantityType/power``.
    public var quantityType: QuantityType { self == .heartRate ? .heartRate : .power }
}

extension RouteStore {
    /// What this store object lets its reader see: the grant of the API token it was narrowed to (the HTTP service's
    /// view of a token without plain `read`, ``GrantedStore``), else ``TokenGrant/full``. What reads series (exports,
    /// archives, statistics) asks it what else to leave out.
    package var readGrant: TokenGrant { (self as? GrantedStore)?.grant ?? .full }
}
