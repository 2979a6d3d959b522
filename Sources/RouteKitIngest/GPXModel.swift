public import RouteKit

// The GPX 1.1 data model (points, their fields and the documents' descriptive fields) is RouteKit's interchange
// model: every format's reader converts to these types and every writer takes them, so they keep their GPX names.

/// Per-point values of the known GPX extensions that become quantity series related to the workout.
///
/// A missing value is `nil` (stored as NaN internally to keep points small).
public struct GPXPointValues: Sendable, Hashable {
    /// The values in `QuantityType.all`'s order, NaN for a missing one (the GPX reader and the CSV writer use it
    /// directly).
    @usableFromInline package var storage: (Double, Double, Double, Double, Double, Double) = (
        .nan, .nan, .nan, .nan, .nan, .nan
    )

    /// No values.
    @inlinable public init() {}

    /// The given values (`nil` for absent), without looking types up by name (a hot path for other formats).
    @inlinable public init(heartRate: Double?, cadence: Double?, temperature: Double?, power: Double?) {
        storage = (heartRate ?? .nan, cadence ?? .nan, temperature ?? .nan, .nan, .nan, power ?? .nan)
    }

    /// The value of `type`, if the point has one.
    @inlinable public subscript(type: QuantityType) -> Double? {
        get {
            let v = raw(Self.slot(type))
            return v.isNaN ? nil : v
        }
        set { setRaw(Self.slot(type), newValue ?? .nan) }
    }

    /// Whether no value is present.
    @inlinable public var isEmpty: Bool {
        storage.0.isNaN && storage.1.isNaN && storage.2.isNaN && storage.3.isNaN && storage.4.isNaN && storage.5.isNaN
    }

    @usableFromInline static func slot(_ type: QuantityType) -> Int {
        switch type.identifier {
        case "heartRate": 0
        case "cadence": 1
        case "temperature": 2
        case "waterTemperature": 3
        case "depth": 4
        default: 5
        }
    }

    @inlinable func raw(_ i: Int) -> Double {
        switch i {
        case 0: storage.0
        case 1: storage.1
        case 2: storage.2
        case 3: storage.3
        case 4: storage.4
        default: storage.5
        }
    }

    @inlinable mutating func setRaw(_ i: Int, _ v: Double) {
        switch i {
        case 0: storage.0 = v
        case 1: storage.1 = v
        case 2: storage.2 = v
        case 3: storage.3 = v
        case 4: storage.4 = v
        default: storage.5 = v
        }
    }

    public static func == (a: Self, b: Self) -> Bool {
        (0..<6).allSatisfy { i in
            let x = a.raw(i)
            let y = b.raw(i)
            return x == y || (x.isNaN && y.isNaN)
        }
    }

    public func hash(into hasher: inout Hasher) {
        for i in 0..<6 { hasher.combine(raw(i).isNaN ? 0 : raw(i)) }
    }
}

/// A hyperlink (GPX `linkType`, or GPX 1.0's `url`/`urlname`).
public struct GPXLink: Sendable, Hashable, Codable {
    public var href: String
    public var text: String?
    public var type: String?
    public init(href: String, text: String? = nil, type: String? = nil) {
        self.href = href
        self.text = text
        self.type = type
    }
}

/// The GPX waypoint fields that are not part of `Location` and rarely present on track points.
///
/// Kept so that import → export → import loses nothing.
public struct GPXPointExtras: Sendable, Hashable, Codable {
    public var name: String?
    public var comment: String?
    public var description: String?
    public var source: String?
    public var links: [GPXLink] = []
    public var symbol: String?
    public var type: String?
    public var fix: String?
    public var satellites: Int?
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    public var magneticVariation: Double?
    public var geoidHeight: Double?
    public var ageOfDGPSData: Double?
    public var dgpsID: Int?
    /// Extension elements RouteKit does not interpret, as standalone XML fragments (each declares the
    /// namespaces it uses).
    public var extensions: [String] = []
    public init() {}
}

/// An immutable box that keeps rarely used data out of line.
@usableFromInline
final class Box<Value: Sendable & Hashable>: Sendable {
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}

/// One `<trkpt>`, `<rtept>` or `<wpt>`: a location, the known extension values, and the rest.
public struct GPXPoint: Sendable, Hashable {
    /// Position, time and the other `CLLocation` fields.
    public var location: Location
    /// Heart rate, cadence, temperature, power… from known extensions.
    public var values: GPXPointValues
    @usableFromInline var _extras: Box<GPXPointExtras>?

    /// Creates a point.
    @inlinable public init(location: Location, values: GPXPointValues = GPXPointValues(), extras: GPXPointExtras? = nil)
    {
        self.location = location
        self.values = values
        self._extras = extras.map(Box.init)
    }

    /// Name, description, links, DOP values, unknown extensions…; `nil` when the point has none.
    @inlinable public var extras: GPXPointExtras? {
        get { _extras?.value }
        set { _extras = newValue.map(Box.init) }
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.location == b.location && a.values == b.values && a.extras == b.extras
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(location)
        hasher.combine(values)
    }
}

