import Foundation
public import RouteKit
public import RouteKitIngest

/// The files of an Apple Health export: `export.xml` read as a stream (twice), and the files it references
/// (`workout-routes/route_….gpx`) read whole, one at a time.
///
/// ``HealthExportFolder`` reads an unpacked `apple_health_export/` folder; an archive can conform too, handing out
/// a stream over its inflating `export.xml` entry and its route entries' bytes.
package protocol HealthExportFiles {
    /// How `export.xml` is named in results and errors.
    var xmlName: String { get }
    /// Its size in bytes, if known (for progress).
    var xmlSize: Int? { get }
    /// A new stream over `export.xml`, from its start.
    func openXML() throws(RouteKitError) -> any ByteSource
    /// A new stream over `export.xml` from byte `offset` (the second pass reads only the part with the records it
    /// needs). The default reads from the start and drops `offset` bytes.
    func openXML(at offset: Int) throws(RouteKitError) -> any ByteSource
    /// The bytes of a file of the export, by its path relative to the export's root (`workout-routes/x.gpx`).
    /// - Throws: `RouteKitError.Code.io` when it is missing or unreadable.
    func contents(of path: String) throws(RouteKitError) -> [UInt8]
    /// How a file of the export is named in results.
    func label(_ path: String) -> String
}

extension HealthExportFiles {
    package func openXML(at offset: Int) throws(RouteKitError) -> any ByteSource {
        let stream = try openXML()
        var left = offset
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { scratch.deallocate() }
        while left > 0 {
            let n = try stream.read(
                into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(left, scratch.count)]))
            if n == 0 { break }
            left -= n
        }
        return stream
    }
}

/// An unpacked export: a folder with `export.xml` (and `workout-routes/`), or a bare `export.xml` whose route files,
/// if any, are looked for beside it.
package struct HealthExportFolder: HealthExportFiles {
    /// The export's root folder.
    package let root: String
    /// The `export.xml` file.
    package let xmlPath: String

    /// The export in `folder` (`apple_health_export/`).
    package init(folder: String) {
        root = folder
        xmlPath = (folder as NSString).appendingPathComponent("export.xml")
    }

    /// The export whose `export.xml` is `path`.
    package init(xmlFile path: String) {
        xmlPath = path
        let dir = (path as NSString).deletingLastPathComponent
        root = dir.isEmpty ? "." : dir
    }

    package var xmlName: String { xmlPath }

    package var xmlSize: Int? {
        (try? FileManager.default.attributesOfItem(atPath: xmlPath)[.size] as? Int) ?? nil
    }

    package func openXML() throws(RouteKitError) -> any ByteSource { try FileByteSource(path: xmlPath) }

    package func openXML(at offset: Int) throws(RouteKitError) -> any ByteSource {
        try FileByteSource(path: xmlPath, offset: offset)
    }

    package func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: label(path)) else {
            throw RouteKitError(.io, "the file is missing from the export or cannot be read", file: label(path))
        }
        return Array(data)
    }

    package func label(_ path: String) -> String { (root as NSString).appendingPathComponent(path) }
}

/// What importing an Apple Health export did, in numbers.
public struct HealthImportSummary: Sendable, Hashable {
    /// `Workout` elements read.
    public var workouts = 0
    /// Workouts stored now (the others were already stored).
    public var newWorkouts = 0
    /// Routes of the workouts (GPX files and inline locations), stored now or before.
    public var routes = 0
    /// Routes stored now.
    public var newRoutes = 0
    /// Locations of those routes.
    public var locations = 0
    /// Heart rate, cadence and power records that became series samples of a workout.
    public var seriesSamples = 0
    /// Series records of a workout's source and time in a unit RouteKit does not convert (not stored).
    public var seriesInOtherUnits = 0
    /// Effort score records related to a workout (stored now or before).
    public var effortScores = 0
    /// Effort scores related now.
    public var newEffortScores = 0
    /// Effort score records that matched no workout.
    public var unmatchedEffortScores = 0
    /// Top-level `Record` elements.
    public var records = 0
    /// Top-level records that became neither series samples nor effort scores.
    public var recordsNotImported = 0
    /// Top-level records by type.
    public var recordTypes: [String: Int] = [:]
    /// Other top-level elements by name (`ActivitySummary`, `Correlation`…): not imported.
    public var otherElements: [String: Int] = [:]
    /// Why the export could not be read, if it could not.
    public var error: RouteKitError?

