import Foundation
public import RouteKit
import RouteKitIngest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One `Trackpoint` of a TCX file: what RouteKit keeps of it.
@_spi(RouteKitInternals)
public struct TCXTrackpoint: Sendable, Hashable {
    /// `Time`, with the offset the file wrote.
    public var time: Timestamp?
    /// `Position/LatitudeDegrees`, when both coordinates are numbers.
    public var latitude: Double?
    /// `Position/LongitudeDegrees`, when both coordinates are numbers.
    public var longitude: Double?
    /// `AltitudeMeters`.
    public var altitude: Double?
    /// `DistanceMeters` (not stored: RouteKit computes distances from positions).
    public var distance: Double?
    /// `HeartRateBpm/Value`.
    public var heartRate: Double?
    /// `Cadence` (bike cadence, rpm).
    public var cadence: Double?
    /// `Extensions/TPX/RunCadence` (steps per minute of one leg).
    public var runCadence: Double?
    /// `Extensions/TPX/Speed`, m/s.
    public var speed: Double?
    /// `Extensions/TPX/Watts`.
    public var power: Double?

    /// Creates an empty trackpoint.
    public init() {}

    /// Whether the trackpoint has a readable position.
    public var hasPosition: Bool { latitude != nil && longitude != nil }
}

/// One `Lap` of an activity: its fields and its `Track`s (a device writes a new track after each pause).
@_spi(RouteKitInternals)
public struct TCXLap: Sendable, Hashable {
    /// The `StartTime` attribute.
    public var startTime: Timestamp?
    /// `TotalTimeSeconds` (timer time).
    public var totalTimeSeconds: Double?
    /// `DistanceMeters`.
    public var distanceMeters: Double?
    /// `Calories`.
    public var calories: Double?
    /// `MaximumSpeed` (m/s).
    public var maximumSpeed: Double?
    /// `AverageHeartRateBpm`.
    public var averageHeartRate: Double?
    /// `MaximumHeartRateBpm`.
    public var maximumHeartRate: Double?
    /// `Cadence` (bike cadence, rpm).
    public var cadence: Double?
    /// `Intensity` (`Active`, `Resting`).
    public var intensity: String?
    /// `TriggerMethod` (`Manual`, `Distance`, `Location`, `Time`, `HeartRate`).
    public var triggerMethod: String?
    /// The activity extension's `LX` values: `AvgSpeed` (m/s), `AvgRunCadence`, `MaxRunCadence`, `MaxBikeCadence`,
    /// `AvgWatts`, `MaxWatts`, `Steps`, by name.
    public var extensionValues: [String: Double] = [:]
    /// The lap's tracks, in file order, each its trackpoints in file order.
    public var tracks: [[TCXTrackpoint]] = []

    /// Creates an empty lap.
    public init() {}

    /// The `LX` extension values a lap keeps.
    static let extensionNames: Set<String> = [
        "AvgSpeed", "AvgRunCadence", "MaxRunCadence", "MaxBikeCadence", "AvgWatts", "MaxWatts", "Steps",
    ]

    /// The lap's totals as event metadata (`MetadataKey` names; TCX's own names for intensity, trigger and steps).
    public var metadata: [String: MetadataValue] {
        var out: [String: MetadataValue] = [:]
        let x = extensionValues
        let values: [(String, Double?)] = [
            (MetadataKey.totalTimerTime, totalTimeSeconds), (MetadataKey.totalDistance, distanceMeters),
            (MetadataKey.totalCalories, calories), (MetadataKey.maximumSpeed, maximumSpeed),
            (MetadataKey.averageSpeed, x["AvgSpeed"]), (MetadataKey.averageHeartRate, averageHeartRate),
            (MetadataKey.maximumHeartRate, maximumHeartRate),
            (MetadataKey.averageCadence, cadence ?? x["AvgRunCadence"]),
            (MetadataKey.maximumCadence, x["MaxBikeCadence"] ?? x["MaxRunCadence"]),
            (MetadataKey.averagePower, x["AvgWatts"]), (MetadataKey.maximumPower, x["MaxWatts"]),
            ("tcxSteps", x["Steps"]),
        ]
        for (key, value) in values { if let value, value.isFinite { out[key] = .double(value) } }
        if let v = intensity { out[MetadataKey.intensity] = .string(v) }
        if let v = triggerMethod { out[MetadataKey.lapTrigger] = .string(v) }
        return out
    }
}

