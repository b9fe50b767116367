import FoundationEssentials
import Locking
import Logging

/// A bounded, durable first-in first-out queue of MQTT messages kept on disk while the broker is
/// unreachable: an append-only log of CRC-checked records in segment files, and a cursor file that
/// remembers what was delivered.
///
/// Every method is **synchronous and blocks the calling thread** on file I/O and `fsync` (a few
/// milliseconds on an SD card). Call it from a dedicated thread or executor, never from a task on
/// Swift's cooperative pool. The methods are serialised by a lock, so one outbox may be shared.
///
/// Guarantees, with the default `.everyAppend` sync policy: a record is on the storage device when
/// `append` returns; after a crash or power cut, reopening yields every such record not yet
/// acknowledged, in order, and discards a record that was being written (its CRC fails). An
/// acknowledgement is on the device when `acknowledge(through:)` returns; a crash before that
/// delivers those records again (at least once). A damaged outbox is moved aside, never fatal.
public final class Outbox: Sendable {
    /// The directory holding the outbox's files; created if missing.
    public let directory: String
    /// The bounds and sync policy in force.
    public let configuration: OutboxConfiguration
    private let logger: Logger
    private let state: Locked<State>

    /// Opens the outbox in `directory` (created if missing), recovering what a previous process left.
    ///
    /// A torn last record is discarded with a log line; a damaged outbox (bad header, garbage,
    /// damage before the last record) is renamed `DIRECTORY.corrupt-TIMESTAMP` with one warning and
    /// a fresh, empty outbox starts. Blocks on file I/O.
    ///
    /// - Throws: `AgentStoreError` with `.invalidConfiguration` for bad bounds, `.io` or
    ///   `.diskFull` when the directory cannot be created or written.
    public init(directory: String, configuration: OutboxConfiguration = .init(), logger: Logger)
        throws(AgentStoreError)
    {
        try configuration.validate()
        self.directory = directory
        self.configuration = configuration
        self.logger = logger
        let recovered = try State.recover(directory: directory, configuration: configuration, logger: logger)
        state = Locked(recovered)
    }

    deinit {
        state.withLock { $0.close() }
    }

    /// Opens the outbox in `directory`, runs `body` with it, and closes it when `body` returns or throws.
    ///
    /// Blocks on file I/O; see `init(directory:configuration:logger:)` for recovery and errors.
    public static func withOutbox<Result>(
        directory: String, configuration: OutboxConfiguration = .init(), logger: Logger,
        _ body: (Outbox) throws -> Result
    ) throws -> Result {
        let outbox = try Outbox(directory: directory, configuration: configuration, logger: logger)
        defer { outbox.close() }
        return try body(outbox)
    }

    /// Appends a record at the end; when the outbox is full the oldest record is dropped and counted.
    ///
    /// With `.everyAppend` the record is on the device when this returns. On failure (disk full,
    /// I/O error) the record is not kept and nothing half-written remains. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.diskFull`, `.io`, `.recordTooLarge` or `.closed`.
    public func append(topic: String, payload: [UInt8]) throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in
            try state.append(topic: topic, payload: payload, configuration: configuration, logger: logger)
        }
    }

    /// Appends records in order with one flush for all of them (a group commit): with
    /// `.everyAppend` they are all on the device when this returns. When the outbox is full the
    /// oldest records are dropped and counted. Blocks on I/O.
    ///
    /// On failure the records appended before the failing one stay queued; a failed flush leaves
    /// them all queued but perhaps not yet on the device.
    ///
    /// - Throws: `AgentStoreError` with `.diskFull`, `.io`, `.recordTooLarge` or `.closed`.
    public func append(contentsOf records: [some OutboxContent]) throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in
            for record in records {
                try state.append(
                    topic: record.topic, payload: record.payload, configuration: configuration, deferringSync: true,
                    logger: logger)
            }
            try state.syncByPolicy(configuration: configuration)
        }
    }

    /// The newest `max` undelivered records (fewer when there are fewer), oldest of them first,
    /// without removing them: what was appended last, for a restart to find the highest sequence
    /// number it handed over. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.io` or `.closed`.
    public func newest(max: Int) throws(AgentStoreError) -> [OutboxRecord] {
        try state.withLock { (state) throws(AgentStoreError) in try state.newest(max: max) }
    }

    /// Up to `max` undelivered records from index `start` on (the head when `start` is before it),
    /// in order, without removing them. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.io` or `.closed`.
    public func records(from start: UInt64, max: Int) throws(AgentStoreError) -> [OutboxRecord] {
        try state.withLock { (state) throws(AgentStoreError) in
            guard start < state.tail else { return [] }
            return try state.records(from: Swift.max(start, state.head), max: max)
        }
    }

    /// The indices of the undelivered records: the head (the oldest's) to the tail (the next one's).
    public var indices: Range<UInt64> {
        state.withLock { $0.head..<$0.tail }
    }

    /// Up to `max` undelivered records, oldest first, without removing them. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.io` or `.closed`.
    public func peek(max: Int) throws(AgentStoreError) -> [OutboxRecord] {
        try state.withLock { (state) throws(AgentStoreError) in try state.peek(max: max) }
    }

    /// Marks every record up to and including `index` as delivered, durably, and deletes segment
    /// files that hold only delivered records. Indices already acknowledged or dropped are ignored.
    ///
    /// Prefer this to `removeFirst(_:)`: records dropped for capacity between `peek` and the
    /// acknowledgement cannot make it remove records that were never delivered. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.diskFull`, `.io` or `.closed`; the records then stay queued.
    public func acknowledge(through index: UInt64) throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in
            try state.advanceHead(to: min(index &+ 1, state.tail), logger: logger)
        }
    }

    /// Removes the `count` oldest records (all of them if fewer remain), durably. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.diskFull`, `.io` or `.closed`; the records then stay queued.
    public func removeFirst(_ count: Int) throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in
            let removed = UInt64(Swift.max(0, Swift.min(count, state.count)))
            try state.advanceHead(to: state.head + removed, logger: logger)
        }
    }

    /// Flushes appended records that the batched sync policy has not flushed yet. Blocks on `fsync`.
    ///
    /// - Throws: `AgentStoreError` with `.io` or `.closed`.
    public func sync() throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in try state.sync() }
    }

    /// The number of undelivered records.
    public var count: Int {
        state.withLock { $0.count }
    }

    /// Whether no record is waiting for delivery.
    public var isEmpty: Bool { count == 0 }

    /// How many records were dropped because the outbox was full, over its whole life on disk
    /// (persisted with the cursor; recounted on reopen).
    public var droppedCount: UInt64 {
        state.withLock { $0.dropped }
    }

    /// Raises the count of dropped records to at least `total`, durably with the next cursor
    /// write: for records dropped before they reached this outbox (by another outbox in front of
    /// it, whose count would otherwise be lost with it). Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.diskFull`, `.io` or `.closed`.
    public func countDropped(atLeast total: UInt64) throws(AgentStoreError) {
        try state.withLock { (state) throws(AgentStoreError) in
            guard total > state.dropped else { return }
            state.dropped = total
            try state.writeCursor()
        }
    }

    /// Flushes pending appends (errors are logged) and closes the files; later calls throw `.closed`.
    public func close() {
        state.withLock { state in
            do {
                try state.sync()
            } catch {
                logger.info(
                    "Could not flush the outbox on close",
                    metadata: ["event": "outbox.close.failed", "error": "\(error)"])
            }
            state.close()
        }
    }
}
