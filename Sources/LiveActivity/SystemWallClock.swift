import FoundationEssentials

/// The system's wall clock: `Date()`, waiting on the continuous clock.
public struct SystemWallClock: WallClock {
    /// The longest single sleep of this clock: how late a sleep notices that the wall clock was set.
    public let longestSleep: Duration

    /// Creates the system clock, whose sleeps look at the wall clock at least every `longestSleep`
    /// (1 s by default; a program that bounds its waits itself can sleep longer and wake less).
    public init(longestSleep: Duration = Self.longestSleep) {
        self.longestSleep = longestSleep
    }

    /// The current date, `Date()`.
    public var now: Date { Date() }

    /// The default longest single sleep, 1 s: the wall clock can be set while a task sleeps (a
    /// tracker without a real-time clock jumps from 1970 to today when it first gets the time), so
    /// a sleep until a wall-clock deadline looks at the wall clock again at least this often.
    public static let longestSleep: Duration = .seconds(1)

    /// Sleeps on the continuous clock in slices of at most ``longestSleep-swift.property``,
    /// checking the wall clock after each, until `deadline` has passed.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        while case let remaining = deadline.timeIntervalSince(now), remaining > 0 {
            try await Task.sleep(for: min(Duration.seconds(remaining), longestSleep), clock: .continuous)
        }
    }
}
