import Dispatch

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

/// Runs `body` for at most `timeout`; returns whether it finished in time. The body is cancelled otherwise.
func withTimeout(_ timeout: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await body()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
