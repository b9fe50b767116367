/// Received messages waiting to be decoded, the latest one per topic: what lets the board take a
/// flood at the broker's speed.
///
/// The network thread only puts messages in (one hash lookup); the board takes them a chunk at a
/// time, oldest topic first, and decodes and applies each. When messages come faster than the board
/// applies them, a waiting topic's older message is replaced unread: the board shows the latest
/// state anyway, and each replaced one is counted (``Entry/superseded``), so that a gap in `seq` they
/// explain is not counted as missed. A topic taken and received again waits again, behind the others.
///
/// Memory: at most one payload per topic waits, and a taken chunk is the caller's; taking a whole
/// round at once held a second payload per topic while the next round arrived (76 MiB after a flood
/// of 10,000 devices, against 36 MiB before the mailbox).
public struct Mailbox<Payload: Sendable>: Sendable {
    /// One topic's latest message.
    public struct Entry: Sendable {
        /// The topic.
        public var topic: String
        /// The latest payload.
        public var payload: Payload
        /// How many earlier messages of the topic it replaced unread.
        public var superseded: Int

        @inlinable
        init(topic: String, payload: Payload, superseded: Int) {
            self.topic = topic
            self.payload = payload
            self.superseded = superseded
        }
    }

    /// A waiting message, by topic.
    @usableFromInline
    struct Waiting: Sendable {
        @usableFromInline var payload: Payload
        @usableFromInline var superseded: Int

        @inlinable
        init(payload: Payload, superseded: Int) {
            self.payload = payload
            self.superseded = superseded
        }

        @inlinable
        mutating func replace(with payload: Payload) {
            self.payload = payload
            superseded += 1
        }
    }

    /// The waiting topics in the order they arrived, from `head` on; the ones before were taken.
    @usableFromInline var order: [String] = []
    @usableFromInline var head = 0
    @usableFromInline var waiting: [String: Waiting] = [:]

    /// An empty mailbox.
    public init() {}

    /// Whether nothing waits.
    @inlinable
    public var isEmpty: Bool { waiting.isEmpty }

    /// How many topics wait.
    @inlinable
    public var count: Int { waiting.count }

    /// Puts a message in, replacing the topic's waiting one.
    // Inlinable, as the rest: the board's network thread calls it for every message, and unspecialised
    // generic code looked up its types' metadata at every call.
    @inlinable
    public mutating func put(topic: String, payload: Payload) {
        let before = waiting.count
        waiting[topic, default: Waiting(payload: payload, superseded: -1)].replace(with: payload)
        if waiting.count != before { order.append(topic) }
    }

    /// Takes up to `limit` waiting messages, the topics that arrived first first.
    @inlinable
    public mutating func take(upTo limit: Int) -> [Entry] {
        let end = min(order.count, head + max(0, limit))
        var entries: [Entry] = []
        entries.reserveCapacity(end - head)
        for topic in order[head..<end] {
            if let message = waiting.removeValue(forKey: topic) {
                entries.append(Entry(topic: topic, payload: message.payload, superseded: message.superseded))
            }
        }
        head = end
        if head == order.count {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 4_096 && head * 2 >= order.count {
            // The taken topics in front are dropped now and then, not on every take.
            order.removeFirst(head)
            head = 0
        }
        return entries
    }

    /// Takes every waiting message, the topics that arrived first first.
    @inlinable
    public mutating func takeAll() -> [Entry] {
        take(upTo: order.count - head)
    }
}
