#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import Testing

    @Suite("routekit serve: route pictures")
    struct ServerPictureTests {
        @Test("GET /v1/routes/ID/picture: SVG and PNG of the route, ETag and 304, bad parameters 400, other sources 404")
        func picture() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let stranger = try await f.token(source: "watch", readable: ["watch"])
            try await f.app().test(.router) { client in
                let route = try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "picture walk", points: 42))
                ) { r in
                    ((json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]])?.first?["route"]
                        as? String ?? ""
                }
                let tag = try await client.execute(
                    uri: "/v1/routes/\(route)/picture?size=800x600", method: .get, headers: auth(token)
                ) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "image/svg+xml")
                    let svg = String(buffer: r.body)
                    #expect(svg.hasPrefix("<?xml") && svg.contains("width=\"800\" height=\"600\""))
                    #expect(svg.contains("picture walk"), "the title names the track")
                    #expect(svg.contains("42 points"))
                    return r.headers[.eTag] ?? ""
                }
                #expect(!tag.isEmpty)
                try await client.execute(
                    uri: "/v1/routes/\(route)/picture?size=800x600", method: .get, headers: auth(token, [.ifNoneMatch: tag])
                ) { #expect($0.status == .notModified) }
                try await client.execute(
                    uri: "/v1/routes/\(route)/picture?format=png&size=320x240", method: .get, headers: auth(token)
                ) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "image/png")
                    let bytes = Array(buffer: r.body)
                    #expect(Array(bytes.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
                    #expect(bytes[16..<24].elementsEqual([0, 0, 1, 64, 0, 0, 0, 240]), "IHDR 320 x 240")
                    #expect(r.headers[.eTag] != tag)
                }
                for bad in ["format=gif", "size=20x20", "size=5000x5000", "size=big", "versions=newest"] {
                    try await client.execute(
                        uri: "/v1/routes/\(route)/picture?\(bad)", method: .get, headers: auth(token)
                    ) { r in
                        #expect(r.status == .badRequest, "\(bad)")
                        #expect(r.headers[.contentType] == "application/problem+json")
                    }
                }
                try await client.execute(uri: "/v1/routes/\(route)/picture", method: .get, headers: auth(stranger)) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/v1/routes/\(route)/picture", method: .get) {
                    #expect($0.status == .unauthorized)
                }
            }
        }

        @Test("beyond maxConcurrentPictures drawing at once, a picture is answered 503 with Retry-After")
        func busy() async throws {
            var f = try Fixture()
            f.configuration.maxConcurrentPictures = 0
            let token = try await f.token()
            try await f.app().test(.router) { client in
                let route = try await client.execute(
                    uri: "/v1/uploads?name=a.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: gpx(name: "busy", points: 10))
                ) { r in
                    ((json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]])?.first?["route"]
                        as? String ?? ""
                }
                try await client.execute(uri: "/v1/routes/\(route)/picture", method: .get, headers: auth(token)) { r in
                    #expect(r.status == .serviceUnavailable)
                    #expect(r.headers[.retryAfter] == "1")
                    #expect(problemType(r) == "busy")
                }
            }
        }
    }
#endif
