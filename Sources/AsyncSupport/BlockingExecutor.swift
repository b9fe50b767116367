import Dispatch

/// Runs blocking calls (file I/O, `fsync`, `write(2)` to a terminal) one at a time on a thread of
/// its own, never on Swift's cooperative pool, whose few threads must never wait on the kernel.
///
/// Calls run in the order they are submitted, each to completion: a caller that is cancelled
/// still waits for its call to end (a half-done write is worse than a late one). One executor per
/// resource that needs its calls serialised (the agent's state directory, a terminal).
///
/// It is also a `TaskExecutor`: a task that prefers it (`withTaskExecutorPreference`) runs its
/// nonisolated code on the executor's thread, between the calls, and its own calls to ``run(_:)``
/// run there at once, without a hop to the thread and back (the agent's control loop and its
/// spool: one thread wake-up a fix instead of three, issue 24).
public final class BlockingExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    /// Marks the queue's own thread while it runs the queue's work (`DispatchQueue.getSpecific`).
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    /// Creates an executor; `label` names its thread in debuggers and crash reports.
    public init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// Whether the calling code runs on the executor's thread (a task that prefers it, or a call).
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }

    /// Runs `body` on the executor's thread, after every call submitted before it, and returns its
    /// result or throws its error. Called from the executor's thread (a task that prefers it), runs
    /// `body` there at once.
    public func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        if isCurrent { return try body() }
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

    /// Runs a job of a task that prefers this executor on its thread, in turn with the calls.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
