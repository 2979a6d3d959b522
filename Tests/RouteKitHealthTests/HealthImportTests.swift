import Foundation
import RouteKit
import RouteKitGPX
import RouteKitHealth
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// The Apple Health fragments of `../shared/format-corpus` and the export generator of `Benchmarks/peers`.
enum HealthFixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let corpus: String? = {
        let path = repository.deletingLastPathComponent().appendingPathComponent("shared/format-corpus").path
        return FileManager.default.fileExists(atPath: path + "/index.json") ? path : nil
    }()

    static let dogsheepZipXML = "dogsheep__healthkit-to-sqlite__tests__zip_contents__apple_health_export__export.xml"
    static let dogsheepRoute =
        "dogsheep__healthkit-to-sqlite__tests__zip_contents__apple_health_export__workout-routes__route_2019-06-11_3.00pm.gpx"
    static let dogsheepInline = "dogsheep__healthkit-to-sqlite__tests__export.xml"
    static let nicolas = "NicolasReyrolle__apple-health-analyzer__tests__fixtures__exports__"

    static let python: URL? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(dir)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    static func temporaryFolder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-health-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// An export folder made of corpus files: `files` maps a path in the export to a corpus file name.
    static func export(_ files: [String: String]) throws -> URL {
        let dir = try temporaryFolder().appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
        for (path, name) in files {
            try FileManager.default.copyItem(
                atPath: (corpus ?? "") + "/" + name, toPath: dir.appendingPathComponent(path).path)
        }
        return dir
    }

    /// Runs the generator into a new folder; returns the export folder and the counts it printed.
    static func generate(_ arguments: [String]) throws -> (URL, [String: Any]) {
        let dir = try temporaryFolder()
        guard let python else { throw CocoaError(.fileNoSuchFile) }
        let script = repository.appendingPathComponent("Benchmarks/peers/make-health-export.py").path
        let r = try runChildProcess(python, [script, dir.path] + arguments)
        #expect(r.status == 0, "\(r.errorOutput)")
        let counts = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any] ?? [:]
        return (dir.appendingPathComponent("apple_health_export"), counts)
    }

    static func store(in dir: URL) throws -> SQLiteStore {
        try SQLiteStore(path: dir.deletingLastPathComponent().appendingPathComponent("store.sqlite").path)
    }

    static func run(_ importer: HealthImporter, _ path: String) async -> (HealthImportSummary, [ImportResult]) {
        var results: [ImportResult] = []
        let summary = await importer.importPath(path) { results.append($0) }
        return (summary, results)
    }

    static func count(_ needle: String, in file: String) throws -> Int {
        try String(contentsOfFile: file, encoding: .utf8).components(separatedBy: needle).count - 1
    }
}

@Suite("Apple Health corpus fragments", .enabled(if: HealthFixtures.corpus != nil, "../shared/format-corpus is absent"))
struct HealthCorpusTests {
    @Test("dogsheep's export folder: the workout with its -0700 offset, its route followed through FileReference")
    func dogsheepFolder() async throws {
        let dir = try HealthFixtures.export([
            "export.xml": HealthFixtures.dogsheepZipXML,
            "workout-routes/route_2019-06-11_3.00pm.gpx": HealthFixtures.dogsheepRoute,
        ])
        #expect(HealthImporter.isExport(dir.path))
        let store = try HealthFixtures.store(in: dir)
        let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.error == nil)
        #expect(summary.workouts == 1 && summary.routes == 1 && summary.locations == 3)
        #expect(summary.records == 2 && summary.recordsNotImported == 2)
        #expect(summary.otherElements == ["ActivitySummary": 2, "Me": 1])
        #expect(results.count == 2)
        #expect(results[0].file.hasSuffix("workout-routes/route_2019-06-11_3.00pm.gpx"))
        #expect(results[0].status == .imported)
        let workout = try #require(try await store.workout(id: results[0].tracks[0].workout))
        #expect(workout.activityType == .running)
        #expect(workout.start?.utcOffsetSeconds == Int32(-25_200))
        #expect(workout.start == HealthDate.parse("2016-11-14 07:25:41 -0700"))
        #expect(workout.metadata["HKWeatherTemperature"] == .string("56 degF"))
        #expect(workout.metadata["HKTimeZone"] == .string("America/Los_Angeles"))
        #expect(workout.metadata["healthTotalDistance"] == .string("0.4971749504535062"))
        // Apple writes a no-break space in its device names.
        #expect(workout.metadata["healthSourceName"] == .string("Apple\u{A0}Watch"))
        #expect(workout.sync?.identifier.hasPrefix("health-") == true)
        let route = try #require(try await store.routes(matching: RouteFilter(workout: workout.id)).first)
        #expect(route.locationCount == 3)
        #expect(route.sync.identifier.hasPrefix("health-"))
        // The route element's own -0800 dates are kept as written.
        #expect(route.metadata["healthRouteStartDate"] == .string("2016-11-14 06:25:44 -0800"))

