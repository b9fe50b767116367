import Locking

/// The updates a ``GpsdLink`` hands the iteration of its ``GpsdSource``, one consumer at a time: at
/// most `capacity` wait, the oldest dropped for a newer one, as `AsyncStream`'s `bufferingNewest`
/// does. Written for this one element type rather than `AsyncStream`, whose generic storage,
/// unspecialised across modules, cost about 7,700 instructions a yield in the agent's loop (its
/// metadata looked up, its buffer's `removeFirst` through a protocol witness; callgrind, issue 24).
final class UpdateChannel: Sendable {
    /// What ``yield(_:)`` did with an update.
    enum Yield: Equatable {
        /// Handed to the waiting consumer, or buffered.
        case taken
        /// Buffered, and the oldest update waiting dropped for it.
        case droppedOldest
        /// Ignored: the channel is finished.
        case finished
    }

    private struct State {
        var buffer: [LocationUpdate] = []
        var consumer: UnsafeContinuation<LocationUpdate?, Never>?
        var finished = false
    }

    private let capacity: Int
    private let state = Locked(State())

    /// - Parameter capacity: how many updates may wait for the consumer, 1 or more.
    init(capacity: Int) {
        precondition(capacity >= 1, "an update channel holds at least one update")
        self.capacity = capacity
    }

    /// Hands `update` to the consumer waiting in ``next()``, or buffers it.
    @discardableResult
    func yield(_ update: LocationUpdate) -> Yield {
        let (consumer, outcome) = state.withLock { state -> (UnsafeContinuation<LocationUpdate?, Never>?, Yield) in
            guard !state.finished else { return (nil, .finished) }
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, .taken)
            }
            var outcome = Yield.taken
            if state.buffer.count >= capacity {
                state.buffer.removeFirst()
                outcome = .droppedOldest
            }
            state.buffer.append(update)
            return (nil, outcome)
        }
        consumer?.resume(returning: update)
        return outcome
    }

    /// Ends the channel: the updates buffered are still taken, then ``next()`` returns nil.
    func finish() {
        end(discarding: false)
    }

    /// The next update, waiting for one; nil once the channel is finished and empty. Cancelling
    /// the caller ends the channel, what waits in it discarded, and returns nil.
    func next() async -> LocationUpdate? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (consumer: UnsafeContinuation<LocationUpdate?, Never>) in
                let ready = state.withLock { state -> LocationUpdate?? in
                    if !state.buffer.isEmpty { return state.buffer.removeFirst() }
                    if state.finished { return .some(nil) }
                    state.consumer = consumer
                    return nil
                }
                if let ready { consumer.resume(returning: ready) }
            }
        } onCancel: {
            end(discarding: true)
        }
    }

    private func end(discarding: Bool) {
        state.withLock { state -> UnsafeContinuation<LocationUpdate?, Never>? in
            state.finished = true
            if discarding { state.buffer.removeAll() }
            defer { state.consumer = nil }
            return state.consumer
        }?.resume(returning: nil)
    }
}
