/// One GPS fix: the fields of Core Location's `CLLocation`, and nothing else.
///
/// Latitude and longitude are WGS 84 degrees; altitude and accuracies are metres; speed is metres per
/// second; course is degrees clockwise from true north. Every optional field is truly optional: a
/// missing altitude is `nil`, never `0` or `-1` in disguise.
///
/// Internally a missing value is stored as NaN (no valid location can hold a NaN, see ``validate(index:)``),
/// which keeps a `Location` at 104 bytes instead of 168.
public struct Location: Sendable, Hashable {
    /// When the fix was taken, as written (see ``Timestamp``). Route planners write no times.
    public var timestamp: Timestamp?
    /// Latitude in degrees, `-90...90`.
    public var latitude: Double
    /// Longitude in degrees, `-180...180`.
    public var longitude: Double

    @usableFromInline var _altitude: Double
    @usableFromInline var _horizontalAccuracy: Double
    @usableFromInline var _verticalAccuracy: Double
    @usableFromInline var _speed: Double
    @usableFromInline var _speedAccuracy: Double
    @usableFromInline var _course: Double
    @usableFromInline var _courseAccuracy: Double

    /// Creates a location. Nothing is checked here; ``validate(index:)`` checks.
    @inlinable
    public init(
        latitude: Double, longitude: Double, timestamp: Timestamp? = nil, altitude: Double? = nil,
        horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil, speed: Double? = nil,
        speedAccuracy: Double? = nil, course: Double? = nil, courseAccuracy: Double? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.timestamp = timestamp
        self._altitude = altitude ?? .nan
        self._horizontalAccuracy = horizontalAccuracy ?? .nan
        self._verticalAccuracy = verticalAccuracy ?? .nan
        self._speed = speed ?? .nan
        self._speedAccuracy = speedAccuracy ?? .nan
        self._course = course ?? .nan
        self._courseAccuracy = courseAccuracy ?? .nan
    }

    /// Altitude above sea level in metres (GPX `<ele>`).
    @inlinable public var altitude: Double? {
        get { _altitude.isNaN ? nil : _altitude }
        set { _altitude = newValue ?? .nan }
    }
    /// Radius of uncertainty of the position, in metres.
    @inlinable public var horizontalAccuracy: Double? {
        get { _horizontalAccuracy.isNaN ? nil : _horizontalAccuracy }
        set { _horizontalAccuracy = newValue ?? .nan }
    }
    /// Uncertainty of the altitude, in metres.
    @inlinable public var verticalAccuracy: Double? {
        get { _verticalAccuracy.isNaN ? nil : _verticalAccuracy }
        set { _verticalAccuracy = newValue ?? .nan }
    }
    /// Speed over ground in metres per second.
    @inlinable public var speed: Double? {
        get { _speed.isNaN ? nil : _speed }
        set { _speed = newValue ?? .nan }
    }
    /// Uncertainty of the speed, in metres per second.
    @inlinable public var speedAccuracy: Double? {
        get { _speedAccuracy.isNaN ? nil : _speedAccuracy }
        set { _speedAccuracy = newValue ?? .nan }
    }
    /// Direction of travel in degrees clockwise from true north.
    @inlinable public var course: Double? {
        get { _course.isNaN ? nil : _course }
        set { _course = newValue ?? .nan }
    }
    /// Uncertainty of the course, in degrees.
    @inlinable public var courseAccuracy: Double? {
        get { _courseAccuracy.isNaN ? nil : _courseAccuracy }
        set { _courseAccuracy = newValue ?? .nan }
    }

    /// Checks the model's rules: latitude in `-90...90`, longitude in `-180...180`, every number finite,
    /// accuracies not negative.
    ///
    /// - Parameter index: the location's index in its batch, reported in the error.
    /// - Throws: ``RouteKitError/Code/invalidLocation`` naming the index and the field, without coordinates
    ///   in its description.
    public func validate(index: Int? = nil) throws(RouteKitError) {
        func fail(_ reason: String) -> RouteKitError {
            RouteKitError(
                .invalidLocation, reason, index: index,
                privateDetail: "latitude \(latitude), longitude \(longitude)")
        }
        guard latitude.isFinite, latitude >= -90, latitude <= 90 else {
            throw fail("latitude is not a finite number in -90...90")
        }
        guard longitude.isFinite, longitude >= -180, longitude <= 180 else {
            throw fail("longitude is not a finite number in -180...180")
        }
        // A missing value is NaN; a present one must be finite, and accuracies not negative. No allocation on
        // the good path: this runs for every location of every batch.
        @inline(__always) func bad(_ v: Double, accuracy: Bool) -> Bool {
            !v.isNaN && (!v.isFinite || (accuracy && v < 0))
        }
        if bad(_altitude, accuracy: false) { throw fail("altitude is not finite") }
        if bad(_speed, accuracy: false) { throw fail("speed is not finite") }
        if bad(_course, accuracy: false) { throw fail("course is not finite") }
        if bad(_horizontalAccuracy, accuracy: true) { throw fail("horizontalAccuracy is not finite or is negative") }
        if bad(_verticalAccuracy, accuracy: true) { throw fail("verticalAccuracy is not finite or is negative") }
        if bad(_speedAccuracy, accuracy: true) { throw fail("speedAccuracy is not finite or is negative") }
        if bad(_courseAccuracy, accuracy: true) { throw fail("courseAccuracy is not finite or is negative") }
    }

    public static func == (a: Location, b: Location) -> Bool {
        func same(_ x: Double, _ y: Double) -> Bool { x == y || (x.isNaN && y.isNaN) }
        return a.timestamp == b.timestamp && same(a.latitude, b.latitude) && same(a.longitude, b.longitude)
            && same(a._altitude, b._altitude) && same(a._horizontalAccuracy, b._horizontalAccuracy)
            && same(a._verticalAccuracy, b._verticalAccuracy) && same(a._speed, b._speed)
            && same(a._speedAccuracy, b._speedAccuracy) && same(a._course, b._course)
            && same(a._courseAccuracy, b._courseAccuracy)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(timestamp)
        hasher.combine(latitude)
        hasher.combine(longitude)
        hasher.combine(altitude)
    }
}

extension Array where Element == Location {
    /// Validates a whole batch; the first bad location's index and reason are in the error.
    package func validateBatch() throws(RouteKitError) {
        for (i, location) in enumerated() { try location.validate(index: i) }
    }
}
