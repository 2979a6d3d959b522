#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    /// `count` locations from index `from`, one second apart, as a JSON array.
    func locationsJSON(from: Int, count: Int, latitude: Double? = nil) -> String {
        let items = (from..<from + count).map { i in
            let lat = latitude ?? 47.0 + Double(i) * 0.0001
            let t = Date(timeIntervalSince1970: 1_714_550_400 + Double(i))
            return "{\"latitude\":\(lat),\"longitude\":8.5,\"time\":\"\(Timestamp(t).iso8601)\",\"altitude\":400}"
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    /// `count` heart-rate samples from index `from`, one second apart from 2024-05-01T08:00:00Z, 100 + 5 × index bpm,
    /// as a JSON array: even indices with an ISO 8601 time, odd ones with seconds since 1970.
    func samplesJSON(from: Int, count: Int, value: ((Int) -> Double)? = nil) -> String {
        let items = (from..<from + count).map { i in
            let seconds = 1_714_550_400 + i
            let time =
                i % 2 == 0 ? "\"\(Timestamp(Instant(seconds: Int64(seconds))).iso8601)\"" : String(seconds)
            return "{\"time\":\(time),\"value\":\(value?(i) ?? Double(100 + 5 * i))}"
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    @Suite("routekit serve: the route builder over HTTP")
    struct ServerBuilderTests {
        @Test(
            "samples and events: a resend is acknowledged, a gap or a bad element refused (nothing changes), counts kept by a restarted server; finish saves every sample and event with the workout"
        )
        func samplesAndEvents() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "watch")
            let lap =
                #"{"kind": "lap", "start": "2024-05-01T08:00:00Z", "end": 1714550405, "#
                + #""metadata": {"lapTrigger": "manual"}}"#
            let marker = #"{"kind": "marker", "start": 1714550403.5}"#
            let id = try await f.app().test(.router) { client -> String in
                let made = try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) {
                    json($0.body)["id"] as? String ?? ""
                }
                func post(_ path: String, _ body: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/builders/\(made)/\(path)", method: .post,
                        headers: auth(token, [.contentType: "application/json"]), body: ByteBuffer(string: body))
                }
                func held(_ r: TestResponse, _ type: String) -> Int? {
                    (json(r.body)["samples"] as? [String: Any])?[type] as? Int
                }
                var r = try await post("locations?first=0", locationsJSON(from: 0, count: 10))
                #expect(r.status == .ok)
                r = try await post("samples?type=heartRate&first=0", samplesJSON(from: 0, count: 6))
                #expect(r.status == .ok)
                #expect(held(r, "heartRate") == 6)
                #expect(held(r, "power") == 0)
                // The same batch again (its answer was lost): acknowledged, nothing new.
                r = try await post("samples?type=heartRate&first=0", samplesJSON(from: 0, count: 6))
                #expect(r.status == .ok)
                #expect(held(r, "heartRate") == 6)
                // A gap: the answer says where to resume.
                r = try await post("samples?type=heartRate&first=8", samplesJSON(from: 8, count: 2))
                #expect(r.status == .conflict)
                #expect(problemType(r) == "builder-gap")
                #expect(json(r.body)["samples"] as? Int == 6)
                // A bad value or time is a 400 naming its index in the batch; nothing of the batch is stored.
                r = try await post(
                    "samples?type=heartRate&first=6", samplesJSON(from: 6, count: 3) { $0 == 7 ? -5 : 120 })
                #expect(r.status == .badRequest)
                #expect(problemType(r) == "invalid-sample")
                #expect(json(r.body)["index"] as? Int == 1)
                r = try await post("samples?type=heartRate&first=6", #"[{"time": "yesterday", "value": 120}]"#)
                #expect(r.status == .badRequest)
                #expect(json(r.body)["index"] as? Int == 0)
                r = try await post("samples?type=heartRate&first=6", #"[{"time": 1714550406, "value": "fast"}]"#)
                #expect(r.status == .badRequest)
                #expect(json(r.body)["index"] as? Int == 0)
                r = try await post("samples?type=temperature&first=0", "[]")
                #expect(r.status == .badRequest)
                r = try await post("samples?type=power&first=0", samplesJSON(from: 0, count: 3) { _ in 250 })
                #expect(held(r, "power") == 3)
                #expect(held(r, "heartRate") == 6)
                // Events, numbered the same way.
                r = try await post("events?first=0", "[\(lap), \(marker)]")
                #expect(r.status == .ok)
                #expect(json(r.body)["events"] as? Int == 2)
                r = try await post("events?first=0", "[\(lap), \(marker)]")
                #expect(json(r.body)["events"] as? Int == 2)
                r = try await post("events?first=3", "[\(marker)]")
                #expect(r.status == .conflict)
                #expect(json(r.body)["events"] as? Int == 2)
                let pause = #"{"kind": "pause", "start": 1714550406}"#
                r = try await post("events?first=2", "[\(pause), " + #"{"kind": "sprint", "start": 1714550407}]"#)
                #expect(r.status == .badRequest)
                #expect(problemType(r) == "invalid-event")
                #expect(json(r.body)["index"] as? Int == 1)
                r = try await post("events?first=2", #"[{"kind": "lap", "start": 1714550409, "end": 1714550401}]"#)
                #expect(r.status == .badRequest)
                #expect(json(r.body)["index"] as? Int == 0)
                try await client.execute(uri: "/v1/builders/\(made)", method: .get, headers: auth(token)) { r in
                    #expect(held(r, "heartRate") == 6)
                    #expect(held(r, "power") == 3)
                    #expect(held(r, "cadence") == 0)
                    #expect(json(r.body)["events"] as? Int == 2)
                    #expect(json(r.body)["locations"] as? Int == 10)
                }
                return made
            }
            // A restarted server (or another process on the same store) goes on from the counts the store holds.
            let restarted = Fixture(sharing: f)
            try await restarted.app().test(.router) { client in
                try await client.execute(uri: "/v1/builders", method: .get, headers: auth(token)) { r in
                    let builders = json(r.body)["builders"] as? [[String: Any]] ?? []
                    let samples = builders.first?["samples"] as? [String: Any]
                    #expect(samples?["heartRate"] as? Int == 6)
                    #expect(builders.first?["events"] as? Int == 2)
                }
                // An overlapping batch: only its tail (indices 6 to 9) is stored.
                try await client.execute(
                    uri: "/v1/builders/\(id)/samples?type=heartRate&first=4", method: .post, headers: auth(token),
                    body: ByteBuffer(string: samplesJSON(from: 4, count: 6))
                ) { r in
                    #expect(r.status == .ok)
                    #expect((json(r.body)["samples"] as? [String: Any])?["heartRate"] as? Int == 10)
                }
                try await client.execute(
                    uri: "/v1/builders/\(id)/events?first=2", method: .post, headers: auth(token),
                    body: ByteBuffer(
                        string: #"[{"kind": "pause", "start": 1714550406}, {"kind": "resume", "start": 1714550407}]"#)
                ) { r in
                    #expect(json(r.body)["events"] as? Int == 4)
                }
                try await client.execute(
                    uri: "/v1/builders/\(id)/finish", method: .post, headers: auth(token),
                    body: ByteBuffer(string: #"{"activity": "running", "syncIdentifier": "hr-1", "syncVersion": 1}"#)
                ) { r in
                    #expect(r.status == .created)
                }
            }
            let workouts = try await f.store.workouts(matching: WorkoutFilter())
            let workout = try #require(workouts.first)
            let heartRate = try await f.store.allSamples(of: .heartRate, workout: workout.id)
            let values = heartRate.map(\.value)
            let expectedValues: [Double] = (0..<10).map { Double(100 + 5 * $0) }
            #expect(values == expectedValues)
            let seconds = heartRate.map(\.timestamp.instant.seconds)
            let expectedSeconds: [Int64] = (0..<10).map { Int64(1_714_550_400 + $0) }
            #expect(seconds == expectedSeconds)
            let power = try await f.store.allSamples(of: .power, workout: workout.id)
            #expect(power.count == 3)
            let kinds = workout.events.map(\.kind)
            #expect(kinds == [.lap, .marker, .pause, .resume])
            let first = try #require(workout.events.first)
            #expect(first.metadata["lapTrigger"] == .string("manual"))
            #expect(first.end?.instant.seconds == 1_714_550_405)
            let markerStart = workout.events.dropFirst().first?.start?.instant
            #expect(markerStart == Instant(seconds: 1_714_550_403, nanoseconds: 500_000_000))
            #expect(try await f.store.pendingBuilders().isEmpty)
        }

        @Test("batches name their first index: retries and overlaps are stored once, a gap is a 409 with the count held")
        func resumableBatches() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            let other = try await f.token(source: "watch")
            try await f.app().test(.router) { client in
                let id = try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) { r in
                    #expect(r.status == .created)
                    let body = json(r.body)
                    #expect(body["locations"] as? Int == 0)
                    #expect(r.headers[.location] == "/v1/builders/\(body["id"] as? String ?? "")")
                    return body["id"] as? String ?? ""
                }
                func append(_ first: Int, _ body: String, type: String = "application/json") async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/builders/\(id)/locations?first=\(first)", method: .post,
                        headers: auth(token, [.contentType: type]), body: ByteBuffer(string: body))
                }
                var r = try await append(0, locationsJSON(from: 0, count: 5))
                #expect(r.status == .ok)
                #expect(json(r.body)["locations"] as? Int == 5)
                // The same batch again (its answer was lost): nothing new.
                r = try await append(0, locationsJSON(from: 0, count: 5))
                #expect(json(r.body)["locations"] as? Int == 5)
                // A batch that overlaps what is held: only its tail is stored.
                r = try await append(3, locationsJSON(from: 3, count: 4))
                #expect(json(r.body)["locations"] as? Int == 7)
                // A gap: the answer says where to resume.
                r = try await append(10, locationsJSON(from: 10, count: 2))
                #expect(r.status == .conflict)
                #expect(problemType(r) == "builder-gap")
                #expect(json(r.body)["locations"] as? Int == 7)
                // NDJSON.
                let ndjson = locationsJSON(from: 7, count: 3).dropFirst().dropLast()
                    .replacingOccurrences(of: "},{", with: "}\n{")
                r = try await append(7, ndjson, type: "application/x-ndjson")
                #expect(json(r.body)["locations"] as? Int == 10)
                // A bad location names its index in the route; nothing of the batch is stored.
                r = try await append(10, locationsJSON(from: 10, count: 3, latitude: 200))
                #expect(r.status == .unprocessableContent)
                #expect(problemType(r) == "invalid-location")
                #expect(json(r.body)["index"] as? Int == 10)
                #expect(!String(buffer: r.body).contains("200"))
                try await client.execute(uri: "/v1/builders/\(id)", method: .get, headers: auth(token)) { r in
                    #expect(json(r.body)["locations"] as? Int == 10)
                }
                // Another source's token does not see it.
                try await client.execute(uri: "/v1/builders/\(id)", method: .get, headers: auth(other)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(
                    uri: "/v1/builders/\(id)/finish", method: .post, headers: auth(token),
                    body: ByteBuffer(string: #"{"activity": "running", "name": "Lunch run", "syncIdentifier": "ride-1", "syncVersion": 1}"#)
                ) { r in
                    #expect(r.status == .created)
                    let body = json(r.body)
                    #expect(body["outcome"] as? String == "inserted")
                    let route = body["route"] as? [String: Any]
                    #expect(route?["locations"] as? Int == 10)
                    #expect(route?["syncIdentifier"] as? String == "ride-1")
                    #expect(route?["start"] as? String == "2024-05-01T08:00:00Z")
                }
                try await client.execute(uri: "/v1/builders/\(id)", method: .get, headers: auth(token)) {
                    #expect($0.status == .notFound)
                }
            }
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.count == 1)
            var count = 0
            for try await batch in f.store.locations(of: try #require(routes.first).id) { count += batch.locations.count }
            #expect(count == 10)
            let workouts = try await f.store.workouts(matching: WorkoutFilter())
            #expect(workouts.count == 1)
            #expect(workouts.first?.metadata["name"] == .string("Lunch run"))
        }

        @Test("versioned writes: a higher version replaces, an equal one is stale (409 with the current version)")
        func versions() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                func build(version: Int, count: Int) async throws -> TestResponse {
                    let id = try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) {
                        json($0.body)["id"] as? String ?? ""
                    }
                    try await client.execute(
                        uri: "/v1/builders/\(id)/locations?first=0", method: .post, headers: auth(token),
                        body: ByteBuffer(string: locationsJSON(from: 0, count: count)))
                    return try await client.execute(
                        uri: "/v1/builders/\(id)/finish", method: .post, headers: auth(token),
                        body: ByteBuffer(string: #"{"syncIdentifier": "walk", "syncVersion": \#(version)}"#))
                }
                let v1 = try await build(version: 1, count: 4)
                #expect(v1.status == .created)
                let firstRoute = (json(v1.body)["route"] as? [String: Any])?["uuid"] as? String
                let again = try await build(version: 1, count: 5)
                #expect(again.status == .conflict)
                #expect(problemType(again) == "stale-version")
                #expect(json(again.body)["currentVersion"] as? Int == 1)
                #expect(json(again.body)["currentRoute"] as? String == firstRoute)
                let v2 = try await build(version: 2, count: 6)
                #expect(v2.status == .created)
                #expect(json(v2.body)["outcome"] as? String == "replaced")
                #expect(json(v2.body)["previous"] as? String == firstRoute)
            }
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.map(\.locationCount) == [6])
            // The retried v1 found the workout of the first one instead of making another.
            #expect(try await f.store.workouts(matching: WorkoutFilter()).count == 1)
        }

        @Test("a discarded builder is gone")
        func discard() async throws {
            let f = try Fixture()
            let token = try await f.token()
            try await f.app().test(.router) { client in
                let id = try await client.execute(
                    uri: "/v1/builders", method: .post, headers: auth(token),
                    body: ByteBuffer(string: #"{"order": "insertion"}"#)
                ) { r in
                    #expect(json(r.body)["order"] as? String == "insertion")
                    return json(r.body)["id"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/builders/\(id)", method: .delete, headers: auth(token)) {
                    #expect($0.status == .noContent)
                }
                try await client.execute(uri: "/v1/builders/\(id)", method: .get, headers: auth(token)) {
                    #expect($0.status == .notFound)
                }
            }
            #expect(try await f.store.pendingBuilders().isEmpty)
        }
    }
#endif
