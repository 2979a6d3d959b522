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

    @Suite("routekit serve: GeoJSON uploads")
    struct GeoJSONUploadTests {
        static let feature = """
            {"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"Run","coordTimes":\
            ["2024-05-01T06:00:00Z","2024-05-01T06:00:05Z","2024-05-01T06:00:10Z"]},"geometry":{"type":"LineString",\
            "coordinates":[[8.5,47.3,410],[8.5001,47.3001,411],[8.5002,47.3002,412]]}}]}
            """

        @Test("a GeoJSON upload imports through the same engine; a polygon is a 422 invalid-geojson naming the member")
        func upload() async throws {
            let f = try Fixture()
            let token = try await f.token(source: "phone")
            try await f.app().test(.router) { client in
                try await client.execute(
                    uri: "/v1/uploads?name=run.geojson", method: .post, headers: auth(token),
                    body: ByteBuffer(string: Self.feature)
                ) { r in
                    #expect(r.status == .created)
                    let result = (json(r.body)["results"] as? [[String: Any]])?.first
                    #expect(result?["status"] as? String == "imported")
                    #expect((result?["routes"] as? [[String: Any]])?.first?["locations"] as? Int == 3)
                }
                let polygon = #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[1,2],[3,4],[5,6],[1,2]]]}}"#
                try await client.execute(
                    uri: "/v1/uploads?name=area.geojson", method: .post, headers: auth(token),
                    body: ByteBuffer(string: polygon)
                ) { r in
                    #expect(r.status == .unprocessableContent)
                    let problem = json(r.body)
                    #expect(problem["type"] as? String == Problem.typePrefix + "invalid-geojson")
                    #expect((problem["detail"] as? String)?.contains("geometry.type") == true)
                }
            }
            let routes = try await f.store.routes(matching: RouteFilter())
            #expect(routes.count == 1)
            #expect(routes.first?.sync.identifier.hasPrefix("geojson-") == true)
        }
    }
#endif
