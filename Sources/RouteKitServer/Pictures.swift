#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitRender

    /// Pictures being drawn, process-wide.
    let picturesInFlight = Locked(0)

    extension ReadRoutes {
        /// A picture of a route (`routekit render`'s map and profiles): `?format=svg|png`, `?size=WxH` (at most
        /// 4096 a side), `?versions=raw,current|current|raw`. Its bytes depend on the route version and on what
        /// may change beside it (privacy zones, series), so it is revalidated hourly rather than immutable. Its
        /// profiles are of the quantity types the token may read (`read:routes` and, for heart rate,
        /// `read:heartRate`).
        func picture(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let route = try await readableRoute(context)
            let q = request.uri.queryParameters
            let format = q.get("format") ?? "svg"
            guard format == "svg" || format == "png" else {
                throw Problem.badRequest("'format' must be svg or png, not '\(format)'")
            }
            let size: PictureSize
            do {
                size = try PictureSize(parsing: q.get("size") ?? "1200x900")
            } catch {
                throw Problem.badRequest(error.message)
            }
            guard size.width <= 4_096, size.height <= 4_096 else {
                throw Problem.badRequest("'size' is at most 4096x4096 here, not \(size)")
            }
            let versions = q.get("versions") ?? "raw,current"
            let parts = Set(versions.split(separator: ",").map(String.init))
            guard !parts.isEmpty, parts.isSubset(of: ["raw", "current"]) else {
                throw Problem.badRequest("'versions' must be raw, current or raw,current, not '\(versions)'")
            }
            // Its profiles depend on the token's scopes (no heart-rate profile without `read:heartRate`: the store
            // reads no such series), and so does its tag.
            let quantities = try context.requireToken().grant.quantityTag
            let versionsTag = parts.sorted().joined(separator: "+")
            let tag = "\"\(route.id.uuidString.lowercased())-picture-\(format)-\(size)-\(versionsTag)\(quantities)\""
            if Self.matches(request, tag) {
                return Response(status: .notModified, headers: [.eTag: tag, .cacheControl: "private, max-age=3600"])
            }
            try admitPicture()
            defer { picturesInFlight.withLock { $0 -= 1 } }
            let input = try await RoutePictureInput.load(
                from: store, route: route, raw: parts.contains("raw"), current: parts.contains("current"))
            // Laying out and rasterising is CPU work (half a second for a million points): off the cooperative
            // pool, on the blocking executor.
            let bytes = try await BlockingExecutor.shared.run { () throws(RouteKitError) -> [UInt8] in
                let scene = RoutePicture.scene(input, size: size)
                return format == "png" ? try PNGRasteriser.png(scene) : SVGWriter.svg(scene)
            }
            let headers: HTTPFields = [
                .contentType: format == "png" ? "image/png" : "image/svg+xml",
                .eTag: tag, .cacheControl: "private, max-age=3600",
            ]
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }

        /// Counts one more picture (or profile) being drawn, or refuses it with `503 busy` and `Retry-After` when
        /// `maxConcurrentPictures` are: the caller gives it back (`picturesInFlight`, minus one) when done.
        func admitPicture() throws(Problem) {
            let admitted = picturesInFlight.withLock { n in
                guard n < configuration.maxConcurrentPictures else { return false }
                n += 1
                return true
            }
            guard admitted else {
                throw Problem(
                    status: .serviceUnavailable, type: "busy", title: "Busy drawing",
                    detail: "\(configuration.maxConcurrentPictures) pictures are being drawn; try again shortly",
                    headers: [.retryAfter: "1"])
            }
        }

        /// A route's profiles as numbers, for a client that draws them (the web view): elevation and speed against
        /// distance at `max` evenly spread locations (default 2,000, 2–20,000) of the recording (the raw one of a
        /// processed route, as the pictures and the statistics use), heart rate and power at their samples, and the
        /// recording's length by the statistics' rules (``ProfileWire``). Revalidated hourly, as pictures are.
        func profile(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            let route = try await readableRoute(context)
            let max = try Query.int(request.uri.queryParameters.get("max"), "max", default: 2_000, 2...20_000)
            // profile2: the body gained `time` (a browser's copy without it must not be revalidated). Heart rate and
            // power are there only for a token that may read them: the tag says which.
            let quantities = try context.requireToken().grant.quantityTag
            let tag = "\"\(route.id.uuidString.lowercased())-profile2-\(max)\(quantities)\""
            if Self.matches(request, tag) {
                return Response(status: .notModified, headers: [.eTag: tag, .cacheControl: "private, max-age=3600"])
            }
            // A recording is held whole while it is measured (about 56 bytes a location): as many at once as
            // pictures.
            try admitPicture()
            defer { picturesInFlight.withLock { $0 -= 1 } }
            let input = try await RoutePictureInput.load(from: store, route: route, raw: true, current: false)
            let text = await BlockingExecutor.shared.run { ProfileWire.json(RouteProfile(input, maxPoints: max)) }
            let headers: HTTPFields = [
                .contentType: "application/json", .eTag: tag, .cacheControl: "private, max-age=3600",
            ]
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
    }
#endif