/// One `Activity` (or an activity of a `MultiSportSession`).
@_spi(RouteKitInternals)
public struct TCXActivity: Sendable, Hashable {
    /// The `Sport` attribute as written (`Running`, `Biking`, `Other`, or what a producer wrote).
    public var sport: String?
    /// `Id` as written (a start time).
    public var idText: String?
    /// `Id` read as a time, when it is one.
    public var id: Timestamp?
    /// `Creator/Name` (the device).
    public var creatorName: String?
    /// `Notes`.
    public var notes: String?
    /// The laps, in file order.
    public var laps: [TCXLap] = []
    /// Which `MultiSportSession` of the file includes it (an index into `TCXDocument.multiSportSessions`), `nil` for
    /// an `Activity` of its own.
    public var multiSportSession: Int?

    /// Creates an empty activity.
    public init() {}

    /// Every trackpoint, lap by lap and track by track.
    public var trackpoints: some Sequence<TCXTrackpoint> { laps.lazy.flatMap { $0.tracks.joined() } }
}

/// One `MultiSportSession`: a triathlon's or a duathlon's activities (`FirstSport`, `NextSport`), which import as
/// one workout; each activity says which session includes it (`TCXActivity.multiSportSession`).
@_spi(RouteKitInternals)
public struct TCXMultiSportSession: Sendable, Hashable {
    /// `Id` as written (a start time).
    public var idText: String?
    /// `Id` read as a time, when it is one.
    public var id: Timestamp?

    /// Creates an empty session.
    public init() {}
}

/// One `CoursePoint` of a course: a named point along it.
@_spi(RouteKitInternals)
public struct TCXCoursePoint: Sendable, Hashable {
    /// `Name`.
    public var name: String?
    /// `Time`.
    public var time: Timestamp?
    /// `Position/LatitudeDegrees`.
    public var latitude: Double?
    /// `Position/LongitudeDegrees`.
    public var longitude: Double?
    /// `AltitudeMeters`.
    public var altitude: Double?
    /// `PointType` (`Generic`, `Summit`, `Left`…).
    public var pointType: String?
    /// `Notes`.
    public var notes: String?

    /// Creates an empty course point.
    public init() {}
}

/// One `Courses/Course`: a planned route (imported as a workout of its own, its trackpoints the route).
@_spi(RouteKitInternals)
public struct TCXCourse: Sendable, Hashable {
    /// `Name`.
    public var name: String?
    /// The trackpoints of its tracks, in file order.
    public var trackpoints: [TCXTrackpoint] = []
    /// Its course points.
    public var coursePoints: [TCXCoursePoint] = []

    /// Creates an empty course.
    public init() {}
}

/// A Training Center Database (TCX v2) file as RouteKit reads it: activities, courses, and what was tolerated.
/// Applications read it as GPX events (``TCXDocument/gpxEvents(_:)``); the parse tree (`activities`,
/// `multiSportSessions` and `courses`, with `TCXActivity`, `TCXMultiSportSession`, `TCXLap`, `TCXTrackpoint`,
/// `TCXCourse` and `TCXCoursePoint`) is `@_spi(RouteKitInternals)`, for the importer, the TCX fuzzer (FuzzTesting)
/// and the tests.
///
/// Elements are matched by namespace and local name, whatever their prefix: the TCX elements in
/// `http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2` (or in no namespace), `Speed`, `Watts` and
/// `RunCadence` in `http://www.garmin.com/xmlschemas/ActivityExtension/v2` or in no namespace. Elements of other
/// namespaces are skipped with everything inside them. External entities are never loaded.
public struct TCXDocument: Sendable, Hashable {
    /// The most elements open at once: 256 (a TCX nests eight). Deeper is `malformedXML`.
    package static let maxDepth = 256

