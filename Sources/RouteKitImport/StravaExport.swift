import CSV
import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest

/// What a Strava export's import goes through, in order: the index's rows, files no row names, planned routes.
enum StravaItem {
    case row(StravaActivity)
    case unnamed(String)
    case route(String)
}

/// One row of a Strava bulk export's `activities.csv`.
package struct StravaActivity: Sendable, Hashable {
    /// `Activity ID` (not the number in `Filename`).
    package var id: String
    /// `Activity Date`, as written (`Sep 12, 2018, 3:02:23 PM`, UTC).
    package var date: String
    /// `Activity Name`.
    package var name: String?
    /// `Activity Type` (`Run`, `Ride`, `Nordic Ski`…).
    package var type: String?
    /// `Activity Description`.
    package var description: String?
    /// Elapsed time in seconds (the precise second `Elapsed Time` column where there is one).
    package var elapsedSeconds: Double?
    /// Moving time in seconds.
    package var movingSeconds: Double?
    /// Distance in metres (the second `Distance` column; the first is in the account's display unit).
    package var distanceMeters: Double?
    /// `Commute`.
    package var commute: Bool?
    /// `Filename` (`activities/123.fit.gz`), `nil` for a manual activity.
    package var filename: String?

    /// The start as an instant (Strava writes UTC), `nil` when the date cannot be read.
    package var start: Timestamp? {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        for format in ["MMM d, yyyy, h:mm:ss a", "MMM d, yyyy h:mm:ss a", "yyyy-MM-dd HH:mm:ss"] {
            f.dateFormat = format
            if let d = f.date(from: date) { return Timestamp(d) }
        }
        return nil
    }

    /// The workout values the row gives (name, type, description, Strava's id), winning over the file's own.
    package var overrides: WorkoutOverrides {
        var m: [String: MetadataValue] = ["stravaActivityID": .string(id)]
        if let name, !name.isEmpty { m["name"] = .string(name) }
        if let description, !description.isEmpty { m["description"] = .string(description) }
        if let type, !type.isEmpty { m["stravaType"] = .string(type) }
        if let commute { m["commute"] = .bool(commute) }
        return WorkoutOverrides(activityType: type.map { ActivityType(guessingFrom: $0) }, metadata: m)
    }
}

