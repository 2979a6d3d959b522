public import RouteKit

/// Reads a route file that an export references into ``GPXEvent``s: Apple Health's `workout-routes/*.gpx`, which
/// `HealthImporter` (RouteKitHealth) stores as its workouts' routes.
///
/// The importer of such an export does not read the route files' format itself: RouteKitGPX gives the GPX reader as
/// `RouteFileReader.gpx`.
public struct RouteFileReader: Sendable {
    private let read:
        @Sendable (_ bytes: [UInt8], _ name: String, _ emit: (GPXEvent) throws(RouteKitError) -> Void)
            throws(RouteKitError) -> Void

    /// A reader that hands `emit` the events of the file held in `bytes`, named `name` in errors, in file order.
    public init(
        _ read:
            @escaping @Sendable (_ bytes: [UInt8], _ name: String, _ emit: (GPXEvent) throws(RouteKitError) -> Void)
            throws(RouteKitError) -> Void
    ) {
        self.read = read
    }

    /// Reads the file held in `bytes`, handing each event to `emit`.
    /// - Throws: what reading the file throws (malformed input names `name`, the line and the column), or what
    ///   `emit` throws.
    public func events(
        of bytes: [UInt8], name: String, _ emit: (GPXEvent) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        try read(bytes, name, emit)
    }
}