    /// The longest text kept of one element: 64 KiB. No TCX value is near it; a longer run (megabytes of
    /// whitespace between two elements) is read past, not kept.
    package static let maxTextBytes = 64 << 10

    /// The TCX namespace.
    package static let namespace = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"
    /// The namespace of Garmin's activity extension (`TPX`, `LX`).
    package static let extensionNamespace = "http://www.garmin.com/xmlschemas/ActivityExtension/v2"

    /// The activities (a `MultiSportSession`'s included), in file order.
    @_spi(RouteKitInternals) public var activities: [TCXActivity] = []
    /// The `MultiSportSession`s, in file order.
    @_spi(RouteKitInternals) public var multiSportSessions: [TCXMultiSportSession] = []
    /// How many activities each workout of several (a `MultiSportSession`'s) has, in file order: what
    /// `routekit inspect` says of a multisport file.
    package var multisportActivityCounts: [Int] { workoutActivities.map(\.count).filter { $0 > 1 } }
    /// The activities by the workout they import as, in file order: an `Activity` of its own alone, the activities
    /// of one `MultiSportSession` together.
    package var workoutActivities: [[TCXActivity]] {
        var out: [[TCXActivity]] = []
        var previous: Int?
        for a in activities {
            if let k = a.multiSportSession, k == previous, !out.isEmpty {
                out[out.count - 1].append(a)
            } else {
                out.append([a])
            }
            previous = a.multiSportSession
        }
        return out
    }
    /// The courses, in file order.
    @_spi(RouteKitInternals) public var courses: [TCXCourse] = []
    /// The courses' `Name`s (`nil` for a course without one), in file order: what `routekit inspect` says of a
    /// file of courses.
    package var courseNames: [String?] { courses.map(\.name) }
    /// `Author/Name` (the application that wrote the file).
    public var authorName: String?
    /// Quirks that were tolerated (leading whitespace, a byte order mark, values that are not numbers…).
    public var warnings: [String] = []
    /// Trackpoints with a `Position` whose coordinates are not numbers: read as trackpoints without a position.
    package var unreadablePositions = 0
    /// Workout plans (`Workouts/Workout`), which RouteKit does not import.
    package var workoutPlans = 0

    /// Creates an empty document.
    package init() {}