/// Strava's `activities.csv`: read by position after matching the header row (names repeat: two `Distance` and
/// two `Elapsed Time` columns; headers follow the account's language), or by name in the pre-2019 layout
/// (`id,date,name,type,…,filename`).
package enum StravaIndex {
    /// The English header of the current layout, by position (the columns RouteKit reads).
    static let current: [Int: String] = [
        0: "Activity ID", 1: "Activity Date", 2: "Activity Name", 3: "Activity Type", 4: "Activity Description",
        5: "Elapsed Time", 6: "Distance", 9: "Commute", 12: "Filename", 15: "Elapsed Time", 16: "Moving Time",
        17: "Distance",
    ]

    /// The rows, with warnings for a person.
    /// - Throws: `RouteKitError.Code.invalidValue` when the file is not a Strava activity index.
    package static func parse(_ text: String, name: String) throws(RouteKitError) -> ([StravaActivity], [String]) {
        let reader: CSVReader
        do {
            reader = try CSVReader(string: text, hasHeaderRow: true)
        } catch {
            throw RouteKitError(.invalidValue, "activities.csv cannot be read as CSV: \(error)", file: name)
        }
        guard var header = reader.headerRow, !header.isEmpty else {
            throw RouteKitError(.invalidValue, "activities.csv has no header row", file: name)
        }
        if let first = header.first, first.hasPrefix("\u{FEFF}") { header[0] = String(first.dropFirst()) }
        var warnings: [String] = []
        let lower = header.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
        var rows: [StravaActivity] = []
        func number(_ s: String?) -> Double? {
            guard let s, !s.isEmpty else { return nil }
            return Double(s.replacingOccurrences(of: ",", with: ""))
        }
        func bool(_ s: String?) -> Bool? {
            switch s?.lowercased() {
            case "true"?, "1"?: true
            case "false"?, "0"?: false
            default: nil
            }
        }
        if lower.first == "id", let file = lower.firstIndex(of: "filename") {
            // The layout before mid-2019: by name, metres and seconds.
            func col(_ n: String) -> Int? { lower.firstIndex(of: n) }
            while let r = reader.next() {
                func at(_ i: Int?) -> String? { i.flatMap { $0 < r.count ? r[$0] : nil } }
                guard let id = at(0), !id.isEmpty else { continue }
                rows.append(
                    StravaActivity(
                        id: id, date: at(col("date")) ?? "", name: at(col("name")), type: at(col("type")),
                        description: at(col("description")), elapsedSeconds: number(at(col("elapsed_time"))),
                        movingSeconds: number(at(col("moving_time"))), distanceMeters: number(at(col("distance"))),
                        commute: bool(at(col("commute"))), filename: at(file).flatMap { $0.isEmpty ? nil : $0 }))
            }
            return (rows, warnings)
        }
        guard header.count >= 13 else {
            throw RouteKitError(
                .invalidValue, "activities.csv has \(header.count) columns; a Strava export has at least 13", file: name
            )
        }
        let english = current.allSatisfy { i, n in i >= header.count || header[i] == n }
        if !english {
            warnings.append(
                "activities.csv's header is not the English one RouteKit knows: its columns are read by position")
        }
        while let r = reader.next() {
            func at(_ i: Int) -> String? { i < r.count ? r[i] : nil }
            guard let id = at(0), !id.isEmpty else { continue }
            rows.append(
                StravaActivity(
                    id: id, date: at(1) ?? "", name: at(2), type: at(3), description: at(4),
                    elapsedSeconds: number(at(15)) ?? number(at(5)), movingSeconds: number(at(16)),
                    distanceMeters: number(at(17)), commute: bool(at(9)),
                    filename: at(12).flatMap { $0.isEmpty ? nil : $0 }))
        }
        return (rows, warnings)
    }
}

extension RouteImporter {
    /// Imports a Strava bulk export: every row of `activities.csv` (its file through `Filename`, named and typed
    /// from the row; a manual activity as a workout without a route), then `routes/` as planned routes. Files of
    /// `activities/` that no row names are imported as they are, with a warning.
    func importStrava(_ files: some ExportFiles, each: (ImportResult) -> Void) async {
        let indexName = files.label("activities.csv")
        let rows: [StravaActivity]
        do {
            let bytes = try files.contents(of: "activities.csv")
            let (parsed, warnings) = try StravaIndex.parse(String(decoding: bytes, as: UTF8.self), name: indexName)
            rows = parsed
            each(
                ImportResult(
                    file: indexName, status: .unchanged,
                    warnings: warnings + ["a Strava export: \(rows.count) activit\(rows.count == 1 ? "y" : "ies")"]))
        } catch {
            each(ImportResult(file: indexName, status: .failed, error: error))
            return
        }
        let named = Set(rows.compactMap(\.filename))
        let items =
            rows.map(StravaItem.row)
            + files.files(in: "activities").filter { !named.contains($0) && !Self.skippable($0) }.map(
                StravaItem.unnamed)
            + files.files(in: "routes").filter { $0.lowercased().hasSuffix(".gpx") }.map(StravaItem.route)
        let streamed = streamedEntryBytes
        await inOrder(items.count, each: each) { n in
            func read(_ path: String) throws(RouteKitError) -> [UInt8] { try files.contents(of: path) }
            switch items[n] {
            case .row(let row):
                guard let filename = row.filename else {
                    return .done([await importManual(row, label: "\(indexName)#\(row.id)")])
                }
                let label = files.label(filename)
                guard files.contains(filename) else {
                    let e = RouteKitError(.notFound, "activity \(row.id)'s file is not in the export", file: label)
                    return .done([ImportResult(file: label, status: .failed, error: e)])
                }
                if let work = files.streamedWork(filename, above: streamed, overrides: row.overrides, note: nil) {
                    return work
                }
                do throws(RouteKitError) {
                    return .entry(try read(filename), name: label, overrides: row.overrides, note: nil)
                } catch {
                    return .done([ImportResult(file: label, status: .failed, error: error)])
                }
            case .unnamed(let path):
                // No row names it: imported as it is (the result says so).
                let note = "activities.csv has no row for this file: imported without its name and type"
                if let work = files.streamedWork(path, above: streamed, overrides: nil, note: note) { return work }
                do throws(RouteKitError) {
                    return .entry(try read(path), name: files.label(path), overrides: nil, note: note)
                } catch {
                    return .done([ImportResult(file: files.label(path), status: .failed, error: error)])
                }
            case .route(let path):
                do throws(RouteKitError) {
                    return .plannedRoute(try read(path), name: files.label(path))
                } catch {
                    return .done([ImportResult(file: files.label(path), status: .failed, error: error)])
                }
            }
        }
    }