        // Again: nothing changes.
        let (again, results2) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(again.newWorkouts == 0 && again.newRoutes == 0)
        #expect(results2.allSatisfy { $0.status == .unchanged })
    }

    @Test("dogsheep's old export: the inline WorkoutRoute/Location elements become the route")
    func inlineLocations() async throws {
        let dir = try HealthFixtures.export(["export.xml": HealthFixtures.dogsheepInline])
        let store = try HealthFixtures.store(in: dir)
        let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path + "/export.xml")
        #expect(summary.workouts == 1 && summary.routes == 1 && summary.locations == 2)
        #expect(results.first?.file.hasSuffix("export.xml#workout-1") == true)
        let route = try #require(results.first?.tracks.first?.route)
        var altitudes: [Double] = []
        for try await batch in store.locations(of: route) { altitudes += batch.locations.compactMap(\.altitude) }
        #expect(altitudes == [21.2694, 21.2677])
    }

    @Test("an iOS 26 running fragment: HealthKit's route sync identity, 15 segments, statistics and activity kept")
    func running() async throws {
        let gpx = HealthFixtures.nicolas + "workout-routes__route_2025-09-16_6.15pm.gpx"
        let dir = try HealthFixtures.export([
            "export.xml": HealthFixtures.nicolas + "workout_running.xml",
            "workout-routes/route_2025-09-16_6.15pm.gpx": gpx,
        ])
        let points = try HealthFixtures.count("<trkpt", in: dir.path + "/workout-routes/route_2025-09-16_6.15pm.gpx")
        let store = try HealthFixtures.store(in: dir)
        let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path + "/export.xml")
        #expect(summary.error == nil)
        #expect(summary.workouts == 1 && summary.locations == points && points > 3000)
        #expect(results.last?.warnings.contains { $0.contains("fragment") } == true)
        let route = try #require(
            try await store.routes(matching: RouteFilter(syncIdentifier: "780F3459-98BD-4072-8B66-966DED96E58C")).first)
        #expect(route.sync.version == 2)
        let workout = try #require(try await store.workout(id: route.workoutID))
        #expect(workout.events.filter { $0.kind == .segment }.count == 15)
        #expect(workout.events.first?.end != nil)
        #expect(workout.metadata["HKElevationAscended"] == .string("6575 cm"))
        #expect(workout.metadata["HKIndoorWorkout"] == .integer(0))
        #expect(workout.metadata["healthDeviceHardware"] == .string("Watch7,2"))
        guard case .string(let stats)? = workout.metadata["healthStatistics"] else {
            Issue.record("statistics missing")
            return
        }
        #expect(stats.contains("HKQuantityTypeIdentifierRunningPower") && stats.contains("208.697"))
        // The WorkoutActivity blocks are the workout's activities, each with its interval, uuid and metadata.
        let blocks = try HealthFixtures.count("<WorkoutActivity ", in: dir.path + "/export.xml")
        #expect(blocks > 0 && workout.activities.count == blocks)
        let first = try #require(workout.activities.first { $0.metadata["healthUuid"] == .string("0C822588-0470-4F37-9676-C324BF454FBE") })
        #expect(first.activityType == workout.activityType && first.start != nil && first.end != nil)
        #expect(workout.activities.contains { $0.metadata.keys.contains("WOIntervalStepKeyPath") })
        #expect(workout.activities.allSatisfy { a in a.start.map { s in a.end.map { s.instant <= $0.instant } ?? false } ?? false })
    }

    @Test("every fragment imports with its workouts (routes it references but lacks are reported, not fatal)")
    func fragments() async throws {
        for name in [
            "workout_cycling.xml", "workout_swimming.xml", "workout_running_multiple_parts.xml",
            "workout_cp_calculation.xml", "record_heart_rate.xml",
        ] {
            let dir = try HealthFixtures.export(["export.xml": HealthFixtures.nicolas + name])
            let xml = dir.path + "/export.xml"
            let workouts = try HealthFixtures.count("<Workout ", in: xml)
            let store = try HealthFixtures.store(in: dir)
            let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), xml)
            #expect(summary.error == nil, "\(name)")
            #expect(summary.workouts == workouts, "\(name)")
            #expect(summary.newWorkouts == workouts, "\(name): \(results.map { "\($0.status) \(String(describing: $0.error))" })")
            #expect(try await store.workouts(matching: WorkoutFilter()).count == workouts, "\(name)")
            #expect(results.filter { $0.status == .failed }.isEmpty, "\(name)")
            if name == "record_heart_rate.xml" {
                #expect(summary.records == (try HealthFixtures.count("<Record ", in: xml)))
                #expect(summary.recordTypes.keys.sorted() == ["HKQuantityTypeIdentifierHeartRate"])
            }
        }
    }
}

