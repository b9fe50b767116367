import FoundationEssentials
import LiveActivity

/// Statuses read without Codable (``WireJSONDecodable``): a board's bootstrap of a large fleet
/// brings one per device.
extension StatusMessage: WireJSONDecodable {
    /// Reads and checks a status as `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        let device = try container.decode(DeviceID.self, forKey: .device)
        let state = try container.decode(State.self, forKey: .state)
        let since = try container.decodeIfPresent(Date.self, forKey: .since)
        if state == .online, since == nil { throw WireJSON.Fallback() }
        self.init(
            device: device, state: state, since: since,
            reason: try container.decodeIfPresent(Reason.self, forKey: .reason),
            version: try container.decode(.version, .length(1...64)),
            dropped: try container.decodeIfPresent(UInt64.self, forKey: .dropped),
            instance: try container.decodeIfPresent(.instance, .length(1...64)),
            storageError: try container.decodeIfPresent(.storageError, .length(1...1024)),
            clockOffset: try container.decodeIfPresent(Int.self, forKey: .clockOffset),
            powerLosses: try container.decodeIfPresent(UInt64.self, forKey: .powerLosses))
    }
}
