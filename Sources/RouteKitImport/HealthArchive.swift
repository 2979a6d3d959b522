import Foundation
import RouteKit
import RouteKitHealth
import RouteKitIngest

/// An Apple Health export inside a zip archive (the `export.zip` the Health app shares): `export.xml` inflated as a
/// stream each time it is read (it can be gigabytes), the route files it references read whole from their entries.
/// Nothing is unpacked to the filesystem.
struct ZipHealthExport: HealthExportFiles {
    let archive: ZipArchive
    /// The folder of `export.xml` inside the archive (`apple_health_export/`, or empty).
    let prefix: String

    /// The export in `archive` (a file at `path`): an `export.xml` at its root or one folder down whose root element
    /// is `HealthData`; `nil` when there is none.
    static func find(in archive: ZipArchive, path: String) -> ZipHealthExport? {
        for entry in archive.paths where entry == "export.xml" || entry.hasSuffix("/export.xml") {
            guard entry.split(separator: "/").count <= 2 else { continue }
            let export = ZipHealthExport(archive: archive, prefix: String(entry.dropLast("export.xml".count)))
            guard let stream = try? export.openXML() else { continue }
            if HealthImporter.rootElement(of: stream, name: export.xmlName) == "HealthData" { return export }
        }
        return nil
    }

    var xmlName: String { "\(archive.name)!\(prefix)export.xml" }

    var xmlSize: Int? { archive.size(of: prefix + "export.xml") }

    func openXML() throws(RouteKitError) -> any ByteSource {
        // Each pass reads export.xml again: it counts toward the archive's total once, as an entry read once would.
        // The entry is inflated as the scanner reads it (memory stays bounded); its size and CRC-32 are checked at
        // its end.
        try archive.reader(of: prefix + "export.xml", again: true)
    }

    func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        do {
            return try archive.contents(of: prefix + path)
        } catch let error where error.code == .notFound {
            throw RouteKitError(.io, "the file is missing from the export", file: label(path))
        }
    }

    func label(_ path: String) -> String { "\(archive.name)!\(prefix)\(path)" }
}
