/// Runs `operation` for at most `timeout` on `clock`; returns its result, or nil when the time ran
/// out first.
///
/// Structured: when the time runs out, `operation` is cancelled and this returns only once it has
/// returned, so nothing is left running. `operation` must therefore heed cancellation (a
/// `Task.sleep`, a cancellable wait); one that does not keeps this waiting until it ends. When
/// the calling task is cancelled, `operation` is cancelled at once and the result is what it
/// returns then.
public func withTimeout<Result: Sendable, C: Clock>(
    _ timeout: C.Duration, clock: C, _ operation: @escaping @Sendable () async -> Result
) async -> Result? {
    await withTaskGroup(of: TimeoutOutcome<Result>.self) { group in
        group.addTask { .finished(await operation()) }
        group.addTask {
            do {
                try await clock.sleep(for: timeout)
                return .timedOut
            } catch {
                // Cancelled: by the operation finishing first, or with the caller.
                return .cancelled
            }
        }
        var result: Result?
        var timedOut = false
        while let outcome = await group.next() {
            switch outcome {
            case .finished(let value):
                // After a time-out the operation still ends (it was cancelled); what it returns then is not used.
                if !timedOut { result = value }
                group.cancelAll()
            case .timedOut:
                timedOut = true
                group.cancelAll()
            case .cancelled:
                continue
            }
        }
        return result
    }
}

/// ``withTimeout(_:clock:_:)`` on the continuous clock.
public func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async -> Result
) async -> Result? {
    await withTimeout(timeout, clock: ContinuousClock(), operation)
}

private enum TimeoutOutcome<Result: Sendable>: Sendable {
    case finished(Result)
    case timedOut
    case cancelled
}
