import AgentCore
import Foundation
import LiveActivity
import Locking

/// The control loop's inbox: the services post the core's events, the loop takes everything
/// waiting at once, so a burst of fixes (a fast file replay) is handled, saved and published as
/// one batch.
///
/// Location updates are bounded: ``send(_:)`` waits while ``capacity`` events wait, so a source
/// faster than the agent is slowed down rather than buffered without end. Other events are never
/// held back. ``finish()`` ends the inbox and lets waiting senders go on.
final class AgentInbox: Sendable {
    typealias Event = AgentCore.Event

    /// How many events may wait before ``send(_:)`` waits.
    let capacity: Int

    fileprivate struct State {
        var buffer: [Event] = []
        var consumer: CheckedContinuation<[Event]?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
        var finished = false
    }

    /// Continuations to resume once the lock is released.
    fileprivate struct Wakeups {
        var consumer: (CheckedContinuation<[Event]?, Never>, [Event]?)?
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

    /// Posts an event at once, whatever the backlog; ignored after ``finish()``.
    func post(_ event: Event) {
        state.withLock { state -> Wakeups in
            guard !state.finished else { return Wakeups() }
            state.buffer.append(event)
            return state.handOver()
        }.resume()
    }

    /// Posts an event, first waiting while ``capacity`` events wait (the loop is behind).
    func send(_ event: Event) async {
        await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.buffer.count >= capacity, !state.finished else { return true }
                state.producers.append(producer)
                return false
            }
            if ready { producer.resume() }
        }
        post(event)
    }

    /// Every event waiting, oldest first, once there is at least one; nil once ``finish()`` was
    /// called and nothing waits. Cancelling the caller returns an empty batch (the inbox goes on).
    func next() async -> [Event]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<[Event]?, Never>) in
                state.withLock { state -> Wakeups in
                    state.consumer = consumer
                    // Cancelled before waiting: the handler below found no consumer to wake.
                    if Task.isCancelled, state.buffer.isEmpty, !state.finished {
                        state.consumer = nil
                        return Wakeups(consumer: (consumer, []))
                    }
                    return state.handOver()
                }.resume()
            }
        } onCancel: {
            state.withLock { state -> Wakeups in
                guard let consumer = state.consumer else { return Wakeups() }
                state.consumer = nil
                return Wakeups(consumer: (consumer, []))
            }.resume()
        }
    }

    /// Every event waiting once there is one, or an empty batch when `deadline` comes first (by
    /// `clock`); nil once finished and empty. Without a deadline it waits for events only.
    ///
    /// The wall clock can be stepped while it waits (a Raspberry Pi without a real-time clock
    /// meeting its time server): the wait is at most ``longestWait`` before the deadline is judged
    /// again against the clock.
    func next(until deadline: Date?, clock: any WallClock) async -> [Event]? {
        guard let deadline else { return await next() }
        let wake = min(deadline, clock.now.addingTimeInterval(Self.longestWait))
        if wake <= clock.now { return takeAll() }
        return await withTaskGroup(of: [Event]?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                try? await clock.sleep(until: wake)
                return []
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            var result = first
            // The loser returns an empty batch once cancelled; a batch it took is not lost.
            while let other = await group.next() {
                if let other, !other.isEmpty { result = (result ?? []) + other }
            }
            return result
        }
    }

    /// The longest a deadline wait sleeps before reading the wall clock again: 10 s.
    static let longestWait: TimeInterval = 10

    /// Every event waiting now, without waiting; nil once finished and empty.
    func takeAll() -> [Event]? {
        let (batch, wakeups) = state.withLock { state -> ([Event]?, Wakeups) in
            if state.buffer.isEmpty { return (state.finished ? nil : [], Wakeups()) }
            let batch = state.buffer
            state.buffer = []
            let waiting = state.producers
            state.producers = []
            return (batch, Wakeups(producers: waiting))
        }
        wakeups.resume()
        return batch
    }

    /// Ends the inbox: what waits is still delivered, later posts are ignored, waiting senders go on.
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

extension AgentInbox.State {
    /// Gives the waiting consumer everything waiting (or nil when finished and empty), and lets
    /// the waiting senders go on; nothing when there is no consumer or nothing to give it.
    fileprivate mutating func handOver() -> AgentInbox.Wakeups {
        guard let consumer, !buffer.isEmpty || finished else { return AgentInbox.Wakeups() }
        self.consumer = nil
        let batch = buffer.isEmpty ? nil : buffer
        buffer = []
        let waiting = producers
        producers = []
        return AgentInbox.Wakeups(consumer: (consumer, batch), producers: waiting)
    }
}
