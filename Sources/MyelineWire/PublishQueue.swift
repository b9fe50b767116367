import LiveActivity

/// Messages waiting for the broker, in order, one in flight at a time: a pure value, the queue of
/// `ActivityPublisher` (and so of the agent).
///
/// While the broker is unreachable, or the link is too slow for the queue (``backlog`` messages
/// waiting), a newer replaceable message (``WireMessage/isReplaceable``: an activity's update, the
/// status) replaces the last one waiting for the same topic, when that one is replaceable too:
/// after an outage the broker gets the latest content rather than every update missed. A link
/// that keeps up gets every update. Starts, ends, clears and replies are never replaced, and
/// nothing overtakes a message of its own topic.
public struct PublishQueue: Sendable {
    private var waiting: [WireMessage] = []
    /// The message being published, if any.
    public private(set) var inFlight: WireMessage?
    /// How many waiting messages were replaced by newer ones.
    public private(set) var replaced = 0

    /// An empty queue.
    public init() {}

    /// Whether nothing waits and nothing is in flight.
    public var isEmpty: Bool { waiting.isEmpty && inFlight == nil }

    /// The messages waiting (not in flight), oldest first.
    public var pending: [WireMessage] { waiting }

    /// How many waiting messages make a connected link count as too slow: 8.
    public static let backlog = 8

    /// Adds a message; returns whether it replaced one waiting.
    ///
    /// - Parameter connected: whether the broker is reachable now.
    @discardableResult
    public mutating func enqueue(_ message: WireMessage, connected: Bool) -> Bool {
        let coalescing = !connected || waiting.count >= Self.backlog
        if coalescing, message.isReplaceable, let index = waiting.lastIndex(where: { $0.topic == message.topic }),
            waiting[index].isReplaceable
        {
            waiting[index] = message
            replaced += 1
            return true
        }
        waiting.append(message)
        return false
    }

    /// Takes the oldest waiting message to publish; nil while one is in flight or nothing waits.
    public mutating func next() -> WireMessage? {
        guard inFlight == nil, !waiting.isEmpty else { return nil }
        inFlight = waiting.removeFirst()
        return inFlight
    }

    /// The message in flight is done (published, or given up).
    public mutating func done() {
        inFlight = nil
    }
}
