/// Received messages waiting to be decoded, the latest one per topic: what lets the board take a
/// flood at the broker's speed.
///
/// The network thread only puts messages in (a hash insert); the board takes them all at once and
/// decodes and applies the latest of each topic. When messages come faster than the board applies
/// them, a topic's older messages are replaced unread: the board shows the latest state anyway,
/// and each replaced one is counted (``Entry/superseded``), so that a gap in `seq` they explain is
/// not counted as missed. Topics keep the order in which they first arrived.
public struct Mailbox<Payload: Sendable>: Sendable {
    /// One topic's latest message.
    public struct Entry: Sendable {
        /// The topic.
        public var topic: String
        /// The latest payload.
        public var payload: Payload
        /// How many earlier messages of the topic it replaced unread.
        public var superseded: Int
    }

    private var order: [String] = []
    private var entries: [String: Entry] = [:]

    /// An empty mailbox.
    public init() {}

    /// Whether nothing waits.
    public var isEmpty: Bool { order.isEmpty }

    /// Puts a message in, replacing the topic's waiting one.
    public mutating func put(topic: String, payload: Payload) {
        if entries[topic] != nil {
            entries[topic]!.payload = payload
            entries[topic]!.superseded += 1
        } else {
            order.append(topic)
            entries[topic] = Entry(topic: topic, payload: payload, superseded: 0)
        }
    }

    /// Takes every waiting message, in the order their topics first arrived.
    public mutating func takeAll() -> [Entry] {
        defer {
            order.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
        }
        return order.map { entries[$0]! }
    }
}
