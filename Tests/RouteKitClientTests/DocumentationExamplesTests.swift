#if Client && Server
    import Foundation
    import RouteKitTesting
    import Testing

    @testable import RouteKitClient

    /// Where the examples keep what an app keeps in `UserDefaults` (the same calls).
    final class ExampleDefaults: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String: String] = [:]

        func set(_ value: String?, forKey key: String) {
            lock.lock()
            defer { lock.unlock() }
            values[key] = value
        }

        func string(forKey key: String) -> String? {
            lock.lock()
            defer { lock.unlock() }
            return values[key]
        }

        func removeObject(forKey key: String) { set(nil, forKey: key) }
    }

    /// The examples of RouteKitClient's DocC catalog, run against a live `routekit serve`. Each `// snippet.NAME` …
    /// `// snippet.end` region is, once de-indented, a ```swift block of the catalog, character for character:
    /// scripts/docs.sh (`make docs`) checks it. What HealthKit and Core Location give an app (iOS only) is made here
    /// from routekit-client-demo's recording.
    @Suite("Documentation examples (RouteKitClient)", .serialized)
    struct ClientDocumentationExamples {
        /// The locations of a recording, in batches of 100, as HKWorkoutRouteQuery hands them over.
        static func routeQueryBatches(_ recorded: [ClientLocation]) -> AsyncThrowingStream<[ClientLocation], any Error> {
            AsyncThrowingStream { continuation in
                for start in stride(from: 0, to: recorded.count, by: 100) {
                    continuation.yield(Array(recorded[start..<min(recorded.count, start + 100)]))
                }
                continuation.finish()
            }
        }

        @Test("the landing page: upload a file, list the workouts")
        func landingPage() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let serverURL = try #require(URL(string: server.baseURL))
            let token = server.token
            let rideFile = server.folder.appendingPathComponent("ride.gpx")
            try gpx(name: "ride", points: 20, lat: 46).write(to: rideFile, atomically: true, encoding: .utf8)
            // snippet.client-landing
            let client = RouteKitClient(baseURL: serverURL, token: token)
            let results = try await client.upload(file: rideFile)
            for result in results {
                print(result.file, result.status, result.routes.map(\.locations))
            }
            let page = try await client.workouts()
            print(page.workouts.map(\.activity))
            // snippet.end
            let status = results.first?.status
            #expect(status == "imported")
            #expect(page.workouts.count == 1)
        }

        @Test(
            "From HealthKit to RouteKit: upload a workout's route, then follow it until its smoothed version",
            .timeLimit(.minutes(2)))
        func uploadAndFollow() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let serverURL = try #require(URL(string: server.baseURL))
            let token = server.token
            let defaults = ExampleDefaults()
            let workoutID = UUID()  // the HKWorkout's uuid
            let recorded = (0..<300).map(demoLocation)
            let routeBatches = Self.routeQueryBatches(recorded)
            // snippet.healthkit-upload
            let client = RouteKitClient(baseURL: serverURL, token: token)
            let uploader = try await RouteUploader(client: client)
            defaults.set(uploader.builderID.uuidString, forKey: "pendingRouteBuilder")  // to resume after a restart
            for try await batch in routeBatches {  // HKWorkoutRouteQuery's batches, as ClientLocations
                try await uploader.append(batch)
            }
            let saved = try await uploader.finish(
                activity: "running", name: "Morning run", syncIdentifier: workoutID.uuidString, syncVersion: 1)
            defaults.removeObject(forKey: "pendingRouteBuilder")
            // snippet.end
            #expect(saved.route.locations == 300)
            #expect(saved.outcome == "inserted")
            #expect(defaults.string(forKey: "pendingRouteBuilder") == nil)

            // The server smooths the route (`routekit smooth`, another process on the same store) while the app
            // follows it.
            let routekit = server.routekit
            let store = server.store
            let smoothing = Task.detached {
                try await Task.sleep(for: .seconds(1))
                return try runChildProcess(routekit, ["smooth", "--all", "--store", store])
            }
            defer { smoothing.cancel() }
            // snippet.healthkit-follow
            var anchor = defaults.string(forKey: "routeAnchor")
            var shown: [UUID: [ClientLocation]] = [:]  // the route versions on screen
            for try await changes in client.changes(since: anchor, workout: saved.route.workout) {
                for gone in changes.deleted { shown[gone.uuid] = nil }  // deletions first
                for route in changes.added {
                    shown[route.uuid] = try await client.locations(route: route.uuid, max: 2_000)
                }
                anchor = changes.anchor
                defaults.set(anchor, forKey: "routeAnchor")
                if changes.added.contains(where: { $0.metadata["derivedFrom"] != nil }) {
                    break  // the smoothed version is on screen (an app keeps following)
                }
            }
            // snippet.end
            let smoothed = try await smoothing.value
            #expect(smoothed.status == 0, "\(smoothed.errorOutput)")
            #expect(shown.count == 1)
            #expect(shown[saved.route.uuid] == nil)
            let kept = defaults.string(forKey: "routeAnchor")
            #expect(kept != nil)
        }

        @Test("From HealthKit to RouteKit: an upload cut by the app's end resumes from what the server holds")
        func resumeAfterRestart() async throws {
            let server = try await LiveServer.start()
            defer { server.stop() }
            let defaults = ExampleDefaults()
            let workoutID = UUID()
            let recorded = (0..<250).map(demoLocation)
            let client = try server.client()
            // The app sent 150 locations (100 acknowledged, 50 waiting for a full batch) and was killed.
            let cut = try await RouteUploader(client: client, batchSize: 100)
            try await cut.append(Array(recorded[..<150]))
            defaults.set(cut.builderID.uuidString, forKey: "pendingRouteBuilder")
            // snippet.healthkit-resume
            if let text = defaults.string(forKey: "pendingRouteBuilder"), let builderID = UUID(uuidString: text) {
                let uploader = try await RouteUploader.resume(builderID: builderID, client: client)
                let held = await uploader.held  // what the server has: send the rest
                try await uploader.append(Array(recorded.dropFirst(held)))
                let saved = try await uploader.finish(
                    activity: "running", name: "Morning run", syncIdentifier: workoutID.uuidString, syncVersion: 1)
                defaults.removeObject(forKey: "pendingRouteBuilder")
                print("saved \(saved.route.locations) locations")
            }
            // snippet.end
            let page = try await client.workouts()
            let workout = try #require(page.workouts.first)
            let detail = try await client.workout(workout.uuid)
            let route = try #require(detail.routes.first)
            let stored = try await client.locations(route: route.uuid)
            let storedTimes = stored.map(\.time)
            #expect(storedTimes == recorded.map(\.time))
            #expect(defaults.string(forKey: "pendingRouteBuilder") == nil)
        }
    }
#endif
