import Foundation
import Location
import Tracking

/// Real-ish places and helpers to build fixes around them.
enum Place {
    /// The square in Višnjan, Istria, near the start of the GPX track.
    static let visnjan = Coordinate(latitude: 45.2735, longitude: 13.7142)
    /// 2020-12-18T06:15:50Z, the GPX track's first time.
    static let t0 = Date(timeIntervalSince1970: 1_608_272_150)
}

extension Coordinate {
    /// The point `north` and `east` metres from this one (flat approximation, fine below a few km).
    func offset(north: Double, east: Double) -> Coordinate {
        let metresPerDegree = Coordinate.earthMeanRadius * .pi / 180
        return Coordinate(
            latitude: latitude + north / metresPerDegree,
            longitude: longitude + east / (metresPerDegree * cos(latitude * .pi / 180)))
    }
}

/// A fix at `point`, `seconds` after ``Place/t0``.
func fix(
    _ point: Coordinate, at seconds: Double, accuracy: Double? = nil, speed: Double? = nil, satellites: Int? = nil
) -> LocationFix {
    LocationFix(
        time: Place.t0.addingTimeInterval(seconds), latitude: point.latitude, longitude: point.longitude,
        altitude: 210, speed: speed, course: nil, horizontalAccuracy: accuracy, satellitesUsed: satellites)
}

/// A seeded generator (SplitMix64), so that noisy tests are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Coordinate {
    /// A point uniformly distributed in the disc of `radius` metres around this one.
    func jittered(within radius: Double, using generator: inout SeededGenerator) -> Coordinate {
        let r = radius * Double.random(in: 0...1, using: &generator).squareRoot()
        let angle = Double.random(in: 0..<(2 * .pi), using: &generator)
        return offset(north: r * cos(angle), east: r * sin(angle))
    }
}

/// The GPX track "around Višnjan with car" from the Location tests' data, as fixes.
enum VisnjanTrack {
    static let fixes: [LocationFix] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../LocationTests/Data/gpx/around-visnjan-with-car.gpx").standardizedFileURL
        guard let data = try? Data(contentsOf: url) else { fatalError("cannot read \(url.path)") }
        var decoder = GPXDecoder()
        return decoder.decode(Array(data)).compactMap { point in
            point.time.map {
                LocationFix(
                    time: $0, latitude: point.latitude, longitude: point.longitude, altitude: point.elevation)
            }
        }
    }()

    /// The plain haversine sum over every consecutive pair, computed here independently of the module.
    static var rawDistance: Double {
        zip(fixes, fixes.dropFirst()).reduce(0) { sum, pair in
            let radians = Double.pi / 180
            let (a, b) = pair
            let dφ = (b.latitude - a.latitude) * radians
            let dλ = (b.longitude - a.longitude) * radians
            let h =
                pow(sin(dφ / 2), 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * pow(sin(dλ / 2), 2)
            return sum + 2 * 6_371_008.8 * asin(sqrt(h))
        }
    }
}
