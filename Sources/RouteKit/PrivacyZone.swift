import Foundation

/// A circle whose points the processing pipeline's privacy stage removes from derived versions (a home, a
/// workplace). A source's zones are kept in the store (``RouteStore/privacyZones(of:)``): a user's zones are
/// those of the source their routes are imported as.
public struct PrivacyZone: Sendable, Hashable, Codable {
    /// Centre latitude, degrees.
    public var latitude: Double
    /// Centre longitude, degrees.
    public var longitude: Double
    /// Radius, metres.
    public var radiusMetres: Double

    /// A zone.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` for a centre out of range or a radius not in 1 m…100 km.
    public init(latitude: Double, longitude: Double, radiusMetres: Double) throws(RouteKitError) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { throw RouteKitError(.invalidArgument, "a privacy zone's centre must be a valid latitude and longitude") }
        guard radiusMetres.isFinite, (1...100_000).contains(radiusMetres) else {
            throw RouteKitError(.invalidArgument, "a privacy zone's radius must be 1 m to 100 km, not \(radiusMetres)")
        }
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMetres = radiusMetres
    }
}
