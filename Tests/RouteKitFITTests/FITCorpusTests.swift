import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitGPX
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// `../shared/format-corpus` beside the repository: real FIT files with independent decoders' counts
/// (`index.json`: fitdecode 0.11.0 strict and lenient, Garmin's Python SDK).
enum FormatCorpus {
    struct Entry: Sendable {
        var file: String
        var format: String
        /// fitdecode's strict decode succeeded.
        var strictOK: Bool
        var records: Int
        var withPosition: Int
        var heartRate: Int
        var fitFiles: Int
        var sessions: Int
        /// `lap` messages.
        var laps: Int
        var fileType: String?
        /// Garmin's SDK read it without error.
        var garminOK: Bool
    }

    static let root: String? = SharedData.formatCorpus

    static var available: Bool { root != nil }

    static let entries: [Entry] = {
        SharedData.formatCorpusEntries(format: "fit").compactMap { f in
            guard let name = f["file"] as? String, let format = f["format"] as? String else { return nil }
            let summary = f["summary"] as? [String: Any] ?? [:]
            let probe = (f["probe"] as? [String: Any])?["fitdecode"] as? [String: Any] ?? [:]
            func int(_ key: String) -> Int { probe[key] as? Int ?? 0 }
            return Entry(
                file: name, format: format, strictOK: summary["ok"] as? Bool ?? false,
                records: int("records"), withPosition: int("records_with_position"),
                heartRate: int("records_heart_rate"), fitFiles: int("fit_files"), sessions: int("sessions"), laps: int("laps"),
                fileType: probe["file_type"] as? String, garminOK: summary["garmin_fit_sdk_ok"] as? Bool ?? false)
        }
    }()

    static var fit: [Entry] { entries.filter { $0.format == "fit" } }
}

@Suite("FIT corpus against fitdecode", .enabled(if: FormatCorpus.available, "../shared/format-corpus is absent"))
struct FITCorpusTests {
    @Test("the corpus is there and holds FIT files")
    func corpusPresent() {
        #expect(FormatCorpus.fit.count >= 60)
    }

    @Test("every file fitdecode decodes strictly gives the same records, positions, heart rates and chained files")
    func decodeMatchesFitdecode() throws {
        var checked = 0
        for e in FormatCorpus.fit where e.strictOK {
            let bytes = try InputFile.contents(of: e.file).bytes
            if bytes.isEmpty { continue }  // an empty file: fitdecode reads nothing, RouteKit refuses it
            let s = try FITFile.summary(bytes)
            let name = (e.file as NSString).lastPathComponent
            #expect(s.records == e.records, "\(name): records")
            #expect(s.recordsWithPosition == e.withPosition, "\(name): records with a position")
            #expect(s.recordsWithHeartRate == e.heartRate, "\(name): records with heart rate")
            #expect(s.files == max(e.fitFiles, 1), "\(name): chained files")
            #expect(s.sessions.count == e.sessions, "\(name): sessions")
            #expect(!s.recovered, "\(name): \(s.warnings)")
            checked += 1
        }
        #expect(checked >= 60)
    }

