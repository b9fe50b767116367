import AgentCore
import AsyncSupport
import FoundationEssentials
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
        /// When the waiting consumer gets an empty batch if nothing comes; nil when none waits with a deadline.
        var wake: Date?
        var alarm = Alarm.awake
    }

    /// What the alarm of ``withAlarm(clock:_:)`` does.
    fileprivate enum Alarm {
        /// Between two sleeps, or not running.
        case awake
        /// Waiting for a consumer with a deadline.
        case idle(CheckedContinuation<Date?, Never>)
        /// Sleeping until `until`; `interruption` ends the sleep early.
        case sleeping(until: Date, interruption: CheckedContinuation<Void, Never>?)

        /// A consumer waits until `wake`: starts an idle alarm, or cuts short a sleep that would
        /// end later; what to resume once the lock is released.
        mutating func ask(_ wake: Date) -> AlarmWakeup? {
            switch self {
            case .idle(let alarm):
                self = .sleeping(until: wake, interruption: nil)
                return .start(alarm, wake)
            case .sleeping(let target, let interruption?) where wake < target:
                self = .sleeping(until: target, interruption: nil)
                return .interrupt(interruption)
            case .awake, .sleeping:
                return nil
            }
        }
    }

    /// A continuation of the alarm's to resume once the lock is released.
    fileprivate enum AlarmWakeup {
        case start(CheckedContinuation<Date?, Never>, Date)
        case interrupt(CheckedContinuation<Void, Never>)
    }

    /// Continuations to resume once the lock is released.
    fileprivate struct Wakeups {
        var consumer: (CheckedContinuation<[Event]?, Never>, [Event]?)?
        var producers: [CheckedContinuation<Void, Never>] = []
        var alarm: AlarmWakeup?

        func resume() {
            if let (continuation, batch) = consumer { continuation.resume(returning: batch) }
            for producer in producers { producer.resume() }
            switch alarm {
            case .start(let continuation, let wake): continuation.resume(returning: wake)
            case .interrupt(let continuation): continuation.resume()
            case nil: break
            }
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
        // Room for it (the usual case): posted at once, without a continuation.
        let posted = state.withLock { state -> Wakeups? in
            guard state.buffer.count < capacity || state.finished else { return nil }
            guard !state.finished else { return Wakeups() }
            state.buffer.append(event)
            return state.handOver()
        }
        if let posted { return posted.resume() }
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
    /// the clock of ``withAlarm(clock:_:)``, which must be running); nil once finished and empty.
    /// Without a deadline it waits for events only.
    ///
    /// The wall clock can be stepped while it waits (a Raspberry Pi without a real-time clock
    /// meeting its time server): the wait is at most ``longestWait`` before the deadline is judged
    /// again against the clock.
    func next(until deadline: Date?, clock: any WallClock) async -> [Event]? {
        guard let deadline else { return await next() }
        let wake = min(deadline, clock.now.addingTimeInterval(Self.longestWait))
        if wake <= clock.now { return takeAll() }
        return await next(wake: wake)
    }

    /// ``next()``, and an empty batch once the alarm finds `wake` passed.
    private func next(wake: Date) async -> [Event]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<[Event]?, Never>) in
                state.withLock { state -> Wakeups in
                    state.consumer = consumer
                    if Task.isCancelled, state.buffer.isEmpty, !state.finished {
                        state.consumer = nil
                        return Wakeups(consumer: (consumer, []))
                    }
                    var wakeups = state.handOver()
                    guard wakeups.consumer == nil else { return wakeups }
                    state.wake = wake
                    wakeups.alarm = state.alarm.ask(wake)
                    return wakeups
                }.resume()
            }
        } onCancel: {
            state.withLock { state -> Wakeups in
                guard let consumer = state.consumer else { return Wakeups() }
                state.consumer = nil
                state.wake = nil
                return Wakeups(consumer: (consumer, []))
            }.resume()
        }
    }

    /// Runs `body` with the inbox's alarm, which ends ``next(until:clock:)``'s waits at their
    /// deadline on `clock`.
    ///
    /// One alarm for every wait rather than a timer armed and disarmed for each: a wait for a
    /// later deadline than the alarm sleeps for (the source's silence, pushed on by every fix)
    /// leaves it asleep, and it sleeps again when it wakes; only an earlier deadline wakes it
    /// before its time. At 1 Hz that is one wake-up every few seconds instead of a task group,
    /// two tasks and a timer set and cancelled for every fix (issue 24).
    func withAlarm<Result, Failure: Error>(
        clock: any WallClock, _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome = await withTaskGroup(of: Void.self) { group -> Swift.Result<Result, Failure> in
            group.addTask { await self.runAlarm(clock: clock) }
            defer { group.cancelAll() }
            do throws(Failure) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Sleeps until the waiting consumer's wake, and gives it an empty batch once that passed;
    /// returns when cancelled.
    private func runAlarm(clock: any WallClock) async {
        while let target = await alarmTarget() {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await clock.sleep(until: target) }
                group.addTask { await self.alarmInterruption() }
                await group.next()
                group.cancelAll()
            }
            let now = clock.now
            state.withLock { state -> Wakeups in
                state.alarm = .awake
                // A consumer is there only while nothing waits (else it would have been handed it).
                guard let wake = state.wake, wake <= now, let consumer = state.consumer else { return Wakeups() }
                state.consumer = nil
                state.wake = nil
                return Wakeups(consumer: (consumer, []))
            }.resume()
        }
    }

    /// The wake to sleep toward: the waiting consumer's, once there is one; nil when cancelled.
    private func alarmTarget() async -> Date? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (alarm: CheckedContinuation<Date?, Never>) in
                let target = state.withLock { state -> Date?? in
                    if Task.isCancelled { return .some(nil) }
                    if let wake = state.wake {
                        state.alarm = .sleeping(until: wake, interruption: nil)
                        return wake
                    }
                    state.alarm = .idle(alarm)
                    return nil
                }
                if let target { alarm.resume(returning: target) }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Date?, Never>? in
                guard case .idle(let alarm) = state.alarm else { return nil }
                state.alarm = .awake
                return alarm
            }?.resume(returning: nil)
        }
    }

    /// Returns when a wait for an earlier wake than the alarm sleeps for begins, or when cancelled.
    private func alarmInterruption() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (interruption: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard case .sleeping(let target, _) = state.alarm, !Task.isCancelled else { return true }
                    if let wake = state.wake, wake < target { return true }
                    state.alarm = .sleeping(until: target, interruption: interruption)
                    return false
                }
                if now { interruption.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .sleeping(let target, let interruption) = state.alarm else { return nil }
                state.alarm = .sleeping(until: target, interruption: nil)
                return interruption
            }?.resume()
        }
    }

    /// The longest a deadline wait sleeps before reading the wall clock again: 10 s.
    static let longestWait: TimeInterval = 10

    /// The agent's clock: the system's, sleeping in one piece up to ``longestWait``, which bounds
    /// every wait already (the default 1 s slices woke the agent every second for nothing), on a
    /// timer of `loop`: the alarm of a control loop that prefers `loop` then wakes that thread
    /// alone (with `Task.sleep`, Dispatch's timer thread and a worker woke to hand it over).
    static func clock(on loop: EventLoop) -> SystemWallClock {
        SystemWallClock(longestSleep: .seconds(longestWait)) { try await loop.sleep(for: $0) }
    }

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
        wake = nil
        let batch = buffer.isEmpty ? nil : buffer
        buffer = []
        let waiting = producers
        producers = []
        return AgentInbox.Wakeups(consumer: (consumer, batch), producers: waiting)
    }
}
