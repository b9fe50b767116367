extension EventLoop {
    /// Suspends the calling task for `duration` on a timer of the loop (at the earliest; to the
    /// millisecond), rather than on one of Dispatch's: a task that prefers the loop then wakes on
    /// the loop's thread alone, in its `poll`, where `Task.sleep` wakes Dispatch's timer thread
    /// and one of its workers to hand the task back to the loop through its pipe (issue 24).
    ///
    /// - Throws: `CancellationError` when the task is cancelled before or while it sleeps (at once).
    public func sleep(for duration: Duration) async throws(CancellationError) {
        if Task.isCancelled { throw CancellationError() }
        let sleep = Sleep()
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                execute { [self] in sleep.start(continuation, after: duration, on: self) }
            }
        } onCancel: {
            execute { [self] in sleep.cancel(on: self) }
        }
        if Task.isCancelled { throw CancellationError() }
    }
}

/// One sleep's state, on the loop's thread only: its start and its cancellation are both handed
/// to the loop, in either order.
private final class Sleep: @unchecked Sendable {
    private var continuation: UnsafeContinuation<Void, Never>?
    private var timer: EventLoop.Timer?
    private var cancelled = false

    func start(_ continuation: UnsafeContinuation<Void, Never>, after duration: Duration, on loop: EventLoop) {
        guard !cancelled else { return continuation.resume() }
        self.continuation = continuation
        timer = loop.schedule(after: duration) { [self] in
            timer = nil
            wake()
        }
    }

    func cancel(on loop: EventLoop) {
        cancelled = true
        if let timer { loop.cancel(timer) }
        timer = nil
        wake()
    }

    private func wake() {
        let waiting = continuation
        continuation = nil
        waiting?.resume()
    }
}
