import Foundation

/// The system's wall clock: `Date()`, waiting on the continuous clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current date, `Date()`.
    public var now: Date { Date() }

    /// The longest single sleep: the wall clock can be set while a task sleeps (a tracker without a
    /// real-time clock jumps from 1970 to today when it first gets the time), so a sleep until a
    /// wall-clock deadline looks at the wall clock again at least this often.
    public static let longestSleep: Duration = .seconds(1)

    /// Sleeps on the continuous clock in slices of at most ``longestSleep``, checking the wall clock
    /// after each, until `deadline` has passed.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        while case let remaining = deadline.timeIntervalSince(now), remaining > 0 {
            try await Task.sleep(for: min(Duration.seconds(remaining), Self.longestSleep), clock: .continuous)
        }
    }
}
