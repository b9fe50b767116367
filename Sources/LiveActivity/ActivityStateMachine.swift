import FoundationEssentials

/// The lifecycle rules of one activity, without clocks or I/O: each method takes an event with the
/// current date and returns the states it entered, in order.
///
/// - active and stale follow the stale date: stale once `now >= staleDate`, active again after an
///   update with a later (or nil) stale date, or if the wall clock is set back;
/// - `end` enters ended with a dismissal date from the policy, and goes straight on to dismissed
///   when that date is not in the future (`.immediate`, or `.after` an earlier date);
/// - ended becomes dismissed once `now >= dismissalDate`;
/// - updating or ending an ended or dismissed activity throws `ActivityError.Code.activityEnded`
///   and changes nothing.
///
/// The shell (``Activity``) applies the events; its center's timer wakes at ``nextDeadline`` to call
/// ``tick(now:)``.
public struct ActivityStateMachine: Hashable, Sendable {
    /// What an end did: the dismissal date it set and the states it entered.
    public struct Ending: Hashable, Sendable {
        /// When the ended activity is (or was, for an immediate dismissal) dismissed.
        public let dismissalDate: Date
        /// `[.ended]`, or `[.ended, .dismissed]` when dismissed at once.
        public let stateChanges: [ActivityState]
    }

    private enum Phase: Hashable, Sendable {
        case live(staleDate: Date?, isStale: Bool)
        case ended(dismissalDate: Date)
        case dismissed
    }

    private var phase: Phase

    /// Starts a live activity: active, or stale if `staleDate` is not after `now`.
    public init(staleDate: Date?, now: Date) {
        phase = .live(staleDate: staleDate, isStale: Self.isStale(staleDate, now: now))
    }

    /// The current state.
    public var state: ActivityState {
        switch phase {
        case .live(_, let isStale): isStale ? .stale : .active
        case .ended: .ended
        case .dismissed: .dismissed
        }
    }

    /// The next date at which ``tick(now:)`` changes the state: the stale date of an active
    /// activity or the dismissal date of an ended one; nil when only an event can change it.
    public var nextDeadline: Date? {
        switch phase {
        case .live(let staleDate, false): staleDate
        case .live(_, true), .dismissed: nil
        case .ended(let dismissalDate): dismissalDate
        }
    }

    /// Applies new content's stale date.
    ///
    /// - Returns: `[.stale]` or `[.active]` when the state flips, otherwise `[]`.
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed.
    public mutating func update(staleDate: Date?, now: Date) throws(ActivityError) -> [ActivityState] {
        guard case .live(_, let wasStale) = phase else { throw endedError(doing: "update") }
        return settle(staleDate: staleDate, wasStale: wasStale, now: now)
    }

    /// Ends the activity with a dismissal policy.
    ///
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed.
    public mutating func end(dismissalPolicy: ActivityUIDismissalPolicy, now: Date) throws(ActivityError) -> Ending {
        guard case .live = phase else { throw endedError(doing: "end") }
        let dismissalDate = dismissalPolicy.dismissalDate(endedAt: now)
        if now >= dismissalDate {
            phase = .dismissed
            return Ending(dismissalDate: dismissalDate, stateChanges: [.ended, .dismissed])
        }
        phase = .ended(dismissalDate: dismissalDate)
        return Ending(dismissalDate: dismissalDate, stateChanges: [.ended])
    }

    /// Lets time pass: a live activity follows its stale date, an ended one is dismissed once its
    /// dismissal date has come.
    ///
    /// - Returns: the state entered, if any.
    public mutating func tick(now: Date) -> [ActivityState] {
        switch phase {
        case .live(let staleDate, let wasStale):
            return settle(staleDate: staleDate, wasStale: wasStale, now: now)
        case .ended(let dismissalDate) where now >= dismissalDate:
            phase = .dismissed
            return [.dismissed]
        case .ended, .dismissed:
            return []
        }
    }

    private mutating func settle(staleDate: Date?, wasStale: Bool, now: Date) -> [ActivityState] {
        let isStale = Self.isStale(staleDate, now: now)
        phase = .live(staleDate: staleDate, isStale: isStale)
        guard isStale != wasStale else { return [] }
        return [state]
    }

    private func endedError(doing action: String) -> ActivityError {
        let what = state == .ended ? "has ended" : "was dismissed"
        return ActivityError(.activityEnded, "cannot \(action) an activity that \(what)")
    }

    private static func isStale(_ staleDate: Date?, now: Date) -> Bool {
        staleDate.map { now >= $0 } ?? false
    }
}
