import LiveActivity
import Location
import Locking

/// Everything the agent's control loop reacts to, from its several producers.
enum AgentInput: Sendable {
    /// A location update from the source.
    case location(LocationUpdate)
    /// The location source ended (a file replay without `--loop`) or failed.
    case sourceEnded
    /// A deadline may have passed: a heartbeat, a pending update, the no-fix grace, a dismissal.
    case tick
    /// A command that decoded, from the device's command topic.
    case command(Command)
    /// A command payload that did not decode: its `id` when one could be read, and why.
    case malformedCommand(id: String?, reason: String)
    /// A retained message on one of this device's activity topics, received after (re)subscribing.
    case retained(activityID: String, payload: [UInt8])
    /// An activity's retained envelope was cleared (it was dismissed): it is over.
    case cleared(activityID: String)
}

/// The control loop's inbox: producers post inputs, the loop takes everything waiting at once,
/// so a burst of fixes (a fast file replay) is handled, saved and published as one batch.
///
/// Location updates are bounded: ``send(_:)`` waits while ``capacity`` inputs wait, so a source
/// faster than the agent is slowed down rather than buffered without end. Other inputs are
/// never held back. A waiting sender goes on when the queue finishes: finish it before
/// cancelling the sender's task.
final class InputQueue: Sendable {
    /// How many inputs may wait before ``send(_:)`` waits.
    let capacity: Int

    fileprivate struct State {
        var buffer: [AgentInput] = []
        var consumer: CheckedContinuation<[AgentInput]?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
        var finished = false
    }

    /// Continuations to resume once the lock is released.
    fileprivate struct Wakeups {
        var consumer: (CheckedContinuation<[AgentInput]?, Never>, [AgentInput]?)?
        var producers: [CheckedContinuation<Void, Never>] = []

        func resume() {
            if let (continuation, batch) = consumer { continuation.resume(returning: batch) }
            for producer in producers { producer.resume() }
        }
    }

    private let state = Locked(State())

    /// The default ``capacity``.
    static let defaultCapacity = 1024

    init(capacity: Int = defaultCapacity) {
        self.capacity = capacity
    }

    /// Posts an input at once, whatever the backlog; ignored after ``finish()``.
    func post(_ input: AgentInput) {
        state.withLock { state -> Wakeups in
            guard !state.finished else { return Wakeups() }
            state.buffer.append(input)
            return state.handOver()
        }.resume()
    }

    /// Posts an input, first waiting while ``capacity`` inputs wait (the loop is behind).
    func send(_ input: AgentInput) async {
        await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.buffer.count >= capacity, !state.finished else { return true }
                state.producers.append(producer)
                return false
            }
            if ready { producer.resume() }
        }
        post(input)
    }

    /// Every input waiting, oldest first, once there is at least one; nil once ``finish()`` was
    /// called and nothing waits. Cancelling the caller finishes the queue.
    func next() async -> [AgentInput]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<[AgentInput]?, Never>) in
                state.withLock { state -> Wakeups in
                    state.consumer = consumer
                    return state.handOver()
                }.resume()
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the queue: what waits is still delivered, later posts are ignored, waiting senders go on.
    func finish() {
        state.withLock { state -> Wakeups in
            state.finished = true
            var wakeups = state.handOver()
            wakeups.producers += state.producers
            state.producers = []
            return wakeups
        }.resume()
    }
}

extension InputQueue.State {
    /// Gives the waiting consumer everything waiting (or nil when finished and empty), and lets
    /// the waiting senders go on; nothing when there is no consumer or nothing to give it.
    fileprivate mutating func handOver() -> InputQueue.Wakeups {
        guard let consumer, !buffer.isEmpty || finished else { return InputQueue.Wakeups() }
        self.consumer = nil
        let batch = buffer.isEmpty ? nil : buffer
        buffer = []
        let waiting = producers
        producers = []
        return InputQueue.Wakeups(consumer: (consumer, batch), producers: waiting)
    }
}
