import FoundationEssentials
import LiveActivity

extension ActivityEnvelope {
    /// Decodes and checks an envelope of this attributes type.
    ///
    /// - Throws: `DecodingError` naming the key: the header's problems, another `attributes-type`,
    ///   invalid attributes or content state, a missing `dismissal-date` for `end` or one for
    ///   another event.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKey.self)
        header = try EnvelopeHeader(container: container)
        try container.check(.attributesType, .equal(to: Attributes.typeName))
        timestamp = try container.decode(Date.self, forKey: .timestamp)
        attributes = try container.decode(Attributes.self, forKey: .attributes)
        content = ActivityContent(
            state: try container.decode(Attributes.ContentState.self, forKey: .contentState),
            staleDate: try container.decodeIfPresent(Date.self, forKey: .staleDate),
            relevanceScore: try container.decode(Double.self, forKey: .relevanceScore))
        dismissalDate = try container.dismissalDate(of: header.event)
        alert = try container.decodeIfPresent(AlertConfiguration.self, forKey: .alert)
    }

    /// Encodes the envelope; absent optionals are omitted.
    public func encode(to encoder: any Encoder) throws {
        try header.encode(to: encoder)
        var container = encoder.container(keyedBy: EnvelopeKey.self)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(content.state, forKey: .contentState)
        try container.encodeIfPresent(content.staleDate, forKey: .staleDate)
        try container.encode(content.relevanceScore, forKey: .relevanceScore)
        try container.encodeIfPresent(dismissalDate, forKey: .dismissalDate)
        try container.encodeIfPresent(alert, forKey: .alert)
    }
}
