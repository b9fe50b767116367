import FoundationEssentials
import Locking

/// A running Live Activity, as in ActivityKit: fixed attributes, changing content and a lifecycle.
///
/// Start one with ``ActivityCenter/request(attributes:content:id:)`` or
/// ``request(attributes:content:in:)``. All members are safe to use from any task; changes apply
/// at once and are observed through ``activityStateUpdates``, ``contentUpdates`` and ``events``.
public final class Activity<Attributes: ActivityAttributes>: Identifiable, Sendable {
    /// The content type of this activity.
    public typealias Content = ActivityContent<Attributes.ContentState>

    /// The activity's id: a lowercased UUID unless the requester chose one; it is an MQTT topic level.
    public let id: String
    /// The attributes the activity was started with.
    public let attributes: Attributes

    private let clock: any WallClock
    private let didChange: @Sendable () -> Void
    private let storage: Locked<Storage>

    private struct Storage {
        var model: ActivityModel<Attributes>
        var subscribers = Registrations<ActivitySubscriber<Attributes>>()
        /// The observers of the activity's events (``observeEvents(_:)``, the center's
        /// ``ActivityCenter/observeEvents(_:)``): forgotten at the dismissal or their cancellation.
        var observers: [EventObservation] = []

        /// Hands an event to the observers, forgetting those that were cancelled.
        mutating func observe(_ event: ActivityEvent<Attributes>) {
            guard !observers.isEmpty else { return }
            let erased = AnyActivityEvent(event)
            observers.removeAll { !$0.deliver(erased) }
        }
    }

    /// A new activity, whose first event is its start (seq 1); or, with `resumingAfter`, one that
    /// was running before a restart, whose first event is an update numbered `resumingAfter + 1`.
    init(
        id: String, attributes: Attributes, content: Content, clock: any WallClock, resumingAfter lastSeq: Int? = nil,
        didChange: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.attributes = attributes
        self.clock = clock
        self.didChange = didChange
        storage = Locked(
            Storage(
                model: ActivityModel(
                    id: id, attributes: attributes, content: content, now: clock.now, resumingAfter: lastSeq)))
    }

    /// Starts an activity in `center`, the ActivityKit spelling of ``ActivityCenter/request(attributes:content:id:)``.
    ///
    /// - Throws: `ActivityError` `.tooManyActivities` when the center already has its maximum of live activities.
    public static func request(
        attributes: Attributes, content: Content, in center: ActivityCenter
    ) throws(ActivityError) -> Activity<Attributes> {
        try center.request(attributes: attributes, content: content)
    }

    /// The activity's latest event: its start, or the change that followed it (the last of the
    /// history `events` replays); for publishers that act on each change at once rather than subscribe.
    public var lastEvent: ActivityEvent<Attributes> { storage.withLock { $0.model.lastEvent } }

    /// The current content: the last one given to `request`, `update` or `end`.
    public var content: Content { storage.withLock { $0.model.content } }

    /// The current lifecycle state.
    public var activityState: ActivityState { storage.withLock { $0.model.state } }

    /// The states the activity enters from now on, for one consumer; finishes after `.dismissed`.
    public var activityStateUpdates: ActivityUpdates<ActivityState> { subscribe(ActivitySubscriber.state) }

    /// The contents given from now on, for one consumer; finishes when the activity is dismissed.
    public var contentUpdates: ActivityUpdates<Content> { subscribe(ActivitySubscriber.content) }

    /// The activity's events for one consumer: first its events so far in brief (its start, the
    /// latest update since, its end and its dismissal, those that happened:
    /// ``ActivityModel/history``), then every later one in order; finishes after the `.dismissed`
    /// event.
    ///
    /// So a consumer that subscribes after the request, even after the end, still sees the start
    /// and the end of the activity and publishes its whole lifecycle; only updates that a newer
    /// one replaced are left out, as a retained MQTT message leaves them out (`seq` tells how
    /// many there were). ``ActivityCenter/events`` gives every event, missing none.
    public var events: ActivityUpdates<ActivityEvent<Attributes>> {
        subscribe(ActivitySubscriber.event, replaying: \.model.history)
    }

