public import RouteKit

/// Something that writes ``GPXEvent``s to an output, streaming: RouteKitGPX's `GPXWriter` (GPX 1.1), and the
/// GeoJSON and CSV writers of `routekit convert` and `routekit export`.
public protocol GPXEventWriter {
    /// Writes one event.
    mutating func write(_ event: GPXEvent) throws(RouteKitError)
    /// Ends the output and flushes it.
    mutating func finish() throws(RouteKitError)
}
