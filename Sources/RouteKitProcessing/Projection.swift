import Foundation
import RouteKit

/// A local metric frame: an equirectangular projection around a reference point, in metres.
///
/// Over the few kilometres one chunk of a route spans, its distortion is far below GPS noise: the east–west
/// scale error grows with the latitude difference from the reference, about 0.1 % per 5 km. Smoothing
/// projects each window around its first fix, simplification each chunk around the middle of its extent;
/// distances along a route use `StepMeter` instead.
public struct LocalProjection: Sendable, Hashable {
    /// The WGS 84 equatorial radius, metres.
    package static let earthRadius = 6_378_137.0
    /// Reference latitude, degrees.
    public let latitude: Double
    /// Reference longitude, degrees.
    public let longitude: Double
    let metresPerDegreeLatitude: Double
    let metresPerDegreeLongitude: Double

    /// A frame around (`latitude`, `longitude`).
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
        metresPerDegreeLatitude = Self.earthRadius * .pi / 180
        metresPerDegreeLongitude = metresPerDegreeLatitude * max(cos(latitude * .pi / 180), 1e-9)
    }

    /// Metres east and north of the reference. Longitudes are unwrapped across the antimeridian.
    @inline(__always) public func project(latitude lat: Double, longitude lon: Double) -> (x: Double, y: Double) {
        var dLon = lon - longitude
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        return (dLon * metresPerDegreeLongitude, (lat - latitude) * metresPerDegreeLatitude)
    }

    /// The latitude and longitude of a point in the frame (longitude wrapped into -180…180).
    @inline(__always) public func unproject(x: Double, y: Double) -> (latitude: Double, longitude: Double) {
        var lon = longitude + x / metresPerDegreeLongitude
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return (min(90, max(-90, latitude + y / metresPerDegreeLatitude)), lon)
    }
}
