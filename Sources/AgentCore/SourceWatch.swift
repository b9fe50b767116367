import FoundationEssentials

/// Notices a source that has gone silent: a receiver that sends neither a fix nor a no-fix report
/// (gpsd up, the receiver dead or unplugged without gpsd noticing). A pure state machine over
/// the times updates arrive.
///
/// The timeout follows the source's own cadence (``AgentCoreSettings/SilenceTimeout``): with the
/// default, 5 s past the longest of the last ``cadenceWindow`` intervals between updates, so a
/// 1 Hz receiver is silent after about 6 s and one that reports every 10 s after 15 s. It runs
/// from the last update (or the start); once it passes, the source counts as unavailable until its
/// next update, and the silence is reported once.
///
/// Its times are seconds on a monotonic clock (the system's uptime), not the wall clock: a wall
/// clock stepped by an hour (a Raspberry Pi meeting its time server) is no hour of silence.
public struct SourceWatch: Hashable, Sendable {
    /// How many recent intervals the cadence is the longest of.
    public static let cadenceWindow = 8
    /// The longest interval that counts as cadence: a pause longer than this (a receiver off for
    /// the night) is silence, not the source's rhythm.
    public static let longestCadence: TimeInterval = 60

    /// The timeout rule.
    public let timeout: AgentCoreSettings.SilenceTimeout
    /// When the last update came (or the watch started), seconds of monotonic time.
    public private(set) var lastUpdate: TimeInterval
    /// Whether the silence has been reported and no update came since.
    public private(set) var isSilent = false
    private var intervals: [TimeInterval] = []
    private var sawUpdate = false

    /// Starts watching at `now`, seconds of monotonic time.
    public init(timeout: AgentCoreSettings.SilenceTimeout, now: TimeInterval) {
        self.timeout = timeout
        lastUpdate = now
    }

    /// The usual interval between updates: the longest recent one, capped; nil before two updates.
    public var cadence: TimeInterval? { intervals.max() }

    /// How long without an update is silence, now; nil when the watch is off.
    public var limit: TimeInterval? {
        switch timeout {
        case .off: nil
        case .fixed(let seconds): seconds
        case .afterCadence(let margin): (cadence ?? 1) + margin
        }
    }

    /// When the source is silent unless an update comes first; nil when it already is, or the watch is off.
    public var deadline: TimeInterval? {
        guard !isSilent, let limit else { return nil }
        return lastUpdate + limit
    }

    /// An update arrived at `now`. Returns whether the source was silent until now.
    public mutating func updated(at now: TimeInterval) -> Bool {
        if sawUpdate {
            let interval = now - lastUpdate
            if interval >= 0, interval <= Self.longestCadence {
                intervals.append(interval)
                if intervals.count > Self.cadenceWindow { intervals.removeFirst() }
            }
        }
        sawUpdate = true
        lastUpdate = now
        defer { isSilent = false }
        return isSilent
    }

    /// Lets time pass. Returns true once, when the source has just become silent.
    public mutating func tick(now: TimeInterval) -> Bool {
        guard let deadline, now >= deadline else { return false }
        isSilent = true
        return true
    }

    /// Starts the timeout again from `now` without counting an interval (the source restarted:
    /// a replay's next lap, or the agent's start).
    public mutating func restart(at now: TimeInterval) {
        lastUpdate = now
        sawUpdate = false
        isSilent = false
    }
}
