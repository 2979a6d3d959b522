#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitTesting
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The built `routekit` next to the test bundle.
    let routekitBinary: URL? = {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [dir, dir.deletingLastPathComponent()].map { $0.appendingPathComponent("routekit") }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }()

    /// Starts `routekit serve` on `store` (on a free port, or `port`), with `extra` arguments and `environment` added
    /// to the test's, and returns the process and its port.
    func startServe(
        _ binary: URL, store: String, log: URL, port: Int = 0, extra: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> (Process, Int) {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--store", store, "--port", String(port), "--log-level", "warning"] + extra
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        for _ in 0..<200 {
            try await Task.sleep(for: .milliseconds(50))
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let r = text.range(of: "listening on http://127.0.0.1:"),
                let port = Int(text[r.upperBound...].prefix { $0.isNumber })
            {
                return (process, port)
            }
        }
        process.terminate()
        throw CocoaError(.fileReadUnknown)
    }

    @Suite("routekit serve and routekit tokens as child processes", .serialized)
    struct ServeCLITests {
        @Test("serve --help teaches the picture limit; --max-pictures 0 is a usage error (64) naming the option")
        func maxPicturesOption() throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let help = try runChildProcess(binary, ["serve", "--help"])
            #expect(help.status == 0)
            #expect(help.output.contains("--max-pictures"))
            let refused = try runChildProcess(binary, ["serve", "--store", "/nonexistent/x.sqlite", "--max-pictures", "0"])
            #expect(refused.status == 64)
            #expect(refused.errorOutput.contains("--max-pictures must be at least 1"), "\(refused.errorOutput)")
        }

        /// A socket listening on 127.0.0.1 on a port the system chose: the socket and the port.
        static func occupiedPort() throws -> (Int32, Int) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard bound == 0, listen(fd, 4) == 0, named == 0 else {
                close(fd)
                throw POSIXError(.EADDRINUSE)
            }
            return (fd, Int(UInt16(bigEndian: address.sin_port)))
        }

        /// Runs `routekit serve` with `arguments` (and `environment` added to the test's) until it ends (20 s at most,
        /// then it is stopped): whether it was still running then, its status, and what it printed.
        static func serveUntilItEnds(
            _ binary: URL, _ arguments: [String], environment: [String: String] = [:], log: URL
        ) async throws -> (stillRunning: Bool, status: Int32, text: String) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            let handle = try FileHandle(forWritingTo: log)
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
            for _ in 0..<400 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            let stillRunning = process.isRunning
            if stillRunning { process.terminate() }
            process.waitUntilExit()
            try handle.close()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return (stillRunning, process.terminationStatus, text)
        }

        @Test("serve on a port in use names the port and how to choose another (--port, ROUTEKIT_PORT), and exits 1")
        func busyPort() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("routekit-busy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let (fd, port) = try Self.occupiedPort()
            defer { close(fd) }
            let store = folder.appendingPathComponent("store.sqlite").path
            let expected =
                "routekit serve: cannot listen on 127.0.0.1:\(port): port \(port) is already in use (another routekit "
                + "serve?); choose another port with --port N or ROUTEKIT_PORT=N (--port 0 takes any free one)"

            // The port given with --port (which wins over ROUTEKIT_PORT).
            let given = try await Self.serveUntilItEnds(
                binary, ["serve", "--store", store, "--port", String(port)], environment: ["ROUTEKIT_PORT": "1"],
                log: folder.appendingPathComponent("given.log"))
            #expect(!given.stillRunning, "serve did not end on a port in use")
            #expect(given.status == 1)
            #expect(given.text.contains(expected), "\(given.text)")
            #expect(!given.text.contains("errno"), "\(given.text)")

            // The same port from ROUTEKIT_PORT, without --port.
            let fromVariable = try await Self.serveUntilItEnds(
                binary, ["serve", "--store", store], environment: ["ROUTEKIT_PORT": String(port)],
                log: folder.appendingPathComponent("variable.log"))
            #expect(!fromVariable.stillRunning, "serve did not end on a port in use")
            #expect(fromVariable.status == 1)
            #expect(fromVariable.text.contains(expected), "\(fromVariable.text)")

            // A variable that is no port is a configuration error (78) naming it.
            let bad = try await Self.serveUntilItEnds(
                binary, ["serve", "--store", store], environment: ["ROUTEKIT_PORT": "eighty"],
                log: folder.appendingPathComponent("bad.log"))
            #expect(bad.status == 78)
            #expect(bad.text.contains("ROUTEKIT_PORT must be an integer, not 'eighty'"), "\(bad.text)")
        }

        @Test("tokens create prints a token once; serve answers it; revoke stops it; SIGTERM ends serve with 0")
        func serveAndTokens() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-serve-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let created = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "read,write", "--name", "t"])
            #expect(created.status == 0)
            let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.hasPrefix("rk_"))
            #expect(created.errorOutput.contains("only time"))
            let listed = try runChildProcess(binary, ["tokens", "list", "--store", store, "--json"])
            #expect(listed.status == 0)
            #expect(listed.output.contains("\"scopes\":\"read,write\""))
            #expect(!listed.output.contains(String(token.suffix(43))))
            let badScope = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "root"])
            #expect(badScope.status == 1)
            #expect(badScope.errorOutput.contains("'root' is not a scope"))

            // serve on a free port; it prints the port once it listens.
            let log = folder.appendingPathComponent("serve.log")
            let (process, p) = try await startServe(binary, store: store, log: log)
            defer { if process.isRunning { process.terminate() } }
            var upload = HTTPClientRequest(url: "http://127.0.0.1:\(p)/v1/uploads?name=a.gpx")
            upload.method = .POST
            upload.headers.add(name: "Authorization", value: "Bearer \(token)")
            upload.body = .bytes(ByteBuffer(string: gpx(name: "cli", points: 12)))
            let uploaded = try await HTTPClient.shared.execute(upload, timeout: .seconds(30))
            #expect(uploaded.status == .created)
            var changes = HTTPClientRequest(url: "http://127.0.0.1:\(p)/v1/changes")
            changes.headers.add(name: "Authorization", value: "Bearer \(token)")
            let feed = try await HTTPClient.shared.execute(changes, timeout: .seconds(30))
            let body = String(buffer: try await feed.body.collect(upTo: 1 << 20))
            #expect(body.contains("\"locations\":12"))

            let id = try #require(listed.output.split(separator: "\"id\":\"").dropFirst().first?.prefix(36))
            let revoked = try runChildProcess(binary, ["tokens", "revoke", "--store", store, String(id)])
            #expect(revoked.status == 0)
            let refused = try await HTTPClient.shared.execute(changes, timeout: .seconds(30))
            #expect(refused.status == .unauthorized)

            process.terminate()  // SIGTERM
            for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!process.isRunning)
            #expect(process.terminationStatus == 0)
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(!text.contains(token))
        }

        /// What a writer did before the kill.
        enum Written: Sendable {
            case file(Int, acknowledged: Bool)
            case batches(Int)
        }

        @Test("serve killed with SIGKILL during 4 uploads and a builder: every acknowledged upload and batch is there, nothing twice")
        func killedDuringWrites() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-kill-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let token = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "read,write"]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let (server, port) = try await startServe(binary, store: store, log: folder.appendingPathComponent("1.log"))
            func post(_ path: String, _ body: String, port: Int) async throws -> (Int, String) {
                var r = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                r.method = .POST
                r.headers.add(name: "Authorization", value: "Bearer \(token)")
                r.body = .bytes(ByteBuffer(string: body))
                let response = try await HTTPClient.shared.execute(r, timeout: .seconds(30))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            let (created, builderBody) = try await post("/v1/builders", "", port: port)
            #expect(created == 201)
            let builder = try #require(
                (try JSONSerialization.jsonObject(with: Data(builderBody.utf8)) as? [String: Any])?["id"] as? String)
            // 4 uploaders and a builder write until the server dies; each remembers what was acknowledged.
            let acks = Locked((files: 0, batches: 0))
            let written = try await withThrowingTaskGroup(of: [Written].self) { group in
                for u in 0..<4 {
                    group.addTask {
                        var sent: [Written] = []
                        for k in 0..<10_000 {
                            let i = u * 10_000 + k
                            do {
                                let (status, _) = try await post(
                                    "/v1/uploads?name=\(i).gpx", gpx(name: "kill-\(i)", points: 30, lat: -60 + Double(i) * 0.0025),
                                    port: port)
                                sent.append(.file(i, acknowledged: status == 201))
                                if status == 201 { acks.withLock { $0.files += 1 } }
                            } catch {
                                sent.append(.file(i, acknowledged: false))
                                return sent
                            }
                        }
                        return sent
                    }
                }
                group.addTask {
                    var acked = 0
                    while true {
                        do {
                            let (status, _) = try await post(
                                "/v1/builders/\(builder)/locations?first=\(acked)",
                                locationsJSON(from: acked, count: 100), port: port)
                            if status == 200 {
                                acked += 100
                                acks.withLock { $0.batches += 1 }
                            }
                        } catch {
                            return [.batches(acked)]
                        }
                    }
                }
                // Killed once enough was acknowledged (a fixed 1.5 s left only 4 uploads under the thread sanitizer).
                let enough = ContinuousClock.now + .seconds(60)
                while acks.withLock({ $0.files < 8 || $0.batches < 1 }) && ContinuousClock.now < enough {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Task.sleep(for: .milliseconds(200))
                kill(server.processIdentifier, SIGKILL)
                var all: [Written] = []
                for try await part in group { all += part }
                return all
            }
            server.waitUntilExit()
            var files: [Int] = []
            var acknowledged: Set<Int> = []
            var builderAcked = 0
            for w in written {
                switch w {
                case .file(let i, let ack):
                    files.append(i)
                    if ack { acknowledged.insert(i) }
                case .batches(let n): builderAcked = n
                }
            }
            #expect(acknowledged.count > 4)
            #expect(builderAcked > 0)

            // Restart on the same store.
            let (again, port2) = try await startServe(binary, store: store, log: folder.appendingPathComponent("2.log"))
            defer { again.terminate() }
            var g = HTTPClientRequest(url: "http://127.0.0.1:\(port2)/v1/builders/\(builder)")
            g.headers.add(name: "Authorization", value: "Bearer \(token)")
            let held = try await HTTPClient.shared.execute(g, timeout: .seconds(30))
            let heldBody = String(buffer: try await held.body.collect(upTo: 1 << 20))
            let count = (try JSONSerialization.jsonObject(with: Data(heldBody.utf8)) as? [String: Any])?["locations"] as? Int
            // Every acknowledged batch is there; a batch whose answer the kill cut off may be too.
            #expect(count == builderAcked || count == builderAcked + 100)
            // Every file again: the acknowledged ones are unchanged, none is stored twice.
            for i in Set(files) {
                let (status, _) = try await post(
                    "/v1/uploads?name=\(i).gpx", gpx(name: "kill-\(i)", points: 30, lat: -60 + Double(i) * 0.0025), port: port2)
                if acknowledged.contains(i) { #expect(status == 200, "file \(i) was acknowledged before the kill") }
            }
            var routes = HTTPClientRequest(url: "http://127.0.0.1:\(port2)/v1/routes?limit=5000")
            routes.headers.add(name: "Authorization", value: "Bearer \(token)")
            let listed = try await HTTPClient.shared.execute(routes, timeout: .seconds(30))
            let list =
                (try JSONSerialization.jsonObject(
                    with: Data(String(buffer: try await listed.body.collect(upTo: 16 << 20)).utf8)) as? [String: Any])?["routes"]
                as? [[String: Any]] ?? []
            #expect(list.count == Set(files).count)
        }
    }
#endif
