import Foundation
import RouteKit
import RouteKitSQLite
import RouteKitTesting
import Testing

@Suite(
    "routekit changes",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct ChangesCLITests {
    @Test("changes --json: the DESIGN shape, every current route first; an unusable anchor exits 3")
    func changesJSON() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let file = try fixture.write("a.gpx", SyntheticGPX.text(name: "a", points: 20))
        _ = try fixture.json(["import", file])
        let sets = try fixture.json(["changes"])
        try #require(sets.count == 1)
        #expect(Set(sets[0].keys) == ["added", "deleted", "addedObjects", "deletedObjects", "anchor", "hasMore"])
        #expect((sets[0]["addedObjects"] as? [Any])?.isEmpty == true, "routes only by default")
        let added = try #require(sets[0]["added"] as? [[String: Any]])
        #expect(added.count == 1)
        #expect(Set(added[0].keys) == StoreCLI.routeKeys)
        let anchor = try #require(sets[0]["anchor"] as? String)
        let route = try #require(added[0]["uuid"] as? String)
        _ = try fixture.run(["delete", route])
        let after = try fixture.json(["changes", "--anchor", anchor])
        let deleted = try #require(after.first?["deleted"] as? [[String: Any]])
        #expect(deleted.count == 1)
        #expect(Set(deleted[0].keys) == ["uuid", "source", "workout", "syncIdentifier", "syncVersion"])
        #expect(deleted[0]["uuid"] as? String == route)
        let bad = try fixture.run(["changes", "--anchor", "nonsense"])
        #expect(bad.status == 3)
        #expect(bad.stderr.contains("anchorMalformed"))
        _ = try fixture.run(["compact", "--keep-days", "0"])
        let expired = try fixture.run(["changes", "--anchor", anchor])
        #expect(expired.status == 3)
        #expect(expired.stderr.contains("anchorExpired"))
    }

    @Test("changes --types workout,effort,series: a workout without a route, its score and series; then deletions")
    func changesTypes() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let store = try SQLiteStore(path: fixture.store)
        let source = try Source(name: "treadmill")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        let samples = (0..<12).map {
            QuantitySample(timestamp: Timestamp(Instant(seconds: 1_700_000_000 + Int64($0))), value: 140.5)
        }
        try await store.saveSeries(QuantitySeries(type: .heartRate, samples: samples), workout: workout.id, as: source)
        try await store.relateEffort(
            try EffortScore(workoutID: workout.id, source: source, score: 7, isManual: true))
        let sets = try fixture.json(["changes", "--types", "workout,effort,series"])
        let set = try #require(sets.first)
        let objects = try #require(set["addedObjects"] as? [[String: Any]])
        let types = objects.compactMap { $0["type"] as? String }
        #expect(types == ["workout", "series", "effort"])
        let series = try #require(objects.first { $0["type"] as? String == "series" })
        let data = try #require(series["data"] as? [String: Any])
        #expect(series["quantity"] as? String == "heartRate")
        #expect(data["count"] as? Int == 12)
        #expect(data["unit"] as? String == "count/min")
        #expect((set["added"] as? [Any])?.isEmpty == true, "no routes: not asked for, and there are none")
        let anchor = try #require(set["anchor"] as? String)
        _ = try fixture.run(["delete", workout.id.lowercaseText, "--source", "treadmill"])
        let text = try fixture.run(["changes", "--types", "all", "--anchor", anchor])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("deleted workout ") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("deleted effort ") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("deleted series ") && $0.contains("heartRate") }.count == 1, "\(lines)")
        let typo = try fixture.run(["changes", "--types", "workouts"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("'workouts' is not a change type"))
    }

    @Test("changes --follow in one process sees a replacement committed by another; SIGINT ends it cleanly")
    func followAcrossProcesses() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        // This test process is "another process": it writes through the library.
        let store = try SQLiteStore(path: fixture.store)
        let source = try Source(name: "writer")
        let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(workout)
        func save(_ version: Int64) async throws -> UUID {
            let b = try await RouteBuilder(store: store, source: source)
            try await b.insert(StoreConformance.locations(count: 10, seed: UInt64(version)))
            return try await b.finish(workout: workout, metadata: StoreConformance.sync("followed", version)).route.id
        }
        let v1 = try await save(1)

        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["changes", "--follow", "--json", "--store", fixture.store]
        let outPath = fixture.directory + "/follow.out"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        defer { try? out.close() }
        process.standardOutput = out
        process.standardError = out
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        func lines(count: Int) async throws -> [[String: Any]] {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
                let objects = try StoreCLI.objects(text)
                if objects.count >= count { return objects }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("the follower printed fewer than \(count) change sets in 20 s")
            return []
        }
        let catchUp = try await lines(count: 1)
        let first = try #require(catchUp.first?["added"] as? [[String: Any]])
        #expect(first.map { $0["uuid"] as? String } == [v1.uuidString.lowercased()])

        let v2 = try await save(2)
        let all = try await lines(count: 2)
        try #require(all.count == 2)
        let replacement = all[1]
        let deleted = try #require(replacement["deleted"] as? [[String: Any]])
        let added = try #require(replacement["added"] as? [[String: Any]])
        #expect(deleted.map { $0["uuid"] as? String } == [v1.uuidString.lowercased()], "the old version, deleted")
        #expect(added.map { $0["uuid"] as? String } == [v2.uuidString.lowercased()], "and the new one, in one set")

        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning, "SIGINT ends --follow")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "cleanly, with status 0")
    }
}

@Suite(
    "routekit output to a closed pipe",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct ClosedPipeTests {
    @Test("a reader that stops early (| head -1) ends the output quietly, not the process with SIGPIPE")
    func headOne() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let file = try fixture.write("r.gpx", SyntheticGPX.text(name: "r", points: 3_000))
        let imported = try fixture.json(["import", file])
        let first = try #require(imported.first)
        let route = try #require(try StoreCLI.firstRoute(first)["route"] as? String)
        let exe = try #require(CLI.executable).path
        // Far more than a pipe buffer (64 KB): the writer is still writing when head exits. JSON batches and CSV
        // rows alike: the command ends quietly, with status 0.
        for flags in ["--json --batch-size 5", ""] {
            let script =
                "set -o pipefail; '\(exe)' locations \(route) \(flags) --store '\(fixture.store)' "
                + "| head -1 > /dev/null"
            let result = try runChildProcess(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
            #expect(result.status == 0, "\(flags): the pipeline's status: \(result.status) \(result.errorOutput)")
            #expect(result.errorOutput.isEmpty, "\(flags): nothing to report: \(result.errorOutput)")
        }
        // Every command writing a file to standard output (the GPX of 3,000 points is far more than a pipe buffer).
        for command in [
            "export \(route) --format gpx --store '\(fixture.store)'", "convert '\(file)' -o - --format gpx",
        ] {
            let script = "set -o pipefail; '\(exe)' \(command) | head -1 > /dev/null"
            let result = try runChildProcess(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
            #expect(result.status == 0, "\(command): the pipeline's status: \(result.status) \(result.errorOutput)")
            #expect(result.errorOutput.isEmpty, "\(command): nothing to report: \(result.errorOutput)")
        }
    }
}
