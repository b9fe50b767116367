import FoundationEssentials
import LiveActivity

/// How one device's activities and status go on the wire (docs/topics.md): the one place that turns
/// an activity's events into retained envelopes and empty clearing messages, with the message
/// expiry of an end, and makes the status, the will and the command results. The agent and
/// `ActivityPublisher` both publish what it makes. Pure: no I/O.
public struct ActivityWire: Hashable, Sendable {
    /// The device whose messages these are.
    public let device: DeviceID
    /// The topics of the fleet.
    public let topics: TopicTree
    /// Whether an end carries a message expiry at its dismissal date (MQTT 5 brokers honour it;
    /// 3.1.1 ones do not carry properties).
    public let messageExpiry: Bool

    /// The wire of `device` under `topics`, with message expiry unless `messageExpiry` is false.
    public init(device: DeviceID, topics: TopicTree = TopicTree(), messageExpiry: Bool = true) {
        self.device = device
        self.topics = topics
        self.messageExpiry = messageExpiry
    }

    /// What publishes an event: its envelope (an end's with the expiry of its dismissal date), or
    /// the empty retained message of a dismissal.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when the content cannot be encoded as receivers
    ///   accept it (a NaN, a value out of its range).
    public func message<Attributes>(for event: ActivityEvent<Attributes>) throws(ActivityError) -> WireMessage {
        guard let envelope = ActivityEnvelope(event: event, device: device) else {
            return clear(activityID: event.activityID)
        }
        var expiry: UInt32?
        if messageExpiry, case .end(_, let dismissal) = event.kind {
            expiry = Self.expiry(until: dismissal, from: event.timestamp)
        }
        return try message(for: envelope, expiry: expiry)
    }

    /// An envelope's message, with a message expiry in seconds if not nil.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when it cannot be encoded as receivers accept it.
    public func message<Attributes>(for envelope: ActivityEnvelope<Attributes>, expiry: UInt32?) throws(ActivityError)
        -> WireMessage
    {
        WireMessage(
            kind: .envelope(
                activityID: envelope.header.activity, event: envelope.header.event, seq: envelope.header.seq),
            topic: topics.activity(device: device, activityID: envelope.header.activity),
            payload: Array(try WireCodec.encode(envelope)), messageExpiry: expiry)
    }

    /// The empty retained message that removes an activity's envelope from the broker.
    public func clear(activityID: String) -> WireMessage {
        WireMessage(
            kind: .clear(activityID: activityID), topic: topics.activity(device: device, activityID: activityID),
            payload: [])
    }

    /// The device's status.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when it cannot be encoded.
    public func message(for status: StatusMessage) throws(ActivityError) -> WireMessage {
        WireMessage(kind: .status, topic: topics.status(device: device), payload: Array(try WireCodec.encode(status)))
    }

    /// The will to register at connect time: `offline`, `connection-lost`, without `since`.
    public func will(instance: String?) -> WireMessage {
        // A will of valid ids and a version always encodes.
        try! message(for: .will(device: device, instance: instance))
    }

    /// A command result, not retained.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when it cannot be encoded.
    public func message(for result: CommandResult) throws(ActivityError) -> WireMessage {
        WireMessage(
            kind: .reply, topic: topics.commandResult(device: device), payload: Array(try WireCodec.encode(result)))
    }

    /// The message expiry of an end published at `now`, in whole seconds: the time to `dismissal`
    /// rounded up, plus a second, because mosquitto counts the interval from its clock's whole
    /// second (up to a second before the message arrived) and must drop the message no earlier
    /// than `dismissal`. Nil when the dismissal was more than a second ago.
    public static func expiry(until dismissal: Date, from now: Date) -> UInt32? {
        let seconds = dismissal.timeIntervalSince(now).rounded(.up) + 1
        return seconds >= 1 ? UInt32(min(seconds, Double(UInt32.max))) : nil
    }
}
