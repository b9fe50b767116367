import LiveActivity

/// The routing keys of an activity envelope, decodable without knowing its attributes type: for
/// receivers that handle several types, or that skip old envelopes before decoding the rest.
public struct EnvelopeHeader: WirePayload, Codable, Hashable, Sendable {
    /// The schema of activity envelopes, `myeline.activity.v1`.
    public static let schema = "myeline.activity.v1"

    /// The device the activity runs on (`device`).
    public let device: DeviceID
    /// The activity's id (`activity`).
    public let activity: String
    /// The attributes type (`attributes-type`), such as `location`.
    public let attributesType: String
    /// What happened (`event`).
    public let event: EnvelopeEvent
    /// The envelope's position in its activity (`seq`): 1 for the start, +1 per envelope.
    /// Receivers drop an envelope whose `seq` is not greater than the last one they applied.
    public let seq: Int

    init(device: DeviceID, activity: String, attributesType: String, event: EnvelopeEvent, seq: Int) {
        self.device = device
        self.activity = activity
        self.attributesType = attributesType
        self.event = event
        self.seq = seq
    }

    /// Decodes and checks the header keys; the other keys are not read.
    ///
    /// - Throws: `DecodingError` naming the key: a missing key, another schema, an invalid id,
    ///   an unknown event or a `seq` outside 1...2^53 − 1.
    public init(from decoder: any Decoder) throws {
        try self.init(container: decoder.container(keyedBy: EnvelopeKey.self))
    }

    /// Decodes and checks the header keys of an envelope's container, which the envelope goes on
    /// reading: `JSONDecoder` builds a table of the object's keys for every container.
    init(container: KeyedDecodingContainer<EnvelopeKey>) throws {
        try container.check(.schema, .equal(to: Self.schema))
        device = try container.decode(DeviceID.self, forKey: .device)
        activity = try container.decode(.activity, .activityID)
        attributesType = try container.decode(.attributesType, .attributesType)
        event = try container.decode(EnvelopeEvent.self, forKey: .event)
        seq = try container.decode(.seq, .within(Myeline.sequenceRange))
    }

    /// Encodes the header keys, with `schema`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EnvelopeKey.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(device, forKey: .device)
        try container.encode(activity, forKey: .activity)
        try container.encode(attributesType, forKey: .attributesType)
        try container.encode(event, forKey: .event)
        try container.encode(seq, forKey: .seq)
    }
}

/// The keys of an activity envelope: the header's and the rest, in one type so that decoding an
/// envelope reads one keyed container.
enum EnvelopeKey: String, CodingKey {
    case schema, device, activity, attributesType = "attributes-type", event, seq
    case timestamp, attributes, alert
    case contentState = "content-state"
    case staleDate = "stale-date"
    case relevanceScore = "relevance-score"
    case dismissalDate = "dismissal-date"
}
