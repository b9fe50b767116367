/// Runs blocking calls (file I/O, `fsync`, `write(2)` to a terminal) one at a time on a thread of
/// its own, never on Swift's cooperative pool, whose few threads must never wait on the kernel.
///
/// Calls run in the order they are submitted, each to completion: a caller that is cancelled
/// still waits for its call to end (a half-done write is worse than a late one). One executor per
/// resource that needs its calls serialised (the agent's state directory, a terminal).
///
/// The thread is an ``EventLoop``'s that watches nothing: it lives as long as the executor, named
/// after it (`top -H`, `/proc/PID/task/TID/comm`). It was a serial Dispatch queue, whose calls ran
/// on whichever of Dispatch's workers was free, and Dispatch ends a worker idle for a few seconds:
/// the agent's journal, committed every few seconds, started a thread for most commits (issue 24).
///
/// It is also a `TaskExecutor`: a task that prefers it (`withTaskExecutorPreference`) runs its
/// nonisolated code on the executor's thread, between the calls, and its own calls to ``run(_:)``
/// run there at once, without a hop to the thread and back (the agent's control loop and its
/// spool: one thread wake-up a fix instead of three, issue 24).
public final class BlockingExecutor: TaskExecutor, Sendable {
    private let loop: EventLoop

    /// Creates an executor and starts its thread, named `name` (its first 15 bytes).
    public init(name: String) {
        loop = EventLoop(name: name)
    }

    /// Ends the thread once the calls submitted before have run.
    deinit {
        loop.shutdown()
    }

    /// Whether the calling code runs on the executor's thread (a task that prefers it, or a call).
    public var isCurrent: Bool { loop.isCurrent }

    /// Runs `body` on the executor's thread, after every call submitted before it, and returns its
    /// result or throws its error. Called from the executor's thread (a task that prefers it), runs
    /// `body` there at once.
    public func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await loop.run(body)
    }

    /// Runs a job of a task that prefers this executor on its thread, in turn with the calls.
    public func enqueue(_ job: consuming ExecutorJob) {
        // Run as this executor's job (not the loop's), so that the task finds itself on the
        // executor it prefers and its calls run inline.
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
