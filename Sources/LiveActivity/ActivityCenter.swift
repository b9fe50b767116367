import Foundation
import Locking

/// The live activities of one device, as ActivityKit's `Activity.activities` and its limit on
/// how many may run at once.
///
/// Activities keep their own time, as on iOS: the center turns them stale at their stale date and
/// dismisses ended ones at their dismissal date by itself, with a timer on ``clock`` that runs
/// only while an activity has such a date (one task per center, which ends with the center: keep
/// the center for as long as its activities are in use). A manual clock in tests moves them
/// deterministically.
///
/// Safe to use from any task. An activity counts as live until it is dismissed, so an ended one
/// still counts during its dismissal delay, as on iOS.
public final class ActivityCenter: Sendable {
    /// The clock that dates every change and decides staleness and dismissal.
    public let clock: any WallClock
    /// How many activities may be live at once.
    public let maximumActivities: Int

    private let live = Locked<[any ActivityLifecycle]>([])
    private let timer: DeadlineTimer

    /// Creates a center with a clock and a limit on live activities (8 by default).
    public init(clock: any WallClock, maximumActivities: Int = 8) {
        self.clock = clock
        self.maximumActivities = maximumActivities
        timer = DeadlineTimer(clock: clock)
    }

    deinit {
        timer.stop()
    }

    /// Starts an activity with attributes and first content; its start is event 1 of its `events`.
    ///
    /// Time is applied to the other activities first, so that those past their dismissal date no
    /// longer count.
    ///
    /// - Parameter id: the activity's id; nil for a lowercased UUID.
    /// - Throws: `ActivityError` `.tooManyActivities` when `maximumActivities` are live,
    ///   `.duplicateActivityID` when a live activity has `id`, `.invalidActivityID` when `id` is not
    ///   1-64 characters a-z, 0-9, `.`, `_` or `-` starting with a letter or digit.
    public func request<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String? = nil
    ) throws(ActivityError) -> Activity<Attributes> {
        try add(attributes: attributes, content: content, id: id ?? UUID().uuidString.lowercased(), resumingAfter: nil)
    }

    /// Takes back an activity that was running before a restart (its id and the seq of its last
    /// event were saved): its first event is an update with `content`, numbered `lastSeq + 1`, so
    /// its sequence continues where it stopped.
    ///
    /// - Throws: as ``request(attributes:content:id:)``, and `.invalidActivityID` when `lastSeq` is below 1.
    public func resume<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String, lastSeq: Int
    ) throws(ActivityError) -> Activity<Attributes> {
        guard lastSeq >= 1 else {
            throw ActivityError(
                .invalidActivityID, "cannot resume activity \"\(id)\" after seq \(lastSeq): seq starts at 1")
        }
        return try add(attributes: attributes, content: content, id: id, resumingAfter: lastSeq)
    }

    private func add<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String, resumingAfter: Int?
    ) throws(ActivityError) -> Activity<Attributes> {
        try ActivityModel<Attributes>.validate(id: id)
        tickAll()
        let activity = try live.withLock { live throws(ActivityError) in
            live.removeAll { $0.isDismissed }
            guard !live.contains(where: { $0.id == id }) else {
                throw ActivityError(.duplicateActivityID, "cannot start activity \"\(id)\": one with that id is live")
            }
            guard live.count < maximumActivities else {
                throw ActivityError(
                    .tooManyActivities,
                    "cannot start activity \"\(id)\": \(live.count) activities are live, "
                        + "the maximum is \(maximumActivities)")
            }
            let activity = Activity(
                id: id, attributes: attributes, content: content, clock: clock, resumingAfter: resumingAfter
            ) { [weak self] in
                self?.reschedule()
            }
            live.append(activity)
            return activity
        }
        reschedule()
        return activity
    }

    /// The live (not dismissed) activities with attributes of type `type`, oldest first.
    public func activities<Attributes: ActivityAttributes>(of type: Attributes.Type) -> [Activity<Attributes>] {
        live.withLock { $0.compactMap { $0 as? Activity<Attributes> } }.filter { !$0.isDismissed }
    }

    /// Applies the current time to every activity at once: those past their stale date turn
    /// stale, ended ones past their dismissal date are dismissed.
    ///
    /// The center's timer does this at each deadline; call it to apply a clock's jump at once.
    public func refresh() {
        tickAll()
    }

    /// The earliest stale or dismissal date of the live activities that time has still to act on.
    func earliestDeadline() -> Date? {
        live.withLock { $0 }.compactMap(\.nextDeadline).min()
    }

    /// Ticks every activity and forgets the dismissed ones.
    private func tickAll() {
        let now = clock.now
        let activities = live.withLock { $0 }
        for activity in activities { activity.tick(now: now) }
        live.withLock { $0.removeAll { $0.isDismissed } }
    }

    private func reschedule() {
        timer.reschedule(self)
    }
}

/// What the center needs of an activity, whatever its attributes type.
protocol ActivityLifecycle: AnyObject, Sendable {
    var id: String { get }
    var isDismissed: Bool { get }
    /// When time next changes the activity's state; nil when only a change can.
    var nextDeadline: Date? { get }
    func tick(now: Date)
}

extension Activity: ActivityLifecycle {
    var isDismissed: Bool { activityState == .dismissed }
}
