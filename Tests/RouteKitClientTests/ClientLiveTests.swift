#if Client && Server
    import Foundation
    import RouteKitTesting
    import Testing

    @testable import RouteKitClient

    #if canImport(Glibc)
        import Glibc
    #endif

    /// An executable built beside the test bundle (`routekit`, `routekit-client-demo`).
    func builtExecutable(_ name: String) -> URL? {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [dir, dir.deletingLastPathComponent()].map { $0.appendingPathComponent(name) }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }

    /// Waits until `condition` holds, at most `seconds`; whether it held.
    func eventually(_ seconds: Double = 30, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return condition()
    }

    /// A file's text, empty when it cannot be read.
    func text(of file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    /// A GPX file of one running track: `points` locations from (`lat`, 8.5), one a second from `start`.
    func gpx(name: String, points: Int, lat: Double, start: String = "2024-05-01T06:00") -> String {
        var s = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
            <trk><name>\(name)</name><type>running</type><trkseg>
            """
        for i in 0..<points {
            let second = i < 10 ? "0\(i)" : "\(i)"
            s += "<trkpt lat=\"\(lat + Double(i) * 0.0001)\" lon=\"8.5\"><time>\(start):\(second)Z</time></trkpt>\n"
        }
        return s + "</trkseg></trk></gpx>\n"
    }

    /// Location `i` of routekit-client-demo's recordings.
    func demoLocation(_ i: Int) -> ClientLocation {
        ClientLocation(
            latitude: 47 + Double(i) * 0.0001, longitude: 8.5,
            time: Date(timeIntervalSince1970: 1_714_543_200 + Double(i)), altitude: 400, horizontalAccuracy: 5)
    }

    /// A `routekit serve` child process over a new store, with a read/write token of source `phone`.
    struct LiveServer {
        let routekit: URL
        let folder: URL
        let store: String
        let token: String
        var process: Process
        var port: Int
        var starts = 1

        /// The server's address.
        var baseURL: String { "http://127.0.0.1:\(port)" }

        /// Makes the store and the token, and starts the server on a free port.
        static func start() async throws -> LiveServer {
            let routekit = try #require(
                builtExecutable("routekit"), "the routekit executable is not next to the test bundle; build with --build-tests")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-client-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let made = try runChildProcess(
                routekit, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "read,write"])
            try #require(made.status == 0, "routekit tokens create: \(made.errorOutput)")
            let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let (process, port) = try await serve(routekit, store: store, log: folder.appendingPathComponent("serve-1.log"))
            return LiveServer(routekit: routekit, folder: folder, store: store, token: token, process: process, port: port)
        }

        /// Starts `routekit serve` on `store` (on `port`, or a free one) and returns it with its port.
        static func serve(_ routekit: URL, store: String, log: URL, port: Int = 0) async throws -> (Process, Int) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = routekit
            process.arguments = ["serve", "--store", store, "--port", String(port), "--log-level", "warning"]
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            for _ in 0..<400 {
                try await Task.sleep(for: .milliseconds(50))
                let said = text(of: log)
                if let r = said.range(of: "listening on http://127.0.0.1:"),
                    let port = Int(said[r.upperBound...].prefix { $0.isNumber })
                {
                    return (process, port)
                }
                if !process.isRunning { break }
            }
            if process.isRunning { process.terminate() }
            Issue.record("routekit serve did not start: \(text(of: log))")
            throw CocoaError(.fileReadUnknown)
        }

        /// A client of the server with the token.
        func client() throws -> RouteKitClient {
            let url = try #require(URL(string: baseURL))
            return RouteKitClient(baseURL: url, token: token)
        }

        /// Stops the server (SIGTERM, as a service manager does) and starts it again on the same port.
        mutating func restart() async throws {
            process.terminate()
            process.waitUntilExit()
            starts += 1
            let log = folder.appendingPathComponent("serve-\(starts).log")
            (process, port) = try await Self.serve(routekit, store: store, log: log, port: port)
        }

        /// Stops the server.
        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }

        /// Uploads a GPX file of `points` locations, different for each `number`, and returns its route.
        func uploadRoute(_ client: RouteKitClient, _ number: Int, points: Int = 8) async throws -> UUID {
            let file = folder.appendingPathComponent("route-\(number).gpx")
            try gpx(name: "route \(number)", points: points, lat: 40 + Double(number) * 0.01).write(
                to: file, atomically: true, encoding: .utf8)
            let results = try await client.upload(file: file)
            let imported = try #require(results.first?.routes.first)
            return try #require(imported.route)
        }

        /// Starts routekit-client-demo with `arguments` and the token, its output into `output`.
        func demo(_ arguments: [String], output: URL) throws -> Process {
            let demo = try #require(
                builtExecutable("routekit-client-demo"),
                "routekit-client-demo is not next to the test bundle; build with --build-tests")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = demo
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["ROUTEKIT_TOKEN": token]) { $1 }
            let handle = try FileHandle(forWritingTo: output)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            return process
        }
    }

    /// Values one task appends and another reads.
    final class Collected<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Value] = []

        func append(_ value: Value) {
            lock.lock()
            defer { lock.unlock() }
            values.append(value)
        }

        var all: [Value] {
            lock.lock()
            defer { lock.unlock() }
            return values
        }
    }

    /// What routekit-client-demo's follower wrote to its state file: the routes added and deleted, and the anchors,
    /// in order.
    struct FollowerState {
        var added: [UUID] = []
        var deleted: [UUID] = []
        var anchors: [String] = []

        init(_ file: URL) {
            for line in text(of: file).split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "added": if let id = UUID(uuidString: parts[1]) { added.append(id) }
                case "deleted": if let id = UUID(uuidString: parts[1]) { deleted.append(id) }
                case "anchor": anchors.append(parts[1])
                default: break
                }
            }
        }
    }

    @Suite("RouteKitClient against a live routekit serve", .serialized)
    struct ClientLiveTests {
        @Test("upload a GPX file, then read its workout, route and locations; again: unchanged; errors are problems")
        func uploadAndRead() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let client = try server.client()
            let file = server.folder.appendingPathComponent("morning run.gpx")
            try gpx(name: "morning", points: 12, lat: 47).write(to: file, atomically: true, encoding: .utf8)

            let results = try await client.upload(file: file)
            #expect(results.count == 1)
            let result = try #require(results.first)
            #expect(result.status == "imported")
            #expect(result.file == "morning_run.gpx")
            let imported = try #require(result.routes.first)
            #expect(imported.locations == 12)
            let routeID = try #require(imported.route)
            let again = try await client.upload(file: file)
            let againStatus = again.first?.status
            #expect(againStatus == "unchanged")

            let page = try await client.workouts()
            let workoutIDs = page.workouts.map(\.uuid)
            #expect(workoutIDs == [imported.workout])
            #expect(page.next == nil)
            #expect(!page.anchor.isEmpty)
            let detail = try await client.workout(imported.workout)
            let routeIDs = detail.routes.map(\.uuid)
            #expect(routeIDs == [routeID])
            #expect(detail.workout.activity == "running")
            #expect(detail.workout.locations == 12)

            let route = try await client.route(routeID)
            #expect(route.locations == 12)
            #expect(route.workout == imported.workout)
            #expect(route.source == "phone")
            let start = try #require(route.startDate)
            #expect(start == Date(timeIntervalSince1970: 1_714_543_200))

            let locations = try await client.locations(route: routeID)
            #expect(locations.count == 12)
            let first = try #require(locations.first)
            let last = try #require(locations.last)
            #expect(abs(first.latitude - 47) < 1e-9)
            #expect(abs(last.latitude - 47.0011) < 1e-9)
            #expect(first.time == start)
            #expect(last.time == Date(timeIntervalSince1970: 1_714_543_211))
            let spread = try await client.locations(route: routeID, max: 3)
            #expect(spread.count == 3)

            // A route that does not exist: the server's 404 problem.
            do throws(RouteKitClientError) {
                _ = try await client.route(UUID())
                Issue.record("a route that does not exist was read")
            } catch {
                #expect(error.code == .problem)
                #expect(error.status == 404)
                #expect(error.problem?.name == "not-found")
                #expect(!error.isTransient)
            }
            // A token that is none: 401, and the error does not repeat it.
            let serverURL = try #require(URL(string: server.baseURL))
            let stranger = RouteKitClient(baseURL: serverURL, token: "rk_not-a-token")
            do throws(RouteKitClientError) {
                _ = try await stranger.workouts()
                Issue.record("a request without a valid token was answered")
            } catch {
                #expect(error.status == 401)
                #expect(error.problem?.name == "unauthenticated")
                #expect(!error.description.contains("rk_not-a-token"))
            }
            // A file that is not there.
            do throws(RouteKitClientError) {
                _ = try await client.upload(file: server.folder.appendingPathComponent("missing.gpx"))
                Issue.record("a missing file was uploaded")
            } catch {
                #expect(error.code == .file)
                #expect(error.description.contains("missing.gpx"))
            }
        }

        @Test("a recording whose client process is killed after 5 batches resumes from the server's count: no gap, no duplicate")
        func killedRecorderResumes() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let log = server.folder.appendingPathComponent("record-1.log")
            let record = ["record", "--url", server.baseURL, "--count", "2000", "--batch", "100"]
            let recorder = try server.demo(record + ["--pause-ms", "50"], output: log)
            func acknowledged() -> Int {
                text(of: log).split(separator: "\n").compactMap { line in
                    line.hasPrefix("acknowledged ") ? Int(line.dropFirst("acknowledged ".count)) : nil
                }.max() ?? 0
            }
            let reached = try await eventually { acknowledged() >= 500 || !recorder.isRunning }
            kill(recorder.processIdentifier, SIGKILL)
            recorder.waitUntilExit()
            #expect(reached)
            let before = acknowledged()
            #expect(before >= 500, "\(text(of: log))")
            #expect(before < 2000, "the recorder finished before it was killed")
            let builderLine = text(of: log).split(separator: "\n").first { $0.hasPrefix("builder ") }
            let builder = try #require(builderLine.map { String($0.dropFirst("builder ".count)) })

            // A new process resumes the builder from what the server holds, sends the rest and finishes.
            let demo = try #require(builtExecutable("routekit-client-demo"))
            let resumed = try runChildProcess(
                demo, record + ["--resume", builder, "--finish", "killed-ride"], environment: ["ROUTEKIT_TOKEN": server.token])
            #expect(resumed.status == 0, "\(resumed.errorOutput)")
            let lines = resumed.output.split(separator: "\n").map(String.init)
            let heldLine = try #require(lines.first { $0.hasPrefix("resumed \(builder) ") })
            let held = try #require(Int(heldLine.dropFirst("resumed \(builder) ".count)))
            // Every acknowledged batch is there; the batch in flight at the kill may be too.
            #expect(held >= before)
            #expect(held <= before + 100)
            let routeLine = try #require(lines.first { $0.hasPrefix("route ") })
            let routeText = try #require(routeLine.split(separator: " ").dropFirst().first)
            let routeID = try #require(UUID(uuidString: String(routeText)))

            let locations = try await server.client().locations(route: routeID)
            #expect(locations.count == 2000)
            var misplaced: [Int] = []
            for (i, location) in locations.enumerated() {
                let expected = demoLocation(i)
                if abs(location.latitude - expected.latitude) > 1e-9 || location.time != expected.time {
                    misplaced.append(i)
                }
            }
            #expect(misplaced.isEmpty, "locations not where the recording had them: \(misplaced.prefix(10))")
            let times = Set(locations.compactMap(\.time))
            #expect(times.count == 2000)
        }

        @Test("a follower killed and started again with its last anchor misses no route and repeats none")
        func killedFollowerResumes() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let client = try server.client()
            var uploaded: [UUID] = []
            for i in 0..<3 { uploaded.append(try await server.uploadRoute(client, i)) }
            let state = server.folder.appendingPathComponent("follower.state")
            let follow = ["follow", "--url", server.baseURL, "--state", state.path]
            let first = try server.demo(follow, output: server.folder.appendingPathComponent("follow-1.log"))
            let caughtUp = try await eventually { FollowerState(state).added.count >= 3 }
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            #expect(caughtUp, "\(text(of: server.folder.appendingPathComponent("follow-1.log")))")
            let anchor = try #require(FollowerState(state).anchors.last)

            // Routes stored while no follower runs, then a follower from the anchor.
            for i in 3..<6 { uploaded.append(try await server.uploadRoute(client, i)) }
            let second = try server.demo(
                follow + ["--anchor", anchor], output: server.folder.appendingPathComponent("follow-2.log"))
            let complete = try await eventually { FollowerState(state).added.count >= 6 }
            // Give a repeat the time to show up before the follower is stopped.
            try await Task.sleep(for: .milliseconds(500))
            kill(second.processIdentifier, SIGKILL)
            second.waitUntilExit()
            #expect(complete, "\(text(of: server.folder.appendingPathComponent("follow-2.log")))")
            let added = FollowerState(state).added
            #expect(Set(added) == Set(uploaded))
            #expect(added.count == uploaded.count)
            let afterRestart = Array(added.dropFirst(3))
            #expect(Set(afterRestart) == Set(uploaded[3...]))
        }

        @Test("the change feed resumes with Last-Event-ID when the server restarts: the next route arrives, none twice")
        func feedSurvivesRestart() async throws {
            var server = try await LiveServer.start()
            defer { server.stop() }
            let client = try server.client()
            let before = try await server.uploadRoute(client, 0)
            let received = Collected<ChangeSetResponse>()
            let failures = Collected<String>()
            let follower = Task {
                do {
                    for try await set in client.changes() { received.append(set) }
                } catch {
                    failures.append("\(error)")
                }
            }
            defer { follower.cancel() }
            func addedIDs() -> [UUID] { received.all.flatMap { $0.added.map(\.uuid) } }
            let first = try await eventually { addedIDs().contains(before) }
            #expect(first)

            // SIGTERM: the stream's `shutdown` event; the same port again, then a new route.
            try await server.restart()
            let after = try await server.uploadRoute(client, 1)
            let second = try await eventually(45) { addedIDs().contains(after) }
            #expect(second, "\(failures.all)")
            #expect(addedIDs() == [before, after])
            #expect(failures.all.isEmpty)
            let anchors = received.all.map(\.anchor)
            #expect(Set(anchors).count == anchors.count)
        }

        @Test("RouteUploader: full batches sent as they fill, a gap refused with the count held, a replay stored once")
        func uploaderBatches() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let client = try server.client()
            let recording = (0..<25).map(demoLocation)
            let uploader = try await RouteUploader(client: client, batchSize: 10)
            try await uploader.append(Array(recording[..<25]))
            let held = await uploader.held
            let pending = await uploader.pendingCount
            #expect(held == 20)
            #expect(pending == 5)
            let onServer = try await client.builder(uploader.builderID)
            #expect(onServer.locations == 20)

            // An uploader that thinks the server holds more than it does: 409 builder-gap, with the count held.
            var ahead = onServer
            ahead.locations = 30
            let gapped = RouteUploader(client: client, builder: ahead, batchSize: 10)
            do throws(RouteKitClientError) {
                try await gapped.append(Array(recording[..<10]))
                Issue.record("a batch past what the builder holds was taken")
            } catch {
                #expect(error.status == 409)
                #expect(error.problem?.name == "builder-gap")
                let count = error.problem?.members["locations"]?.intValue
                #expect(count == 20)
            }

            // One that thinks it holds less (an answer lost): the batch it sends again is stored once.
            var behind = onServer
            behind.locations = 10
            let replay = RouteUploader(client: client, builder: behind, batchSize: 10)
            try await replay.append(Array(recording[10...]))
            let replayHeld = await replay.held
            #expect(replayHeld == 20)
            let resumed = try await RouteUploader.resume(builderID: uploader.builderID, client: client, batchSize: 10)
            let resumedHeld = await resumed.held
            #expect(resumedHeld == 20)
            try await resumed.append(Array(recording[20...]))
            let done = try await resumed.finish(activity: "running", syncIdentifier: "in-process", syncVersion: 1)
            #expect(done.outcome == "inserted")
            #expect(done.route.locations == 25)
            #expect(done.route.syncIdentifier == "in-process")
            let stored = try await client.locations(route: done.route.uuid)
            let storedTimes = stored.map(\.time)
            #expect(storedTimes == recording.map(\.time))
        }
    }
#endif

#if Client && !Server
    import Testing

    @Suite("RouteKitClient against a live routekit serve")
    struct ClientLiveTests {
        @Test("needs --traits Client,Server", .disabled("the live tests run `routekit serve`: build with --traits Client,Server"))
        func needsServer() {}
    }
#endif
