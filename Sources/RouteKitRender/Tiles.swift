import Foundation
import RouteKit

/// One tile of a web map's XYZ pyramid: at zoom `z` the world (Web Mercator, up to ±85.05°) is 2^z × 2^z tiles of
/// 256 pixels, column `x` from the antimeridian eastwards, row `y` from the north.
package struct TileCoordinate: Sendable, Hashable, CustomStringConvertible {
    package let z: Int
    package let x: Int
    package let y: Int

    /// The zoom levels a tile may have: 0 (the world in one tile) to 22.
    package static let zoomLevels = 0...22

    /// The tile, or `nil` when `z` is outside ``zoomLevels`` or `x` or `y` outside `0..<2^z`.
    package init?(z: Int, x: Int, y: Int) {
        guard Self.zoomLevels.contains(z) else { return nil }
        let n = 1 << z
        guard (0..<n).contains(x), (0..<n).contains(y) else { return nil }
        self.z = z
        self.x = x
        self.y = y
    }

    /// `z/x/y`.
    package var description: String { "\(z)/\(x)/\(y)" }
}

/// A tile's bytes and their media type (`image/png`, `image/jpeg`, `image/webp`).
package struct TileImage: Sendable, Hashable {
    package var bytes: [UInt8]
    package var contentType: String

    package init(bytes: [UInt8], contentType: String) {
        self.bytes = bytes
        self.contentType = contentType
    }
}