/// A person or organisation (GPX `personType`).
public struct GPXPerson: Sendable, Hashable {
    public var name: String?
    public var email: String?
    public var link: GPXLink?
    public init(name: String? = nil, email: String? = nil, link: GPXLink? = nil) {
        self.name = name
        self.email = email
        self.link = link
    }
}

/// Copyright information (GPX `copyrightType`).
public struct GPXCopyright: Sendable, Hashable {
    public var author: String
    public var year: String?
    public var license: String?
    public init(author: String, year: String? = nil, license: String? = nil) {
        self.author = author
        self.year = year
        self.license = license
    }
}

/// A bounding box (GPX `boundsType`), in degrees.
public struct GPXBounds: Sendable, Hashable {
    public var minLatitude: Double
    public var minLongitude: Double
    public var maxLatitude: Double
    public var maxLongitude: Double
    public init(minLatitude: Double, minLongitude: Double, maxLatitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.minLongitude = minLongitude
        self.maxLatitude = maxLatitude
        self.maxLongitude = maxLongitude
    }
}

/// The file's `<metadata>` (GPX 1.1) or top-level descriptive elements (GPX 1.0).
public struct GPXMetadata: Sendable, Hashable {
    public var name: String?
    public var description: String?
    public var author: GPXPerson?
    public var copyright: GPXCopyright?
    public var links: [GPXLink] = []
    public var time: Timestamp?
    public var keywords: String?
    public var bounds: GPXBounds?
    public var extensions: [String] = []
    public init() {}

    /// Whether nothing is set.
    public var isEmpty: Bool { self == GPXMetadata() }
}

/// Descriptive fields of a `<trk>` or `<rte>`.
public struct GPXPathInfo: Sendable, Hashable, Codable {
    public var name: String?
    public var comment: String?
    public var description: String?
    public var source: String?
    public var links: [GPXLink] = []
    public var number: Int?
    public var type: String?
    /// Unknown extension elements, as standalone XML fragments.
    public var extensions: [String] = []
    public init() {}
}

/// The GPX version a file declared.
public struct GPXDocumentInfo: Sendable, Hashable {
    /// The `version` attribute as written (`"1.1"`, `"1.0"`, or whatever a producer wrote); `nil` when absent.
    public var version: String?
    /// The `creator` attribute.
    public var creator: String?
    /// The root's namespace (`http://www.topografix.com/GPX/1/1`), `nil` when it has none.
    public var namespace: String?
    public init(version: String? = nil, creator: String? = nil, namespace: String? = nil) {
        self.version = version
        self.creator = creator
        self.namespace = namespace
    }
}

/// Something odd in the input that RouteKit tolerated. Never contains coordinates.
public struct GPXWarning: Sendable, Hashable, CustomStringConvertible {
    /// A stable key for the kind of oddity (`"rootWithoutAttributes"`, `"pauseMarkers"`, `"gzip"`…).
    public var kind: String
    /// What was found, for a person.
    public var message: String
    /// Where it was first seen.
    public var line: Int?
    public init(kind: String, message: String, line: Int? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
    }
    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}

/// What a reader hands out, in document order: RouteKitGPX's streaming reader, and the FIT and TCX conversions,
/// which give their files as the same events.
///
/// Points come in batches (of at most `GPXReadOptions.batchSize` from the GPX reader). A track's descriptive
/// fields arrive with ``trackStart(_:)``, before its first segment; fields a producer wrote after the segments
/// (against the schema) arrive with ``trackEnd(_:)``, which carries the complete info.
public enum GPXEvent: Sendable, Hashable {
    /// The root element's attributes.
    case document(GPXDocumentInfo)
    /// The file's metadata (GPX 1.1 `<metadata>`, or GPX 1.0's top-level fields).
    case metadata(GPXMetadata)
    /// A `<wpt>`.
    case waypoint(GPXPoint)
    /// A `<rte>` begins; its fields so far.
    case routeStart(GPXPathInfo)
    /// Route points, in file order.
    case routePoints([GPXPoint])
    /// A `<rte>` ends; its complete fields.
    case routeEnd(GPXPathInfo)
    /// A `<trk>` begins; its fields written before the first segment.
    case trackStart(GPXPathInfo)
    /// A `<trkseg>` begins.
    case segmentStart
    /// Track points, in file order.
    case trackPoints([GPXPoint])
    /// A pause inside a segment (OpenTracks' legacy `lat="100"` marker), with its time.
    case pause(Timestamp?)
    /// A resume inside a segment (OpenTracks' legacy `lat="200"` marker), with its time.
    case resume(Timestamp?)
    /// A `<trkseg>` ends; its unknown extension elements, if any.
    case segmentEnd(extensions: [String])
    /// A `<trk>` ends; its complete fields.
    case trackEnd(GPXPathInfo)
    /// Unknown extension elements of the root `<gpx>`.
    case documentExtensions([String])
    /// Something odd that was tolerated.
    case warning(GPXWarning)
}
