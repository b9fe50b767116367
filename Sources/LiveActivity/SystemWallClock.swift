import Foundation

/// The system's wall clock: `Date()`, waiting on the continuous clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current date, `Date()`.
    public var now: Date { Date() }

    /// Sleeps on the continuous clock for the remaining interval, then checks the wall clock again
    /// (it may have been set while sleeping) and sleeps for what remains, until `deadline` passes.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        while case let remaining = deadline.timeIntervalSince(now), remaining > 0 {
            try await Task.sleep(for: .seconds(remaining), clock: .continuous)
        }
    }
}