    @Test("files the decoders fail are recovered with a warning or refused naming a byte offset; never a crash")
    func damagedFiles() throws {
        var recovered = 0
        for e in FormatCorpus.fit where !e.strictOK {
            let bytes = try InputFile.contents(of: e.file).bytes
            let name = (e.file as NSString).lastPathComponent
            do {
                let s = try FITFile.summary(bytes)
                // fitdecode refuses some files that are fine (COROS's misaligned fields): Garmin's SDK says so.
                #expect(
                    !s.warnings.isEmpty || e.garminOK, "\(name): fitdecode and Garmin fail it, RouteKit reads it silently")
                #expect(s.records >= e.records, "\(name): fewer records than fitdecode got before failing")
                recovered += 1
            } catch {
                #expect(error.code == .invalidFIT, "\(name)")
                #expect(error.byteOffset != nil, "\(name)")
            }
        }
        #expect(recovered >= 5)
    }

    @Test("inspect's one pass gives what the summary and the GPX events give, for every file, damaged or not")
    func inspectInOnePass() throws {
        var checked = 0
        for e in FormatCorpus.fit {
            let bytes = try InputFile.contents(of: e.file).bytes
            let name = (e.file as NSString).lastPathComponent
            if let difference = inspectDisagreement(bytes) { Issue.record("\(name): \(difference)") }
            checked += 1
        }
        #expect(checked >= 60)
    }

    @Test("activity files import with fitdecode's positioned records, heart-rate samples, laps and sessions; again, unchanged")
    func importMatchesFitdecode() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-fit-\(UUID().uuidString)")
        let store = try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
        let importer = FITImporter(store: store)
        var imported = 0
        var untimedFiles: [String] = []
        var lapFiles = 0
        var multisportFiles = 0
        for e in FormatCorpus.fit where e.strictOK && e.fileType == "activity" {
            let name = (e.file as NSString).lastPathComponent
            let result = await importer.importFile(e.file)
            #expect(result.error == nil, "\(name): \(String(describing: result.error))")
            if result.status == .unchanged { continue }  // the same activity under another name
            #expect(result.status == .imported, "\(name)")
            let locations = result.tracks.reduce(0) { $0 + $1.locations }
            #expect(locations == e.withPosition, "\(name): locations")
            var heartRate = 0
            for t in result.tracks {
                for try await batch in store.samples(of: .heartRate, workout: t.workout) { heartRate += batch.samples.count }
                if let route = t.route {
                    var stored = 0
                    for try await batch in store.locations(of: route) { stored += batch.locations.count }
                    #expect(stored == t.locations, "\(name): stored locations")
                }
            }
            // Series samples need a time: a record with heart rate and no time (or a device-relative time the file
            // gives no clock for) cannot be one, and the import says so.
            var timed = 0
            let bytes = try InputFile.contents(of: e.file).bytes
            let summary = try FITFile.summary(bytes)
            var reader = FITRecordReader(bytes)
            while let batch = try reader.next() {
                timed += batch.filter { $0.heartRate != nil && summary.timestamp($0.timestamp) != nil }.count
            }
            #expect(heartRate == timed, "\(name): heart-rate samples")
            if timed != e.heartRate {
                untimedFiles.append(name)
                #expect(result.warnings.contains { $0.contains("without a position or a time") }, "\(name)")
            }
            // One workout whatever the sessions: a multisport file's sessions (fitdecode's count) are its activities,
            // a single session's workout is its own one activity.
            #expect(result.tracks.count == 1, "\(name): one workout")
            var recorded = 0
            var activities = 0
            for t in result.tracks {
                let workout = try await store.workout(id: t.workout)
                recorded += workout?.activities.count ?? 0
                activities += workout?.allActivities.count ?? 0
            }
            let multisport = e.sessions > 1 ? e.sessions : 0
            #expect(recorded == multisport, "\(name): an activity per session")
            #expect(activities == max(e.sessions, 1), "\(name): activities")
            #expect(result.tracks.first?.activities == multisport, "\(name): the activities the import reports")
            if multisport > 0 { multisportFiles += 1 }
            // Every lap message is a lap event of one of the file's workouts.
            var laps = 0
            for t in result.tracks {
                laps += try await store.workout(id: t.workout)?.events.filter { $0.kind == .lap }.count ?? 0
            }
            #expect(laps == e.laps, "\(name): lap events")
            if e.laps > 0 { lapFiles += 1 }
            let again = await importer.importFile(e.file)
            #expect(again.status == .unchanged, "\(name): re-import")
            imported += 1
        }
        #expect(imported >= 40)
        #expect(lapFiles >= 40)
        #expect(multisportFiles >= 5)
        #expect(untimedFiles.count <= 1, "\(untimedFiles)")
    }
}

@Suite("FIT import resumes", .enabled(if: FormatCorpus.available, "../shared/format-corpus is absent"))
struct FITResumeTests {
    @Test("an interrupted import of a long FIT file resumes after its acknowledged batches, nothing twice")
    func resume() async throws {
        let file = try #require(FormatCorpus.root) + "/muktihari__fit__testdata__big_activity.fit"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-fit-\(UUID().uuidString)")
        let store = try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
        // The 12th batch write fails: 11 batches (11,264 locations) are acknowledged.
        let first = await FITImporter(store: FaultInjectingStore(store, failingAppend: 12)).importFile(file)
        #expect(first.status == .failed)
        let pending = try await store.pendingBuilders()
        #expect(pending.count == 1)
        #expect(pending.first?.origin?.kind == FITImporter.originKind)
        #expect(pending.first?.progress.locationCount == 11 * 1024)
        let second = await FITImporter(store: store).importFile(file)
        #expect(second.status == .imported)
        #expect(second.tracks.first?.resumedFrom == 11 * 1024)
        #expect(second.tracks.first?.locations == 99_998)
        let route = try #require(second.tracks.first?.route)
        var stored = 0
        for try await batch in store.locations(of: route) { stored += batch.locations.count }
        #expect(stored == 99_998)
        #expect(try await store.pendingBuilders().isEmpty)
    }

    @Test("the same long FIT file imported four times at once: one workout and route, no import fails")
    func concurrent() async throws {
        // Each import sees the others' builder pending under the same head; taking it over fails while another
        // fills it, and the import starts again without resuming (it answered 503, ResumeMismatch, before).
        let file = try #require(FormatCorpus.root) + "/muktihari__fit__testdata__big_activity.fit"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-fit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("store.sqlite").path)
        let results = await withTaskGroup(of: ImportResult.self) { group in
            for _ in 0..<4 { group.addTask { await FITImporter(store: store).importFile(file) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        #expect(results.filter { $0.status == .imported }.count >= 1)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 1)
        let routes = try await store.routes(matching: RouteFilter())
        #expect(routes.count == 1)
        #expect(try await store.pendingBuilders().isEmpty)
    }
}
