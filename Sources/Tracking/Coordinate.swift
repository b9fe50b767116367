import FoundationEssentials
import LiveActivity
import Location

import Glibc

/// A position on the WGS 84 ellipsoid, in degrees, with great-circle distances between positions.
public struct Coordinate: Codable, Hashable, Sendable {
    /// The Earth's mean radius in metres (IUGG, from WGS 84: (2a + b) / 3), used for every distance.
    public static let earthMeanRadius = 6_371_008.8

    /// Latitude in degrees, -90 (south) to 90 (north).
    public var latitude: Double
    /// Longitude in degrees, -180 (west) to 180 (east).
    public var longitude: Double

    /// Creates a coordinate from degrees; values are not checked.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The great-circle (haversine) distance to `other` in metres, on a sphere of radius ``earthMeanRadius``.
    public func distance(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let φ1 = latitude * radians
        let φ2 = other.latitude * radians
        let Δφ = φ2 - φ1
        let Δλ = (other.longitude - longitude) * radians
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * Self.earthMeanRadius * asin(min(1, sqrt(h)))
    }
}

extension Coordinate {
    /// The position of a fix.
    public init(_ fix: LocationFix) {
        self.init(latitude: fix.latitude, longitude: fix.longitude)
    }

    /// The position of a destination.
    public init(_ destination: LocationActivityAttributes.Destination) {
        self.init(latitude: destination.latitude, longitude: destination.longitude)
    }
}
