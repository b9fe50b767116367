import FoundationEssentials

/// An event of an activity of any attributes type, as ``ActivityCenter/events`` gives them: what
/// changed, and the means to publish it without knowing the type.
public struct AnyActivityEvent: Sendable {
    /// The position of this event among the activity's events: 1 for the start, then +1 each.
    public let seq: Int
    /// The id of the activity that changed.
    public let activityID: String
    /// The activity's attributes type (`attributes-type`).
    public let attributesType: String
    /// When the change happened, by the center's clock.
    public let timestamp: Date
    /// The envelope's event (start, update, end); nil for the dismissal, which has no envelope.
    public let envelopeEvent: EnvelopeEvent?

    private let base: any Sendable
    private let publish: @Sendable (ActivityWire) throws(ActivityError) -> WireMessage

    /// Erases the type of `event`.
    public init<Attributes: ActivityAttributes>(_ event: ActivityEvent<Attributes>) {
        seq = event.seq
        activityID = event.activityID
        attributesType = Attributes.typeName
        timestamp = event.timestamp
        envelopeEvent =
            switch event.kind {
            case .start: .start
            case .update: .update
            case .end: .end
            case .dismissed: nil
            }
        base = event
        publish = { wire throws(ActivityError) in try wire.message(for: event) }
    }

    /// The event with its type, when its attributes are of type `type`.
    public func event<Attributes: ActivityAttributes>(as type: Attributes.Type) -> ActivityEvent<Attributes>? {
        base as? ActivityEvent<Attributes>
    }

    /// What publishes the event on `wire`: ``ActivityWire/message(for:)-(ActivityEvent<Attributes>)``.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when the content cannot be encoded as receivers accept it.
    public func message(on wire: ActivityWire) throws(ActivityError) -> WireMessage {
        try publish(wire)
    }
}
