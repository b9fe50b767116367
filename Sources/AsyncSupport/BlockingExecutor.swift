import Dispatch

/// Runs blocking calls (file I/O, `fsync`, `write(2)` to a terminal) one at a time on a thread of
/// its own, never on Swift's cooperative pool, whose few threads must never wait on the kernel.
///
/// Calls run in the order they are submitted, each to completion: a caller that is cancelled
/// still waits for its call to end (a half-done write is worse than a late one). One executor per
/// resource that needs its calls serialised (the agent's state directory, a terminal).
public final class BlockingExecutor: Sendable {
    private let queue: DispatchQueue

    /// Creates an executor; `label` names its thread in debuggers and crash reports.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the executor's thread, after every call submitted before it, and returns its
    /// result or throws its error.
    public func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
