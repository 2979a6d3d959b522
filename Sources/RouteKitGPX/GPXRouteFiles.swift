internal import RouteKit
public import RouteKitIngest

extension RouteFileReader {
    /// Route files read as GPX, by ``GPXReader`` with the default options (Apple Health's `workout-routes/*.gpx`).
    public static let gpx = RouteFileReader {
        (bytes: [UInt8], name: String, emit: (GPXEvent) throws(RouteKitError) -> Void) throws(RouteKitError) in
        let reader = GPXReader(bytes: bytes, name: name)
        while let event = try reader.next() { try emit(event) }
    }
}
