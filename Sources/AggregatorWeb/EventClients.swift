/// The event stream's readers as a pure value: a bounded number of clients, each with a bounded
/// queue of bytes not yet written to it. A frame is queued for every client at once and never waits
/// for one: a client whose queue would pass its bound (it stopped reading, or reads slower than the
/// fleet changes) is dropped and counted, so the board is never slowed by a browser.
public struct EventClients: Sendable {
    /// The most clients at a time; one more is refused.
    public let maximumClients: Int
    /// The most bytes queued for one client beyond its first snapshot.
    public let maximumQueuedBytes: Int

    private var queues: [Int: Queue] = [:]
    private var nextID = 0
    /// Clients refused because ``maximumClients`` were connected.
    public private(set) var refusedCount = 0
    /// Clients dropped because their queue passed ``maximumQueuedBytes``.
    public private(set) var droppedCount = 0

    private struct Queue {
        var chunks: [[UInt8]] = []
        var bytes = 0
        /// The bytes of frames queued (the snapshot's not counted: the bound applies to what follows).
        var frameBytes = 0
        /// Whether the client still waits for its first snapshot.
        var needsSnapshot = true
    }

    /// What queuing a frame did to one client.
    public enum Outcome: Hashable, Sendable {
        /// The frame waits in the client's queue.
        case queued
        /// The client's queue passed its bound: it is gone and must be closed.
        case dropped
    }

    /// No clients yet.
    public init(maximumClients: Int, maximumQueuedBytes: Int) {
        self.maximumClients = max(1, maximumClients)
        self.maximumQueuedBytes = max(1, maximumQueuedBytes)
    }

    /// The connected clients' ids.
    public var ids: [Int] { queues.keys.sorted() }

    /// How many clients are connected.
    public var count: Int { queues.count }

    /// How many bytes wait for `id`.
    public func queuedBytes(of id: Int) -> Int { queues[id]?.bytes ?? 0 }

    /// Adds a client, or refuses it (nil, counted) when ``maximumClients`` are connected.
    public mutating func add() -> Int? {
        guard queues.count < maximumClients else {
            refusedCount += 1
            return nil
        }
        nextID += 1
        queues[nextID] = Queue()
        return nextID
    }

    /// Removes a client (its connection ended).
    public mutating func remove(_ id: Int) {
        queues[id] = nil
    }

    /// The clients that still wait for their first snapshot.
    public var waitingForSnapshot: [Int] { queues.filter { $0.value.needsSnapshot }.map(\.key).sorted() }

    /// Queues a client's first snapshot, whatever its size (the bound applies to what follows).
    public mutating func queueSnapshot(_ bytes: [UInt8], for id: Int) {
        guard var queue = queues[id], queue.needsSnapshot else { return }
        queue.needsSnapshot = false
        queue.chunks.append(bytes)
        queue.bytes += bytes.count
        queues[id] = queue
    }

    /// Queues a frame for one client that has its snapshot; drops the client when the frame would
    /// take the frames waiting in its queue past ``maximumQueuedBytes`` (one frame alone is
    /// always taken, however large).
    public mutating func queue(_ bytes: [UInt8], for id: Int) -> Outcome? {
        guard var queue = queues[id], !queue.needsSnapshot else { return nil }
        if queue.frameBytes > 0 && queue.frameBytes + bytes.count > maximumQueuedBytes {
            queues[id] = nil
            droppedCount += 1
            return .dropped
        }
        queue.chunks.append(bytes)
        queue.bytes += bytes.count
        queue.frameBytes += bytes.count
        queues[id] = queue
        return .queued
    }

    /// Takes everything queued for `id`, to be written; nil when the client is gone.
    public mutating func take(_ id: Int) -> [UInt8]? {
        guard var queue = queues[id] else { return nil }
        defer {
            queue.chunks = []
            queue.bytes = 0
            queue.frameBytes = 0
            queues[id] = queue
        }
        return queue.chunks.count == 1 ? queue.chunks[0] : queue.chunks.flatMap { $0 }
    }
}
