// routekit-client-demo: RouteKitClient as an app would run it, in a process of its own that RouteKitClientTests kill
// with SIGKILL (a phone's app killed mid-recording, a follower killed) and start again.
//
//   routekit-client-demo record --url URL --count N [--batch B] [--pause-ms MS] [--resume BUILDER] [--finish SYNC-ID]
//       Records N locations (location i: 47° + i × 0.0001 N, 8.5° E, 2024-05-01T06:00:00Z + i s) through a
//       RouteUploader in batches of B (100), MS milliseconds apart; with --resume, resumes that builder from what the
//       server holds. Prints `builder ID`, `resumed ID HELD`, `acknowledged HELD` after each batch and, with
//       --finish, `route ID LOCATIONS` once finished with that sync identifier (version 1).
//   routekit-client-demo follow --url URL --state FILE [--anchor ANCHOR]
//       Follows the change feed (routes) from ANCHOR and appends each change set to FILE (`deleted ID`, `added ID`,
//       then `anchor A`, flushed to disk), until killed.
//
// The API token is read from $ROUTEKIT_TOKEN (never from the arguments, which other users can see). Output lines are
// written unbuffered, so that a process killed at any moment has printed everything it did.
import Foundation

#if Client
    import RouteKitClient

    /// Writes a line to standard output at once.
    func say(_ line: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Ends the process with a message on standard error.
    func fail(_ message: String) -> Never {
        try? FileHandle.standardError.write(contentsOf: Data(("routekit-client-demo: " + message + "\n").utf8))
        exit(1)
    }

    /// The value after `--name`, if given.
    func option(_ name: String) -> String? {
        let arguments = CommandLine.arguments
        guard let i = arguments.firstIndex(of: "--" + name), i + 1 < arguments.count else { return nil }
        return arguments[i + 1]
    }

    /// A whole-number option, `fallback` when absent; a usage error when it is not a number of at least `minimum`.
    func number(_ name: String, _ fallback: Int, minimum: Int = 0) -> Int {
        guard let text = option(name) else { return fallback }
        guard let value = Int(text), value >= minimum else { fail("--\(name) must be a whole number ≥ \(minimum)") }
        return value
    }

    /// Location `i` of the recording (the tests compute the same).
    func location(_ i: Int) -> ClientLocation {
        ClientLocation(
            latitude: 47 + Double(i) * 0.0001, longitude: 8.5,
            time: Date(timeIntervalSince1970: 1_714_543_200 + Double(i)), altitude: 400, horizontalAccuracy: 5)
    }

    /// Records `count` locations, resuming `resume` when given.
    func record(_ client: RouteKitClient, count: Int) async throws(RouteKitClientError) {
        let batch = number("batch", 100, minimum: 1)
        let pause = number("pause-ms", 0)
        let uploader: RouteUploader
        if let text = option("resume") {
            guard let id = UUID(uuidString: text) else { fail("--resume takes a builder's uuid") }
            uploader = try await RouteUploader.resume(builderID: id, client: client, batchSize: batch)
            let held = await uploader.held
            say("resumed \(id.uuidString.lowercased()) \(held)")
        } else {
            uploader = try await RouteUploader(client: client, batchSize: batch)
            say("builder \(uploader.builderID.uuidString.lowercased())")
        }
        var next = await uploader.held
        while next < count {
            let end = min(count, next + batch)
            try await uploader.append((next..<end).map(location))
            next = end
            let held = await uploader.held
            say("acknowledged \(held)")
            if pause > 0 { try? await Task.sleep(for: .milliseconds(pause)) }
        }
        if let sync = option("finish") {
            let done = try await uploader.finish(
                activity: "running", name: "demo", syncIdentifier: sync, syncVersion: 1)
            say("route \(done.route.uuid.uuidString.lowercased()) \(done.route.locations)")
        }
    }

    /// Follows the feed into the state file until the process is killed.
    func follow(_ client: RouteKitClient, state: String) async throws(RouteKitClientError) {
        if !FileManager.default.fileExists(atPath: state) {
            _ = FileManager.default.createFile(atPath: state, contents: nil)
        }
        guard let file = FileHandle(forWritingAtPath: state) else { fail("cannot write \(state)") }
        var sets = client.changes(since: option("anchor")).makeAsyncIterator()
        while let set = try await sets.next() {
            var lines = set.deleted.map { "deleted \($0.uuid.uuidString.lowercased())\n" }
            lines += set.added.map { "added \($0.uuid.uuidString.lowercased())\n" }
            lines.append("anchor \(set.anchor)\n")
            do {
                _ = try file.seekToEnd()
                try file.write(contentsOf: Data(lines.joined().utf8))
                try file.synchronize()
            } catch {
                fail("cannot write \(state)")
            }
            say("changes \(set.added.count) added \(set.deleted.count) deleted")
        }
    }

    let arguments = CommandLine.arguments
    guard arguments.count >= 2, let urlText = option("url"), let url = URL(string: urlText) else {
        fail("usage: routekit-client-demo record|follow --url URL … (see the source's header)")
    }
    guard let token = ProcessInfo.processInfo.environment["ROUTEKIT_TOKEN"], !token.isEmpty else {
        fail("set ROUTEKIT_TOKEN to an API token")
    }
    let client = RouteKitClient(baseURL: url, token: token)
    do throws(RouteKitClientError) {
        switch arguments[1] {
        case "record":
            try await record(client, count: number("count", 1000, minimum: 1))
        case "follow":
            guard let state = option("state") else { fail("follow needs --state FILE") }
            try await follow(client, state: state)
        default:
            fail("unknown command '\(arguments[1])': record or follow")
        }
    } catch {
        fail(error.description)
    }
#else
    try? FileHandle.standardError.write(
        contentsOf: Data("routekit-client-demo: built without the Client trait (swift build --traits Client)\n".utf8))
    exit(2)
#endif
