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

    @Suite("routekit serve: the web view")
    struct WebViewTests {
        @Test("/ serves the page without a token, same-origin CSP, nosniff, no-cache with an ETag that revalidates")
        func page() async throws {
            let f = try Fixture()
            try await f.app().test(.router) { client in
                let tag = try await client.execute(uri: "/", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "text/html; charset=utf-8")
                    let csp = r.headers[.contentSecurityPolicy] ?? ""
                    #expect(csp.contains("default-src 'none'"))
                    #expect(csp.contains("script-src 'self'"))
                    #expect(csp.contains("connect-src 'self'"))
                    #expect(!csp.contains("unsafe-inline"))
                    #expect(r.headers[.xContentTypeOptions] == "nosniff")
                    #expect(r.headers[.cacheControl] == "no-cache")
                    let html = String(buffer: r.body)
                    #expect(html.hasPrefix("<!doctype html>"))
                    #expect(html.contains("<script src=\"/web/app.js\" defer></script>"))
                    #expect(html.contains("<label for=\"token\">"))
                    // No inline script or style (the CSP would block them) and nothing from another origin.
                    #expect(!html.contains("<script>"))
                    #expect(!html.contains("<style"))
                    #expect(!html.contains("http://") && !html.contains("https://"))
                    return r.headers[.eTag] ?? ""
                }
                #expect(tag.hasPrefix("\""))
                try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: tag]) { r in
                    #expect(r.status == .notModified)
                    #expect(r.body.readableBytes == 0)
                }
                try await client.execute(uri: "/", method: .get, headers: [.ifNoneMatch: "\"other\""]) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/web/app.js", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "text/javascript; charset=utf-8")
                    #expect(r.headers[.xContentTypeOptions] == "nosniff")
                    let js = String(buffer: r.body)
                    #expect(js.contains("new EventSource("))
                    #expect(js.contains("Authorization: `Bearer ${state.token}`"))
                    #expect(!js.contains("localStorage"))
                }
                try await client.execute(uri: "/web/app.css", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "text/css; charset=utf-8")
                }
                try await client.execute(uri: "/favicon.ico", method: .get) { #expect($0.status == .noContent) }
                // The data stays behind tokens.
                try await client.execute(uri: "/v1/workouts", method: .get) { #expect($0.status == .unauthorized) }
            }
        }

        @Test("locations?max=N: at most N, evenly spread, the first and last included, with their own ETag")
        func sampledLocations() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                let route = try await client.execute(
                    uri: "/v1/uploads?name=long.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "long", points: 100))
                ) { r in
                    let routes = (json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]]
                    return routes?.first?["route"] as? String ?? ""
                }
                func lines(_ query: String) async throws -> (lines: [String], tag: String?, status: HTTPResponse.Status) {
                    try await client.execute(
                        uri: "/v1/routes/\(route)/locations\(query)", method: .get, headers: auth(token)
                    ) { r in
                        (String(buffer: r.body).split(separator: "\n").map(String.init), r.headers[.eTag], r.status)
                    }
                }
                let all = try await lines("")
                #expect(all.lines.count == 100)
                for max in [2, 3, 10, 33, 99] {
                    let some = try await lines("?max=\(max)")
                    #expect(some.status == .ok)
                    #expect(some.lines.count <= max && some.lines.count >= max / 2, "max \(max): \(some.lines.count)")
                    #expect(some.lines.first == all.lines.first && some.lines.last == all.lines.last, "max \(max)")
                    #expect(Set(some.lines).isSubset(of: Set(all.lines)))
                    #expect(some.tag != nil && some.tag != all.tag)
                }
                let ten = try await lines("?max=10")
                #expect(ten.lines.count == 10, "every 11th of 100 and the last")
                let enough = try await lines("?max=100")
                #expect(enough.lines == all.lines && enough.tag == all.tag)
                #expect(try await lines("?max=1").status == .badRequest)
                #expect(try await lines("?max=lots").status == .badRequest)
            }
        }
    }
#endif
