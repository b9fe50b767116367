import AsyncSupport
import Locking

/// The event stream's clients and their doorbells: ``EventClients`` behind a lock, and for each
/// client a doorbell that rings when bytes wait for it (finished when it is gone) and one rung,
/// then finished, when it must close.
final class EventHub: Sendable {
    private struct State {
        var clients: EventClients
        var doorbells: [Int: Doorbell] = [:]
        var closers: [Int: Doorbell] = [:]
        var closed = false
    }

    /// A connected client: its id, its doorbell, and the bell rung when it is dropped; each waited
    /// on by one task.
    struct Client: Sendable {
        let id: Int
        let doorbell: Doorbell
        let closed: Doorbell
    }

    private let state: Locked<State>

    init(maximumClients: Int, maximumQueuedBytes: Int) {
        state = Locked(
            State(clients: EventClients(maximumClients: maximumClients, maximumQueuedBytes: maximumQueuedBytes)))
    }

    /// Adds a client; nil when the limit is reached or the hub is closed.
    func add() -> Client? {
        state.withLock { state in
            guard !state.closed, let id = state.clients.add() else { return nil }
            let client = Client(id: id, doorbell: Doorbell(), closed: Doorbell())
            state.doorbells[id] = client.doorbell
            state.closers[id] = client.closed
            return client
        }
    }

    /// Removes a client whose connection ended.
    func remove(_ id: Int) {
        let (ring, close) = state.withLock { state in
            state.clients.remove(id)
            return (state.doorbells.removeValue(forKey: id), state.closers.removeValue(forKey: id))
        }
        ring?.finish()
        close?.finish()
    }

    /// Takes the bytes waiting for a client; nil once it is gone.
    func take(_ id: Int) -> [UInt8]? {
        state.withLock { $0.clients.take(id) }
    }

    /// Whether any client is connected.
    var isEmpty: Bool { state.withLock { $0.clients.count == 0 } }

    /// The counts for `/api/stats`: clients now, refused, dropped.
    var counts: (clients: Int, refused: Int, dropped: Int) {
        state.withLock { ($0.clients.count, $0.clients.refusedCount, $0.clients.droppedCount) }
    }

    /// Queues one frame for every client that has its snapshot, and a snapshot (made only if some
    /// client waits for one) for those that do not; rings them; closes the clients dropped.
    /// - Returns: how many clients were dropped.
    @discardableResult
    func publish(frame: [UInt8]?, snapshot: () -> [UInt8]) -> Int {
        let waiting = state.withLock { $0.clients.waitingForSnapshot }
        let snapshotBytes = waiting.isEmpty ? nil : snapshot()
        let (rings, closes, dropped) = state.withLock { state in
            var dropped = 0
            var rings: [Doorbell] = []
            var closes: [Doorbell] = []
            for id in state.clients.ids {
                if let snapshotBytes, waiting.contains(id) {
                    state.clients.queueSnapshot(snapshotBytes, for: id)
                } else if let frame {
                    guard let outcome = state.clients.queue(frame, for: id) else { continue }
                    if outcome == .dropped {
                        dropped += 1
                        if let close = state.closers.removeValue(forKey: id) { closes.append(close) }
                        if let ring = state.doorbells.removeValue(forKey: id) { closes.append(ring) }
                        continue
                    }
                } else {
                    continue
                }
                if let ring = state.doorbells[id] { rings.append(ring) }
            }
            return (rings, closes, dropped)
        }
        for ring in rings { ring.ring() }
        for close in closes {
            close.ring()
            close.finish()
        }
        return dropped
    }

    /// Ends every client's stream and refuses new ones: a graceful shutdown.
    func close() {
        let all = state.withLock { state in
            state.closed = true
            defer {
                state.doorbells = [:]
                state.closers = [:]
            }
            return Array(state.doorbells.values) + Array(state.closers.values)
        }
        for bell in all { bell.finish() }
    }
}
