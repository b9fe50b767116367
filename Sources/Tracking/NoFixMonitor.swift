import FoundationEssentials
import Location

/// Decides when the content loses its location: a pure state machine over location updates.
///
/// Rules: a fix shows at once (``Decision/located(_:)``). A `noFix` update (the receiver reports,
/// without a fix: a tunnel, a parking garage) starts the grace period if none runs; within it the
/// content keeps showing the last fix and nothing new is published (``Decision/holding(until:)``).
/// Once `noFixGrace` seconds have passed since the first update without a fix, by an update or by
/// ``tick(now:)`` at ``nextDeadline``, the content loses its location (``Decision/lost(_:)``, once)
/// and the last fix is forgotten, so an old position is never shown again as new. A
/// `deviceUnavailable` or `sourceUnavailable` update (the receiver or gpsd is gone: no fix can
/// come at all) loses the location at once, grace or not: holding the last fix would show a
/// frozen position as current for the whole grace period. Before the first fix the content has
/// no location.
public struct NoFixMonitor: Sendable {
    /// What to show after one update.
    public enum Decision: Hashable, Sendable {
        /// A new fix: show it.
        case located(LocationFix)
        /// No fix, within the grace period that ends at this time: keep showing the last fix, publish nothing new.
        case holding(until: Date)
        /// The grace period is over: show content without a location from now on, for this reason.
        case lost(LocationUpdate.Status)
        /// Still without a location (or never had one), for this reason.
        case stillLost(LocationUpdate.Status)
    }

    /// Seconds without a fix before the location is dropped.
    public let grace: TimeInterval
    /// The fix shown now; nil when the content has no location.
    public private(set) var fix: LocationFix?
    /// Why the latest update had no fix; `.fix` while fixes arrive.
    public private(set) var status: LocationUpdate.Status = .noFix

    private var noFixSince: Date?

    /// Creates a monitor with no location yet and a grace period in seconds.
    public init(grace: TimeInterval) {
        self.grace = max(0, grace)
    }

    /// Whether the content shows a location.
    public var isLocated: Bool { fix != nil }

    /// Takes one update at `now`.
    public mutating func receive(_ update: LocationUpdate, now: Date) -> Decision {
        if let newFix = update.fix {
            fix = newFix
            status = .fix
            noFixSince = nil
            return .located(newFix)
        }
        status = update.status
        guard fix != nil else { return .stillLost(status) }
        guard status == .noFix else {
            fix = nil
            noFixSince = nil
            return .lost(status)
        }
        let since = noFixSince ?? now
        noFixSince = since
        return expire(now: now) ?? .holding(until: since.addingTimeInterval(grace))
    }

    /// Lets time pass without an update; returns ``Decision/lost(_:)`` when the grace period ended
    /// by `now`, else nil.
    public mutating func tick(now: Date) -> Decision? {
        expire(now: now)
    }

    /// When the grace period ends, for ``tick(now:)``; nil when none runs.
    public var nextDeadline: Date? {
        guard fix != nil, let noFixSince else { return nil }
        return noFixSince.addingTimeInterval(grace)
    }

    private mutating func expire(now: Date) -> Decision? {
        guard let deadline = nextDeadline, now >= deadline else { return nil }
        fix = nil
        noFixSince = nil
        return .lost(status)
    }
}
