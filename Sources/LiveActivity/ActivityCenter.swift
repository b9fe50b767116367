import FoundationEssentials
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

    private let registry = Locked(Registry())
    private let timer: DeadlineTimer

    /// The activities, and the consumers of all their events, under one lock: an activity
    /// requested while a consumer subscribes is given to it exactly once.
    private struct Registry {
        var activities: [any ActivityLifecycle] = []
        var observers = Registrations<EventObservation>()
    }

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
    ///   1-64 characters a-z, 0-9, `.`, `_` or `-` starting with a letter or digit,
    ///   `.invalidAttributesType` when `Attributes.typeName` is not such an id either,
    ///   `.contentTooLarge` when the content state takes more than 4 KiB as JSON.
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
        try ActivityModel<Attributes>.validateTypeName()
        try ActivityModel<Attributes>.validateSize(of: content.state)
        try ActivityModel<Attributes>.validate(id: id)
        tickAll()
        let activity = try registry.withLock { registry throws(ActivityError) in
            registry.activities.removeAll { $0.isDismissed }
            let live = registry.activities
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
            for observer in registry.observers.all { activity.attach(observer) }
            registry.activities.append(activity)
            return activity
        }
        reschedule()
        return activity
    }

    /// The live (not dismissed) activities with attributes of type `type`, oldest first.
    public func activities<Attributes: ActivityAttributes>(of type: Attributes.Type) -> [Activity<Attributes>] {
        registry.withLock { $0.activities.compactMap { $0 as? Activity<Attributes> } }.filter { !$0.isDismissed }
    }

    /// Every event of every activity of the center, of any attributes type, for one consumer:
    /// first the events so far in brief of the activities live now (as ``Activity/events`` gives
    /// them), then every event in the order it happens, of these and of the activities requested
    /// later, from their start; none is missed, however late the consumer iterates (the stream
    /// buffers them). What a publisher follows (`ActivityPublisher`).
    ///
    /// It never finishes; ending the iteration unsubscribes.
    public var events: ActivityUpdates<AnyActivityEvent> {
        let (stream, continuation) = AsyncStream<AnyActivityEvent>.makeStream()
        let observation = observeEvents { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return ActivityUpdates(stream)
    }

    /// Calls `handler` with every event of every activity of the center, of any attributes type:
    /// first the history in brief of the activities live now, then every event as it happens, of
    /// these and of the activities requested later, from their start, until the observation is
    /// cancelled. The handler runs synchronously, on the task that made the change, under the
    /// activity's lock (``EventObservation``): an event is handed on before the call that caused
    /// it returns, so a publisher that observes before the first request misses none and knows,
    /// when the program's last call returns, that it has every event.
    public func observeEvents(_ handler: @escaping @Sendable (AnyActivityEvent) -> Void) -> EventObservation {
        let observation = EventObservation(handler)
        let token = registry.withLock { registry in
            for activity in registry.activities where !activity.isDismissed { activity.attach(observation) }
            return registry.observers.add(observation)
        }
        observation.whenCancelled { [weak self] in
            self?.registry.withLock { $0.observers.remove(token) }
        }
        return observation
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
        registry.withLock { $0.activities }.compactMap(\.nextDeadline).min()
    }

    /// Ticks every activity and forgets the dismissed ones.
    private func tickAll() {
        let now = clock.now
        let activities = registry.withLock { $0.activities }
        for activity in activities { activity.tick(now: now) }
        registry.withLock { $0.activities.removeAll { $0.isDismissed } }
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
    /// Gives an observer of the center the activity's history, then its events.
    func attach(_ observer: EventObservation)
}

extension Activity: ActivityLifecycle {
    var isDismissed: Bool { activityState == .dismissed }
}