    /// A manual activity (no file): a workout without a route, identified by Strava's activity id.
    func importManual(_ row: StravaActivity, label: String) async -> ImportResult {
        let start = row.start
        var end: Timestamp?
        if let start, let e = row.elapsedSeconds, e.isFinite, e >= 0 {
            // An elapsed time of 1e300 gives no end rather than a trap.
            end = start.adding(seconds: e.rounded(.down)).map {
                Timestamp(Instant(seconds: $0.instant.seconds, nanoseconds: 0), utcOffsetSeconds: 0)
            }
        }
        var metadata = row.overrides.metadata
        metadata["stravaManual"] = .bool(true)
        if let d = row.distanceMeters { metadata["totalDistance"] = .double(d) }
        if let m = row.movingSeconds { metadata["movingTime"] = .double(m) }
        let workout = Workout(
            activityType: row.overrides.activityType ?? .other, start: start, end: end, source: source,
            sync: SyncIdentity(identifier: "strava-\(row.id)", version: 1), metadata: metadata)
        do {
            switch try await store.saveWorkout(workout) {
            case .inserted, .replaced:
                return ImportResult(
                    file: label, status: .imported,
                    tracks: [.init(workout: workout.id, route: nil, locations: 0, unchanged: false, resumedFrom: nil)],
                    warnings: ["a manual activity: a workout without a route"])
            case .stale(let current, _):
                return ImportResult(
                    file: label, status: .unchanged,
                    tracks: [.init(workout: current, route: nil, locations: 0, unchanged: true, resumedFrom: nil)])
            }
        } catch {
            return ImportResult(file: label, status: .failed, error: error)
        }
    }

    /// A planned route (`routes/*.gpx`, tracks without times): stored as GPX routes are, not as a workout's
    /// recording.
    func importPlannedRoute(_ raw: [UInt8], name: String) async -> ImportResult {
        await .collect(file: name) { result in
            let bytes = InputFile.isGzip(raw) ? try InputFile.gunzip(raw, name: name) : raw
            let reader = GPXReader(bytes: bytes, name: name)
            var attachments = GPXAttachments()
            var creator: String?
            while let event = try reader.next() {
                switch event {
                case .document(let info): creator = info.creator
                case .waypoint(let p):
                    attachments.add(waypoint: p)
                    result.waypoints += 1
                case .routeStart(let info), .trackStart(let info): attachments.startRoute(info)
                case .routePoints(let p), .trackPoints(let p): attachments.add(routePoints: p)
                case .routeEnd(let info), .trackEnd(let info): attachments.endRoute(info)
                case .warning(let w): result.warnings.append(w.description)
                default: break
                }
            }
            // Without the index's workout overrides: a planned route is none of the export's activities.
            try await ImportContext(store: store, source: source).store(
                attachments, creator: creator, into: &result, syncPrefix: "planned-",
                metadata: ["plannedRoute": .bool(true)])
        }
    }
}
