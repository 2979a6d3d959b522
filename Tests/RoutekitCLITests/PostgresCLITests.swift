#if Postgres
    import Foundation
    import RouteKit
    import RouteKitPostgres
    import RouteKitTesting
    import Testing

    /// `routekit` on PostgreSQL, end to end: every command takes the URL as `--store`.
    @Suite(
        "routekit on PostgreSQL",
        .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
        .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"))
    struct PostgresCLITests {
        @Test("import, list, export and delete through a postgres:// store; the password is never printed")
        func importListExport() async throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let fixture = try StoreFixture(store: url)
            defer { fixture.remove() }
            let gpx = try fixture.write("a.gpx", SyntheticGPX.text(name: "a", points: 3_000))
            let imported = try fixture.run(["import", gpx, "--no-progress"])
            try #require(imported.status == 0, "\(imported.stderr)")
            let routes = try fixture.json(["routes"])
            try #require(routes.count == 1)
            #expect(routes.first?["locations"] as? Int == 3_000)
            let again = try fixture.run(["import", gpx, "--no-progress"])
            #expect(again.status == 0)
            #expect(try fixture.json(["routes"]).count == 1, "re-importing is idempotent")
            let id = try #require(routes.first?["uuid"] as? String)
            let out = fixture.directory + "/out.gpx"
            let exported = try fixture.run(["export", id, "-o", out])
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect((try? String(contentsOfFile: out, encoding: .utf8))?.components(separatedBy: "<trkpt").count == 3_001)
            var components = try #require(URLComponents(string: url))
            components.password = "hunter2"
            components.path = "/rk_missing_database"
            let withPassword = try #require(components.string)
            let failed = try CLI.run(["routes", "--store", withPassword])
            #expect(failed.status != 0)
            #expect(!failed.stderr.contains("hunter2") && !failed.stdout.contains("hunter2"), "\(failed.stderr)")
        }

        @Test("a batch worker killed mid-route on PostgreSQL: its claims expire and another run finishes every route once")
        func killedBatchWorker() throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let fixture = try StoreFixture(store: url)
            defer { fixture.remove() }
            try SmoothStoreCLITests.killAndResume(fixture) { sql in
                Int((try? PostgresTestServer.sql(url, sql)) ?? "") ?? -1
            }
        }
    }

    /// Restarts the test server, so it runs on its own (`scripts/test-postgres.sh` runs it after the other suites):
    /// it needs `$ROUTEKIT_TEST_POSTGRES_DIR`.
    @Suite(
        "routekit changes --follow across a PostgreSQL restart",
        .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"),
        .enabled(if: PostgresTestServer.url != nil, "\(PostgresTestServer.skipMessage)"),
        .enabled(
            if: PostgresTestServer.clusterDirectory != nil,
            "ROUTEKIT_TEST_POSTGRES_DIR (a throwaway cluster the test may restart) is not set"))
    struct PostgresRestartTests {
        @Test("the follower survives a database restart and resumes from its anchor: nothing lost, nothing repeated")
        func followSurvivesRestart() async throws {
            let url = try PostgresTestServer.freshDatabase()
            defer { PostgresTestServer.drop(url) }
            let fixture = try StoreFixture(store: url)
            defer { fixture.remove() }
            let source = try Source(name: "writer")
            let workout = Workout(activityType: .running, start: nil, end: nil, source: source)
            do {
                let store = try await PostgresStore(url: url)
                defer { store.close() }
                _ = try await store.saveWorkout(workout)
            }
            /// Saves version `version` with a store of its own, retrying while the server is down.
            func save(_ version: Int64) async throws -> UUID {
                let deadline = ContinuousClock.now + .seconds(60)
                while true {
                    let result: Result<UUID, RouteKitError>
                    do throws(RouteKitError) {
                        let store = try await PostgresStore(url: url)
                        defer { store.close() }
                        let b = try await RouteBuilder(store: store, source: source)
                        try await b.insert(StoreConformance.locations(count: 10, seed: UInt64(version)))
                        let finished = try await b.finish(workout: workout, metadata: StoreConformance.sync("followed", version))
                        result = .success(finished.route.id)
                    } catch {
                        result = .failure(error)
                    }
                    switch result {
                    case .success(let id): return id
                    case .failure(let error):
                        guard error.code == .unavailable, ContinuousClock.now < deadline else { throw error }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            let v1 = try await save(1)
            let process = Process()
            process.executableURL = CLI.executable
            process.arguments = ["changes", "--follow", "--json", "--store", url]
            let outPath = fixture.directory + "/follow.out"
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
            defer { try? out.close() }
            process.standardOutput = out
            let errPath = fixture.directory + "/follow.err"
            _ = FileManager.default.createFile(atPath: errPath, contents: nil)
            let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
            defer { try? err.close() }
            process.standardError = err
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            func lines(count: Int) async throws -> [[String: Any]] {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
                    let objects = try StoreCLI.objects(text)
                    if objects.count >= count { return objects }
                    try await Task.sleep(for: .milliseconds(20))
                }
                let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
                let printed = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
                let lineCount = printed.split(separator: "\n").count
                Issue.record("the follower printed \(lineCount) of \(count) change sets in 60 s; stderr: \(errors)")
                return []
            }
            func ids(_ set: [String: Any], _ key: String) -> [String] {
                ((set[key] as? [[String: Any]]) ?? []).compactMap { $0["uuid"] as? String }
            }
            let catchUp = try await lines(count: 1)
            #expect(catchUp.first.map { ids($0, "added") } == [v1.uuidString.lowercased()])

            try PostgresTestServer.restart()
            let v2 = try await save(2)
            let afterRestart = try await lines(count: 2)
            try #require(afterRestart.count >= 2)
            #expect(ids(afterRestart[1], "deleted") == [v1.uuidString.lowercased()], "the old version, deleted")
            #expect(ids(afterRestart[1], "added") == [v2.uuidString.lowercased()], "the new one, in the same set")

            let v3 = try await save(3)
            let all = try await lines(count: 3)
            try #require(all.count >= 3)
            #expect(all.count == 3, "no change set repeated")
            #expect(ids(all[2], "added") == [v3.uuidString.lowercased()])
            #expect(process.isRunning, "the follower is still running")
            kill(process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "SIGINT ends it cleanly")
        }
    }
#endif
