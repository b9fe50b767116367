import FoundationEssentials
import Locking

/// The center's own timer, so that activities keep their own time as in ActivityKit: one task that
/// sleeps on the center's clock until the earliest deadline of its activities (a stale date, a
/// dismissal date), applies time to them, and sleeps again until the next; there is no task while
/// no activity has a deadline.
///
/// The center calls ``reschedule(_:)`` after every change. A later deadline than the one slept for
/// leaves the task asleep (it looks again when it wakes), so that an activity whose stale date
/// moves on at every update does not restart the task each time; an earlier one, or none,
/// replaces it. The task holds the center weakly and ends with it.
final class DeadlineTimer: Sendable {
    private struct State {
        /// When the task wakes; nil when there is no task.
        var deadline: Date?
        var task: Task<Void, Never>?
        /// Which task is current: a replaced one that wakes does nothing more.
        var generation = 0
    }

    private let clock: any WallClock
    private let state = Locked(State())

    init(clock: any WallClock) {
        self.clock = clock
    }

    /// Makes the timer wake at `center`'s earliest deadline, or stops it when there is none.
    func reschedule(_ center: ActivityCenter) {
        state.withLock { state in
            // Under this lock, so that two changes at once cannot leave the later-computed deadline behind.
            let earliest = center.earliestDeadline()
            if state.task != nil, let sleeping = state.deadline, let earliest, earliest >= sleeping { return }
            state.task?.cancel()
            state.generation += 1
            state.deadline = earliest
            state.task = earliest.map { start(until: $0, generation: state.generation, center: center) }
        }
    }

    /// Stops the timer: the center is going away.
    func stop() {
        state.withLock { state in
            state.task?.cancel()
            state.task = nil
            state.deadline = nil
            state.generation += 1
        }
    }

    private func start(until first: Date, generation: Int, center: ActivityCenter) -> Task<Void, Never> {
        Task { [weak center, clock] in
            var deadline = first
            while true {
                do {
                    try await clock.sleep(until: deadline)
                } catch {
                    return
                }
                guard let next = self.fire(generation, center: center) else { return }
                deadline = next
            }
        }
    }

    /// Applies time to the center's activities and returns when to wake next; nil when this task
    /// is done (replaced, no deadline left, or the center gone).
    private func fire(_ generation: Int, center: ActivityCenter?) -> Date? {
        guard let center else { return nil }
        center.refresh()
        return state.withLock { state in
            guard state.generation == generation else { return nil }
            state.deadline = center.earliestDeadline()
            if state.deadline == nil { state.task = nil }
            return state.deadline
        }
    }
}
