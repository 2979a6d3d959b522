import RouteKit
import RouteKitGPX
import RouteKitImport
import RouteKitIngest

/// The example of RouteKitImport's DocC catalog, compiled (it reads `export_12345.zip` from the working directory,
/// so it is not run). The `// snippet.NAME` … `// snippet.end` region is, once de-indented, a ```swift block of the
/// catalog: scripts/docs.sh checks it.
enum ImportDocumentationExamples {
    static func landingPage(store: any RouteStore) async throws {
        // snippet.import-landing
        let importer = RouteImporter(store: store, source: try Source(name: "my-watch"))
        await importer.importPath("export_12345.zip") { result in
            print(result.file, result.status, result.tracks.reduce(0) { $0 + $1.locations })
        }
        // snippet.end
    }
}
