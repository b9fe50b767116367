import FoundationEssentials

/// Decides whether a content update is published or skipped: the iOS "frequent updates" budget.
/// A pure state machine: ``decide(position:change:now:)`` takes the content's position, what
/// changed and the time, and returns a ``Decision`` with its reason.
///
/// Rules, in order (`now` and the last publish on one clock, seconds):
/// 1. A ``Change/lifecycle`` change (the activity's first content, a resume after restart, the
///    final content) or an ``Change/alert`` publishes at once, whatever the interval.
/// 2. Before anything was published, the first content publishes (``PublishReason/first``).
/// 3. Less than `minimumInterval` since the last publish: skip (``SkipReason/tooSoon``); a state
///    change is kept pending and published by the first decision after the interval, which
///    ``nextDeadline`` then asks for.
/// 4. A state change publishes: ``Change/state`` (pause, resume, losing the location), a pending
///    one, or the content gaining or losing its position since the last publish.
/// 5. The position moved at least `minimumDistance` metres from the last published one: publish
///    (``PublishReason/moved``).
/// 6. At least `heartbeat` seconds since the last publish: publish (``PublishReason/heartbeat``).
/// 7. Otherwise skip (``SkipReason/notMovedEnough``).
///
/// If `now` is before the last publish (the clock was set back), the heartbeat is due at once, so
/// that a clock jump cannot silence the tracker.
public struct UpdateBudget: Sendable {
    /// What changed besides the position.
    public enum Change: Hashable, Sendable {
        /// Nothing: a new position, or a heartbeat check.
        case none
        /// The shown state changed: paused, resumed, location lost or back.
        case state
        /// The update carries an alert.
        case alert
        /// The activity's lifecycle: its first content, a resume after restart, or its final content.
        case lifecycle
    }

    /// Why an update is published.
    public enum PublishReason: String, Hashable, Sendable {
        /// A lifecycle change.
        case lifecycle
        /// An alert.
        case alert
        /// The first update of this budget.
        case first
        /// A state change, maybe held back by the minimum interval.
        case stateChange
        /// Moved at least the minimum distance.
        case moved
        /// The heartbeat interval passed.
        case heartbeat
    }

    /// Why an update is skipped.
    public enum SkipReason: String, Hashable, Sendable {
        /// Within the minimum interval of the last publish.
        case tooSoon
        /// Moved less than the minimum distance, and the heartbeat is not due.
        case notMovedEnough
    }

    /// What to do with one update.
    public enum Decision: Hashable, Sendable {
        /// Publish it, for this reason.
        case publish(PublishReason)
        /// Skip it, for this reason.
        case skip(SkipReason)

        /// Whether the update is published.
        public var publishes: Bool {
            if case .publish = self { return true }
            return false
        }
    }

    /// Metres; see ``TrackingPolicy/minimumDistance``.
    public let minimumDistance: Double
    /// Seconds; see ``TrackingPolicy/minimumInterval``.
    public let minimumInterval: TimeInterval
    /// Seconds; see ``TrackingPolicy/heartbeat``.
    public let heartbeat: TimeInterval

    /// When the last update was published; nil before the first.
    public private(set) var lastPublished: Date?
    /// The position of the last published content; nil when it had none.
    public private(set) var lastPosition: Coordinate?
    /// Whether a state change waits for the minimum interval to pass.
    public private(set) var hasPendingChange = false

    /// Creates a budget from the policy's minimum distance, minimum interval and heartbeat.
    public init(policy: TrackingPolicy) {
        minimumDistance = policy.minimumDistance
        minimumInterval = policy.minimumInterval
        heartbeat = policy.heartbeat
    }

    /// Decides about a content with `position` (nil: without a location) at `now`, and records a publish.
    public mutating func decide(position: Coordinate?, change: Change, now: Date) -> Decision {
        switch change {
        case .lifecycle: return publish(.lifecycle, position: position, now: now)
        case .alert: return publish(.alert, position: position, now: now)
        case .none, .state: break
        }
        guard let lastPublished else { return publish(.first, position: position, now: now) }
        var since = now.timeIntervalSince(lastPublished)
        if since < 0 { since = .infinity }
        let stateChanged = change == .state || hasPendingChange || (position == nil) != (lastPosition == nil)
        if since < minimumInterval {
            if stateChanged { hasPendingChange = true }
            return .skip(.tooSoon)
        }
        if stateChanged { return publish(.stateChange, position: position, now: now) }
        if let position, let lastPosition, position.distance(to: lastPosition) >= minimumDistance {
            return publish(.moved, position: position, now: now)
        }
        if since >= heartbeat { return publish(.heartbeat, position: position, now: now) }
        return .skip(.notMovedEnough)
    }

    /// When the caller should decide again even without a new fix: the end of the minimum interval
    /// while a change is pending, else the next heartbeat; nil before the first publish.
    public var nextDeadline: Date? {
        guard let lastPublished else { return nil }
        return lastPublished.addingTimeInterval(hasPendingChange ? minimumInterval : heartbeat)
    }

    private mutating func publish(_ reason: PublishReason, position: Coordinate?, now: Date) -> Decision {
        lastPublished = now
        lastPosition = position
        hasPendingChange = false
        return .publish(reason)
    }
}
