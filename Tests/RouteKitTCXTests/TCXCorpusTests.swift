import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
import RouteKitSQLite
@_spi(RouteKitInternals) import RouteKitTCX
import RouteKitTesting
import Testing

/// `../shared/format-corpus` beside the repository: real TCX files with a plain XML parse's counts
/// (`index.json`, `probe`).
enum TCXCorpus {
    struct Entry: Sendable {
        var file: String
        /// The plain XML parse succeeded (it fails on whitespace before `<?xml`).
        var ok: Bool
        var trackpoints: Int
        var withPosition: Int
        var heartRate: Int
        var laps: Int
        var tracks: Int
        var courses: Int
        var activities: Int
        /// `MultiSportSession`s.
        var multiSportSessions: Int
        var leadingWhitespace: Bool
        var bom: Bool
        var name: String { (file as NSString).lastPathComponent }
    }

    static let root: String? = SharedData.formatCorpus

    static var available: Bool { root != nil }

    static let entries: [Entry] = {
        SharedData.formatCorpusEntries(format: "tcx").compactMap { f in
            guard let name = f["file"] as? String else { return nil }
            let summary = f["summary"] as? [String: Any] ?? [:]
            let probe = f["probe"] as? [String: Any] ?? [:]
            func int(_ key: String) -> Int { probe[key] as? Int ?? 0 }
            return Entry(
                file: name, ok: summary["ok"] as? Bool ?? false, trackpoints: int("trackpoints"),
                withPosition: int("trackpoints_with_position"), heartRate: int("trackpoints_heart_rate"),
                laps: int("laps"), tracks: int("tracks"), courses: int("courses"),
                activities: summary["activities"] as? Int ?? 0, multiSportSessions: int("multisport_sessions"),
                leadingWhitespace: probe["leading_whitespace"] as? Bool ?? false, bom: probe["bom"] as? Bool ?? false)
        }
    }()
}

@Suite("TCX corpus against a plain XML parse", .enabled(if: TCXCorpus.available, "../shared/format-corpus is absent"))
struct TCXCorpusTests {
    @Test("the corpus is there and holds TCX files, each told TCX by its content")
    func corpusPresent() throws {
        #expect(TCXCorpus.entries.count >= 39)
        for e in TCXCorpus.entries {
            #expect(try InputFile.format(of: e.file) == .tcx, "\(e.name)")
        }
    }

    @Test("every file parses with the probe's trackpoints, positions, laps, tracks and courses")
    func parseMatchesProbe() throws {
        var checked = 0
        var trackpoints = 0
        for e in TCXCorpus.entries {
            let doc = try TCXDocument.parse(InputFile.contents(of: e.file).bytes)
            if !e.ok {
                // The probe's parser refuses whitespace before <?xml; RouteKit reads it, with a warning.
                #expect(doc.warnings.contains { $0.contains("before the XML declaration") }, "\(e.name)")
                #expect(!doc.activities.isEmpty, "\(e.name)")
                continue
            }
            let activityPoints = doc.activities.flatMap { Array($0.trackpoints) }
            let coursePoints = doc.courses.flatMap(\.trackpoints)
            let all = activityPoints + coursePoints
            #expect(all.count == e.trackpoints, "\(e.name): trackpoints")
            // The probe counts Position elements; one whose coordinates are not numbers is no position here.
            #expect(all.filter(\.hasPosition).count + doc.unreadablePositions == e.withPosition, "\(e.name)")
            #expect(all.filter { $0.heartRate != nil }.count == e.heartRate, "\(e.name): heart rate")
            #expect(doc.activities.reduce(0) { $0 + $1.laps.count } + (e.courses > 0 ? e.laps : 0) == e.laps, "\(e.name)")
            #expect(
                doc.activities.reduce(0) { $0 + $1.laps.reduce(0) { $0 + $1.tracks.count } }
                    + (e.courses > 0 ? e.tracks : 0) == e.tracks, "\(e.name): tracks")
            #expect(doc.courses.count == e.courses, "\(e.name): courses")
            #expect(doc.activities.count == e.activities, "\(e.name): activities")
            #expect(doc.multiSportSessions.count == e.multiSportSessions, "\(e.name): MultiSportSessions")
            trackpoints += all.count
            checked += 1
        }
        #expect(checked == TCXCorpus.entries.count - 1)
        #expect(trackpoints >= 20_000)
    }

    @Test("every file imports its positioned trackpoints and heart-rate samples; again, unchanged")
    func importMatchesProbe() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-tcx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
        let importer = TCXImporter(store: store)
        var imported = 0
        var locationsTotal = 0
        var multisportFiles = 0
        for e in TCXCorpus.entries {
            let result = await importer.importFile(e.file)
            #expect(result.error == nil, "\(e.name): \(String(describing: result.error))")
            if result.status == .unchanged && !result.tracks.isEmpty { continue }  // the same content under another name
            let doc = try TCXDocument.parse(InputFile.contents(of: e.file).bytes)
            let locations = result.tracks.reduce(0) { $0 + $1.locations }
            var heartRate = 0
            for t in result.tracks {
                for try await batch in store.samples(of: .heartRate, workout: t.workout) {
                    heartRate += batch.samples.count
                }
                if let route = t.route {
                    var stored = 0
                    for try await batch in store.locations(of: route) { stored += batch.locations.count }
                    #expect(stored == t.locations, "\(e.name): stored locations")
                }
                // A course's trackpoints are its route (they were <rte> attachments before): no planned routes.
                let attachments = try await GPXAttachments.read(workout: t.workout, from: store)
                #expect(attachments.routes.isEmpty, "\(e.name)")
            }
            let expectedPositions = e.ok ? e.withPosition - doc.unreadablePositions : locations
            #expect(locations == expectedPositions, "\(e.name): positioned trackpoints")
            // Heart rate of activities and courses (a course's trackpoints are series too now); a sample needs a time.
            let allHR = (doc.activities.flatMap { Array($0.trackpoints) } + doc.courses.flatMap(\.trackpoints))
                .filter { $0.heartRate != nil }
            let timedHR = allHR.filter { $0.time != nil }.count
            #expect(heartRate == timedHR, "\(e.name): heart-rate samples")
            if e.ok && timedHR == allHR.count {
                #expect(heartRate == e.heartRate, "\(e.name): heart-rate samples against the probe")
            }
            // A workout per Activity of its own, per MultiSportSession and per course; a MultiSportSession's workout
            // records its activities.
            let workouts = doc.workoutActivities
            #expect(result.tracks.count == workouts.count + doc.courses.count, "\(e.name)")
            let multisport = workouts.map { $0.count > 1 ? $0.count : 0 } + doc.courses.map { _ in 0 }
            #expect(result.tracks.map(\.activities) == multisport, "\(e.name): activities")
            for (t, expected) in zip(result.tracks, multisport) {
                let recorded = try await store.workout(id: t.workout)?.activities.count
                #expect(recorded == expected, "\(e.name): recorded activities")
            }
            if multisport.contains(where: { $0 > 1 }) { multisportFiles += 1 }
            let again = await importer.importFile(e.file)
            #expect(again.status == .unchanged, "\(e.name): re-import")
            locationsTotal += locations
            imported += 1
        }
        print("TCX corpus: \(imported) file(s) imported, \(locationsTotal) positioned trackpoints")
        #expect(imported >= 35)
        #expect(multisportFiles >= 2)
        // The probe's 23,804 positions of the files it parses, less 2 that are not numbers, plus the Strava file's.
        #expect(locationsTotal > 23_802)
    }
}
