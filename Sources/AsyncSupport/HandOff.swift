import Locking

/// Values handed from any thread to one task that waits for them: at most `capacity` wait, the
/// oldest dropped for a newer one, as `AsyncStream`'s `bufferingNewest` does. The gpsd link hands
/// its updates to the source's iteration with one; a ``Doorbell`` is one of nothing.
///
/// Written rather than `AsyncStream`, whose generic storage, unspecialised across modules, cost
/// the agent about 7,700 instructions a yield in its loop (its metadata looked up, its buffer's
/// `removeFirst` through a protocol witness; callgrind, issue 24). Everything here is inlinable,
/// so each element type gets its own specialised copy in the module that uses it.
public final class HandOff<Element: Sendable>: Sendable {
    /// What ``yield(_:)`` did with a value.
    public enum Yield: Equatable, Sendable {
        /// Handed to the waiting task, or buffered.
        case taken
        /// Buffered, and the oldest value waiting dropped for it.
        case droppedOldest
        /// Ignored: the hand-off is finished.
        case finished
    }

    /// What cancelling the waiting task does, besides its ``next()`` returning nil.
    public enum Cancellation: Sendable {
        /// Finishes the hand-off and discards what waits: the consumer is gone.
        case finishes
        /// Nothing more: the next ``next()`` takes what waits, or waits for it.
        case endsTheWait
    }

    @usableFromInline
    struct State {
        @usableFromInline var buffer: [Element] = []
        @usableFromInline var consumer: UnsafeContinuation<Element?, Never>?
        @usableFromInline var finished = false

        @usableFromInline
        init() {}
    }

    @usableFromInline let capacity: Int
    @usableFromInline let cancellation: Cancellation
    @usableFromInline let state = Locked(State())

    /// - Parameters:
    ///   - capacity: how many values may wait for the consumer, 1 or more.
    ///   - cancellation: what cancelling the waiting task does.
    @inlinable
    public init(capacity: Int, cancellation: Cancellation) {
        precondition(capacity >= 1, "a hand-off holds at least one value")
        self.capacity = capacity
        self.cancellation = cancellation
    }

    /// Hands `value` to the task waiting in ``next()``, or buffers it.
    @inlinable
    @discardableResult
    public func yield(_ value: Element) -> Yield {
        let (consumer, outcome) = state.withLock { state -> (UnsafeContinuation<Element?, Never>?, Yield) in
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
            state.buffer.append(value)
            return (nil, outcome)
        }
        consumer?.resume(returning: value)
        return outcome
    }

    /// Ends the hand-off: the values buffered are still taken, then ``next()`` returns nil.
    @inlinable
    public func finish() {
        end(discarding: false)
    }

    /// The next value, waiting for one; nil once the hand-off is finished and empty, or when the
    /// calling task is cancelled, before or while it waits. One task waits at a time.
    @inlinable
    public func next() async -> Element? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (consumer: UnsafeContinuation<Element?, Never>) in
                let ready = state.withLock { state -> Element?? in
                    // Cancelled first, the handler below found no consumer: it must not wait.
                    if Task.isCancelled { return .some(nil) }
                    if !state.buffer.isEmpty { return state.buffer.removeFirst() }
                    if state.finished { return .some(nil) }
                    precondition(state.consumer == nil, "HandOff.next() from two tasks at once")
                    state.consumer = consumer
                    return nil
                }
                if let ready { consumer.resume(returning: ready) }
            }
        } onCancel: {
            switch cancellation {
            case .finishes: end(discarding: true)
            case .endsTheWait:
                state.withLock { state -> UnsafeContinuation<Element?, Never>? in
                    defer { state.consumer = nil }
                    return state.consumer
                }?.resume(returning: nil)
            }
        }
    }

    /// Whether no value waits: the next ``next()`` waits for one (or for the end).
    @inlinable
    public var isEmpty: Bool { state.withLock { $0.buffer.isEmpty } }

    @usableFromInline
    func end(discarding: Bool) {
        state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            state.finished = true
            if discarding { state.buffer.removeAll() }
            defer { state.consumer = nil }
            return state.consumer
        }?.resume(returning: nil)
    }
}

/// A signal for one waiting task: ``HandOff/ring()`` from anywhere, ``HandOff/wait()`` returns
/// once it was rung since the last wait returned; rings meanwhile count as one. What
/// `AsyncStream<Void>` with `bufferingNewest(1)` does for a worker woken "there is something to
/// do", without its generic storage, which cost the agent a few thousand instructions a ring in
/// metadata lookups and protocol witnesses (callgrind, issue 24).
public typealias Doorbell = HandOff<Void>

extension HandOff where Element == Void {
    /// A doorbell: one ring waits at most; cancelling the waiting task ends its wait alone.
    @inlinable
    public convenience init() {
        self.init(capacity: 1, cancellation: .endsTheWait)
    }

    /// Rings: wakes the waiting task, or the next one to wait.
    @inlinable
    public func ring() {
        yield(())
    }

    /// Returns true once the bell was rung (at once if it was since the last wait), false when
    /// the calling task is cancelled, before or while it waits. One task waits at a time.
    @inlinable
    public func wait() async -> Bool {
        await next() != nil
    }
}
