/// Follows the retained bootstrap of a new subscription and judges whether the broker cut it short,
/// from the board's own sentinel: a pure state machine, fed what arrives.
///
/// Mosquitto queues the retained messages of a new subscription like any other outgoing message,
/// all at once when it handles the SUBSCRIBE: beyond its queue limits (`max_queued_messages`, 1,000
/// by default, or `max_queued_bytes`) it drops the rest without a word (mosquitto issue 2196), and
/// it keeps dropping until the board has acknowledged enough of what was queued. So the board
/// publishes a retained message of its own (the sentinel, on `myeline-aggregator/sync/UUID`) and
/// subscribes to it in the same SUBSCRIBE packet as the fleet's filters, last: its retained copy is
/// queued behind every retained message of the fleet, and arrives after them when nothing was
/// dropped, or is dropped with them. After the quiet period a live message on the sentinel's topic
/// (the check) comes back: the sentinel before it, or not at all. Only Myeline's topics and the
/// board's own sentinel count: other applications' retained messages on the broker change nothing.
public struct Bootstrap: Hashable, Sendable {
    /// The broker holds more than this of the board's queue in bytes when a cut is put down to
    /// `max_queued_bytes` rather than `max_queued_messages` (a few MiB at most under mosquitto's
    /// default count limit; deploy/mosquitto/fleet.conf allows 256 MiB).
    public static let bytesLimitSuspectedAbove = 64 << 20

    /// How the bootstrap ended.
    public enum Verdict: Hashable, Sendable {
        /// Still arriving.
        case pending
        /// The sentinel came back after the fleet's retained messages: every one of them arrived.
        case complete
        /// The sentinel never came: the broker's queue was full and it dropped the rest.
        case truncated
        /// The board could not place its sentinel (the broker refused it): the verdict is unknown.
        case unknown
    }

    /// Retained messages received on the fleet's topics since subscribing.
    public private(set) var retainedReceived = 0
    /// Their payloads' bytes.
    public private(set) var retainedBytes = 0
    /// Whether the broker took the sentinel; nil until the board tried.
    public private(set) var sentinelPlaced: Bool?
    /// The verdict so far.
    public private(set) var verdict: Verdict = .pending

    /// Creates a tracker for a new subscription.
    public init() {}

    /// Whether the bootstrap is over.
    public var isComplete: Bool { verdict != .pending }

    /// Whether the broker dropped part of the bootstrap; only judged once it is over.
    public var isTruncated: Bool { verdict == .truncated }

    /// Counts a retained message of `bytes` on a fleet topic.
    public mutating func noteRetained(bytes: Int = 0) {
        retainedReceived += 1
        retainedBytes += bytes
    }

    /// Notes whether the broker took the board's retained sentinel (its publish was acknowledged).
    public mutating func noteSentinel(placed: Bool) {
        sentinelPlaced = placed
    }

    /// The sentinel came back: every retained message queued before it has arrived.
    public mutating func sentinelArrived() {
        guard verdict == .pending else { return }
        verdict = .complete
    }

    /// No retained message came for the quiet period (or the bootstrap took too long): without the
    /// sentinel, the broker dropped it with the tail of the bootstrap.
    public mutating func quietPeriodEnded() {
        guard verdict == .pending else { return }
        verdict = sentinelPlaced == true ? .truncated : .unknown
    }

    /// The queue limit the cut points to: `max_queued_bytes` when more than
    /// ``bytesLimitSuspectedAbove`` arrived, else `max_queued_messages`.
    public var limitHit: String {
        retainedBytes > Self.bytesLimitSuspectedAbove ? "max_queued_bytes" : "max_queued_messages"
    }

    /// What to tell the person at the board when the bootstrap was cut, naming the setting to change.
    public var warning: String? {
        guard isTruncated else { return nil }
        let size = Double(retainedBytes) / 1_048_576
        let figure = size >= 10 ? String(Int(size)) : String(Double(Int(size * 10)) / 10)
        let fix =
            limitHit == "max_queued_bytes"
            ? "raise max_queued_bytes in mosquitto.conf above the size of the retained messages (or find the "
                + "device that publishes too many activities)"
            : "raise max_queued_messages in mosquitto.conf above the number of retained messages (such as 1000000, "
                + "as deploy/mosquitto/fleet.conf sets it)"
        return "only \(RowFormat.count(retainedReceived)) retained messages (\(figure) MiB) arrived: the broker's "
            + "queue for the board was full and it dropped the rest (mosquitto issue 2196); \(fix), and restart "
            + "the board"
    }
}
