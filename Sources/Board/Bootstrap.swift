/// Follows the retained bootstrap of a new subscription and judges whether the broker cut it short.
///
/// Mosquitto queues the retained messages of a new wildcard subscription like any other outgoing
/// messages: beyond `max_inflight_messages` (20) plus `max_queued_messages` (1000 by default) it drops
/// them without a word (mosquitto issue 2196), so a board of 10,000 activities would show about
/// 1,020. The broker's own count of retained messages (`$SYS/broker/retained messages/count`) tells
/// when more exist than arrived; without it, a bootstrap that stopped just above the default limit is
/// reported as probably cut.
public struct Bootstrap: Hashable, Sendable {
    /// The `$SYS` topic with the broker's count of retained messages (all topics, `$SYS` included).
    public static let brokerRetainedCountTopic = "$SYS/broker/retained messages/count"
    /// Fewer retained messages than this are never a cut bootstrap (mosquitto's smallest default queue).
    public static let smallestSuspectCount = 1000
    /// Retained messages of the broker's own (`$SYS`) and of other applications tolerated before judging.
    public static let tolerance = 100

    /// Retained messages received on the fleet's topics since subscribing.
    public private(set) var retainedReceived = 0
    /// The broker's count of retained messages, if it publishes one.
    public private(set) var brokerRetainedCount: Int?
    /// Whether the bootstrap is over (the sync message came back, or the retained messages stopped).
    public private(set) var isComplete = false

    /// Creates a tracker for a new subscription.
    public init() {}

    /// Counts a retained message on a fleet topic.
    public mutating func noteRetained() {
        retainedReceived += 1
    }

    /// Records the payload of the broker's retained count topic (a decimal number).
    public mutating func noteBrokerRetainedCount(_ payload: [UInt8]) {
        brokerRetainedCount = Int(String(decoding: payload.prefix(20), as: UTF8.self).trimmingWhitespace)
    }

    /// Marks the bootstrap as over.
    public mutating func complete() {
        isComplete = true
    }

    /// Whether the broker probably dropped part of the bootstrap; only judged once it is complete.
    public var isTruncated: Bool {
        guard isComplete, retainedReceived >= Self.smallestSuspectCount else { return false }
        if let brokerRetainedCount { return brokerRetainedCount > retainedReceived + Self.tolerance }
        return retainedReceived <= Self.smallestSuspectCount + Self.tolerance
    }

    /// What to tell the person at the board when the bootstrap was cut, naming the setting to change.
    public var warning: String? {
        guard isTruncated else { return nil }
        let held = brokerRetainedCount.map { " of the broker's \(RowFormat.count($0))" } ?? ""
        return "only \(RowFormat.count(retainedReceived))\(held) retained messages arrived: the broker dropped "
            + "the rest (mosquitto issue 2196); set max_queued_messages in mosquitto.conf above the number of "
            + "retained messages (see deploy/mosquitto/fleet.conf) and restart the board"
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
