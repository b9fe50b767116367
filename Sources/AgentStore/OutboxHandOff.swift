/// What an outbox's drainer needs that the outbox has on its files, kept in memory: the records
/// just appended, handed to the drainer without reading them back, and the delivery that the
/// outbox's cursor does not have yet, recorded with the next call that goes to the outbox anyway.
/// A pure value (no I/O, no lock), tested as a table; its owner holds it under its lock and does
/// what it says.
///
/// Why (issue 24): at 1 Hz each fix took three calls to the thread that owns the outbox (the
/// append, the drainer's read of what was just appended, the acknowledgement after delivery),
/// each a wake-up of that thread and one of the caller's; with this it takes one, the append,
/// which also records the delivery before it.
///
/// The outbox stays the durability record: a record is handed over only once it is appended, and
/// a restart reads the outbox, never this. What the cursor does not have yet is at most the
/// deliveries since the last call to the outbox: a crash of the process in between delivers those
/// records again (the same records, the same `seq`s), as a crash between a delivery and its
/// acknowledgement always could.
///
/// - **Kept**: the records appended with contiguous indices, none delivered, at most
///   ``capacity`` of them, the newest: while the drainer is behind (a broker outage) it reads the
///   older ones from the outbox, then reaches the kept ones.
/// - **Taken** (``take(from:tail:max:)``): from the first record not delivered, or the outbox's
///   head if that is later (records dropped when it was full); nil when the kept records do not
///   start there, and the drainer reads the outbox.
/// - **Delivered** (``delivered(through:)``): in memory at once; ``unrecorded`` until the owner
///   records it in the outbox (``recorded(through:)``).
public struct OutboxHandOff: Hashable, Sendable {
    /// How many records are kept at most.
    public let capacity: Int
    /// Appended and not delivered, contiguous indices, oldest first.
    public private(set) var kept: [OutboxRecord] = []
    /// The index through which every record was delivered; nil before any delivery.
    public private(set) var delivered: UInt64?
    /// The index through which the outbox's cursor has the delivery; nil before any.
    public private(set) var recordedThrough: UInt64?

    /// A hand-off that keeps at most `capacity` records.
    public init(capacity: Int) {
        precondition(capacity >= 0, "the hand-off's capacity is a count of records")
        self.capacity = capacity
    }

    /// The index of the first record not delivered.
    public var firstUndelivered: UInt64 { delivered.map { $0 + 1 } ?? 0 }

    /// The delivery to record in the outbox: through this index; nil when it has it.
    public var unrecorded: UInt64? {
        guard let delivered else { return nil }
        if let recordedThrough, recordedThrough >= delivered { return nil }
        return delivered
    }

    /// Takes records just appended to the outbox, in order. Records not following the kept ones
    /// (an append the hand-off did not see) replace them; delivered ones are not kept; past
    /// ``capacity`` the oldest are let go.
    public mutating func appended(_ records: [OutboxRecord]) {
        guard let first = records.first else { return }
        if let last = kept.last, last.index + 1 != first.index { kept = [] }
        kept += records.drop { $0.index < firstUndelivered }
        if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
    }

    /// Up to `max` records to deliver next, oldest first, from the first not delivered (or the
    /// outbox's `head` when that is later): `[]` when there is none before the outbox's `tail`, nil
    /// when the kept records do not start there (read them from the outbox).
    public func take(from head: UInt64, tail: UInt64, max: Int) -> [OutboxRecord]? {
        let start = Swift.max(head, firstUndelivered)
        guard start < tail else { return [] }
        guard let first = kept.first, first.index <= start, start <= kept[kept.count - 1].index else { return nil }
        let offset = Int(start - first.index)
        return Array(kept[offset..<Swift.min(kept.count, offset + Swift.max(0, max))])
    }

    /// Every record through `index` was delivered: they are let go, and the delivery is
    /// ``unrecorded`` until the outbox has it. An earlier index than a delivery already taken
    /// changes nothing.
    public mutating func delivered(through index: UInt64) {
        guard delivered.map({ index > $0 }) ?? true else { return }
        delivered = index
        if let first = kept.first, first.index <= index {
            kept.removeFirst(Swift.min(kept.count, Int(index - first.index) + 1))
        }
    }

    /// The outbox's cursor has the delivery through `index` (an acknowledgement succeeded).
    public mutating func recorded(through index: UInt64) {
        guard recordedThrough.map({ index > $0 }) ?? true else { return }
        recordedThrough = index
    }
}
