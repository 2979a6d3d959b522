#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitSQLite
    import RouteKitServer
    import Testing

    @Suite("routekit serve: paged workouts")
    struct WorkoutPagingTests {
        /// Uploads `count` workouts named `prefix-0…` as `token`'s source.
        func upload(_ client: some TestClientProtocol, _ token: String, _ prefix: String, _ count: Int, hour: Int)
            async throws
        {
            for i in 0..<count {
                try await client.execute(
                    uri: "/v1/uploads?name=\(prefix)-\(i).gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "\(prefix)-\(i)", points: 5 + i, hour: hour))
                ) { #expect($0.status == .created) }
            }
        }

        /// One page: the workouts' names (metadata `name`), `next` and `anchor`.
        func page(_ client: some TestClientProtocol, _ token: String, _ query: String) async throws -> (
            names: [String], next: String?, anchor: String?, status: HTTPResponse.Status
        ) {
            try await client.execute(uri: "/v1/workouts?\(query)", method: .get, headers: auth(token)) { r in
                let body = json(r.body)
                let names = (body["workouts"] as? [[String: Any]] ?? []).map {
                    ($0["metadata"] as? [String: Any])?["name"] as? String ?? "?"
                }
                #expect(r.status != .ok || body.keys.contains("next"), "next is always there, null on the last page")
                return (names, body["next"] as? String, body["anchor"] as? String, r.status)
            }
        }

        @Test("/v1/workouts pages with limit and after: first page, next page, end; order=newest; bad cursors are 400")
        func paging() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                try await upload(client, token, "w", 5, hour: 6)
                let all = try await page(client, token, "")
                #expect(all.names == ["w-0", "w-1", "w-2", "w-3", "w-4"])
                #expect(all.next == nil)
                let first = try await page(client, token, "limit=2")
                #expect(first.names == ["w-0", "w-1"])
                let cursor = try #require(first.next)
                let second = try await page(client, token, "limit=2&after=\(cursor)")
                #expect(second.names == ["w-2", "w-3"])
                let third = try await page(client, token, "limit=2&after=\(try #require(second.next))")
                #expect(third.names == ["w-4"])
                #expect(third.next == nil)
                // Exactly a page left: the last full page says there is no next.
                let exact = try await page(client, token, "limit=5")
                #expect(exact.names.count == 5 && exact.next == nil)

                let newest = try await page(client, token, "limit=3&order=newest")
                #expect(newest.names == ["w-4", "w-3", "w-2"])
                let older = try await page(client, token, "limit=3&order=newest&after=\(try #require(newest.next))")
                #expect(older.names == ["w-1", "w-0"])
                #expect(older.next == nil)

                // The cursor's workout deleted meanwhile: the next page starts at the same position.
                let workouts = try await f.store.workouts(matching: WorkoutFilter())
                let w1 = try #require(workouts.first { $0.metadata["name"] == .string("w-1") })
                try await f.store.deleteWorkout(id: w1.id, as: try Source(name: "phone"))
                let afterGone = try await page(client, token, "limit=2&after=\(cursor)")
                #expect(afterGone.names == ["w-3", "w-4"])

                for bad in ["x", "1", "-1.\(UUID().uuidString)", "2.not-a-uuid", "1.2.3"] {
                    #expect(try await page(client, token, "after=\(bad)").status == .badRequest)
                }
                #expect(try await page(client, token, "order=sideways").status == .badRequest)
            }
        }

        @Test("/v1/routes pages like workouts: limit, after, next, order=newest, a deleted cursor, readable sources, 400s")
        func routePaging() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let onlyPhone = try await f.token(source: "viewer", scopes: [.read], readable: ["phone"])
            try await f.app().test(.router) { client in
                for i in 0..<3 {
                    try await upload(client, phone, "p\(i)", 1, hour: 6)
                    try await upload(client, watch, "w\(i)", 1, hour: 7)
                }
                func routes(_ token: String, _ query: String) async throws -> (
                    ids: [String], next: String?, anchor: String?, status: HTTPResponse.Status
                ) {
                    try await client.execute(uri: "/v1/routes?\(query)", method: .get, headers: auth(token)) { r in
                        let body = json(r.body)
                        #expect(r.status != .ok || body.keys.contains("next"), "next is always there")
                        let ids = (body["routes"] as? [[String: Any]] ?? []).compactMap { $0["uuid"] as? String }
                        return (ids, body["next"] as? String, body["anchor"] as? String, r.status)
                    }
                }
                let all = try await routes(phone, "")
                #expect(all.ids.count == 6 && all.next == nil && all.anchor != nil)
                var pages: [[String]] = []
                var query = "limit=4"
                while pages.count < 5 {
                    let p = try await routes(phone, query)
                    pages.append(p.ids)
                    guard let next = p.next else { break }
                    query = "limit=4&after=\(next)"
                }
                #expect(pages.map(\.count) == [4, 2], "two pages: \(pages)")
                #expect(pages.flatMap { $0 } == all.ids, "in saving order, none twice")
                let newest = try await routes(phone, "order=newest")
                #expect(newest.ids == all.ids.reversed())
                let first = try await routes(phone, "limit=2")
                let cursor = try #require(first.next)
                // The cursor's route deleted meanwhile: the next page starts at the same position.
                let gone = try #require(UUID(uuidString: all.ids[1]))
                try await f.store.deleteRoute(id: gone, as: try Source(name: "watch"))
                let afterGone = try await routes(phone, "limit=2&after=\(cursor)")
                #expect(afterGone.ids == [all.ids[3], all.ids[4]], "\(afterGone.ids)")
                var viewer: [String] = []
                query = "limit=1"
                while viewer.count < 10 {
                    let p = try await routes(onlyPhone, query)
                    viewer += p.ids
                    guard let next = p.next else { break }
                    query = "limit=1&after=\(next)"
                }
                #expect(viewer == [all.ids[0], all.ids[2], all.ids[4]], "only the phone's routes, on every page")
                #expect(try await routes(phone, "after=1.2.3").status == .badRequest)
                #expect(try await routes(phone, "order=sideways").status == .badRequest)
            }
        }

        @Test("paged workouts leave out sources the token may not read, on every page")
        func pagingReadableSources() async throws {
            let f = try Fixture()
            let phone = try await f.token(source: "phone")
            let watch = try await f.token(source: "watch")
            let onlyPhone = try await f.token(source: "viewer", scopes: [.read], readable: ["phone"])
            try await f.app().test(.router) { client in
                // Interleaved: phone, watch, phone, watch, …
                for i in 0..<4 {
                    try await upload(client, phone, "p\(i)", 1, hour: 6)
                    try await upload(client, watch, "w\(i)", 1, hour: 7)
                }
                var names: [String] = []
                var query = "limit=3"
                var pages = 0
                while true {
                    let p = try await page(client, onlyPhone, query)
                    #expect(p.status == .ok)
                    names += p.names
                    pages += 1
                    guard let next = p.next, pages < 10 else { break }
                    query = "limit=3&after=\(next)"
                }
                #expect(names == ["p0-0", "p1-0", "p2-0", "p3-0"])
                #expect(pages == 2)
                let everyone = try await page(client, phone, "limit=100")
                #expect(everyone.names.count == 8)
            }
        }

        @Test("the list's anchor is where the feed continues: a route uploaded after the list is the next change")
        func listAnchor() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                try await upload(client, token, "before", 2, hour: 6)
                let listed = try await page(client, token, "limit=1")
                let anchor = try #require(listed.anchor)
                try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)
                ) { r in
                    #expect(r.status == .ok)
                    #expect((json(r.body)["added"] as? [Any])?.isEmpty == true)
                }
                try await upload(client, token, "after", 1, hour: 8)
                try await client.execute(
                    uri: "/v1/changes?anchor=\(anchor)", method: .get, headers: auth(token)
                ) { r in
                    let added = json(r.body)["added"] as? [[String: Any]] ?? []
                    #expect(added.count == 1)
                    #expect(added.first?["syncIdentifier"] as? String != nil)
                }
            }
        }
    }
#endif