/// Web Mercator (EPSG:3857, what every tile server draws) in world units: x and y from 0 to 1, x eastwards from the
/// antimeridian, y southwards from 85.05° N. At zoom z one world unit is 256 · 2^z pixels.
package enum WebMercator {
    /// A tile's side in pixels.
    package static let tileSize = 256.0
    /// The equator's length in metres (WGS 84).
    package static let equator = 40_075_016.686

    /// x of a longitude, 0–1.
    package static func x(longitude: Double) -> Double { (longitude + 180) / 360 }

    /// y of a latitude, 0–1 (clamped to ±85.05°).
    package static func y(latitude: Double) -> Double {
        let phi = min(85.05, max(-85.05, latitude)) * .pi / 180
        return (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2
    }

    /// The world's side in pixels at `zoom`.
    package static func worldPixels(zoom: Int) -> Double { tileSize * pow(2, Double(zoom)) }

    /// Metres on the ground a pixel spans at `latitude` and `zoom`.
    package static func metresPerPixel(latitude: Double, zoom: Int) -> Double {
        equator * cos(min(85.05, max(-85.05, latitude)) * .pi / 180) / worldPixels(zoom: zoom)
    }

    /// The highest zoom in `zoomLevels` at which a box `spanX` × `spanY` world units wide fits in `width` ×
    /// `height` pixels; the lowest of them when it fits at none.
    package static func fittingZoom(
        spanX: Double, spanY: Double, width: Double, height: Double, zoomLevels: ClosedRange<Int>
    ) -> Int {
        var best = zoomLevels.lowerBound
        for z in zoomLevels {
            let world = worldPixels(zoom: z)
            if spanX * world <= width && spanY * world <= height { best = z } else { break }
        }
        return best
    }
}

/// Where a picture's basemap tiles come from (`routekit render --tiles`): an MBTiles archive, or a tile server
/// through the server's cache. `fetch` answers `nil` for a tile the source does not have.
package struct TileSource: Sendable {
    /// The text to show in the picture's corner (`© OpenStreetMap contributors`).
    package var attribution: String
    /// The zoom levels the source has.
    package var zoomLevels: ClosedRange<Int>
    /// One tile, `nil` when the source has none there.
    package var fetch: @Sendable (TileCoordinate) async throws(RouteKitError) -> TileImage?

    package init(
        attribution: String, zoomLevels: ClosedRange<Int>,
        fetch: @escaping @Sendable (TileCoordinate) async throws(RouteKitError) -> TileImage?
    ) {
        self.attribution = attribution
        self.zoomLevels = zoomLevels
        self.fetch = fetch
    }
}

/// Where a basemap goes: a frame of `width` × `height` pixels whose top-left corner is world pixel
/// (`originX`, `originY`) at `zoom`.
package struct BasemapView: Sendable, Hashable {
    package var zoom: Int
    package var originX: Double
    package var originY: Double
    package var width: Double
    package var height: Double

    package init(zoom: Int, originX: Double, originY: Double, width: Double, height: Double) {
        self.zoom = zoom
        self.originX = originX
        self.originY = originY
        self.width = width
        self.height = height
    }

    /// The view at the highest zoom of `zoomLevels` at which the box (south-west, north-east, in degrees) fits
    /// in `width` × `height` pixels less `padding` on every side, centred on the box.
    package static func fitting(
        minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double, width: Double,
        height: Double, padding: Double, zoomLevels: ClosedRange<Int>
    ) -> BasemapView {
        let x0 = WebMercator.x(longitude: minLongitude)
        let x1 = WebMercator.x(longitude: maxLongitude)
        let y0 = WebMercator.y(latitude: maxLatitude)
        let y1 = WebMercator.y(latitude: minLatitude)
        let zoom = WebMercator.fittingZoom(
            spanX: x1 - x0, spanY: y1 - y0, width: max(1, width - 2 * padding), height: max(1, height - 2 * padding),
            zoomLevels: zoomLevels)
        let world = WebMercator.worldPixels(zoom: zoom)
        let cx = (x0 + x1) / 2 * world
        let cy = (y0 + y1) / 2 * world
        return BasemapView(zoom: zoom, originX: cx - width / 2, originY: cy - height / 2, width: width, height: height)
    }

    /// The pixel in the frame (from its top-left corner) of a location.
    package func pixel(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
        let world = WebMercator.worldPixels(zoom: zoom)
        return (
            WebMercator.x(longitude: longitude) * world - originX, WebMercator.y(latitude: latitude) * world - originY
        )
    }

    /// The tiles that cover the frame, each with the frame pixel of its top-left corner. Columns wrap around the
    /// antimeridian; rows beyond the poles are left out.
    package var tiles: [(tile: TileCoordinate, x: Double, y: Double)] {
        let size = WebMercator.tileSize
        let n = 1 << zoom
        let firstColumn = Int((originX / size).rounded(.down))
        let lastColumn = Int(((originX + width) / size).rounded(.up)) - 1
        let firstRow = max(0, Int((originY / size).rounded(.down)))
        let lastRow = min(n - 1, Int(((originY + height) / size).rounded(.up)) - 1)
        guard firstRow <= lastRow, firstColumn <= lastColumn, lastColumn - firstColumn < 64, lastRow - firstRow < 64
        else { return [] }
        var out: [(tile: TileCoordinate, x: Double, y: Double)] = []
        for row in firstRow...lastRow {
            for column in firstColumn...lastColumn {
                let wrapped = ((column % n) + n) % n
                guard let tile = TileCoordinate(z: zoom, x: wrapped, y: row) else { continue }
                out.append((tile, Double(column) * size - originX, Double(row) * size - originY))
            }
        }
        return out
    }
}

/// Tiles laid under a picture's map: the view, each tile's image at its place in the frame, and the source's
/// attribution, drawn in the frame's corner.
package struct Basemap: Sendable, Hashable {
    package struct PlacedTile: Sendable, Hashable {
        package var image: TileImage
        /// The tile's top-left corner, in pixels from the frame's top-left corner.
        package var x: Double
        package var y: Double
    }

    package var view: BasemapView
    package var tiles: [PlacedTile]
    package var attribution: String

    package init(view: BasemapView, tiles: [PlacedTile], attribution: String) {
        self.view = view
        self.tiles = tiles
        self.attribution = attribution
    }

    /// Fetches the tiles of `view` from `source`. The pictures are drawn by cairo, which reads PNG only: a tile of
    /// another type is refused (`RouteKitError.Code.unsupportedFormat`). A tile the source does not have is left
    /// out (the background shows through).
    package static func load(_ view: BasemapView, from source: TileSource) async throws(RouteKitError) -> Basemap {
        var placed: [PlacedTile] = []
        for (tile, x, y) in view.tiles {
            guard let image = try await source.fetch(tile) else { continue }
            guard image.contentType == "image/png" || image.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                throw RouteKitError(
                    .unsupportedFormat,
                    "the tiles are \(image.contentType); pictures are drawn with PNG tiles only "
                        + "(a tile server or MBTiles archive of PNG tiles)")
            }
            placed.append(PlacedTile(image: image, x: x, y: y))
        }
        return Basemap(view: view, tiles: placed, attribution: source.attribution)
    }
}
