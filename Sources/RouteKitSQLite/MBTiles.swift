import Foundation
import GRDB
import RouteKit

/// An MBTiles archive (a SQLite file of map tiles, MBTiles 1.3) opened read-only: a basemap for offline use
/// (`routekit serve --tiles FILE.mbtiles`, `routekit render --tiles FILE.mbtiles`). Tiles are asked for in the XYZ
/// scheme of web maps (y from the north); the archive keeps them in TMS rows (y from the south), so the row is
/// flipped here. Raster tiles only (`format` png, jpg or webp); a vector archive (pbf) is refused when opened.
package final class MBTilesArchive: Sendable {
    /// The file.
    package let path: String
    /// The tiles' media type (`image/png`, `image/jpeg`, `image/webp`).
    package let contentType: String
    /// The archive's `attribution`, as plain text (markup removed), or empty.
    package let attribution: String
    /// The archive's `name`, or the file's name.
    package let name: String
    /// The zoom levels the archive says it holds (`minzoom`, `maxzoom`), or 0–22 when it does not say.
    package let zoomLevels: ClosedRange<Int>
    private let queue: DatabaseQueue

    /// Opens the archive at `path`.
    /// - Throws: `RouteKitError.Code.notFound` when there is no file, `.unsupportedFormat` when it is not a raster
    ///   MBTiles archive (no `tiles` table, vector tiles), `.storage` when SQLite cannot read it.
    package init(path: String) throws(RouteKitError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw RouteKitError(.notFound, "no MBTiles file", file: path)
        }
        var config = Configuration()
        config.readonly = true
        config.label = "routekit-mbtiles"
        let opened: DatabaseQueue
        let metadata: [String: String]
        do {
            opened = try DatabaseQueue(path: path, configuration: config)
            metadata = try opened.read { db -> [String: String] in
                let hasTiles = try db.tableExists("tiles") || db.viewExists("tiles")
                guard hasTiles else {
                    throw RouteKitError(
                        .unsupportedFormat, "not an MBTiles archive: it has no 'tiles' table", file: path)
                }
                var values: [String: String] = [:]
                let hasMetadata = try db.tableExists("metadata") || db.viewExists("metadata")
                if hasMetadata {
                    for row in try Row.fetchAll(db, sql: "SELECT name, value FROM metadata") {
                        let key: String? = row["name"]
                        let value: String? = row["value"]
                        if let key, let value { values[key.lowercased()] = value }
                    }
                }
                return values
            }
        } catch let error as RouteKitError {
            throw error
        } catch {
            throw RouteKitError(.storage, "cannot read the MBTiles archive: \(error)", file: path)
        }
        queue = opened
        self.path = path
        let format = (metadata["format"] ?? "png").lowercased()
        switch format {
        case "png": contentType = "image/png"
        case "jpg", "jpeg": contentType = "image/jpeg"
        case "webp": contentType = "image/webp"
        default:
            throw RouteKitError(
                .unsupportedFormat,
                "the archive's tiles are '\(format)'; RouteKit draws raster tiles (png, jpg or webp), not vector tiles",
                file: path)
        }
        attribution = Self.plainText(metadata["attribution"] ?? "")
        name = metadata["name"] ?? (path as NSString).lastPathComponent
        let low = max(0, min(22, metadata["minzoom"].flatMap { Int($0) } ?? 0))
        let high = max(low, min(22, metadata["maxzoom"].flatMap { Int($0) } ?? 22))
        zoomLevels = low...high
    }

    /// The tile at zoom `z`, column `x`, row `y` (XYZ: row 0 at the north), or `nil` when the archive has none.
    /// - Throws: `RouteKitError.Code.storage` when SQLite cannot read the archive.
    package func tile(z: Int, x: Int, y: Int) throws(RouteKitError) -> [UInt8]? {
        guard (0...30).contains(z) else { return nil }
        let rows = 1 << z
        guard (0..<rows).contains(x), (0..<rows).contains(y) else { return nil }
        let tmsRow = rows - 1 - y
        do {
            return try queue.read { db -> [UInt8]? in
                let data = try Data.fetchOne(
                    db,
                    sql: "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                    arguments: [z, x, tmsRow])
                return data.map { [UInt8]($0) }
            }
        } catch {
            throw RouteKitError(.storage, "cannot read a tile (\(z)/\(x)/\(y)) of the MBTiles archive", file: path)
        }
    }

    /// Writes a new MBTiles archive at `path` (replacing any file there) holding `tiles`, given in XYZ (row 0 at the
    /// north), with `metadata` (`format`, `attribution`, `minzoom`, `maxzoom`, …): for tests and tools.
    package static func create(
        path: String, metadata: [String: String], tiles: [(z: Int, x: Int, y: Int, data: [UInt8])]
    ) throws(RouteKitError) {
        try? FileManager.default.removeItem(atPath: path)
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE metadata (name TEXT, value TEXT)")
                try db.execute(
                    sql: "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, "
                        + "tile_data BLOB)")
                try db.execute(sql: "CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
                for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
                    try db.execute(sql: "INSERT INTO metadata (name, value) VALUES (?, ?)", arguments: [key, value])
                }
                for t in tiles {
                    try db.execute(
                        sql: "INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)",
                        arguments: [t.z, t.x, (1 << t.z) - 1 - t.y, Data(t.data)])
                }
            }
        } catch {
            throw RouteKitError(.storage, "cannot write the MBTiles archive: \(error)", file: path)
        }
    }

    /// `text` without markup (an archive's attribution is often HTML: a link to its source): tags dropped, the
    /// common entities decoded, runs of white space made one space.
    package static func plainText(_ text: String) -> String {
        var out = ""
        var inTag = false
        for c in text {
            if c == "<" {
                inTag = true
            } else if c == ">" && inTag {
                inTag = false
            } else if !inTag {
                out.append(c)
            }
        }
        let entities = [
            ("&copy;", "©"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&"),
        ]
        for (entity, c) in entities { out = out.replacingOccurrences(of: entity, with: c) }
        return out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
