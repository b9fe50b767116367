import FoundationEssentials

/// The system's wall clock: `Date()`, waiting on the continuous clock.
public struct SystemWallClock: WallClock {
    /// The longest single sleep of this clock: how late a sleep notices that the wall clock was set.
    public let longestSleep: Duration

    /// How one slice of a sleep sleeps.
    private let sleepSlice: @Sendable (Duration) async throws -> Void

    /// Creates the system clock, whose sleeps look at the wall clock at least every `longestSleep`
    /// (1 s by default; a program that bounds its waits itself can sleep longer and wake less).
    ///
    /// - Parameter sleep: how a slice of a sleep sleeps, throwing `CancellationError` when the
    ///   task is cancelled: `Task.sleep` on the continuous clock by default; the agent sleeps on
    ///   a timer of its event loop (`EventLoop.sleep(for:)`), which wakes no other thread.
    public init(
        longestSleep: Duration = Self.longestSleep,
        sleep: @escaping @Sendable (Duration) async throws -> Void = {
            try await Task.sleep(for: $0, clock: .continuous)
        }
    ) {
        self.longestSleep = longestSleep
        self.sleepSlice = sleep
    }

    /// The current date, `Date()`.
    public var now: Date { Date() }

    /// The default longest single sleep, 1 s: the wall clock can be set while a task sleeps (a
    /// tracker without a real-time clock jumps from 1970 to today when it first gets the time), so
    /// a sleep until a wall-clock deadline looks at the wall clock again at least this often.
    public static let longestSleep: Duration = .seconds(1)

    /// Sleeps in slices of at most ``longestSleep-swift.property``,
    /// checking the wall clock after each, until `deadline` has passed.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled.
    public func sleep(until deadline: Date) async throws {
        try Task.checkCancellation()
        while case let remaining = deadline.timeIntervalSince(now), remaining > 0 {
            try await sleepSlice(min(Duration.seconds(remaining), longestSleep))
        }
    }
}
