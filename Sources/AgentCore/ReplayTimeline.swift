import FoundationEssentials

/// A replay's times made one timeline across its laps: each lap of a looped file starts again
/// at the file's first time, so the core shifts it to follow the last lap's last time by
/// ``lapGap``. The trip's elapsed time runs on this timeline (``Tracking/Tracker/TripClock``).
public struct ReplayTimeline: Hashable, Sendable {
    /// The recorded time between a lap's last update and the next lap's first: 1 s.
    public static let lapGap: TimeInterval = 1

    private var offset: TimeInterval = 0
    private var last: Date?
    private var lapStarting = false

    /// A timeline before the first update.
    public init() {}

    /// The next lap starts: its first time is shifted to follow this lap's last.
    public mutating func lapStarted() {
        lapStarting = true
    }

    /// A recorded time, shifted onto the timeline.
    public mutating func map(_ recorded: Date) -> Date {
        if lapStarting, let last {
            offset = last.addingTimeInterval(Self.lapGap).timeIntervalSince(recorded)
            lapStarting = false
        }
        let shifted = recorded.addingTimeInterval(offset)
        last = max(last ?? shifted, shifted)
        return shifted
    }
}
