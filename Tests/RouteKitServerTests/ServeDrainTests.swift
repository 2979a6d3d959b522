#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import RouteKitTesting
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// SIGTERM drains `routekit serve` (a child process): event streams get a last `shutdown` event and end, an upload
    /// whose body is arriving is imported and answered, then the process exits 0.
    @Suite("routekit serve drains on SIGTERM", .serialized)
    struct ServeDrainTests {
        /// A new store with a read/write token for source `phone`, and `serve` running on it on a free port.
        static func started(_ binary: URL) async throws
            -> (process: Process, port: Int, token: String, store: String)
        {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("routekit-drain-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let created = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "phone", "--scope", "read,write"])
            let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let log = folder.appendingPathComponent("serve.log")
            let (process, port) = try await startServe(binary, store: store, log: log)
            return (process, port, token, store)
        }

        /// Whether serve (process `pid`) has an upload's spool folder (`routekit-upload-HOST-PID-UUID`) in the
        /// temporary folder, which it shares with the tests: it is receiving an upload's body.
        static func spooling(_ pid: Int32) -> Bool {
            let folder = FileManager.default.temporaryDirectory.path
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.contains { $0.hasPrefix("routekit-upload-") && $0.contains("-\(pid)-") }
        }

        /// Waits up to `seconds` for `process` to end; whether it did.
        static func ended(_ process: Process, within seconds: Int) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            return !process.isRunning
        }

        @Test("SIGTERM: an open event stream gets a last `shutdown` event (no id) and ends; serve exits 0 in seconds")
        func streamsGetAShutdownEvent() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let (process, port, token, _) = try await Self.started(binary)
            defer { if process.isRunning { process.terminate() } }
            let response = try await HTTPClient.shared.execute(
                request(port, "/v1/changes", token: token), timeout: .seconds(30))
            #expect(response.status == .ok)
            var reader = EventReader(response.body)
            // An empty store: the catch-up is one `up-to-date`.
            let first = try #require(try await reader.next())
            #expect(first.event == "up-to-date")

            kill(process.processIdentifier, SIGTERM)
            let last = try #require(try await reader.next())
            #expect(last.event == "shutdown")
            #expect(last.id == nil, "the shutdown event moved the stream's Last-Event-ID")
            #expect(last.data.contains("shutting down"), "\(last.data)")
            let after = try await reader.next()
            #expect(after == nil, "the stream went on after its shutdown event")
            let exited = try await Self.ended(process, within: 10)
            #expect(exited, "serve did not exit within 10 s of SIGTERM")
            if exited { #expect(process.terminationStatus == 0) }
        }

        @Test("SIGTERM while an upload's body arrives: serve waits for it, imports and answers it (201), then exits 0")
        func uploadInProgressFinishes() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let (process, port, token, store) = try await Self.started(binary)
            defer { if process.isRunning { process.terminate() } }
            let body = Array(gpx(name: "drain", points: 200).utf8)
            let half = body.count / 2
            let (chunks, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            var upload = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?name=drain.gpx")
            upload.method = .POST
            upload.headers.add(name: "Authorization", value: "Bearer \(token)")
            upload.body = .stream(chunks, length: .known(Int64(body.count)))
            let request = upload
            continuation.yield(ByteBuffer(bytes: body[..<half]))
            let answer = Task { try await HTTPClient.shared.execute(request, timeout: .seconds(60)) }
            // The server is receiving the body (its spool folder is there) when it is told to stop.
            var receiving = false
            for _ in 0..<200 where !receiving {
                try await Task.sleep(for: .milliseconds(50))
                receiving = Self.spooling(process.processIdentifier)
            }
            #expect(receiving, "serve never began to receive the upload")
            kill(process.processIdentifier, SIGTERM)
            try await Task.sleep(for: .milliseconds(500))
            let waited = process.isRunning
            #expect(waited, "serve exited with an upload in progress")
            continuation.yield(ByteBuffer(bytes: body[half...]))
            continuation.finish()
            let response = try await answer.value
            #expect(response.status == .created)
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(text.contains("\"status\":\"imported\""), "\(text)")
            let exited = try await Self.ended(process, within: 10)
            #expect(exited, "serve did not exit within 10 s of the upload's answer")
            if exited { #expect(process.terminationStatus == 0) }
            // What was answered is stored.
            let routes = try runChildProcess(binary, ["routes", "--store", store, "--json"])
            #expect(routes.status == 0, "\(routes.errorOutput)")
            #expect(routes.output.contains("\"source\":\"phone\""), "\(routes.output)")
        }
    }
#endif
