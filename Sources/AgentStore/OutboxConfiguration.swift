/// How an `Outbox` bounds itself and when it flushes to the storage device.
public struct OutboxConfiguration: Hashable, Sendable {
    /// When appended records are flushed to the storage device with `fsync`.
    public enum SyncPolicy: Hashable, Sendable {
        /// `fsync` after every append: a record is on the device when `append` returns. Safest;
        /// one flash write per record, which on an SD card means a page program (and wear) per point.
        case everyAppend
        /// `fsync` once `records` appends are pending or `interval` has passed since the last
        /// flush, checked at each append (there is no timer: call `Outbox.sync()` at shutdown
        /// and from a periodic tick). A power cut loses at most the pending records.
        case batched(records: Int, interval: Duration)
        /// Never flushed, not even the cursor or the directory: for an outbox in memory (tmpfs),
        /// where a flush costs system calls and buys nothing. A crash of the process loses nothing
        /// (the kernel keeps the files); a power cut loses everything.
        case never
    }

    /// The most undelivered records kept; when full, the oldest are dropped and counted. At least 1.
    public var capacity: Int
    /// When appends are flushed to the device.
    public var syncPolicy: SyncPolicy
    /// The most records in one segment file before a new one is started. At least 1.
    public var segmentRecordLimit: Int
    /// The most records in a segment file whose records are all delivered or dropped: the next
    /// append then starts a new segment, and the delivered one is deleted. For an outbox that must
    /// give back the room of delivered records soon (the agent's spool, in memory); by default
    /// ``segmentRecordLimit``, so a segment is only closed when full. At least 1.
    public var deliveredSegmentRecordLimit: Int
    /// The size in bytes at which a segment file is closed and a new one started; 4,096 to 2^30.
    public var segmentByteLimit: Int
    /// The largest record accepted, in bytes (topic and payload and 6 bytes of framing). At least 64.
    public var maximumRecordSize: Int
    /// The index of the first record of an outbox made new (its directory has no segment and no
    /// cursor); an outbox that exists keeps its own. For an outbox that takes over from another
    /// one's indices.
    public var firstIndex: UInt64

    /// Creates a configuration; the defaults keep 100,000 records, flush every append, and roll
    /// segments at 8,192 records or 4 MiB, and accept records up to 1 MiB.
    public init(
        capacity: Int = 100_000, syncPolicy: SyncPolicy = .everyAppend, segmentRecordLimit: Int = 8192,
        deliveredSegmentRecordLimit: Int? = nil, segmentByteLimit: Int = 4 << 20, maximumRecordSize: Int = 1 << 20,
        firstIndex: UInt64 = 0
    ) {
        self.firstIndex = firstIndex
        self.capacity = capacity
        self.syncPolicy = syncPolicy
        self.segmentRecordLimit = segmentRecordLimit
        self.deliveredSegmentRecordLimit = deliveredSegmentRecordLimit ?? segmentRecordLimit
        self.segmentByteLimit = segmentByteLimit
        self.maximumRecordSize = maximumRecordSize
    }

    /// Throws `.invalidConfiguration` naming the first value out of range.
    func validate() throws(AgentStoreError) {
        func check(_ ok: Bool, _ message: String) throws(AgentStoreError) {
            if !ok { throw AgentStoreError(.invalidConfiguration, message) }
        }
        try check(capacity >= 1, "outbox capacity \(capacity) must be at least 1")
        try check(segmentRecordLimit >= 1, "outbox segmentRecordLimit \(segmentRecordLimit) must be at least 1")
        try check(
            deliveredSegmentRecordLimit >= 1,
            "outbox deliveredSegmentRecordLimit \(deliveredSegmentRecordLimit) must be at least 1")
        try check(
            segmentByteLimit >= 4096 && segmentByteLimit <= 1 << 30,
            "outbox segmentByteLimit \(segmentByteLimit) must be between 4096 and \(1 << 30)")
        try check(
            maximumRecordSize >= 64 && maximumRecordSize <= Int(Int32.max),
            "outbox maximumRecordSize \(maximumRecordSize) must be between 64 and \(Int32.max)")
        if case .batched(let records, let interval) = syncPolicy {
            try check(records >= 1, "outbox sync batch of \(records) records must be at least 1")
            try check(interval >= .zero, "outbox sync interval \(interval) must not be negative")
        }
    }
}

/// One record of an `Outbox`: an MQTT message to publish once the broker is reachable.
public struct OutboxRecord: Hashable, Sendable, OutboxContent {
    /// The record's position in the outbox's lifetime: 0 for the first record ever appended, +1 per
    /// record. Pass it to `Outbox.acknowledge(through:)` after delivery.
    public var index: UInt64
    /// The MQTT topic to publish to.
    public var topic: String
    /// The message body, as it will be published.
    public var payload: [UInt8]

    /// Creates a record.
    public init(index: UInt64, topic: String, payload: [UInt8]) {
        self.index = index
        self.topic = topic
        self.payload = payload
    }
}

/// What an outbox record holds: the MQTT topic to publish to and the message body. What
/// ``Outbox/append(contentsOf:)`` takes: an ``OutboxRecord`` of another outbox, or a track point.
public protocol OutboxContent {
    /// The MQTT topic to publish to.
    var topic: String { get }
    /// The message body, as it will be published.
    var payload: [UInt8] { get }
}
