import LiveActivity

extension AnyActivityEvent {
    /// The envelope's event (start, update, end); nil for the dismissal, which has no envelope.
    public var envelopeEvent: EnvelopeEvent? {
        Self.envelopeEvent(of: base)
    }

    /// What publishes the event on `wire`: ``ActivityWire/message(for:)-(ActivityEvent<Attributes>)``.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when the content cannot be encoded as receivers accept it.
    public func message(on wire: ActivityWire) throws(ActivityError) -> WireMessage {
        try Self.message(of: base, on: wire)
    }

    // Generic over the base so that the existential is opened and the event keeps its attributes type.
    private static func envelopeEvent(of base: some AnyActivityEventBase) -> EnvelopeEvent? {
        switch base.event.kind {
        case .start: .start
        case .update: .update
        case .end: .end
        case .dismissed: nil
        }
    }

    private static func message(of base: some AnyActivityEventBase, on wire: ActivityWire) throws(ActivityError)
        -> WireMessage
    {
        try wire.message(for: base.event)
    }
}
