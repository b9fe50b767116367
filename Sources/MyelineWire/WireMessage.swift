import LiveActivity

/// One message of the Myeline contract, ready to publish: its topic, payload and delivery, as
/// ``ActivityWire`` makes it (docs/topics.md). Every one goes at QoS 1; all but replies are retained.
public struct WireMessage: Hashable, Sendable {
    /// What the message is, for queues and logs.
    public enum Kind: Hashable, Sendable {
        /// An activity's envelope (`event`, numbered `seq`), on its activity topic.
        case envelope(activityID: String, event: EnvelopeEvent, seq: Int)
        /// An activity's empty retained message: it is dismissed (or an orphan cleared).
        case clear(activityID: String)
        /// The device's status.
        case status
        /// A command result.
        case reply
    }

    /// What the message is.
    public let kind: Kind
    /// The topic.
    public let topic: String
    /// The encoded payload; empty for a clear.
    public let payload: [UInt8]
    /// The MQTT 5 message expiry in seconds, if any: an end's runs out at its dismissal date.
    public let messageExpiry: UInt32?

    /// Creates a message; ``ActivityWire`` makes the ones the contract has.
    public init(kind: Kind, topic: String, payload: [UInt8], messageExpiry: UInt32? = nil) {
        self.kind = kind
        self.topic = topic
        self.payload = payload
        self.messageExpiry = messageExpiry
    }

    /// Whether the broker keeps the message for new subscribers: everything but command results.
    public var retain: Bool { kind != .reply }

    /// The MQTT 5 content type: `application/json` for every payload, none for an empty one.
    public var contentType: String? { payload.isEmpty ? nil : "application/json" }

    /// Whether a newer message of the same kind and topic may replace this one while it waits: an
    /// update envelope (the newest content is what counts) and the status.
    public var isReplaceable: Bool {
        switch kind {
        case .envelope(_, let event, _): event == .update
        case .status: true
        case .clear, .reply: false
        }
    }
}
