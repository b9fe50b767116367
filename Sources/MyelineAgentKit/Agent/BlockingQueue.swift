import Dispatch
import Locking

/// Runs blocking calls (the outbox's file I/O and `fsync`) one at a time on a dedicated thread,
/// never on Swift's cooperative pool.
final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try body() }) }
        }
    }
}

/// Runs `body` for at most `timeout`; returns whether it finished in time. On time-out `body` is
/// cancelled and left to end by itself: this returns at once, whether or not `body` heeds the
/// cancellation (awaiting another task's value does not).
func withTimeout(_ timeout: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let outcome = Locked<CheckedContinuation<Bool, Never>?>(nil)
    let resume: @Sendable (Bool) -> Void = { finished in
        outcome.withLock { continuation in
            continuation?.resume(returning: finished)
            continuation = nil
        }
    }
    var tasks: [Task<Void, Never>] = []
    let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        outcome.withLock { $0 = continuation }
        tasks = [
            Task {
                await body()
                resume(true)
            },
            Task {
                try? await Task.sleep(for: timeout)
                resume(false)
            },
        ]
    }
    for task in tasks { task.cancel() }
    return finished
}
