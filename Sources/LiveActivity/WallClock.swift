import FoundationEssentials

/// A source of wall-clock time (UTC dates) that can also wait for a date.
///
/// Activities compare wall-clock dates (stale and dismissal dates), so they need wall time, which
/// can jump; `SystemWallClock` is the real one and tests use a manual clock.
public protocol WallClock: Sendable {
    /// The current date.
    var now: Date { get }

    /// Returns once `now` is at or after `deadline`; at once if it already is.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled before or while waiting.
    func sleep(until deadline: Date) async throws
}