    /// Parses a TCX file's bytes (decompressed).
    ///
    /// Spaces, tabs, line breaks or a UTF-8 byte order mark before `<?xml` (Strava writes spaces there, which
    /// makes the file invalid XML) are skipped with a warning. Elements nested more than `maxDepth` deep are
    /// `malformedXML`.
    /// - Throws: `RouteKitError.Code.malformedXML` with the line and column for XML that is not well-formed;
    ///   `RouteKitError.Code.invalidTCX` when the root element is not `TrainingCenterDatabase`, or when the XML
    ///   declaration names an encoding other than UTF-8, US-ASCII or ISO-8859-1. Messages never contain the file's
    ///   content.
    public static func parse(_ bytes: [UInt8]) throws(RouteKitError) -> TCXDocument {
        let source = MemoryByteSource(bytes)
        return try parse { (buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int in
            try source.read(into: buffer)
        }
    }

    /// Parses a TCX document read a buffer at a time from `read` (which returns 0 at the end): memory stays the
    /// same whatever the document's size, but for what the document holds (its trackpoints). Text runs longer than
    /// ``maxTextBytes`` (a value no TCX has, or whitespace) are not kept.
    /// - Throws: as ``parse(_:)``, and what `read` throws.
    package static func parse(
        reading read: @escaping (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
    ) throws(RouteKitError) -> TCXDocument {
        let stream = TCXInputStream(read)
        try stream.skipLeadingSpace()
        let (bom, skippedLines, skippedColumns, whitespace) =
            (stream.bom, stream.skippedLines, stream.skippedColumns, stream.skippedSpaces)
        var warnings: [String] = []
        if bom { warnings.append("the file starts with a UTF-8 byte order mark: skipped") }
        if whitespace > 0 {
            warnings.append(
                "\(whitespace) whitespace character(s) before the XML declaration (invalid XML, as Strava writes it): skipped"
            )
        }
        if let encoding = try stream.declaredEncoding(),
            !TCXInputStream.readableEncodings.contains(encoding.lowercased())
        {
            let shown = String(encoding.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 }.prefix(40))
            throw RouteKitError(
                .invalidTCX,
                "the XML declaration names the encoding '\(shown)'; a TCX file is read as UTF-8, US-ASCII or ISO-8859-1",
                line: stream.skippedLines + 1)
        }
        let handler = TCXParserDelegate()
        let parser = XMLParser(stream: stream)
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = handler
        let ok = parser.parse()
        if let failure = stream.failure { throw failure }
        if !ok || handler.failure != nil || handler.fatal != nil {
            if let failure = handler.failure { throw failure }
            var line = parser.lineNumber
            var column = parser.columnNumber
            var code = (parser.parserError as NSError?)?.code
            if let fatal = handler.fatal {
                (line, column) = (fatal.line, fatal.column)
                code = fatal.code
            }
            // Lines and columns of the file as it is, before what was skipped.
            if line == 1 { column += skippedColumns + (skippedLines == 0 && bom ? 3 : 0) }
            line += skippedLines
            throw RouteKitError(
                .malformedXML,
                "the file is not well-formed XML" + (code.map { " (XML parser error \($0))" } ?? ""),
                line: max(line, 1), column: max(column, 1))
        }
        guard handler.sawRoot else {
            throw RouteKitError(.invalidTCX, "the root element is not a TCX TrainingCenterDatabase")
        }
        var doc = handler.document
        if handler.xmlWarnings > 0 {
            warnings.append(
                "\(handler.xmlWarnings) XML warning(s) (a relative namespace URI, an unknown XML version…) were ignored"
            )
        }
        doc.warnings = warnings + doc.warnings
        if doc.unreadablePositions > 0 {
            doc.warnings.append(
                "\(doc.unreadablePositions) trackpoint(s) with a Position whose coordinates are not numbers: "
                    + "read without a position")
        }
        if handler.unreadableValues > 0 {
            doc.warnings.append(
                "\(handler.unreadableValues) value(s) that are not numbers or times (altitude, heart rate, time…) were left out"
            )
        }
        return doc
    }
}

/// The XMLParser delegate: a small state machine over the elements' local names.
final class TCXParserDelegate: NSObject, XMLParserDelegate {
    enum Space { case tcx, activityExtension, none, other }

    struct Element {
        let name: String
        let space: Space
    }

    var document = TCXDocument()
    var stack: [Element] = []
    var text = ""
    var sawRoot = false
    var failure: RouteKitError?
    /// The first error that is not a warning: where, and libxml2's code.
    var fatal: (line: Int, column: Int, code: Int)?
    /// libxml2 warnings (reported as errors by XMLParser on Linux, after which parsing goes on).
    var xmlWarnings = 0
    var unreadableValues = 0
    /// How deep inside an element of another namespace (everything in it is skipped).
    var foreignDepth = 0

    var activity: TCXActivity?
    var lap: TCXLap?
    var track: [TCXTrackpoint]?
    var point: TCXTrackpoint?
    var positionText: (String?, String?) = (nil, nil)
    var course: TCXCourse?
    var coursePoint: TCXCoursePoint?
    /// The `MultiSportSession` being read (an index into the document's), whose activities are its own.
    var multiSportSession: Int?

    static func space(_ uri: String?) -> Space {
        switch uri ?? "" {
        case TCXDocument.namespace: return .tcx
        case TCXDocument.extensionNamespace: return .activityExtension
        case "": return .none
        default: return .other
        }
    }

