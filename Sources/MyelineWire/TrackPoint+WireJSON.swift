import FoundationEssentials
import LiveActivity

/// Track points read without Codable (``WireJSONDecodable``): the agent checks every point it
/// writes with the receivers' decode (``WireCodec/encode(_:)``), one a fix, and a recorder or a
/// map reads every point of every device. Through Codable over ``WireJSON``'s parse that check cost
/// the agent as much as the encoding itself (issue 24).
extension TrackPoint: WireJSONDecodable {
    /// Reads and checks a track point as `init(from:)` does, key for key.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        self.init(
            device: try container.decode(DeviceID.self, forKey: .device),
            activity: try container.decode(.activity, Rule.activity),
            seq: try container.decode(.seq, Rule.seq),
            time: try container.decode(Date.self, forKey: .time),
            latitude: try container.decode(.latitude, Rule.latitude),
            longitude: try container.decode(.longitude, Rule.longitude),
            altitude: try container.decodeIfPresent(Double.self, forKey: .altitude),
            speed: try container.decodeIfPresent(.speed, Rule.speed),
            course: try container.decodeIfPresent(.course, Rule.course),
            horizontalAccuracy: try container.decodeIfPresent(.horizontalAccuracy, Rule.horizontalAccuracy),
            fix: try container.decodeIfPresent(FixMode.self, forKey: .fix),
            satellites: try container.decodeIfPresent(.satellites, Rule.satellites))
    }
}
