#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitRender
    import RouteKitSQLite
    import RouteKitTesting
    import Testing

    @testable import RouteKitServer

    /// A tile server for the tests, on a free port of 127.0.0.1: `GET /t/Z/X/Y.png` answers a PNG whose colour
    /// follows the tile, with `Cache-Control: max-age=3600` (fresh for a whole test however slow: under the thread
    /// sanitizer one ran 123 s, and with 60 its first tile went stale and was fetched again) and an `ETag`;
    /// `/fail/…` answers 500; `/revalidate/…` says `no-cache` and answers `304` to its `ETag`; `/html/…` answers a
    /// web page. It counts what it is asked.
    struct TestTileServer {
        struct Counts {
            var tiles = 0
            var notModified = 0
            var userAgents: Set<String> = []
        }

        let counts = Locked(Counts())
        /// How long each tile takes to answer (long enough for concurrent requests to overlap).
        var delay: Duration = .zero

        static func color(_ z: Int, _ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
            (UInt8(40 + (x * 37) % 200), UInt8(60 + (y * 53) % 180), UInt8(90 + z * 7))
        }

        /// Z, X and Y of a request's path (`Y.png` too).
        static func numbers(_ context: BasicRequestContext) -> (Int, Int, Int) {
            let y = (context.parameters.get("y") ?? "").split(separator: ".").first.map(String.init) ?? ""
            let z = Int(context.parameters.get("z") ?? "") ?? 0
            let x = Int(context.parameters.get("x") ?? "") ?? 0
            return (z, x, Int(y) ?? 0)
        }

        func application() -> some ApplicationProtocol {
            let router = Router()
            let counts = self.counts
            let delay = self.delay
            router.get("/t/:z/:x/:y") { request, context -> Response in
                counts.withLock {
                    $0.tiles += 1
                    $0.userAgents.insert(request.headers[.userAgent] ?? "")
                }
                if delay > .zero { try await Task.sleep(for: delay) }
                let (z, x, y) = Self.numbers(context)
                let (r, g, b) = Self.color(z, x, y)
                return Response(
                    status: .ok,
                    headers: [.contentType: "image/png", .cacheControl: "max-age=3600", .eTag: "\"t-\(z)-\(x)-\(y)\""],
                    body: .init(byteBuffer: ByteBuffer(bytes: TestPNG.tile(red: r, green: g, blue: b))))
            }
            router.get("/fail/:z/:x/:y") { _, _ -> Response in
                Response(status: .internalServerError, headers: [.contentType: "text/plain"])
            }
            router.get("/html/:z/:x/:y") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/html"],
                    body: .init(byteBuffer: ByteBuffer(string: "<html>rate limited</html>")))
            }
            router.get("/revalidate/:z/:x/:y") { request, _ -> Response in
                if request.headers[.ifNoneMatch] == "\"same\"" {
                    counts.withLock { $0.notModified += 1 }
                    return Response(status: .notModified, headers: [.eTag: "\"same\"", .cacheControl: "no-cache"])
                }
                counts.withLock { $0.tiles += 1 }
                return Response(
                    status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-cache", .eTag: "\"same\""],
                    body: .init(byteBuffer: ByteBuffer(bytes: TestPNG.tile(red: 10, green: 200, blue: 10))))
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }
    }

    /// A fixture whose server has tiles from `source`, cached in a folder of its own.
    func tileFixture(_ source: TileConfiguration.Source, cacheBytes: Int = 64 << 20) throws -> (Fixture, String) {
        var f = try Fixture()
        let cache = f.folder + "/tiles"
        var settings = TileConfiguration(
            source: source, attribution: "© Test Tiles", cacheDirectory: cache,
            userAgent: TileConfiguration.userAgent(version: "0.3.0"))
        settings.cacheBytes = cacheBytes
        var logger = Logger(label: "test.tiles")
        logger.logLevel = .critical
        f.configuration.tiles = try TileProvider(settings, logger: logger)
        return (f, cache)
    }

    @Suite("routekit serve: the basemap's tiles")
    struct TileServerTests {
        @Test("without --tiles: /tiles is 404 tiles-not-configured and map.json says there are no tiles")
        func notConfigured() async throws {
            var f = try Fixture()
            f.configuration.leafletDirectory = nil
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/tiles/1/0/0", method: .get) { r in
                    #expect(r.status == .notFound)
                    #expect(problemType(r) == "tiles-not-configured")
                }
                try await client.execute(uri: "/web/map.json", method: .get) { r in
                    #expect(r.status == .ok)
                    let body = json(r.body)
                    #expect(body["tiles"] is NSNull)
                    #expect(body["leaflet"] as? Bool == false)
                }
                try await client.execute(uri: "/static/leaflet/leaflet.js", method: .get) { r in
                    #expect(r.status == .notFound)
                }
            }
        }

        @Test("an MBTiles archive: XYZ rows from TMS ones, 400 for a bad zoom or part, 404 outside, ETag, same-origin")
        func mbtiles() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-mbtiles-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("test.mbtiles").path
            let north = TestPNG.tile(red: 200, green: 10, blue: 10)
            let south = TestPNG.tile(red: 10, green: 10, blue: 200)
            try MBTilesArchive.create(
                path: path,
                metadata: [
                    "name": "test", "format": "png", "minzoom": "1", "maxzoom": "1",
                    "attribution": "<a href=\"https://example.org\">&copy; Test Archive</a>",
                ],
                tiles: [
                    (z: 1, x: 0, y: 0, data: north), (z: 1, x: 1, y: 0, data: north),
                    (z: 1, x: 0, y: 1, data: south), (z: 1, x: 1, y: 1, data: south),
                ])
            var (f, _) = try tileFixture(.mbtiles(path: path))
            f.configuration.leafletDirectory = nil
            // The attribution given on the command line wins over the archive's.
            #expect(f.configuration.tiles?.attribution == "© Test Tiles")
            let archive = try MBTilesArchive(path: path)
            #expect(archive.attribution == "© Test Archive")
            #expect(archive.zoomLevels == 1...1)
            try await f.app().test(.router) { client in
                let tag = try await client.execute(uri: "/tiles/1/0/0", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "image/png")
                    #expect(r.headers[.crossOriginResourcePolicy] == "same-origin")
                    #expect(Array(r.body.readableBytesView) == north)
                    return r.headers[.eTag] ?? ""
                }
                try await client.execute(uri: "/tiles/1/0/1", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(Array(r.body.readableBytesView) == south)
                }
                try await client.execute(uri: "/tiles/1/1/1.png", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/tiles/1/0/0", method: .get, headers: [.ifNoneMatch: tag]) { r in
                    #expect(r.status == .notModified)
                    #expect(r.body.readableBytes == 0)
                }
                let refused: [(String, HTTPResponse.Status)] = [
                    ("/tiles/23/0/0", .badRequest), ("/tiles/-1/0/0", .badRequest), ("/tiles/a/0/0", .badRequest),
                    ("/tiles/1/x/0", .badRequest), ("/tiles/1/2/0", .notFound), ("/tiles/1/0/2", .notFound),
                    ("/tiles/0/0/0", .notFound), ("/tiles/5/0/0", .notFound),
                ]
                for (uri, status) in refused {
                    try await client.execute(uri: uri, method: .get) { r in
                        #expect(r.status == status, "\(uri)")
                    }
                }
                let crossSite = HTTPField.Name("Sec-Fetch-Site") ?? .via
                try await client.execute(uri: "/tiles/1/0/0", method: .get, headers: [crossSite: "cross-site"]) { r in
                    #expect(r.status == .forbidden)
                }
                try await client.execute(uri: "/tiles/1/0/0", method: .get, headers: [crossSite: "same-origin"]) { r in
                    #expect(r.status == .ok)
                }
                try await client.execute(uri: "/web/map.json", method: .get) { r in
                    let tiles = json(r.body)["tiles"] as? [String: Any] ?? [:]
                    #expect(tiles["url"] as? String == "/tiles/{z}/{x}/{y}")
                    #expect(tiles["attribution"] as? String == "© Test Tiles")
                    #expect(tiles["minZoom"] as? Int == 1)
                    #expect(tiles["maxZoom"] as? Int == 1)
                }
            }
        }

        @Test("a vector MBTiles archive, or a file that is not one, is refused when opened")
        func notRaster() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-mbtiles-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let vector = folder.appendingPathComponent("vector.mbtiles").path
            try MBTilesArchive.create(path: vector, metadata: ["format": "pbf"], tiles: [])
            #expect(throws: RouteKitError.self) { try MBTilesArchive(path: vector) }
            let missing = folder.appendingPathComponent("none.mbtiles").path
            #expect(throws: RouteKitError.self) { try MBTilesArchive(path: missing) }
        }

        @Test(
            "a tile server: fetched once with RouteKit's User-Agent, then from the cache (also after a restart); concurrent requests for one tile make one fetch"
        )
        func upstream() async throws {
            let server = TestTileServer(delay: .milliseconds(300))
            try await server.application().test(.live) { upstream in
                let port = try #require(upstream.port)
                let template = "http://127.0.0.1:\(port)/t/{z}/{x}/{y}.png?key=SECRET-KEY"
                let (f, cache) = try tileFixture(.upstream(template: template))
                try await f.app().test(.router) { client in
                    let first = try await client.execute(uri: "/tiles/3/2/5", method: .get) { r in
                        #expect(r.status == .ok)
                        #expect(r.headers[.contentType] == "image/png")
                        let age = r.headers[.cacheControl] ?? ""
                        #expect(age.hasPrefix("public, max-age="), "\(age)")
                        return Array(r.body.readableBytesView)
                    }
                    let (red, green, blue) = TestTileServer.color(3, 2, 5)
                    #expect(first == TestPNG.tile(red: red, green: green, blue: blue))
                    try await client.execute(uri: "/tiles/3/2/5", method: .get) { r in
                        #expect(r.status == .ok)
                        #expect(Array(r.body.readableBytesView) == first)
                    }
                    #expect(server.counts.withLock { $0.tiles } == 1)
                    let agents = server.counts.withLock { $0.userAgents }
                    #expect(agents == ["RouteKit/0.3.0 (+https://routekit.dev)"], "\(agents)")

                    // Twenty requests at once for a tile not yet cached: one fetch.
                    let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                        for _ in 0..<20 {
                            group.addTask {
                                try await client.execute(uri: "/tiles/4/7/7", method: .get) { $0.status }
                            }
                        }
                        var out: [HTTPResponse.Status] = []
                        for try await s in group { out.append(s) }
                        return out
                    }
                    #expect(statuses.count == 20 && statuses.allSatisfy { $0 == .ok })
                    #expect(server.counts.withLock { $0.tiles } == 2)
                }
                // Another server on the same cache folder answers from it.
                var settings = TileConfiguration(
                    source: .upstream(template: template), attribution: "", cacheDirectory: cache,
                    userAgent: "RouteKit/test")
                settings.cacheBytes = 64 << 20
                let again = try TileProvider(settings, logger: Logger(label: "test"))
                let coordinate = try #require(TileCoordinate(z: 3, x: 2, y: 5))
                let tile = try await again.tile(coordinate)
                #expect(tile.contentType == "image/png")
                #expect(server.counts.withLock { $0.tiles } == 2)
            }
        }

        @Test("a tile server's failure is 502 without its URL; a stale copy is served instead; no-cache revalidates")
        func failures() async throws {
            let server = TestTileServer()
            try await server.application().test(.live) { upstream in
                let port = try #require(upstream.port)
                let (failing, _) = try tileFixture(.upstream(template: "http://127.0.0.1:\(port)/fail/{z}/{x}/{y}?key=SECRET-KEY"))
                try await failing.app().test(.router) { client in
                    try await client.execute(uri: "/tiles/2/1/1", method: .get) { r in
                        #expect(r.status == .badGateway)
                        #expect(problemType(r) == "tile-server-failed")
                        let text = String(buffer: r.body)
                        #expect(text.contains("500"))
                        #expect(!text.contains("SECRET") && !text.contains("127.0.0.1"), "\(text)")
                    }
                }
                let (html, _) = try tileFixture(.upstream(template: "http://127.0.0.1:\(port)/html/{z}/{x}/{y}"))
                try await html.app().test(.router) { client in
                    try await client.execute(uri: "/tiles/2/1/1", method: .get) { r in
                        #expect(r.status == .badGateway)
                        #expect(String(buffer: r.body).contains("text/html"))
                    }
                }
                let (unreachable, _) = try tileFixture(.upstream(template: "http://127.0.0.1:1/{z}/{x}/{y}?key=SECRET-KEY"))
                try await unreachable.app().test(.router) { client in
                    try await client.execute(uri: "/tiles/2/1/1", method: .get) { r in
                        #expect(r.status == .badGateway)
                        #expect(!String(buffer: r.body).contains("SECRET"))
                    }
                }
                let (revalidating, _) = try tileFixture(.upstream(template: "http://127.0.0.1:\(port)/revalidate/{z}/{x}/{y}"))
                try await revalidating.app().test(.router) { client in
                    for _ in 0..<3 {
                        try await client.execute(uri: "/tiles/2/1/1", method: .get) { r in
                            #expect(r.status == .ok)
                            #expect(r.headers[.cacheControl] == "no-cache")
                            #expect(r.body.readableBytes > 100)
                        }
                    }
                }
                let counts = server.counts.withLock { $0 }
                #expect(counts.tiles == 1, "fetched once")
                #expect(counts.notModified == 2, "then revalidated with its ETag")
            }
        }

        @Test("the disk cache keeps to its size, removing the least recently used tiles first")
        func eviction() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-tilecache-\(UUID().uuidString)").path
            let cache = try TileDiskCache(directory: folder, limit: 1 << 20)
            let body = [UInt8](repeating: 7, count: 100_000)
            func tile(_ x: Int) throws -> TileCoordinate { try #require(TileCoordinate(z: 10, x: x, y: 0)) }
            let meta = CachedTile.Meta(
                contentType: "image/png", etag: nil, lastModified: nil, expires: 1e12, servedETag: "\"x\"")
            for x in 0..<8 { cache.write(try tile(x), CachedTile(meta: meta, body: body)) }
            // Tile 0 is used again: it is now the most recent.
            #expect(cache.read(try tile(0)) != nil)
            for x in 8..<14 { cache.write(try tile(x), CachedTile(meta: meta, body: body)) }
            #expect(cache.totalBytes <= 1 << 20)
            #expect(cache.read(try tile(0)) != nil, "recently used: kept")
            #expect(cache.read(try tile(1)) == nil, "least recently used: removed")
            #expect(cache.read(try tile(13))?.body == body)
            // Reopened, the cache knows what it holds.
            let reopened = try TileDiskCache(directory: folder, limit: 1 << 20)
            #expect(reopened.totalBytes == cache.totalBytes)
        }

        @Test("freshness: s-maxage and max-age less Age, else Expires, else 7 days; no-store and private not kept")
        func freshness() {
            let now = 1_000_000.0
            let aged = Freshness(cacheControl: "public, max-age=600", expires: nil, age: "100", now: now)
            #expect(aged.expires == now + 500)
            let shared = Freshness(cacheControl: "max-age=600, s-maxage=60", expires: nil, age: nil, now: now)
            #expect(shared.expires == now + 60)
            let dated = Freshness(cacheControl: nil, expires: "Sun, 06 Nov 1994 08:49:37 GMT", age: nil, now: now)
            #expect(dated.expires == 784_111_777)
            let unsaid = Freshness(cacheControl: nil, expires: nil, age: nil, now: now)
            #expect(unsaid.expires == now + 7 * 86_400)
            let noStore = Freshness(cacheControl: "no-store", expires: nil, age: nil, now: now)
            #expect(!noStore.storable)
            let privately = Freshness(cacheControl: "private, max-age=60", expires: nil, age: nil, now: now)
            #expect(!privately.storable)
            let noCache = Freshness(cacheControl: "no-cache", expires: nil, age: nil, now: now)
            #expect(noCache.storable)
            #expect(noCache.expires == now)
        }

        @Test("Leaflet's files are served from its folder with the page's headers; nothing else of the folder is")
        func leaflet() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rk-leaflet-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("images"), withIntermediateDirectories: true)
            try Data("window.L = {};".utf8).write(to: folder.appendingPathComponent("leaflet.js"))
            try Data(".leaflet-container{}".utf8).write(to: folder.appendingPathComponent("leaflet.css"))
            try Data(TestPNG.tile(red: 1, green: 2, blue: 3)).write(to: folder.appendingPathComponent("images/layers.png"))
            try Data("secret".utf8).write(to: folder.appendingPathComponent("notes.txt"))
            var f = try Fixture()
            f.configuration.leafletDirectory = folder.path
            try await f.app().test(.router) { client in
                try await client.execute(uri: "/static/leaflet/leaflet.js", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "text/javascript; charset=utf-8")
                    #expect(String(buffer: r.body) == "window.L = {};")
                    #expect(r.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                }
                try await client.execute(uri: "/static/leaflet/leaflet.css", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/static/leaflet/images/layers.png", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "image/png")
                }
                try await client.execute(uri: "/static/leaflet/notes.txt", method: .get) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/static/leaflet/..%2Fnotes.txt", method: .get) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/web/map.json", method: .get) { r in
                    #expect(json(r.body)["leaflet"] as? Bool == true)
                }
            }
        }
    }
#endif
