import FoundationEssentials
import LiveActivity

extension CommandResult {
    enum CodingKeys: String, CodingKey {
        case schema, id, intent, ok, error, activity, timestamp
    }

    /// Decodes and checks a command result.
    ///
    /// - Throws: `DecodingError` naming the key: a missing key (`error` is required when `ok` is
    ///   false), an `error` while `ok` is true, another schema, an `id` not of 1-128 characters, an
    ///   unknown intent or an invalid activity id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        id = try container.decode(.id, Command.idRule)
        intent = try container.decodeIfPresent(Command.Intent.self, forKey: .intent)
        let ok = try container.decode(Bool.self, forKey: .ok)
        error = try container.decodeIfPresent(String.self, forKey: .error)
        switch (ok, error) {
        case (false, nil): throw container.missing(.error)
        case (true, _?): throw container.invalid(.error, "only allowed when 'ok' is false")
        default: break
        }
        activity = try container.decodeIfPresent(.activity, .activityID)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
    }

    /// Encodes the result; absent optionals are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(intent, forKey: .intent)
        try container.encode(ok, forKey: .ok)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(activity, forKey: .activity)
        try container.encode(timestamp, forKey: .timestamp)
    }
}
