import RouteKit
import RouteKitGPX
import RouteKitIngest
import Testing

/// The example of RouteKitGPX's DocC catalog, compiled (it reads `ride.gpx` from the working directory, so it is
/// not run). The `// snippet.NAME` … `// snippet.end` region is, once de-indented, a ```swift block of the catalog:
/// scripts/docs.sh checks it.
enum GPXDocumentationExamples {
    static func landingPage() throws {
        // snippet.gpx-landing
        let reader = try GPXReader(path: "ride.gpx")
        while let event = try reader.next() {
            if case .trackPoints(let batch) = event {
                for point in batch { print(point.location.timestamp?.iso8601 ?? "-", point.values[.heartRate] ?? 0) }
            }
        }
        // snippet.end
    }
}
