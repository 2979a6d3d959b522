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

    @Suite("routekit serve: the route builder over HTTP")
    struct ServerBuilderTests {
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
