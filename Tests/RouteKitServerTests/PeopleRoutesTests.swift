#if Server
    import AsyncHTTPClient
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import NIOFoundationCompat
    import NIOHTTP1
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    @Suite("routekit serve: many people (the admin API, each person's own data, per-person limits)")
    struct PeopleRoutesTests {
        /// The JSON object of an answer.
        func object(_ body: ByteBuffer) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
        }

        func json(_ value: [String: Any]) -> ByteBuffer {
            ByteBuffer(bytes: (try? JSONSerialization.data(withJSONObject: value)) ?? Data())
        }

        @Test(
            "an admin makes people and their tokens; each person sees only their own; an admin token reads no data; erasing ends it all"
        )
        func peopleAndTheirData() async throws {
            let f = try Fixture()
            let admin = try await f.adminToken()
            try await f.app().test(.router) { client in
                var ids: [String] = []
                var tokens: [String] = []
                for name in ["Ana", "Ben"] {
                    let id = try await client.execute(
                        uri: "/v1/people", method: .post, headers: auth(admin), body: json(["name": name])
                    ) { r -> String in
                        #expect(r.status == .created)
                        return object(r.body)["id"] as? String ?? ""
                    }
                    ids.append(id)
                    let token = try await client.execute(
                        uri: "/v1/people/\(id)/tokens", method: .post, headers: auth(admin),
                        body: json(["source": "phone", "scopes": ["read", "write"]])
                    ) { r -> String in
                        #expect(r.status == .created)
                        return object(r.body)["token"] as? String ?? ""
                    }
                    #expect(token.hasPrefix("rk_"))
                    tokens.append(token)
                }
                // An admin token manages people, and reads no one's data.
                try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(admin)) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "admin-token")
                }
                try await client.execute(uri: "/v1/people", method: .get, headers: auth(admin)) { r in
                    let people = object(r.body)["people"] as? [[String: Any]] ?? []
                    let listed = people.compactMap { $0["id"] as? String }
                    #expect(listed == [PersonID.default.description] + ids)
                }
                // A person's token may not administer.
                try await client.execute(uri: "/v1/people", method: .get, headers: auth(tokens[0])) { r in
                    #expect(r.status == .forbidden)
                }
                // Ana uploads; Ben sees nothing of it: not in his list, 404 by id, not in his feed.
                let workout = try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(tokens[0]),
                    body: ByteBuffer(string: gpx(name: "a"))
                ) { r -> String in
                    #expect(r.status == .ok || r.status == .created)
                    let results = object(r.body)["results"] as? [[String: Any]] ?? []
                    let routes = results.first?["routes"] as? [[String: Any]] ?? []
                    return routes.first?["workout"] as? String ?? ""
                }
                #expect(!workout.isEmpty)
                try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(tokens[1])) { r in
                    let listed = object(r.body)["workouts"] as? [[String: Any]] ?? []
                    #expect(listed.isEmpty)
                }
                let missing = UUID().uuidString.lowercased()
                let unknownText = try await client.execute(
                    uri: "/v1/workouts/\(missing)", method: .get, headers: auth(tokens[1])
                ) { r -> String in
                    #expect(r.status == .notFound)
                    return (object(r.body)["detail"] as? String ?? "").lowercased().replacingOccurrences(of: missing, with: "ID")
                }
                let othersText = try await client.execute(
                    uri: "/v1/workouts/\(workout)", method: .get, headers: auth(tokens[1])
                ) { r -> String in
                    #expect(r.status == .notFound)
                    return (object(r.body)["detail"] as? String ?? "").lowercased().replacingOccurrences(
                        of: workout.lowercased(), with: "ID")
                }
                #expect(othersText == unknownText, "another person's workout answers as a missing one")
                try await client.execute(uri: "/v1/changes", method: .get, headers: auth(tokens[1])) { r in
                    let added = object(r.body)["added"] as? [[String: Any]] ?? []
                    #expect(added.isEmpty)
                }
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .get, headers: auth(tokens[0])) { r in
                    #expect(r.status == .ok)
                }
                // Tokens of a person, listed without secrets; one revoked.
                let listedTokens = try await client.execute(
                    uri: "/v1/people/\(ids[1])/tokens", method: .get, headers: auth(admin)
                ) { r -> [[String: Any]] in
                    object(r.body)["tokens"] as? [[String: Any]] ?? []
                }
                #expect(listedTokens.count == 1)
                let bodyText = listedTokens.description
                #expect(!bodyText.contains(tokens[1]))
                // `admin` is no person's scope.
                try await client.execute(
                    uri: "/v1/people/\(ids[1])/tokens", method: .post, headers: auth(admin),
                    body: json(["scopes": ["admin"]])
                ) { r in #expect(r.status == .badRequest) }
                // The default person cannot be erased; Ana can, and her token stops working.
                try await client.execute(
                    uri: "/v1/people/\(PersonID.default.description)", method: .delete, headers: auth(admin)
                ) { r in #expect(r.status == .conflict) }
                try await client.execute(uri: "/v1/people/\(ids[0])", method: .delete, headers: auth(admin)) { r in
                    #expect(r.status == .noContent)
                }
                try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(tokens[0])) { r in
                    #expect(r.status == .unauthorized)
                }
                try await client.execute(uri: "/v1/people/\(ids[0])", method: .get, headers: auth(admin)) { r in
                    #expect(r.status == .notFound)
                }
            }
            // Nothing landed in the default person (the view the server was given).
            let ofDefault = try await f.store.workouts(matching: WorkoutFilter())
            #expect(ofDefault.isEmpty)
        }

        @Test("a person's uploads a minute and event streams over all their tokens are limited: 429 with Retry-After")
        func perPersonLimits() async throws {
            var f = try Fixture()
            f.configuration.maxUploadsPerMinutePerPerson = 2
            f.configuration.maxStreamsPerPerson = 1
            let other = try await f.token(source: "watch")
            let phone = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                for (i, expected) in [HTTPResponse.Status.ok, .ok, .tooManyRequests].enumerated() {
                    try await client.execute(
                        uri: "/v1/uploads?name=u\(i).gpx", method: .post, headers: auth(phone),
                        body: ByteBuffer(string: gpx(name: "u\(i)", hour: 6 + i))
                    ) { r in
                        let accepted = r.status == .ok || r.status == .created
                        #expect(expected == .ok ? accepted : r.status == expected, "upload \(i)")
                        if !accepted {
                            #expect(problemType(r) == "too-many-uploads")
                            #expect(r.headers[.retryAfter].flatMap { Int($0) }.map { $0 >= 1 } == true)
                        }
                    }
                }
                // The other token of the same person shares the person's budget.
                try await client.execute(
                    uri: "/v1/uploads?name=w.gpx", method: .post, headers: auth(other),
                    body: ByteBuffer(string: gpx(name: "w", hour: 12))
                ) { r in #expect(r.status == .tooManyRequests) }
            }
        }

        /// A person added to the fixture's store, and a read-and-write token of theirs for the source `phone`.
        func person(_ f: Fixture, _ name: String) async throws -> (id: PersonID, token: String) {
            let person = Person(name: name)
            try await f.store.addPerson(person)
            let made = TokenText.make(
                name: name, person: person.id, source: try Source(name: "phone"), scopes: [.read, .write])
            try await f.store.saveToken(made.token)
            return (person.id, made.text)
        }

        @Test(
            "a person at or over their storage quota gets 507 storage-quota for an upload, a new builder and a batch; the upload that crossed it is stored; others still upload; a deletion frees space"
        )
        func storageQuota() async throws {
            var f = try Fixture()
            f.configuration.maxStoredBytesPerPerson = 20_000
            f.configuration.storageMeasureSeconds = 0
            let ana = try await person(f, "Ana")
            let ben = try await person(f, "Ben")
            let store = f.store
            try await f.app().test(.router) { client in
                // A builder made under the quota, for a batch sent once over it.
                let made = try await client.execute(uri: "/v1/builders", method: .post, headers: auth(ana.token))
                #expect(made.status == .created)
                let builder = object(made.body)["id"] as? String ?? ""
                // Ana uploads until she is refused: every upload made under the quota is stored whole.
                var workouts: [String] = []
                var refused: TestResponse?
                for i in 0..<100 where refused == nil {
                    let r = try await client.execute(
                        uri: "/v1/uploads?name=q\(i).gpx", method: .post, headers: auth(ana.token),
                        body: ByteBuffer(string: gpx(name: "q\(i)", points: 50, lat: 40 + Double(i) / 10)))
                    guard r.status.code != 507 else {
                        refused = r
                        continue
                    }
                    #expect(r.status == .created, "upload \(i)")
                    let results = object(r.body)["results"] as? [[String: Any]] ?? []
                    let routes = results.first?["routes"] as? [[String: Any]] ?? []
                    workouts.append(routes.first?["workout"] as? String ?? "")
                }
                let refusal = try #require(refused, "Ana's uploads were never refused")
                #expect(workouts.count >= 2, "uploads under the quota are stored")
                #expect(problemType(refusal) == "storage-quota")
                let problem = object(refusal.body)
                let used = try await store.storageUsed(by: ana.id)
                #expect(used >= 20_000, "the upload that crossed the quota was stored whole: \(used) bytes")
                #expect((problem["usedBytes"] as? Int).map { Int64($0) } == used)
                #expect(problem["limitBytes"] as? Int == 20_000)
                let detail = problem["detail"] as? String ?? ""
                #expect(detail.contains("0.02 MiB") && detail.contains("delete workouts"), "\(detail)")

                // Over the quota, a new builder and a batch of the builder made before are refused too.
                let another = try await client.execute(uri: "/v1/builders", method: .post, headers: auth(ana.token))
                #expect(another.status.code == 507)
                #expect(problemType(another) == "storage-quota")
                let batch = try await client.execute(
                    uri: "/v1/builders/\(builder)/locations?first=0", method: .post,
                    headers: auth(ana.token, [.contentType: "application/json"]),
                    body: ByteBuffer(string: #"[{"latitude": 47.1, "longitude": 8.5, "time": "2024-05-01T06:00:00Z"}]"#))
                #expect(batch.status.code == 507)
                #expect(problemType(batch) == "storage-quota")

                // Ben's quota is his own.
                let benUpload = try await client.execute(
                    uri: "/v1/uploads?name=b.gpx", method: .post, headers: auth(ben.token),
                    body: ByteBuffer(string: gpx(name: "b", points: 50, lat: 30)))
                #expect(benUpload.status == .created)

                // Deleting the workout that crossed the quota takes Ana under it again: she uploads.
                let last = try #require(workouts.last)
                let deleted = try await client.execute(
                    uri: "/v1/workouts/\(last)", method: .delete, headers: auth(ana.token))
                #expect(deleted.status == .noContent)
                let again = try await client.execute(
                    uri: "/v1/uploads?name=again.gpx", method: .post, headers: auth(ana.token),
                    body: ByteBuffer(string: gpx(name: "again", points: 50, lat: 20)))
                #expect(again.status == .created)
            }
        }

        @Test("a person's event streams are counted over all their tokens: the second token's stream gets 429")
        func perPersonStreams() async throws {
            var f = try Fixture()
            f.configuration.maxStreamsPerPerson = 1
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let (opened, signalOpened) = AsyncStream<Void>.makeStream()
                let held = Task {
                    defer { signalOpened.finish() }
                    let response = try await HTTPClient.shared.execute(
                        request(port, "/v1/changes", token: phone), timeout: .seconds(30))
                    var reader = EventReader(response.body)
                    _ = try await reader.next()
                    signalOpened.yield()
                    try await Task.sleep(for: .seconds(30))
                    _ = reader
                }
                var openedEvents = opened.makeAsyncIterator()
                _ = await openedEvents.next()
                let second = try await HTTPClient.shared.execute(
                    request(port, "/v1/changes", token: watch), timeout: .seconds(30))
                #expect(second.status.code == 429, "the person's second stream is refused, whatever its token")
                held.cancel()
                var freed = false
                for _ in 0..<100 where !freed {
                    try await Task.sleep(for: .milliseconds(50))
                    let r = try await HTTPClient.shared.execute(
                        request(port, "/v1/changes", token: watch), timeout: .seconds(30))
                    freed = r.status == .ok
                }
                #expect(freed, "a closed stream frees the person's slot")
            }
        }
    }
#endif
