import FoundationEssentials
import LiveActivity

extension StatusMessage {
    enum CodingKeys: String, CodingKey {
        case schema, device, state, since, reason, version, dropped, instance
        case storageError = "storage-error"
        case clockOffset = "clock-offset"
        case powerLosses = "power-losses"
    }

    /// Decodes and checks a status message.
    ///
    /// - Throws: `DecodingError` naming the key: a missing key (`since` is required when online),
    ///   another schema, an invalid device id, an unknown state, a `version` or `instance` not of
    ///   1-64 characters, or a `storage-error` not of 1-1024 characters.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        device = try container.decode(DeviceID.self, forKey: .device)
        state = try container.decode(State.self, forKey: .state)
        since = try container.decodeIfPresent(Date.self, forKey: .since)
        if state == .online, since == nil { throw container.missing(.since) }
        reason = try container.decodeIfPresent(Reason.self, forKey: .reason)
        version = try container.decode(.version, .length(1...64))
        dropped = try container.decodeIfPresent(UInt64.self, forKey: .dropped)
        instance = try container.decodeIfPresent(.instance, .length(1...64))
        storageError = try container.decodeIfPresent(.storageError, .length(1...1024))
        clockOffset = try container.decodeIfPresent(Int.self, forKey: .clockOffset)
        powerLosses = try container.decodeIfPresent(UInt64.self, forKey: .powerLosses)
    }

    /// Encodes the message; absent optionals are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(device, forKey: .device)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(since, forKey: .since)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(version, forKey: .version)
        try container.encodeIfPresent(dropped, forKey: .dropped)
        try container.encodeIfPresent(instance, forKey: .instance)
        try container.encodeIfPresent(storageError, forKey: .storageError)
        try container.encodeIfPresent(clockOffset, forKey: .clockOffset)
        try container.encodeIfPresent(powerLosses, forKey: .powerLosses)
    }
}