    /// An empty summary.
    public init() {}
}

/// Imports Apple Health exports: `export.xml` with its `workout-routes/` GPX files.
///
/// - **Reading:** `export.xml` goes through `HealthXMLScanner` twice, a chunk at a time: first for the workouts
///   (with everything inside them), effort scores and counts; then, when there are workouts and series records,
///   for the heart rate, cycling cadence and cycling or running power records of each workout's source within its
///   time. Memory holds the workouts, not the records.
/// - **Workouts:** `workoutActivityType` mapped (`HKWorkoutActivityTypeRunning` → `running`…, unknown types keep
///   their name: `traditionalStrengthTraining`), start and end with the offsets written, events (pause, resume,
///   motion pauses; segments and laps as segments), and in the metadata: source, device fields, duration, legacy
///   totals, every `MetadataEntry` (numbers as numbers, values with units as written), `WorkoutStatistics`
///   (`healthStatistics`, JSON) and iOS 16 `WorkoutActivity` blocks (`healthActivities`, JSON). The workout's
///   sync identifier is `health-` and a hash of its activity, source, times and duration.
/// - **Routes:** each `WorkoutRoute` through its `FileReference` (absolute `/workout-routes/…` or relative; never
///   outside the export), read by the importer's `RouteFileReader` (RouteKitGPX's `RouteFileReader.gpx`), or its
///   inline `Location` elements (before iOS 13). The route
///   keeps HealthKit's `HKMetadataKeySyncIdentifier` and `HKMetadataKeySyncVersion` when the export has them,
///   else a content-derived identifier (`health-`).
/// - **Series:** heart rate (`count/min`), cycling cadence (`count/min`), cycling and running power (`W`) in
///   other units are counted, not converted.
/// - **Effort scores** (`…WorkoutEffortScore`, manual, over `…EstimatedWorkoutEffortScore`), nested in a workout or
///   top-level, matched by time overlap (the same source preferred), are related with
///   `RouteStore.relateEffort(_:)`.
/// - **Not imported:** other records (counted by type in ``HealthImportSummary``), `Me`, `ActivitySummary`,
///   `Correlation`, clinical records, audiograms, prescriptions, ECGs.
/// - **Again:** importing the same export again changes nothing; a newer export adds only what is new.
public final class HealthImporter {
    /// The origin kind of the importer's builders.
    package static let originKind = "health-import"

    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source
    /// Bytes of `export.xml` read at a time.
    package var chunkSize = 1 << 20
    /// Reads the route files the export references (`workout-routes/*.gpx`).
    package let routeFiles: RouteFileReader

    /// Creates an importer that reads the export's route files with `routeFiles` (`.gpx`, from RouteKitGPX: the
    /// files are GPX).
    public init(store: any RouteStore, source: Source = .defaultImport, routeFiles: RouteFileReader) {
        self.store = store
        self.source = source
        self.routeFiles = routeFiles
    }

    /// Whether `path` is an export: a folder with an `export.xml` whose root is `HealthData`, or such a file.
    package static func isExport(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        let xml = isDirectory.boolValue ? (path as NSString).appendingPathComponent("export.xml") : path
        return rootElement(of: xml) == "HealthData"
    }

    /// The name of the first element of the XML file at `path` (past its DTD), `nil` if it has none or is not XML.
    package static func rootElement(of path: String) -> String? {
        guard let stream = try? FileByteSource(path: path) else { return nil }
        return rootElement(of: stream, name: path)
    }

    /// The name of the first element read from `stream` (past its DTD), `nil` if it has none or is not XML.
    package static func rootElement(of stream: any ByteSource, name: String) -> String? {
        let scanner = HealthXMLScanner(stream: stream, fileName: name, chunkSize: 64 << 10, maxMarkup: 1 << 20)
        guard (try? scanner.next()) == .start else { return nil }
        return scanner.name
    }

    /// Imports the export at `path`: a folder (`apple_health_export/`) or its `export.xml`.
    public func importPath(
        _ path: String, progress: ((Double) -> Void)? = nil, each: (ImportResult) -> Void
    ) async -> HealthImportSummary {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        let files = isDirectory.boolValue ? HealthExportFolder(folder: path) : HealthExportFolder(xmlFile: path)
        return await importExport(files, progress: progress, each: each)
    }

