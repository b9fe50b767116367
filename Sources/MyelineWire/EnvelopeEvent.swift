import LiveActivity

/// The `event` of an activity envelope, as in Apple's Live Activity push payload.
public enum EnvelopeEvent: String, CaseIterable, Codable, Hashable, Sendable {
    /// The activity started.
    case start
    /// The activity's content changed.
    case update
    /// The activity ended; the envelope has a `dismissal-date`.
    case end

    /// Decodes the event, naming the accepted values when the string is none of them.
    public init(from decoder: any Decoder) throws {
        self = try decoder.decodeEnum()
    }
}
