#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKitTesting
    import Testing

    /// The built `routekit` next to the test bundle.
    let routekitBinary: URL? = {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return [dir, dir.deletingLastPathComponent()].map { $0.appendingPathComponent("routekit") }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }()

    @Suite("routekit serve and routekit tokens as child processes", .serialized)
    struct ServeCLITests {
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
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = binary
            process.arguments = ["serve", "--store", store, "--port", "0", "--log-level", "warning"]
            let handle = try FileHandle(forWritingTo: log)
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            var port: Int?
            for _ in 0..<200 where port == nil {
                try await Task.sleep(for: .milliseconds(50))
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if let r = text.range(of: "listening on http://127.0.0.1:") {
                    port = Int(text[r.upperBound...].prefix { $0.isNumber })
                }
            }
            let p = try #require(port)
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
    }
#endif
