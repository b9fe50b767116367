import FoundationEssentials
import LiveActivity

extension Command {
    enum CodingKeys: String, CodingKey {
        case schema, id, intent, activity, new, attributes, destination, status
        case relevanceScore = "relevance-score"
        case alert, timestamp
    }

    /// Decodes and checks a command.
    ///
    /// - Throws: `DecodingError` naming the key: a missing key, another schema, an `id` not of
    ///   1-128 characters, an unknown intent, an invalid activity id, a destination out of range.
    ///   Whether the optional changes fit the intent is the agent's to say.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        id = try container.decode(.id, Self.idRule)
        intent = try container.decode(Intent.self, forKey: .intent)
        activity = try container.decodeIfPresent(.activity, .activityID)
        new = try container.decodeIfPresent(Bool.self, forKey: .new) ?? false
        attributes = try container.decodeIfPresent(Attributes.self, forKey: .attributes)
        destination = try container.decodeIfPresent(LocationActivityAttributes.Destination.self, forKey: .destination)
        status = try container.decodeIfPresent(String.self, forKey: .status)
        relevanceScore = try container.decodeIfPresent(Double.self, forKey: .relevanceScore)
        alert = try container.decodeIfPresent(AlertConfiguration.self, forKey: .alert)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
    }

    /// Encodes the command; absent optionals and a false `new` are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(id, forKey: .id)
        try container.encode(intent, forKey: .intent)
        try container.encodeIfPresent(activity, forKey: .activity)
        if new { try container.encode(true, forKey: .new) }
        try container.encodeIfPresent(attributes, forKey: .attributes)
        try container.encodeIfPresent(destination, forKey: .destination)
        try container.encodeIfPresent(status, forKey: .status)
        try container.encodeIfPresent(relevanceScore, forKey: .relevanceScore)
        try container.encodeIfPresent(alert, forKey: .alert)
        try container.encode(timestamp, forKey: .timestamp)
    }
}

extension Command {
    private struct RequestID: Decodable {
        var id: String?
    }

    /// The `id` of a command payload that does not decode as a command, when it has a valid one,
    /// so that the refusal can still be answered; nil otherwise.
    /// A payload nested deeper than ``WireCodec/maximumNesting`` has none.
    public static func requestID(in payload: Data) -> String? {
        guard WireCodec.excessiveNesting(in: payload) == nil,
            let id = (try? JSONDecoder().decode(RequestID.self, from: payload))?.id
        else { return nil }
        return idRule.problem(id) == nil ? id : nil
    }
}
