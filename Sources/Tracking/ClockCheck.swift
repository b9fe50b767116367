import FoundationEssentials

/// Judges the device's wall clock against its receiver: a GPS fix carries true UTC, so a system
/// clock that disagrees with the fix times by more than ``tolerance`` (stepped by hand or by a
/// time daemon, or still at 1970 after booting a Raspberry Pi, which has no real-time clock) is
/// reported with its offset, for the agent's status to flag it.
///
/// A pure state machine: it takes each fix's time and the clock's reading when the fix arrived,
/// and says when the report changes, so that the status is published again only then.
public struct ClockCheck: Hashable, Sendable {
    /// How far the clock may be from a fix's time, the fix's way through gpsd and the agent
    /// included, before it is reported: 30 s.
    public static let defaultTolerance: TimeInterval = 30
    /// Offsets beyond this (about 31,700 years) come from a damaged fix time, not a clock: ignored.
    static let largestOffset: TimeInterval = 1e12

    /// How far the clock may be from a fix's time before it is reported.
    public let tolerance: TimeInterval
    /// The clock's offset as reported, in whole seconds: the clock's reading minus the fix's time
    /// (positive: the clock is ahead); nil while the clock agrees with the receiver.
    public private(set) var reportedOffset: Int?

    /// Creates a check that reports offsets over `tolerance` seconds.
    public init(tolerance: TimeInterval = defaultTolerance) {
        self.tolerance = tolerance
    }

    /// Takes the time of a fix and the clock's reading when it arrived.
    ///
    /// - Returns: whether ``reportedOffset`` changed: the clock left the tolerance, came back
    ///   within it, or moved by more than the tolerance from the offset reported.
    public mutating func observe(fixTime: Date, now: Date) -> Bool {
        let offset = now.timeIntervalSince(fixTime)
        guard offset.isFinite, abs(offset) < Self.largestOffset else { return false }
        let new: Int?
        if abs(offset) <= tolerance {
            new = nil
        } else if let reported = reportedOffset, abs(offset - Double(reported)) <= tolerance {
            new = reported
        } else {
            new = Int(offset.rounded())
        }
        defer { reportedOffset = new }
        return new != reportedOffset
    }
}
