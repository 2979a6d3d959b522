import Foundation
import RouteKit
import RouteKitGPX
import RouteKitImport
import RouteKitIngest
import RouteKitSQLite
import RouteKitTesting
import Testing

/// An Apple Health export: two workouts of a watch (the first with a route file and heart rate during it), and
/// `padding` step-count records so that `export.xml` spans many inflated chunks.
func healthExportFiles(padding: Int) -> [(String, [UInt8])] {
    var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Workout)*)>
        ]>
        <HealthData locale="en_CH">
         <ExportDate value="2024-05-02 10:00:00 +0200"/>
         <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>

        """
    for i in 0..<padding {
        xml += """
             <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" \
            startDate="2024-04-01 08:\(String(format: "%02d", i % 60)):00 +0200" \
            endDate="2024-04-01 08:\(String(format: "%02d", i % 60)):30 +0200" value="\(i % 97)"/>

            """
    }
    for s in 0..<30 {
        xml += """
             <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Test Watch" unit="count/min" \
            startDate="2024-05-01 08:00:\(String(format: "%02d", s)) +0200" \
            endDate="2024-05-01 08:00:\(String(format: "%02d", s)) +0200" value="\(120 + s)"/>

            """
    }
    xml += """
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="10" durationUnit="min" \
        sourceName="Test Watch" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:10:00 +0200">
          <WorkoutRoute sourceName="Test Watch" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:10:00 +0200">
           <FileReference path="/workout-routes/route_1.gpx"/>
          </WorkoutRoute>
         </Workout>
         <Workout workoutActivityType="HKWorkoutActivityTypeYoga" duration="30" durationUnit="min" \
        sourceName="Test Watch" startDate="2024-05-02 08:00:00 +0200" endDate="2024-05-02 08:30:00 +0200"/>
        </HealthData>

        """
    return [
        ("apple_health_export/export.xml", Array(xml.utf8)),
        ("apple_health_export/workout-routes/route_1.gpx", Array(gpxText(name: "watch", points: 40).utf8)),
        ("apple_health_export/export_cda.xml", Array("<ClinicalDocument/>".utf8)),
    ]
}

@Suite("Apple Health export.zip, read without unpacking")
struct HealthArchiveTests {
    func run(_ store: SQLiteStore, _ path: String) async -> [ImportResult] {
        var out: [ImportResult] = []
        await RouteImporter(store: store).importPath(path) { out.append($0) }
        return out
    }

    func contents(of store: SQLiteStore) async throws -> (workouts: Int, routes: [Int], heartRate: Int) {
        var heartRate = 0
        let workouts = try await store.workouts(matching: WorkoutFilter())
        for w in workouts {
            for try await batch in store.samples(of: .heartRate, workout: w.id) { heartRate += batch.samples.count }
        }
        let routes = try await store.routes(matching: RouteFilter()).map(\.locationCount).sorted()
        return (workouts.count, routes, heartRate)
    }

    @Test("export.zip imports as its unpacked folder does, named by the archive; again, everything is unchanged")
    func sameAsFolder() async throws {
        let dir = try Zip.folder()
        let files = healthExportFiles(padding: 20_000)
        #expect(files[0].1.count > 2 << 20, "export.xml spans many inflated chunks")
        try Zip.make(dir + "/export.zip", files)
        for (path, bytes) in files {
            let url = URL(fileURLWithPath: dir + "/unpacked/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let zipStore = try SQLiteStore(path: dir + "/zip.sqlite")
        let folderStore = try SQLiteStore(path: dir + "/folder.sqlite")
        let fromZip = await run(zipStore, dir + "/export.zip")
        let fromFolder = await run(folderStore, dir + "/unpacked/apple_health_export")
        #expect(fromZip.map(\.status) == fromFolder.map(\.status))
        #expect(fromZip.allSatisfy { $0.error == nil }, "\(fromZip.compactMap(\.error))")
        #expect(fromZip.count == 3, "two workouts and export.xml: \(fromZip.map(\.file))")
        #expect(fromZip[0].file == dir + "/export.zip!apple_health_export/workout-routes/route_1.gpx")
        #expect(fromZip.last?.file == dir + "/export.zip!apple_health_export/export.xml")
        let zipped = try await contents(of: zipStore)
        let unpacked = try await contents(of: folderStore)
        #expect(zipped.workouts == 2 && zipped.routes == [40] && zipped.heartRate == 30)
        #expect(zipped.workouts == unpacked.workouts && zipped.routes == unpacked.routes)
        #expect(zipped.heartRate == unpacked.heartRate)
        let again = await run(zipStore, dir + "/export.zip")
        #expect(again.allSatisfy { $0.status == .unchanged }, "\(again.map(\.status))")
        #expect(try await contents(of: zipStore).workouts == 2)
    }

    @Test("an export.xml that inflates like a bomb is refused, naming the entry; nothing is stored")
    func bomb() async throws {
        let dir = try Zip.folder()
        var xml = Array("<?xml version=\"1.0\"?>\n<HealthData locale=\"en\">\n".utf8)
        xml += [UInt8](repeating: 0x20, count: 24 << 20)
        xml += Array("</HealthData>\n".utf8)
        try Zip.make(dir + "/export.zip", [("apple_health_export/export.xml", xml)])
        let store = try SQLiteStore(path: dir + "/s.sqlite")
        let results = await run(store, dir + "/export.zip")
        #expect(results.count == 1)
        #expect(results.first?.status == .failed)
        #expect(results.first?.error?.code == .compression)
        #expect(results.first?.error?.message.contains("zip bomb") == true)
        #expect(results.first?.error?.file == dir + "/export.zip!apple_health_export/export.xml")
        #expect(try await store.workouts(matching: WorkoutFilter()).isEmpty)
    }

    @Test(
        "the corpus's export.zip files: the workouts and routes their export.xml holds",
        .enabled(if: SharedData.formatCorpus != nil, "../shared/format-corpus is absent"))
    func corpus() async throws {
        let zips = SharedData.formatCorpusEntries(format: "zip").filter {
            (($0["probe"] as? [String: Any])?["export_xml"] as? [String: Any])?["ok"] as? Bool == true
        }
        #expect(zips.count >= 2)
        for entry in zips {
            let path = try #require(entry["file"] as? String)
            let summary = try #require(entry["summary"] as? [String: Any])
            let store = try SQLiteStore(path: try Zip.folder() + "/s.sqlite")
            let results = await run(store, path)
            #expect(results.allSatisfy { $0.error == nil }, "\(path): \(results.compactMap(\.error))")
            let held = try await contents(of: store)
            #expect(held.workouts == summary["workouts"] as? Int, "\(path)")
            #expect(held.routes.count == summary["workout_routes"] as? Int, "\(path)")
            let last = results.last?.file ?? ""
            #expect(last.hasPrefix(path + "!") && last.hasSuffix("export.xml"), "named by the archive: \(last)")
        }
    }
}