    /// Replaces the content, optionally with an alert; the state becomes stale or active from the
    /// new content's stale date.
    ///
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed,
    ///   `.contentTooLarge` when the content state takes more than 4 KiB as JSON.
    public func update(_ content: Content, alertConfiguration: AlertConfiguration? = nil) throws(ActivityError) {
        try ActivityModel<Attributes>.validateSize(of: content.state)
        let now = clock.now
        try apply { model throws(ActivityError) in try model.update(content, alert: alertConfiguration, now: now) }
    }

    /// Ends the activity, optionally with final content (nil keeps the current content), and
    /// schedules its dismissal by `dismissalPolicy`.
    ///
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed,
    ///   `.contentTooLarge` when the final content state takes more than 4 KiB as JSON.
    public func end(_ content: Content?, dismissalPolicy: ActivityUIDismissalPolicy = .default) throws(ActivityError) {
        if let content { try ActivityModel<Attributes>.validateSize(of: content.state) }
        let now = clock.now
        try apply { model throws(ActivityError) in try model.end(content, dismissalPolicy: dismissalPolicy, now: now) }
    }

    /// Lets time act on the activity (stale, dismissed).
    func tick(now: Date) {
        apply { model in model.tick(now: now) }
    }

    /// When time next changes the state (the stale date of an active activity, the dismissal
    /// date of an ended one); nil when only a change can.
    var nextDeadline: Date? { storage.withLock { $0.model.nextDeadline } }

    /// Applies a change to the model under the lock and publishes what it changed to every stream
    /// in order, then finishes the streams of a dismissed activity and tells the center (whose
    /// timer follows the activity's deadlines).
    private func apply<Failure: Error>(
        _ body: (inout ActivityModel<Attributes>) throws(Failure) -> [ActivityModel<Attributes>.Change]
    ) throws(Failure) {
        let (finished, changed) = try storage.withLock { storage throws(Failure) in
            let changes = try body(&storage.model)
            for change in changes {
                switch change {
                case .content(let content): storage.subscribers.yield(content)
                case .event(let event):
                    storage.subscribers.yield(event)
                    storage.observe(event)
                case .state(let state): storage.subscribers.yield(state)
                }
            }
            let dismissed = storage.model.state == .dismissed
            if dismissed { storage.observers = [] }
            let finished = dismissed ? storage.subscribers.removeAll() : []
            return (finished, !changes.isEmpty)
        }
        for subscriber in finished { subscriber.finish() }
        if changed { didChange() }
    }

    /// Calls `handler` with the activity's events, of any attributes type: its history in brief
    /// at once (as ``events`` replays it), then every later event as it happens, until the
    /// dismissal or the observation's cancellation. What a publisher that must miss nothing
    /// uses: the handler runs synchronously under the activity's lock (``EventObservation``).
    public func observeEvents(_ handler: @escaping @Sendable (AnyActivityEvent) -> Void) -> EventObservation {
        let observation = EventObservation(handler)
        attach(observation)
        return observation
    }

    /// Gives an observer this activity's history now, then every later event until the dismissal.
    func attach(_ observer: EventObservation) {
        storage.withLock { storage in
            for event in storage.model.history where !observer.deliver(AnyActivityEvent(event)) { return }
            if storage.model.state != .dismissed { storage.observers.append(observer) }
        }
    }

    private func subscribe<Element>(
        _ subscriber: (AsyncStream<Element>.Continuation) -> ActivitySubscriber<Attributes>,
        replaying history: ((Storage) -> [Element])? = nil
    ) -> ActivityUpdates<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let token = storage.withLock { storage -> Int? in
            for element in history?(storage) ?? [] { continuation.yield(element) }
            guard storage.model.state != .dismissed else { return nil }
            return storage.subscribers.add(subscriber(continuation))
        }
        if let token {
            continuation.onTermination = { [weak self] _ in
                self?.storage.withLock { $0.subscribers.remove(token) }
            }
        } else {
            continuation.finish()
        }
        return ActivityUpdates(stream)
    }
}