    /// Imports an export: one result per workout (named by its route file, or `export.xml#workout-N`), then one
    /// for `export.xml` itself with what was not imported. Never throws: failures are in the results.
    /// - Parameters:
    ///   - files: the export's `export.xml` and route files.
    ///   - progress: the fraction of the work done (both passes over `export.xml`), now and then.
    ///   - each: called with each result as soon as it is known.
    package func importExport(
        _ files: any HealthExportFiles, progress: ((Double) -> Void)? = nil, each: (ImportResult) -> Void
    ) async -> HealthImportSummary {
        var summary = HealthImportSummary()
        let size = Double(max(files.xmlSize ?? 1, 1))
        let first: FirstPass
        var matched = (matched: 0, otherUnit: 0)
        do {
            let scanner = HealthXMLScanner(stream: try files.openXML(), fileName: files.xmlName, chunkSize: chunkSize)
            first = try HealthExportReader.firstPass(scanner) { progress?(min(1, Double($0) / size) * 0.5) }
            if !first.workouts.isEmpty, let range = first.seriesRange {
                // Only the stretch from the first series record to the end of the last one is read again.
                let again = HealthXMLScanner(
                    stream: try files.openXML(at: range.lowerBound), fileName: files.xmlName, chunkSize: chunkSize,
                    startOffset: range.lowerBound)
                matched = try HealthExportReader.secondPass(again, until: range.upperBound, workouts: first.workouts) {
                    progress?(0.5 + min(1, Double($0) / size) * 0.5)
                }
            }
            progress?(1)
        } catch {
            summary.error = error.file == nil ? error.inFile(files.xmlName) : error
            each(ImportResult(file: files.xmlName, status: .failed, error: summary.error))
            return summary
        }
        summary.workouts = first.workouts.count
        summary.records = first.recordTypes.values.reduce(0, +)
        summary.recordTypes = first.recordTypes
        summary.otherElements = first.otherElements
        summary.seriesSamples = matched.matched
        summary.seriesInOtherUnits = matched.otherUnit
        summary.unmatchedEffortScores = Self.matchEfforts(first.efforts, to: first.workouts)
        summary.recordsNotImported =
            summary.records - summary.seriesSamples - (first.efforts.count - summary.unmatchedEffortScores)
        for w in first.workouts {
            each(await importWorkout(w, files: files, summary: &summary))
        }
        each(exportResult(first, summary: summary, files: files))
        return summary
    }

    /// Relates top-level effort scores to the workouts they overlap; returns how many matched none.
    ///
    /// Each score goes to the overlapping workout of its own source with the longest overlap (else the one of any
    /// source with the longest overlap; the first in the file on a tie). Workouts are sorted by start with the latest
    /// end so far, so each score looks only at workouts that can still overlap it, the latest-starting first, and at
    /// most ``maxEffortCandidates`` of them (a scan of every workout per score was O(scores × workouts)).
    static func matchEfforts(_ efforts: [EffortRecord], to workouts: [HealthWorkout]) -> Int {
        struct Timed {
            var start: Instant
            var end: Instant
            var index: Int
            var workout: HealthWorkout
        }
        let timed = workouts.enumerated().compactMap { (i, w) -> Timed? in
            guard let ws = w.start?.instant, let we = w.end?.instant else { return nil }
            return Timed(start: ws, end: we, index: i, workout: w)
        }.sorted { ($0.start, $0.index) < ($1.start, $1.index) }
        var latestEnd: [Instant] = []
        latestEnd.reserveCapacity(timed.count)
        for t in timed { latestEnd.append(max(latestEnd.last ?? t.end, t.end)) }
        var unmatched = 0
        for e in efforts {
            guard let es = e.start?.instant else {
                unmatched += 1
                continue
            }
            let ee = e.end?.instant ?? es
            // The workouts that start at or before the score ends: a prefix of `timed`.
            var best: Timed?
            var bestScore = -Double.infinity
            var i = timed.partitioningIndex { $0.start > ee } - 1
            var looked = 0
            while i >= 0 && latestEnd[i] >= es && looked < maxEffortCandidates {
                let t = timed[i]
                i -= 1
                looked += 1
                guard t.end >= es else { continue }
                let overlap = max(t.start, es).seconds(to: min(t.end, ee))
                let score = (t.workout.sourceName == e.sourceName ? 1e12 : 0) + overlap
                if score > bestScore || (score == bestScore && t.index < (best?.index ?? .max)) {
                    best = t
                    bestScore = score
                }
            }
            if let best { best.workout.efforts.append(e) } else { unmatched += 1 }
        }
        return unmatched
    }

