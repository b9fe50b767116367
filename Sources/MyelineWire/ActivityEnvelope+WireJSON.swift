import FoundationEssentials
import LiveActivity

/// The envelopes of `location` activities read without Codable (``WireJSONDecodable``): what a board
/// decodes by the thousand a second. Envelopes of other attributes types take `init(from:)`.
extension ActivityEnvelope: WireJSONDecodable where Attributes == LocationActivityAttributes {
    /// Reads and checks an envelope as `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: EnvelopeKey.self)
        let header = try EnvelopeHeader(container: &container)
        try container.check(.attributesType, .equal(to: Attributes.typeName))
        let timestamp = try container.decode(Date.self, forKey: .timestamp)
        let attributes = try container.decode(Attributes.self, forKey: .attributes)
        let content = ActivityContent(
            state: try container.decode(Attributes.ContentState.self, forKey: .contentState),
            staleDate: try container.decodeIfPresent(Date.self, forKey: .staleDate),
            relevanceScore: try container.decode(Double.self, forKey: .relevanceScore))
        let dismissalDate = try container.decodeIfPresent(Date.self, forKey: .dismissalDate)
        switch (header.event, dismissalDate) {
        case (.end, nil), (.start, _?), (.update, _?): throw WireJSON.Fallback()
        default: break
        }
        self.init(
            header: header, timestamp: timestamp, attributes: attributes, content: content,
            dismissalDate: dismissalDate,
            alert: try container.decodeIfPresent(AlertConfiguration.self, forKey: .alert))
    }
}

extension EnvelopeHeader {
    /// Reads and checks the header keys of an envelope's object, as ``init(container:)`` does.
    init(container: inout WireJSON.Object<EnvelopeKey>) throws(WireJSON.Fallback) {
        try container.check(.schema, .equal(to: Self.schema))
        self.init(
            device: try container.decode(DeviceID.self, forKey: .device),
            activity: try container.decode(.activity, .activityID),
            attributesType: try container.decode(.attributesType, .attributesType),
            event: try container.decode(EnvelopeEvent.self, forKey: .event),
            seq: try container.decode(.seq, .within(Myeline.sequenceRange)))
    }
}

extension AlertConfiguration: WireJSONDecodable {
    /// Reads an alert as the synthesized `init(from:)` does.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        var container = try WireJSON.Object(document, at: node, keyedBy: CodingKeys.self)
        self.init(
            title: try container.decode(String.self, forKey: .title),
            body: try container.decode(String.self, forKey: .body),
            sound: try container.decodeIfPresent(String.self, forKey: .sound))
    }
}
