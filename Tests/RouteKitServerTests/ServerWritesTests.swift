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

    @Suite("routekit serve: deleting workouts and routes, effort scores, the list of builders")
    struct ServerWritesTests {
        /// Uploads a GPX file as `token`'s source and returns its workout's and route's uuids.
        func upload(_ client: some TestClientProtocol, _ token: String, _ name: String, hour: Int) async throws -> (
            workout: String, route: String
        ) {
            try await client.execute(
                uri: "/v1/uploads?name=\(name).gpx", method: .post, headers: auth(token),
                body: ByteBuffer(string: gpx(name: name, hour: hour))
            ) { r in
                #expect(r.status == .created)
                let routes = (json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]]
                return (
                    workout: routes?.first?["workout"] as? String ?? "", route: routes?.first?["route"] as? String ?? ""
                )
            }
        }

        /// The feed's anchor now, for `token`.
        func anchor(_ client: some TestClientProtocol, _ token: String) async throws -> String {
            try await client.execute(uri: "/v1/changes", method: .get, headers: auth(token)) { r in
                #expect(r.status == .ok)
                return json(r.body)["anchor"] as? String ?? ""
            }
        }

        /// The uuids of the routes the feed lists as deleted after `anchor`.
        func deletedSince(_ client: some TestClientProtocol, _ token: String, _ anchor: String) async throws
            -> [String]
        {
            try await client.execute(uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)) { r in
                #expect(r.status == .ok)
                let deleted = json(r.body)["deleted"] as? [[String: Any]] ?? []
                return deleted.compactMap { $0["uuid"] as? String }
            }
        }

        /// A problem's `detail` with `id` taken out (to compare the answers for two uuids).
        func detail(_ response: TestResponse, without id: String) -> String {
            (json(response.body)["detail"] as? String ?? "?").replacingOccurrences(of: id, with: "ID")
        }

        @Test("DELETE /v1/workouts/ID: 204 for its source, then 404; the feed from an earlier anchor lists its route as deleted")
        func deleteWorkout() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            // May write as "viewer" but read only its own source: phone's workout does not exist for it.
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            let reader = try await f.token(source: "phone", scopes: [.read])
            try await f.app().test(.router) { client in
                let (workout, route) = try await upload(client, phone, "a", hour: 6)
                let start = try await anchor(client, phone)

                // Another source that may read it: 403, and the workout stays.
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(watch)) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "foreign-source")
                }
                // A token that may not read its source: 404, worded as for a uuid that names nothing.
                let hidden = try await client.execute(
                    uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(blind))
                #expect(hidden.status == .notFound)
                #expect(problemType(hidden) == "not-found")
                #expect(!String(buffer: hidden.body).contains("phone"))
                let nothing = UUID().uuidString.lowercased()
                let missing = try await client.execute(
                    uri: "/v1/workouts/\(nothing)", method: .delete, headers: auth(blind))
                #expect(missing.status == .notFound)
                #expect(detail(hidden, without: workout) == detail(missing, without: nothing))
                // Without the write scope: 403 for the scope. Not a uuid: 400.
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(reader)) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "insufficient-scope")
                }
                try await client.execute(uri: "/v1/workouts/nope", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .badRequest)
                }
                // A route's uuid is not a workout's.
                try await client.execute(uri: "/v1/workouts/\(route)", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .get, headers: auth(phone)) {
                    #expect($0.status == .ok)
                }
                #expect(try await deletedSince(client, phone, start).isEmpty, "nothing deleted by refused requests")

                try await client.execute(uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(phone)) { r in
                    #expect(r.status == .noContent)
                    #expect(r.body.readableBytes == 0)
                }
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .get, headers: auth(phone)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/v1/routes/\(route)", method: .get, headers: auth(phone)) {
                    #expect($0.status == .notFound)
                }
                #expect(try await deletedSince(client, phone, start) == [route])
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .notFound, "deleted once")
                }
            }
            #expect(try await f.store.workouts(matching: WorkoutFilter()).isEmpty)
        }

        @Test("DELETE /v1/routes/ID: 403 for another source, 404 for a token that cannot read it, 204 for its own; the feed shows it")
        func deleteRoute() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            try await f.app().test(.router) { client in
                let (workout, route) = try await upload(client, phone, "r", hour: 7)
                let start = try await anchor(client, phone)
                let blindStart = try await anchor(client, blind)
                try await client.execute(uri: "/v1/routes/\(route)", method: .delete, headers: auth(watch)) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "foreign-source")
                }
                try await client.execute(uri: "/v1/routes/\(route)", method: .delete, headers: auth(blind)) { r in
                    #expect(r.status == .notFound)
                    #expect(!String(buffer: r.body).contains("phone"))
                }
                try await client.execute(uri: "/v1/routes/\(workout)", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .notFound, "a workout's uuid is not a route's")
                }
                try await client.execute(uri: "/v1/routes/\(route)", method: .get, headers: auth(phone)) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/v1/routes/\(route)", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .noContent)
                }
                try await client.execute(uri: "/v1/routes/\(route)", method: .get, headers: auth(phone)) {
                    #expect($0.status == .notFound)
                }
                // The workout stays, without routes.
                try await client.execute(uri: "/v1/workouts/\(workout)", method: .get, headers: auth(phone)) { r in
                    #expect(r.status == .ok)
                    #expect((json(r.body)["routes"] as? [Any])?.isEmpty == true)
                }
                #expect(try await deletedSince(client, phone, start) == [route])
                // The feed of a token that may not read the route's source does not show it.
                #expect(try await deletedSince(client, blind, blindStart).isEmpty)
            }
            #expect(try await f.store.routes(matching: RouteFilter()).isEmpty)
        }

        @Test("POST /v1/workouts/ID/effort: 201 with the score; bad bodies are 400s naming the field and store nothing")
        func relateEffort() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            let reader = try await f.token(source: "phone", scopes: [.read])
            try await f.app().test(.router) { client in
                let (workout, _) = try await upload(client, phone, "e", hour: 6)
                let id = try #require(UUID(uuidString: workout))
                func post(_ token: String, _ body: String, to target: String? = nil) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/workouts/\(target ?? workout)/effort", method: .post,
                        headers: auth(token, [.contentType: "application/json"]), body: ByteBuffer(string: body))
                }
                var r = try await post(phone, #"{"score": 7}"#)
                #expect(r.status == .created)
                let manual = json(r.body)
                #expect(manual["score"] as? Double == 7)
                #expect(manual["manual"] as? Bool == true)
                #expect(manual["effective"] as? Bool == true)
                #expect(manual["source"] as? String == "phone")
                let manualID = try #require(manual["uuid"] as? String)
                #expect(try await f.store.efforts(ofWorkout: id).map { $0.id.uuidString.lowercased() } == [manualID])

                for (body, field) in [
                    (#"{"score": 11}"#, "'score'"), (#"{"score": 0.5}"#, "'score'"), (#"{"score": "high"}"#, "'score'"),
                    (#"{"estimated": true}"#, "'score'"), (#"{"score": 5, "estimated": "yes"}"#, "'estimated'"),
                    ("[7]", "'score'"), ("", "'score'"),
                ] {
                    r = try await post(phone, body)
                    #expect(r.status == .badRequest, "\(body)")
                    #expect(problemType(r) == "invalid-argument", "\(body)")
                    #expect((json(r.body)["detail"] as? String)?.contains(field) == true, "\(body): \(String(buffer: r.body))")
                }
                // Not the scope, not a workout the token may read, no such workout: refused too.
                #expect(try await post(reader, #"{"score": 3}"#).status == .forbidden)
                #expect(try await post(blind, #"{"score": 3}"#).status == .notFound)
                #expect(try await post(phone, #"{"score": 3}"#, to: UUID().uuidString).status == .notFound)
                #expect(try await f.store.efforts(ofWorkout: id).count == 1, "refused requests stored nothing")

                // Another source may relate an estimate; the manual score still counts.
                r = try await post(watch, #"{"score": 4, "estimated": true}"#)
                #expect(r.status == .created)
                #expect(json(r.body)["manual"] as? Bool == false)
                #expect(json(r.body)["effective"] as? Bool == false)
                try await client.execute(uri: "/v1/workouts/\(workout)/effort", method: .get, headers: auth(phone)) {
                    let body = json($0.body)
                    #expect((body["scores"] as? [Any])?.count == 2)
                    #expect((body["effective"] as? [String: Any])?["uuid"] as? String == manualID)
                }
            }
        }

        @Test("DELETE /v1/workouts/ID/effort/SCORE: only the source that related it (403), 404 elsewhere, 204 then gone")
        func unrelateEffort() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            try await f.app().test(.router) { client in
                let (workout, _) = try await upload(client, phone, "u", hour: 6)
                let (other, _) = try await upload(client, phone, "v", hour: 8)
                let id = try #require(UUID(uuidString: workout))
                func relate(_ token: String, _ body: String) async throws -> String {
                    try await client.execute(
                        uri: "/v1/workouts/\(workout)/effort", method: .post, headers: auth(token),
                        body: ByteBuffer(string: body)
                    ) { r in
                        #expect(r.status == .created)
                        return json(r.body)["uuid"] as? String ?? ""
                    }
                }
                let mine = try await relate(phone, #"{"score": 8}"#)
                let theirs = try await relate(watch, #"{"score": 5, "estimated": true}"#)
                func unrelate(_ token: String, _ score: String, of target: String? = nil) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/workouts/\(target ?? workout)/effort/\(score)", method: .delete, headers: auth(token))
                }
                var r = try await unrelate(watch, mine)
                #expect(r.status == .forbidden)
                #expect(problemType(r) == "foreign-source")
                r = try await unrelate(blind, mine)
                #expect(r.status == .notFound)
                #expect(try await unrelate(phone, mine, of: other).status == .notFound, "not that workout's score")
                #expect(try await unrelate(phone, UUID().uuidString).status == .notFound)
                #expect(try await unrelate(phone, "nope").status == .badRequest)
                #expect(try await f.store.efforts(ofWorkout: id).count == 2, "refused requests changed nothing")

                r = try await unrelate(phone, mine)
                #expect(r.status == .noContent)
                #expect(try await unrelate(phone, mine).status == .notFound, "unrelated once")
                try await client.execute(uri: "/v1/workouts/\(workout)/effort", method: .get, headers: auth(phone)) {
                    let body = json($0.body)
                    let scores = body["scores"] as? [[String: Any]] ?? []
                    #expect(scores.compactMap { $0["uuid"] as? String } == [theirs])
                    #expect((body["effective"] as? [String: Any])?["uuid"] as? String == theirs)
                }
                // The path takes DELETE only: GET is 405 with Allow.
                try await client.execute(
                    uri: "/v1/workouts/\(workout)/effort/\(theirs)", method: .get, headers: auth(phone)
                ) { r in
                    #expect(r.status == .methodNotAllowed)
                    #expect(r.headers[.allow] == "DELETE")
                }
            }
        }

        @Test("GET /v1/changes?types=: workouts and effort scores added and deleted, only the readable sources'; a bad type is a 400")
        func feedObjects() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            try await f.app().test(.router) { client in
                let start = try await anchor(client, phone)
                let (workout, route) = try await upload(client, phone, "o", hour: 6)
                let effort = try await client.execute(
                    uri: "/v1/workouts/\(workout)/effort", method: .post,
                    headers: auth(phone, [.contentType: "application/json"]), body: ByteBuffer(string: #"{"score": 6}"#))
                #expect(effort.status == .created)
                let score = json(effort.body)["uuid"] as? String
                func objects(_ token: String, _ query: String) async throws -> [String: Any] {
                    try await client.execute(uri: "/v1/changes?\(query)", method: .get, headers: auth(token)) { r in
                        #expect(r.status == .ok)
                        return json(r.body)
                    }
                }
                let added = try await objects(phone, "anchor=\(start)&types=workout,effort")
                let list = added["addedObjects"] as? [[String: Any]] ?? []
                #expect(list.compactMap { $0["type"] as? String } == ["workout", "effort"])
                #expect(list.compactMap { $0["uuid"] as? String } == [workout, score ?? "?"])
                #expect((added["added"] as? [Any])?.isEmpty == true, "routes were not asked for")
                let workoutData = list.first?["data"] as? [String: Any]
                #expect(workoutData?["activity"] as? String != nil)
                let both = try await objects(phone, "anchor=\(start)&types=route,workout")
                #expect((both["added"] as? [[String: Any]])?.compactMap { $0["uuid"] as? String } == [route])
                let hidden = try await objects(blind, "types=all")
                #expect((hidden["addedObjects"] as? [Any])?.isEmpty == true, "another source's objects are not shown")

                let next = added["anchor"] as? String ?? ""
                let gone = try await client.execute(uri: "/v1/workouts/\(workout)", method: .delete, headers: auth(phone))
                #expect(gone.status == .noContent)
                let deleted = try await objects(phone, "anchor=\(next)&types=workout,effort")
                let removed = deleted["deletedObjects"] as? [[String: Any]] ?? []
                #expect(removed.compactMap { $0["type"] as? String } == ["effort", "workout"])
                #expect(removed.last?["uuid"] as? String == workout)

                let bad = try await client.execute(
                    uri: "/v1/changes?types=workouts", method: .get, headers: auth(phone))
                #expect(bad.status == .badRequest)
                #expect(String(buffer: bad.body).contains("'workouts' is not a change type"))
            }
        }

        @Test(
            "PUT /v1/workouts/ID/zones/heartRate: saved with the workout (origin app), its stats use them; 403 for another source, 404 unseen"
        )
        func workoutZones() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let blind = try await f.token(source: "viewer", scopes: [.read, .write], readable: ["viewer"])
            try await f.app().test(.router) { client in
                let (workout, _) = try await upload(client, phone, "z", hour: 6)
                let (other, _) = try await upload(client, phone, "y", hour: 8)
                func put(_ token: String, _ id: String, _ body: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/workouts/\(id)/zones/heartRate", method: .put,
                        headers: auth(token, [.contentType: "application/json"]), body: ByteBuffer(string: body))
                }
                // The person's zones, then the workout's own over them.
                let person = try await client.execute(
                    uri: "/v1/zones/heartRate", method: .put, headers: auth(phone, [.contentType: "application/json"]),
                    body: ByteBuffer(string: #"{"boundaries": [110, 130, 150, 170]}"#))
                #expect(person.status == .ok)
                let saved = try await put(phone, workout, #"{"boundaries": [121, 141, 155, 171]}"#)
                #expect(saved.status == .ok)
                #expect(json(saved.body)["origin"] as? String == "app")
                #expect(json(saved.body)["boundaries"] as? [Double] == [121, 141, 155, 171])
                func statsOrigin(_ id: String) async throws -> [String: Any] {
                    try await client.execute(uri: "/v1/workouts/\(id)/stats", method: .get, headers: auth(phone)) {
                        r in
                        #expect(r.status == .ok)
                        return json(r.body)["zoneConfiguration"] as? [String: Any] ?? [:]
                    }
                }
                let own = try await statsOrigin(workout)
                #expect(own["origin"] as? String == "app")
                #expect(own["boundaries"] as? [Double] == [121, 141, 155, 171])
                let theirs = try await statsOrigin(other)
                #expect(theirs["origin"] as? String == "user", "another workout keeps the person's")
                let read = try await client.execute(
                    uri: "/v1/workouts/\(workout)/zones/heartRate", method: .get, headers: auth(phone))
                #expect(json(read.body)["origin"] as? String == "app")

                let foreign = try await put(watch, workout, #"{"boundaries": [100, 120, 140, 160]}"#)
                #expect(foreign.status == .forbidden)
                let unseen = try await put(blind, workout, #"{"boundaries": [100, 120, 140, 160]}"#)
                #expect(unseen.status == .notFound)
                let bad = try await put(phone, workout, #"{"boundaries": [150, 140]}"#)
                #expect(bad.status == .badRequest)
                let still = try await statsOrigin(workout)
                #expect(still["boundaries"] as? [Double] == [121, 141, 155, 171], "refused requests change nothing")

                let cleared = try await client.execute(
                    uri: "/v1/workouts/\(workout)/zones/heartRate", method: .delete, headers: auth(phone))
                #expect(cleared.status == .noContent)
                let back = try await statsOrigin(workout)
                #expect(back["origin"] as? String == "user", "cleared: the person's again")
            }
        }

        @Test("GET /v1/builders lists the token's source's open builders only")
        func listBuilders() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let reader = try await f.token(source: "phone", scopes: [.read])
            try await f.app().test(.router) { client in
                func create(_ token: String) async throws -> String {
                    try await client.execute(uri: "/v1/builders", method: .post, headers: auth(token)) {
                        #expect($0.status == .created)
                        return json($0.body)["id"] as? String ?? ""
                    }
                }
                func list(_ token: String) async throws -> [[String: Any]] {
                    try await client.execute(uri: "/v1/builders", method: .get, headers: auth(token)) { r in
                        #expect(r.status == .ok)
                        return json(r.body)["builders"] as? [[String: Any]] ?? []
                    }
                }
                #expect(try await list(phone).isEmpty)
                let first = try await create(phone)
                let second = try await create(phone)
                let discarded = try await create(phone)
                let finished = try await create(phone)
                let watchs = try await create(watch)
                try await client.execute(
                    uri: "/v1/builders/\(second)/locations?first=0", method: .post, headers: auth(phone),
                    body: ByteBuffer(string: locationsJSON(from: 0, count: 3))
                ) { #expect($0.status == .ok) }
                try await client.execute(uri: "/v1/builders/\(discarded)", method: .delete, headers: auth(phone)) {
                    #expect($0.status == .noContent)
                }
                try await client.execute(
                    uri: "/v1/builders/\(finished)/locations?first=0", method: .post, headers: auth(phone),
                    body: ByteBuffer(string: locationsJSON(from: 0, count: 2))
                ) { #expect($0.status == .ok) }
                try await client.execute(
                    uri: "/v1/builders/\(finished)/finish", method: .post, headers: auth(phone),
                    body: ByteBuffer(string: #"{"syncIdentifier": "b", "syncVersion": 1}"#)
                ) { #expect($0.status == .created) }

                let phones = try await list(phone)
                #expect(Set(phones.compactMap { $0["id"] as? String }) == [first, second])
                #expect(phones.count == 2)
                #expect(Set(phones.compactMap { $0["source"] as? String }) == ["phone"])
                let held = Dictionary(
                    phones.map { ($0["id"] as? String ?? "", $0["locations"] as? Int ?? -1) }, uniquingKeysWith: { a, _ in a })
                #expect(held == [first: 0, second: 3])
                #expect(phones.allSatisfy { $0["order"] as? String == "timestamp" && $0["created"] is String })
                #expect(try await list(watch).compactMap { $0["id"] as? String } == [watchs])
                try await client.execute(uri: "/v1/builders", method: .get, headers: auth(reader)) { r in
                    #expect(r.status == .forbidden)
                    #expect(problemType(r) == "insufficient-scope")
                }
            }
        }
    }
#endif