    /// The parent element's local name (of a TCX element).
    var parent: String? { stack.count >= 2 ? stack[stack.count - 2].name : nil }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        text = ""
        let space = Self.space(namespaceURI)
        guard stack.count < TCXDocument.maxDepth else {
            if failure == nil {
                failure = RouteKitError(
                    .malformedXML, "elements are nested more than \(TCXDocument.maxDepth) deep",
                    line: max(parser.lineNumber, 1), column: max(parser.columnNumber, 1))
            }
            parser.abortParsing()
            return
        }
        stack.append(Element(name: elementName, space: space))
        if foreignDepth > 0 || space == .other || space == .activityExtension {
            // Extension elements are read at their end; other namespaces are skipped whole.
            if space == .other || foreignDepth > 0 { foreignDepth += 1 }
            return
        }
        if stack.count == 1 {
            if elementName == "TrainingCenterDatabase" {
                sawRoot = true
            } else {
                failure = RouteKitError(.invalidTCX, "the root element is not a TCX TrainingCenterDatabase", line: 1)
                parser.abortParsing()
            }
            return
        }
        switch elementName {
        case "MultiSportSession" where activity == nil && course == nil:
            document.multiSportSessions.append(TCXMultiSportSession())
            multiSportSession = document.multiSportSessions.count - 1
        case "Activity" where course == nil:
            var a = TCXActivity()
            a.sport = attributeDict["Sport"]
            a.multiSportSession = multiSportSession
            activity = a
        case "Lap" where activity != nil:
            var l = TCXLap()
            l.startTime = time(attributeDict["StartTime"])
            lap = l
        case "Course" where activity == nil && parent == "Courses":
            course = TCXCourse()
        case "Track" where lap != nil || course != nil:
            track = []
        case "Trackpoint" where track != nil:
            point = TCXTrackpoint()
            positionText = (nil, nil)
        case "CoursePoint" where course != nil:
            coursePoint = TCXCoursePoint()
            positionText = (nil, nil)
        case "Workout" where parent == "Workouts":
            document.workoutPlans += 1
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if foreignDepth == 0 && text.utf8.count < TCXDocument.maxTextBytes { text += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if foreignDepth == 0 && text.utf8.count < TCXDocument.maxTextBytes {
            text += String(decoding: CDATABlock, as: UTF8.self)
        }
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        defer {
            // Never a trap: an end without its start (after an abort, or from a recovering parser) pops nothing.
            if !stack.isEmpty { stack.removeLast() }
            text = ""
        }
        let space = Self.space(namespaceURI)
        if foreignDepth > 0 {
            foreignDepth -= 1
            return
        }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if space == .activityExtension || (space == .none && ["Speed", "Watts", "RunCadence"].contains(elementName)) {
            if point == nil, lap != nil, TCXLap.extensionNames.contains(elementName), let v = number(value) {
                lap?.extensionValues[elementName] = v
                return
            }
            guard point != nil else { return }
            switch elementName {
            case "Speed": point?.speed = number(value)
            case "Watts": point?.power = number(value)
            case "RunCadence": point?.runCadence = number(value)
            default: break
            }
            return
        }
        let parent = self.parent
        if point != nil {
            switch elementName {
            case "Time": point?.time = time(value)
            case "LatitudeDegrees" where parent == "Position": positionText.0 = value
            case "LongitudeDegrees" where parent == "Position": positionText.1 = value
            case "AltitudeMeters": point?.altitude = number(value)
            case "DistanceMeters": point?.distance = number(value)
            case "Value" where parent == "HeartRateBpm": point?.heartRate = number(value)
            case "Cadence": point?.cadence = number(value)
            case "Position":
                let (lat, lon) = (positionText.0.flatMap(finite), positionText.1.flatMap(finite))
                if let lat, let lon {
                    point?.latitude = lat
                    point?.longitude = lon
                } else {
                    document.unreadablePositions += 1
                }
            case "Trackpoint":
                if let p = point { track?.append(p) }
                point = nil
            default: break
            }
            return
        }
        if coursePoint != nil {
            switch elementName {
            case "Name": coursePoint?.name = value
            case "Time": coursePoint?.time = time(value)
            case "LatitudeDegrees" where parent == "Position": coursePoint?.latitude = finite(value)
            case "LongitudeDegrees" where parent == "Position": coursePoint?.longitude = finite(value)
            case "AltitudeMeters": coursePoint?.altitude = number(value)
            case "PointType": coursePoint?.pointType = value
            case "Notes": coursePoint?.notes = value
            case "CoursePoint":
                if let c = coursePoint { course?.coursePoints.append(c) }
                coursePoint = nil
            default: break
            }
            return
        }
        switch elementName {
        case "Track" where track != nil:
            if let t = track {
                if lap != nil { lap?.tracks.append(t) } else { course?.trackpoints += t }
            }
            track = nil
        case "TotalTimeSeconds" where parent == "Lap" && lap != nil: lap?.totalTimeSeconds = number(value)
        case "DistanceMeters" where parent == "Lap" && lap != nil: lap?.distanceMeters = number(value)
        case "Calories" where parent == "Lap" && lap != nil: lap?.calories = number(value)
        case "MaximumSpeed" where parent == "Lap" && lap != nil: lap?.maximumSpeed = number(value)
        case "Cadence" where parent == "Lap" && lap != nil: lap?.cadence = number(value)
        case "Intensity" where parent == "Lap" && lap != nil: lap?.intensity = value
        case "TriggerMethod" where parent == "Lap" && lap != nil: lap?.triggerMethod = value
        case "Value" where parent == "AverageHeartRateBpm" && lap != nil && track == nil:
            lap?.averageHeartRate = number(value)
        case "Value" where parent == "MaximumHeartRateBpm" && lap != nil && track == nil:
            lap?.maximumHeartRate = number(value)
        case "Lap" where lap != nil:
            if let l = lap { activity?.laps.append(l) }
            lap = nil
        case "Id" where parent == "Activity" && activity != nil:
            activity?.idText = value
            activity?.id = Timestamp(iso8601: value)
        case "Name" where parent == "Creator" && activity != nil: activity?.creatorName = value
        case "Notes" where parent == "Activity" && activity != nil: activity?.notes = value
        case "Activity" where activity != nil:
            if let a = activity { document.activities.append(a) }
            activity = nil
        case "Id" where parent == "MultiSportSession" && activity == nil:
            if let k = multiSportSession, document.multiSportSessions.indices.contains(k) {
                document.multiSportSessions[k].idText = value
                document.multiSportSessions[k].id = Timestamp(iso8601: value)
            }
        case "MultiSportSession" where activity == nil:
            multiSportSession = nil
        case "Name" where parent == "Course" && course != nil: course?.name = value
        case "Course" where course != nil:
            if let c = course { document.courses.append(c) }
            course = nil
        case "Name" where parent == "Author" && stack.count == 3: document.authorName = value
        default: break
        }
    }

    /// libxml2's warning codes (`XML_WAR_*`): the document is still well-formed.
    static let warningCodes: Set<Int> = [27, 93, 97, 98, 99, 100, 102, 106, 107]

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        let code = (parseError as NSError).code
        if Self.warningCodes.contains(code) {
            xmlWarnings += 1
            return
        }
        // The first error is where the file went wrong; XMLParser on Linux may otherwise go on and report success.
        if fatal == nil {
            fatal = (parser.lineNumber, parser.columnNumber, code)
            parser.abortParsing()
        }
    }