@Suite(
    "generated Apple Health exports",
    .enabled(if: HealthFixtures.python != nil, "python3 is not on PATH: the export generator cannot run"))
struct GeneratedExportTests {
    @Test("counts equal the generator's; again unchanged; a newer export adds only what is new")
    func generated() async throws {
        let (dir, expected) = try HealthFixtures.generate([
            "--workouts", "12", "--points", "150", "--heart-rate", "400", "--size", "1M", "--ios16-dtd",
        ])
        func n(_ key: String) -> Int { expected[key] as? Int ?? -1 }
        let store = try HealthFixtures.store(in: dir)
        let importer = HealthImporter(store: store, routeFiles: .gpx)
        importer.chunkSize = 4096  // many chunk boundaries
        let (summary, results) = await HealthFixtures.run(importer, dir.path)
        #expect(summary.error == nil, "\(String(describing: summary.error))")
        #expect(summary.workouts == n("workouts"))
        #expect(summary.newWorkouts == n("workouts"))
        #expect(summary.routes == n("routes") && summary.newRoutes == n("routes"))
        #expect(summary.locations == n("route_points"))
        #expect(summary.records == n("records"))
        #expect(summary.seriesSamples == n("heart_rate_in_workouts"))
        #expect(summary.effortScores == n("effort_scores") && summary.newEffortScores == n("effort_scores"))
        #expect(summary.unmatchedEffortScores == 0)
        #expect(summary.recordsNotImported == n("records") - n("heart_rate_in_workouts") - n("effort_scores_top_level"))
        #expect(results.count == n("workouts") + 1)
        #expect(results.dropLast().allSatisfy { $0.status == .imported && $0.error == nil })

        // What the store holds: heart rate of the workouts, effort scores, HealthKit's route identities.
        var heartRate = 0
        var efforts = 0
        for w in try await store.workouts(matching: WorkoutFilter()) {
            for try await batch in store.samples(of: .heartRate, workout: w.id) { heartRate += batch.samples.count }
            efforts += try await store.efforts(ofWorkout: w.id).count
            #expect(w.events.contains { $0.kind == .pause } && w.events.contains { $0.kind == .resume })
        }
        #expect(heartRate == n("heart_rate_in_workouts"))
        #expect(efforts == n("effort_scores"))
        let routes = try await store.routes(matching: RouteFilter())
        #expect(routes.count == n("routes"))
        #expect(routes.filter { !$0.sync.identifier.hasPrefix("health-") && $0.sync.version == 2 }.count == (n("routes") + 1) / 2)

        // Again: unchanged.
        let (again, results2) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(again.newWorkouts == 0 && again.newRoutes == 0 && again.newEffortScores == 0)
        #expect(again.seriesSamples == n("heart_rate_in_workouts"))
        #expect(results2.allSatisfy { $0.status == .unchanged })

        // A newer export: one more workout with a route, and HealthKit's version of one route went up.
        let xmlURL = dir.appendingPathComponent("export.xml")
        var xml = try String(contentsOf: xmlURL, encoding: .utf8)
        let bumped = try #require(xml.range(of: #"key="HKMetadataKeySyncVersion" value="2""#))
        xml.replaceSubrange(bumped, with: #"key="HKMetadataKeySyncVersion" value="3""#)
        let extra = """
             <Workout workoutActivityType="HKWorkoutActivityTypeHiking" duration="20" durationUnit="min" \
            sourceName="Test Watch" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100">
              <Record type="HKQuantityTypeIdentifierWorkoutEffortScore" sourceName="Fitness" unit="appleEffortScore" \
            startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100" value="7"/>
              <WorkoutRoute sourceName="Test Watch" startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100">
               <FileReference path="/workout-routes/route_new.gpx"/>
              </WorkoutRoute>
             </Workout>
            </HealthData>
            """
        xml = xml.replacingOccurrences(of: "</HealthData>", with: extra)
        try xml.write(to: xmlURL, atomically: true, encoding: .utf8)
        try """
        <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="46.1" lon="7.1"><time>2024-03-01T08:00:00Z</time></trkpt>
        <trkpt lat="46.2" lon="7.2"><time>2024-03-01T08:00:01Z</time></trkpt></trkseg></trk></gpx>
        """.write(to: dir.appendingPathComponent("workout-routes/route_new.gpx"), atomically: true, encoding: .utf8)
        let (newer, results3) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(newer.workouts == n("workouts") + 1)
        #expect(newer.newWorkouts == 1)
        #expect(newer.newRoutes == 2, "the new workout's route, and the route whose version went up")
        #expect(newer.newEffortScores == 1)
        #expect(results3.filter { $0.status == .imported }.count == 2)
        #expect(try await store.routes(matching: RouteFilter()).count == n("routes") + 1)
        let hiking = try await store.workouts(matching: WorkoutFilter()).filter { $0.activityType == .hiking }
        #expect(hiking.count == 1)
        #expect(hiking.first?.start?.utcOffsetSeconds == 3600)
    }

    /// An export held in memory, as an archive would hand it over: the XML as a stream, route files by path.
    struct MemoryExport: HealthExportFiles {
        var xml: [UInt8]
        var files: [String: [UInt8]]
        var xmlName: String { "memory.zip!apple_health_export/export.xml" }
        var xmlSize: Int? { xml.count }
        func openXML() throws(RouteKitError) -> any ByteSource { MemoryByteSource(xml, readSize: 1000) }
        func contents(of path: String) throws(RouteKitError) -> [UInt8] {
            guard let bytes = files[path] else { throw RouteKitError(.io, "missing", file: label(path)) }
            return bytes
        }
        func label(_ path: String) -> String { "memory.zip!apple_health_export/" + path }
    }

    @Test("through HealthExportFiles (how an archive plugs in): the same counts, routes named by the archive")
    func memoryExport() async throws {
        let (dir, expected) = try HealthFixtures.generate(["--workouts", "6", "--points", "50", "--heart-rate", "120"])
        var files: [String: [UInt8]] = [:]
        let routes = dir.appendingPathComponent("workout-routes")
        for name in try FileManager.default.contentsOfDirectory(atPath: routes.path) {
            files["workout-routes/" + name] = Array(try Data(contentsOf: routes.appendingPathComponent(name)))
        }
        let export = MemoryExport(xml: Array(try Data(contentsOf: dir.appendingPathComponent("export.xml"))), files: files)
        let store = try HealthFixtures.store(in: dir)
        var results: [ImportResult] = []
        let summary = await HealthImporter(store: store, routeFiles: .gpx).importExport(export) { results.append($0) }
        #expect(summary.workouts == expected["workouts"] as? Int)
        #expect(summary.locations == expected["route_points"] as? Int)
        #expect(summary.seriesSamples == expected["heart_rate_in_workouts"] as? Int)
        #expect(results.first?.file.hasPrefix("memory.zip!apple_health_export/workout-routes/") == true)
    }

    @Test("a FileReference outside the export or to a missing file: the workout is kept, the route reported")
    func badReferences() async throws {
        let dir = try HealthFixtures.temporaryFolder().appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func workout(_ day: Int, _ path: String) -> String {
            """
             <Workout workoutActivityType="HKWorkoutActivityTypeWalking" sourceName="W" \
            startDate="2024-03-0\(day) 09:00:00 +0100" endDate="2024-03-0\(day) 09:20:00 +0100">
              <WorkoutRoute sourceName="W" startDate="2024-03-0\(day) 09:00:00 +0100" \
            endDate="2024-03-0\(day) 09:20:00 +0100"><FileReference path="\(path)"/></WorkoutRoute>
             </Workout>
            """
        }
        try
            ("<HealthData locale=\"en_US\">\n" + workout(1, "/../../../etc/passwd") + workout(2, "/workout-routes/gone.gpx")
            + "</HealthData>\n").write(to: dir.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
        let store = try HealthFixtures.store(in: dir)
        let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), dir.path)
        #expect(summary.workouts == 2 && summary.newWorkouts == 2 && summary.routes == 0)
        #expect(results[0].status == .partial && results[0].error?.code == .invalidValue)
        #expect(results[0].error?.message.contains("outside the export") == true)
        #expect(results[1].status == .partial && results[1].error?.code == .io)
        #expect(try await store.workouts(matching: WorkoutFilter()).count == 2)
    }

    @Test("malformed export.xml: one failed result with file, line and column; nothing stored")
    func malformed() async throws {
        let dir = try HealthFixtures.temporaryFolder()
        let xml = dir.appendingPathComponent("export.xml")
        try "<HealthData>\n <Workout workoutActivityType=\"x\" startDate=\"2024-03-01 09:00:00 +0100\">\n</HealthData>\n"
            .write(to: xml, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: dir.appendingPathComponent("s.sqlite").path)
        let (summary, results) = await HealthFixtures.run(HealthImporter(store: store, routeFiles: .gpx), xml.path)
        #expect(summary.error?.code == .malformedXML)
        #expect(summary.error?.line == 3 && summary.error?.column == 1)
        #expect(results.count == 1 && results[0].status == .failed)
        #expect(try await store.workouts(matching: WorkoutFilter()).isEmpty)
    }
}
