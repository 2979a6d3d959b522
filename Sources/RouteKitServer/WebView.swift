#if Server
    import Crypto
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore

    /// The web view at `/`: one HTML page, its script and its style sheet, embedded in the binary (no CDN, works
    /// offline). The page holds no data, so it needs no token; it asks for a read token and reads everything
    /// through the token-protected API. Answers carry a same-origin-only `Content-Security-Policy`,
    /// `X-Content-Type-Options: nosniff`, and `Cache-Control: no-cache` with an `ETag` (a new binary's page is
    /// seen at once; an unchanged one is revalidated with `304`).
    enum WebView {
        struct Asset: Sendable {
            var bytes: [UInt8]
            var contentType: String
            var etag: String

            init(_ bytes: [UInt8], _ contentType: String) {
                self.bytes = bytes
                self.contentType = contentType
                let digest = SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined()
                etag = "\"\(digest)\""
            }
        }

        static let page = Asset(PackageResources.index_html, "text/html; charset=utf-8")
        static let script = Asset(PackageResources.app_js, "text/javascript; charset=utf-8")
        static let style = Asset(PackageResources.app_css, "text/css; charset=utf-8")

        /// Same origin only: no inline script or style, no frames, no form posts elsewhere. Images may also be `data:`
        /// URLs (Leaflet blanks a tile it unloads with a 1-pixel GIF).
        static let contentSecurityPolicy =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

        static func add(to router: RecordingRouter) {
            router.get("/") { request, _ in response(page, request) }
            router.get("/web/app.js") { request, _ in response(script, request) }
            router.get("/web/app.css") { request, _ in response(style, request) }
            // Browsers ask for it on their own; there is none (and a 404 would be logged in their console).
            router.get("/favicon.ico") { _, _ in
                Response(status: .noContent, headers: [.cacheControl: "public, max-age=86400"])
            }
        }

        static func response(_ asset: Asset, _ request: Request) -> Response {
            var headers: HTTPFields = [
                .contentType: asset.contentType, .cacheControl: "no-cache", .eTag: asset.etag,
                .contentSecurityPolicy: contentSecurityPolicy, .xContentTypeOptions: "nosniff",
            ]
            if let tags = request.headers[.ifNoneMatch],
                tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag })
            {
                headers[.contentType] = nil
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
        }
    }
#endif
