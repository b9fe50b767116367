import FoundationEssentials
import LiveActivity

/// The attributes and content of `location` activities read without Codable (``WireJSONDecodable``).
extension LocationActivityAttributes: WireJSONDecodable {
    /// Reads the attributes as the synthesized `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        self.init(
            deviceID: try container.decode(DeviceID.self, forKey: .deviceID),
            name: try container.decode(String.self, forKey: .name),
            vehicle: try container.decodeIfPresent(String.self, forKey: .vehicle),
            driver: try container.decodeIfPresent(String.self, forKey: .driver),
            destination: try container.decodeIfPresent(Destination.self, forKey: .destination))
    }
}

extension LocationActivityAttributes.Destination: WireJSONDecodable {
    /// Reads and checks a destination as `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            latitude: try container.decode(.latitude, .latitude),
            longitude: try container.decode(.longitude, .longitude))
    }
}

extension LocationActivityAttributes.ContentState: WireJSONDecodable {
    /// Reads and checks a content state as `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        let latitude = try container.decodeIfPresent(.latitude, .latitude)
        let longitude = try container.decodeIfPresent(.longitude, .longitude)
        guard (latitude == nil) == (longitude == nil) else { throw WireJSON.Fallback() }
        self.init(
            latitude: latitude, longitude: longitude,
            altitude: try container.decodeIfPresent(Double.self, forKey: .altitude),
            speed: try container.decodeIfPresent(.speed, .atLeast(0)),
            course: try container.decodeIfPresent(.course, .course),
            horizontalAccuracy: try container.decodeIfPresent(.horizontalAccuracy, .atLeast(0)),
            fix: try container.decode(FixMode.self, forKey: .fix),
            satellites: try container.decodeIfPresent(.satellites, .atLeast(0)),
            fixTime: try container.decodeIfPresent(Date.self, forKey: .fixTime),
            distance: try container.decode(.distance, .atLeast(0)),
            elapsed: try container.decode(.elapsed, .atLeast(0)),
            paused: try container.decode(Bool.self, forKey: .paused),
            progress: try container.decodeIfPresent(.progress, .within(0...1)),
            eta: try container.decodeIfPresent(Date.self, forKey: .eta),
            destination: try container.decodeIfPresent(
                LocationActivityAttributes.Destination.self, forKey: .destination),
            status: try container.decodeIfPresent(String.self, forKey: .status))
    }
}
