#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitRender

    /// The web view's basemap: tiles under the server's own origin (`GET /tiles/{z}/{x}/{y}`), Leaflet's files from
    /// where the system installed them (`GET /static/leaflet/…`, Debian's `libjs-leaflet`), and what the page needs
    /// to know of both (`GET /web/map.json`). The browser never talks to a third party, so the page's
    /// `Content-Security-Policy` stays same-origin.
    ///
    /// Tiles need no token: they are the tile server's public map, not a user's data, and a browser loads them as
    /// images, which carry no `Authorization` header. What keeps the server from being anyone's free tile proxy:
    /// a browser's cross-site request (`Sec-Fetch-Site: cross-site`, another site embedding the tiles) is refused,
    /// answers say `Cross-Origin-Resource-Policy: same-origin`, the tile server is asked for a bounded number of
    /// tiles at once, and every tile fetched is cached.
    struct WebMapRoutes: Sendable {
        let tiles: TileProvider?
        let leaflet: LeafletAssets?

        static let secFetchSite = HTTPField.Name("Sec-Fetch-Site") ?? .via

        func add(to router: RecordingRouter) {
            router.get("/web/map.json") { _, _ in configuration() }
            router.get("/tiles/:z/:x/:y") { request, context in try await tile(request, context: context) }
            router.get("/static/leaflet/:name") { request, context in try leafletFile(request, context: context) }
            router.get("/static/leaflet/images/:name") { request, context in
                try leafletFile(request, context: context, folder: "images/")
            }
        }

        /// What the page draws its map with: `{"leaflet": Bool, "tiles": {...} | null}`.
        func configuration() -> Response {
            var body: [String: JSONValue] = ["leaflet": .bool(leaflet != nil)]
            if let tiles {
                body["tiles"] = .object([
                    "url": .string("/tiles/{z}/{x}/{y}"), "attribution": .string(tiles.attribution),
                    "minZoom": .number(Double(tiles.zoomLevels.lowerBound)),
                    "maxZoom": .number(Double(tiles.zoomLevels.upperBound)),
                ])
            } else {
                body["tiles"] = .null
            }
            return JSONBody.response(JSONValue.object(body), headers: [.cacheControl: "no-cache"])
        }

        /// `GET /tiles/Z/X/Y`: `400` for a zoom outside 0–22 or a part that is not a number, `404` for a tile
        /// outside the world or the source, `502` when the tile server fails and no copy is cached.
        func tile(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            guard let tiles else {
                throw Problem(
                    status: .notFound, type: "tiles-not-configured", title: "No basemap",
                    detail: "this server has no basemap: start it with --tiles URL-TEMPLATE or --tiles FILE.mbtiles")
            }
            if request.headers[Self.secFetchSite] == "cross-site" {
                throw Problem(
                    status: .forbidden, type: "cross-site", title: "Tiles are for this server's own page",
                    detail: "the basemap's tiles are served to pages of this server only")
            }
            func number(_ name: String) throws(Problem) -> Int {
                var text = context.parameters.get(name) ?? ""
                // `Y.png` and the like, as tile URLs often end.
                if name == "y", let dot = text.firstIndex(of: ".") { text = String(text[..<dot]) }
                guard !text.isEmpty, text.count <= 8, text.allSatisfy(\.isASCII), let n = Int(text), n >= 0 else {
                    throw Problem.badRequest("'\(name)' of a tile must be a whole number, not '\(text.prefix(16))'")
                }
                return n
            }
            let z = try number("z")
            let x = try number("x")
            let y = try number("y")
            guard TileCoordinate.zoomLevels.contains(z) else {
                throw Problem.badRequest("a tile's zoom is from 0 to 22, not \(z)")
            }
            guard let coordinate = TileCoordinate(z: z, x: x, y: y) else {
                throw Problem.notFound("no tile \(z)/\(x)/\(y): at zoom \(z), x and y are below \(1 << z)")
            }
            let served: ServedTile
            do {
                served = try await tiles.tile(coordinate)
            } catch {
                switch error.kind {
                case .missing: throw Problem.notFound(error.message)
                case .upstream:
                    throw Problem(
                        status: .badGateway, type: "tile-server-failed", title: "The tile server failed",
                        detail: error.message, headers: [.retryAfter: "10"])
                }
            }
            var headers: HTTPFields = [
                .eTag: served.etag, .crossOriginResourcePolicy: "same-origin", .xContentTypeOptions: "nosniff",
                .cacheControl: served.maxAge > 0 ? "public, max-age=\(served.maxAge)" : "no-cache",
            ]
            if ReadRoutes.matches(request, served.etag) { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = served.contentType
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: served.bytes)))
        }

        /// `GET /static/leaflet/NAME`: Leaflet's script, style sheet and images, `404` when Leaflet is not
        /// installed (the page then draws its own map).
        func leafletFile(_ request: Request, context: RouteKitRequestContext, folder: String = "") throws -> Response {
            let name = folder + (context.parameters.get("name") ?? "")
            guard let leaflet, let asset = leaflet.files[name] else {
                throw Problem.notFound(
                    leaflet == nil
                        ? "Leaflet is not installed on this server (Debian: apt-get install libjs-leaflet)"
                        : "Leaflet has no file \(name.prefix(64))")
            }
            return WebView.response(asset, request)
        }
    }

    /// Leaflet's files as the system installed them (Debian's `libjs-leaflet`: `/usr/share/javascript/leaflet`),
    /// read once when the server starts: the script (`leaflet.js`), the style sheet (`leaflet.css`) and the
    /// images it names (`images/*.png`). Nothing else of the folder is served.
    struct LeafletAssets: Sendable {
        var files: [String: WebView.Asset]

        /// The files in `directory`; `nil` when it has no `leaflet.js` and `leaflet.css`.
        init?(directory: String) {
            func read(_ name: String) -> [UInt8]? {
                FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
            }
            // The minified script when there is one (a third of the size).
            guard let script = read("leaflet.min.js") ?? read("leaflet.js"), let style = read("leaflet.css") else {
                return nil
            }
            files = [
                "leaflet.js": WebView.Asset(script, "text/javascript; charset=utf-8"),
                "leaflet.css": WebView.Asset(style, "text/css; charset=utf-8"),
            ]
            let images = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/images")) ?? []
            for name in images where name.hasSuffix(".png") && !name.contains("/") {
                if let bytes = read("images/" + name) { files["images/" + name] = WebView.Asset(bytes, "image/png") }
            }
        }
    }
#endif