    func finite(_ text: String) -> Double? {
        guard let d = Double(text), d.isFinite else { return nil }
        return d
    }

    func number(_ text: String) -> Double? {
        if text.isEmpty { return nil }
        guard let d = finite(text) else {
            unreadableValues += 1
            return nil
        }
        return d
    }

    func time(_ text: String?) -> Timestamp? {
        guard let text else { return nil }
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if t.isEmpty { return nil }
        guard let parsed = Timestamp(iso8601: t) else {
            unreadableValues += 1
            return nil
        }
        return parsed
    }
}

/// The bytes of a document handed to `XMLParser(stream:)` as it asks for them, after a byte order mark and the
/// whitespace some writers put before `<?xml` were skipped (and counted, for positions in errors). A failure of the
/// source ends the parse; ``failure`` says why.
final class TCXInputStream: InputStream {
    private let source: (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
    /// What the source failed with.
    private(set) var failure: RouteKitError?
    private(set) var bom = false
    private(set) var skippedLines = 0
    private(set) var skippedColumns = 0
    private(set) var skippedSpaces = 0
    /// Bytes read while skipping that are the document's.
    private var carry: [UInt8] = []
    private var carryOffset = 0

    init(_ source: @escaping (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int) {
        self.source = source
        super.init(data: Data())
    }

    /// Reads past a byte order mark and the whitespace before the document; what follows is kept for the parser.
    func skipLeadingSpace() throws(RouteKitError) {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { chunk.deallocate() }
        var head: [UInt8] = []
        var checkedBOM = false
        while true {
            let n = try source(chunk)
            if n == 0 {
                carry = checkedBOM ? [] : head
                return
            }
            var bytes = ArraySlice(Array(UnsafeRawBufferPointer(rebasing: chunk[0..<n])))
            if !checkedBOM {
                head += bytes
                guard head.count >= 3 else { continue }
                checkedBOM = true
                if head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF {
                    bom = true
                    bytes = head[3...]
                } else {
                    bytes = head[...]
                }
            }
            var i = bytes.startIndex
            while i < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) {
                if bytes[i] == 0x0A {
                    skippedLines += 1
                    skippedColumns = 0
                } else {
                    skippedColumns += 1
                }
                skippedSpaces += 1
                i += 1
            }
            if i < bytes.endIndex {
                carry = Array(bytes[i...])
                return
            }
        }
    }

    /// The encoding the document's XML declaration names (`encoding="…"`), `nil` without a declaration or an
    /// encoding in it. Reads ahead up to the declaration's end (at most 512 bytes); what it reads stays for the
    /// parser.
    func declaredEncoding() throws(RouteKitError) -> String? {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 1)
        defer { chunk.deallocate() }
        func declarationEnd() -> Int? {
            guard carry.count >= 2 else { return nil }
            for i in 0..<(min(carry.count, 512) - 1) where carry[i] == 0x3F && carry[i + 1] == 0x3E { return i }
            return nil
        }
        while carry.count < 512 && declarationEnd() == nil {
            let n = try source(chunk)
            if n == 0 { break }
            carry += UnsafeRawBufferPointer(rebasing: chunk[0..<n])
        }
        guard carry.starts(with: Array("<?xml".utf8)) else { return nil }
        let declaration = String(decoding: carry[..<(declarationEnd() ?? min(carry.count, 512))], as: UTF8.self)
        guard let match = declaration.firstMatch(of: #/encoding\s*=\s*["']([^"']*)["']/#) else { return nil }
        return String(match.output.1)
    }

    /// The encodings libxml2 reads itself, without iconv; an XML declaration naming another one is refused before
    /// the parser sees it (libxml2 read a file declaring UTF-7 past the end of a buffer: a crash the fuzzer found).
    static let readableEncodings: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1"]

    override func open() {}
    override func close() {}
    override var hasBytesAvailable: Bool { failure == nil }
    override var streamStatus: Stream.Status { failure == nil ? .open : .error }
    override var streamError: (any Error)? { failure }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard failure == nil, len > 0 else { return failure == nil ? 0 : -1 }
        if carryOffset < carry.count {
            let n = min(len, carry.count - carryOffset)
            carry.withUnsafeBufferPointer { src in
                if let from = src.baseAddress { buffer.update(from: from + carryOffset, count: n) }
            }
            carryOffset += n
            if carryOffset == carry.count {
                carry = []
                carryOffset = 0
            }
            return n
        }
        do {
            return try source(UnsafeMutableRawBufferPointer(start: buffer, count: len))
        } catch {
            failure = error
            return -1
        }
    }
}
