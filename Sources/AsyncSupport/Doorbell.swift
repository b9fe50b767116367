import Locking

/// A signal for one waiting task: ``ring()`` from anywhere, ``wait()`` returns once it was rung
/// since the last wait returned; rings meanwhile count as one. What `AsyncStream<Void>` with
/// `bufferingNewest(1)` does for a worker woken "there is something to do", without its generic
/// storage, which cost the agent a few thousand instructions a ring in metadata lookups and
/// protocol witnesses (callgrind, issue 24).
public final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: UnsafeContinuation<Bool, Never>?
    }

    private let state = Locked(State())

    public init() {}

    /// Whether a ring waits for the next ``wait()``, which then returns at once.
    var isRung: Bool { state.withLock { $0.rung } }

    /// Rings: wakes the waiting task, or the next one to wait.
    public func ring() {
        state.withLock { state -> UnsafeContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }?.resume(returning: true)
    }

    /// Returns true once the bell was rung (at once if it was since the last wait), false when
    /// the calling task is cancelled, before or while it waits. One task waits at a time.
    public func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: UnsafeContinuation<Bool, Never>) in
                let answer = state.withLock { state -> Bool? in
                    // The handler below runs before this when cancelled first: it found no waiter.
                    if Task.isCancelled { return false }
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    precondition(state.waiter == nil, "Doorbell.wait() from two tasks at once")
                    state.waiter = waiter
                    return nil
                }
                if let answer { waiter.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { state -> UnsafeContinuation<Bool, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume(returning: false)
        }
    }
}