    /// The most workouts one effort score looks at (dozens of workouts around one score is not a real export).
    static let maxEffortCandidates = 64

    /// The result for `export.xml` itself: what it held that was not imported.
    private func exportResult(_ first: FirstPass, summary: HealthImportSummary, files: any HealthExportFiles)
        -> ImportResult
    {
        var warnings: [String] = []
        let topLevelEfforts = first.efforts.count - summary.unmatchedEffortScores
        let notImported = summary.recordsNotImported
        if summary.records > 0 {
            let top = first.recordTypes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5)
            warnings.append(
                "\(summary.records) record(s): \(summary.seriesSamples) became series samples of workouts, "
                    + (topLevelEfforts > 0 ? "\(topLevelEfforts) effort scores of workouts, " : "")
                    + "\(notImported) not imported (most: "
                    + top.map { "\($0.key.replacingOccurrences(of: "HKQuantityTypeIdentifier", with: "")) \($0.value)" }
                    .joined(separator: ", ") + ")")
        }
        if summary.seriesInOtherUnits > 0 {
            warnings.append("\(summary.seriesInOtherUnits) series record(s) in units RouteKit does not convert")
        }
        if summary.unmatchedEffortScores > 0 {
            warnings.append("\(summary.unmatchedEffortScores) effort score(s) overlap no workout: not imported")
        }
        if !first.otherElements.isEmpty {
            warnings.append(
                "not imported: "
                    + first.otherElements.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
                        separator: ", "))
        }
        if first.namesWithSpaces > 0 {
            warnings.append("\(first.namesWithSpaces) attribute name(s) with spaces (old exports) read as one name")
        }
        if let root = first.rootName, root != "HealthData" {
            warnings.append("the root element is <\(root)>, not <HealthData>: read as a fragment of an export")
        }
        return ImportResult(file: files.xmlName, status: .unchanged, warnings: warnings)
    }

    /// `/workout-routes/x.gpx` or `workout-routes/x.gpx` → `workout-routes/x.gpx`; `nil` for a path that leaves the
    /// export.
    static func exportPath(_ reference: String) -> String? {
        let parts = reference.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty, !parts.contains(where: { $0 == ".." }) else { return nil }
        return parts.filter { $0 != "." }.joined(separator: "/")
    }

    private func importWorkout(_ w: HealthWorkout, files: any HealthExportFiles, summary: inout HealthImportSummary)
        async -> ImportResult
    {
        let routePaths = w.routes.map { $0.path.flatMap(Self.exportPath) }
        let label = routePaths.compactMap { $0 }.first.map(files.label) ?? "\(files.xmlName)#workout-\(w.number)"
        var result = ImportResult(file: label, status: .imported)
        var metadata = w.metadata
        if !w.statistics.isEmpty { metadata["healthStatistics"] = .string(HealthNames.json(w.statistics)) }
        let source = self.source
        let sync = SyncIdentity(identifier: w.syncIdentifier, version: 1)
        let activityType = HealthNames.activityType(w.activityType)
        let activities = HealthNames.activities(w.activities, type: activityType)
        // A new uuid each time: a workout with several routes is saved once, and found by its sync identity after.
        let makeWorkout: (SyncIdentity) -> Workout = { _ in
            Workout(
                activityType: activityType, start: w.start, end: w.end, source: source, sync: sync, events: w.events,
                metadata: metadata, activities: activities)
        }
        if !w.otherChildren.isEmpty {
            result.warnings.append(
                "not imported from the workout: "
                    + w.otherChildren.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            )
        }
        let context = ImportContext(store: store, source: source)
        let routes: [HealthRoute?] = w.routes.isEmpty ? [nil] : w.routes
        let samples = w.samples.sorted { $0.1.timestamp.instant < $1.1.timestamp.instant }
        do {
            let isNew = try await store.workouts(
                matching: WorkoutFilter(source: source, syncIdentifier: w.syncIdentifier)
            ).isEmpty
            for (n, route) in routes.enumerated() {
                let track = TrackImport(
                    context: context, label: label + (routes.count > 1 ? "#route\(n + 1)" : ""), info: GPXPathInfo(),
                    creator: nil, allowResume: true, originKind: Self.originKind, syncPrefix: "health-",
                    makeWorkout: makeWorkout)
                track.combineIdentity([
                    w.start.map { Double($0.instant.seconds) }, w.end.map { Double($0.instant.seconds) },
                ])
                var batches: [[GPXPoint]] = []
                if let route {
                    if let id = route.syncIdentifier {
                        track.syncOverride = SyncIdentity(identifier: id, version: route.syncVersion ?? 1)
                    }
                    track.routeMetadata = route.metadata
                    do {
                        batches = try readRoute(route, path: routePaths[n], files: files, warnings: &result.warnings)
                    } catch {
                        // The workout is stored without this route; the file's error is reported.
                        result.error = error.file == nil ? error.inFile(label) : error
                        track.syncOverride = nil
                        track.routeMetadata = [:]
                        batches = []
                    }
                }
                for b in batches { try await track.add(b) }
                if n == 0 {
                    for (type, sample) in samples {
                        var values = GPXPointValues()
                        switch type {
                        case .heartRate:
                            values = GPXPointValues(heartRate: sample.value, cadence: nil, temperature: nil, power: nil)
                        case .cadence:
                            values = GPXPointValues(heartRate: nil, cadence: sample.value, temperature: nil, power: nil)
                        default:
                            values = GPXPointValues(heartRate: nil, cadence: nil, temperature: nil, power: sample.value)
                        }
                        track.addSeriesOnly(sample.timestamp, values)
                    }
                }
                let done = try await track.finish(info: GPXPathInfo())
                result.tracks.append(done.track)
                result.warnings += done.warnings
                if n == 0 && isNew { summary.newWorkouts += 1 }
                if done.track.route != nil {
                    summary.routes += 1
                    summary.locations += done.track.locations
                    if !done.track.unchanged { summary.newRoutes += 1 }
                }
            }
            if let id = result.tracks.first?.workout {
                try await relateEfforts(w.efforts, to: id, summary: &summary)
            }
        } catch {
            let e = error as? RouteKitError ?? RouteKitError(.storage, "\(error)")
            result.error = e.file == nil ? e.inFile(label) : e
            result.status = result.tracks.isEmpty ? .failed : .partial
            return result
        }
        if result.error != nil {
            result.status = .partial
        } else if result.tracks.allSatisfy(\.unchanged) {
            result.status = .unchanged
        }
        return result
    }

    /// A route's points in batches: its GPX file read whole (by `routeFiles`), or its inline locations.
    private func readRoute(
        _ route: HealthRoute, path: String?, files: any HealthExportFiles, warnings: inout [String]
    ) throws(RouteKitError) -> [[GPXPoint]] {
        if route.path == nil {
            let points = route.locations.map { GPXPoint(location: $0) }
            return stride(from: 0, to: points.count, by: RouteBuilder.chunkSize).map {
                Array(points[$0..<min($0 + RouteBuilder.chunkSize, points.count)])
            }
        }
        guard let path else {
            throw RouteKitError(.invalidValue, "a FileReference points outside the export: the route was not read")
        }
        let bytes = try files.contents(of: path)
        var batches: [[GPXPoint]] = []
        var waypoints = 0
        try routeFiles.events(of: bytes, name: files.label(path)) { event in
            switch event {
            case .trackPoints(let p): batches.append(p)
            case .waypoint, .routePoints: waypoints += 1
            case .warning(let w): warnings.append(w.description)
            default: break
            }
        }
        if waypoints > 0 { warnings.append("\(waypoints) waypoint or route point(s) of the route file not stored") }
        return batches
    }

    private func relateEfforts(_ efforts: [EffortRecord], to workout: UUID, summary: inout HealthImportSummary)
        async throws
    {
        guard !efforts.isEmpty else { return }
        var existing = try await store.efforts(ofWorkout: workout)
        for e in efforts {
            guard let v = e.value, v.isFinite, (1...10).contains(v) else { continue }
            summary.effortScores += 1
            let created = (e.created ?? e.end ?? e.start)?.date ?? Date(timeIntervalSince1970: 0)
            let known = existing.contains {
                $0.source == source && $0.isManual == e.manual && $0.score == v
                    && abs($0.created.timeIntervalSince(created)) < 1
            }
            if known { continue }
            let score = try EffortScore(
                workoutID: workout, source: source, score: v, isManual: e.manual, created: created)
            try await store.relateEffort(score)
            existing.append(score)
            summary.newEffortScores += 1
        }
    }
}
