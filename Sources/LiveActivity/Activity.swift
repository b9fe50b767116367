import Foundation
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
        var machine: ActivityStateMachine
        var content: Content
        var lastEvent: ActivityEvent<Attributes>
        var subscribers = Registrations<ActivitySubscriber<Attributes>>()

        mutating func record(_ kind: ActivityEvent<Attributes>.Kind, at now: Date) {
            lastEvent = ActivityEvent(
                seq: lastEvent.seq + 1, activityID: lastEvent.activityID, attributes: lastEvent.attributes,
                timestamp: now, kind: kind)
            subscribers.yield(lastEvent)
        }
    }

    /// What one call changed, for ``change(at:_:)`` to publish.
    private struct Change {
        var content: Content?
        var event: ActivityEvent<Attributes>.Kind?
        var states: [ActivityState]
    }

    /// A new activity, whose first event is its start (seq 1); or, with `resumingAfter`, one that
    /// was running before a restart, whose first event is an update numbered `resumingAfter + 1`.
    init(
        id: String, attributes: Attributes, content: Content, clock: any WallClock, resumingAfter lastSeq: Int? = nil,
        didChange: @escaping @Sendable () -> Void
    ) {
        let now = clock.now
        self.id = id
        self.attributes = attributes
        self.clock = clock
        self.didChange = didChange
        let first = ActivityEvent(
            seq: (lastSeq ?? 0) + 1, activityID: id, attributes: attributes, timestamp: now,
            kind: lastSeq == nil ? .start(content) : .update(content, alert: nil))
        storage = Locked(
            Storage(
                machine: ActivityStateMachine(staleDate: content.staleDate, now: now), content: content,
                lastEvent: first))
    }

    /// Starts an activity in `center`, the ActivityKit spelling of ``ActivityCenter/request(attributes:content:id:)``.
    ///
    /// - Throws: `ActivityError` `.tooManyActivities` when the center already has its maximum of live activities.
    public static func request(
        attributes: Attributes, content: Content, in center: ActivityCenter
    ) throws(ActivityError) -> Activity<Attributes> {
        try center.request(attributes: attributes, content: content)
    }

    /// The activity's latest event: its start, or the change that followed it. What `events`
    /// replays first; for publishers that act on each change at once rather than subscribe.
    public var lastEvent: ActivityEvent<Attributes> { storage.withLock { $0.lastEvent } }

    /// The current content: the last one given to `request`, `update` or `end`.
    public var content: Content { storage.withLock { $0.content } }

    /// The current lifecycle state.
    public var activityState: ActivityState { storage.withLock { $0.machine.state } }

    /// The states the activity enters from now on, for one consumer; finishes after `.dismissed`.
    public var activityStateUpdates: ActivityUpdates<ActivityState> { subscribe(ActivitySubscriber.state) }

    /// The contents given from now on, for one consumer; finishes when the activity is dismissed.
    public var contentUpdates: ActivityUpdates<Content> { subscribe(ActivitySubscriber.content) }

    /// The activity's events for one consumer: first its latest event (the start, for a new
    /// activity), then every later one in order; finishes after the `.dismissed` event.
    ///
    /// Like a retained MQTT message, a late consumer gets the current event without the history;
    /// `seq` tells it how many came before.
    public var events: ActivityUpdates<ActivityEvent<Attributes>> {
        subscribe(ActivitySubscriber.event, replaying: \.lastEvent)
    }

    /// Replaces the content, optionally with an alert; the state becomes stale or active from the
    /// new content's stale date.
    ///
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed.
    public func update(_ content: Content, alertConfiguration: AlertConfiguration? = nil) throws(ActivityError) {
        let now = clock.now
        do throws(ActivityError) {
            try change(at: now) { storage throws(ActivityError) in
                let states = try storage.machine.update(staleDate: content.staleDate, now: now)
                storage.content = content
                return Change(content: content, event: .update(content, alert: alertConfiguration), states: states)
            }
        } catch {
            throw identified(error)
        }
    }

    /// Ends the activity, optionally with final content (nil keeps the current content), and
    /// schedules its dismissal by `dismissalPolicy`.
    ///
    /// - Throws: `ActivityError` `.activityEnded` if the activity has ended or was dismissed.
    public func end(_ content: Content?, dismissalPolicy: ActivityUIDismissalPolicy = .default) throws(ActivityError) {
        let now = clock.now
        do throws(ActivityError) {
            try change(at: now) { storage throws(ActivityError) in
                let ending = try storage.machine.end(dismissalPolicy: dismissalPolicy, now: now)
                if let content { storage.content = content }
                let event = ActivityEvent<Attributes>.Kind.end(storage.content, dismissalDate: ending.dismissalDate)
                return Change(content: content, event: event, states: ending.stateChanges)
            }
        } catch {
            throw identified(error)
        }
    }

    /// Lets time act on the activity (stale, dismissed) and returns its next deadline.
    func tick(now: Date) -> Date? {
        change(at: now) { storage in Change(states: storage.machine.tick(now: now)) }
    }

    /// Applies a change under the lock and publishes it to every stream in order, then finishes
    /// the streams of a dismissed activity and tells the center.
    ///
    /// - Returns: the next deadline of the state machine.
    @discardableResult
    private func change<Failure: Error>(
        at now: Date, _ body: (inout Storage) throws(Failure) -> Change
    ) throws(Failure) -> Date? {
        let (finished, changed, deadline) = try storage.withLock { storage throws(Failure) in
            let change = try body(&storage)
            if let content = change.content { storage.subscribers.yield(content) }
            if let event = change.event { storage.record(event, at: now) }
            for state in change.states {
                storage.subscribers.yield(state)
                if state == .dismissed { storage.record(.dismissed, at: now) }
            }
            let finished = storage.machine.state == .dismissed ? storage.subscribers.removeAll() : []
            return (finished, change.event != nil || !change.states.isEmpty, storage.machine.nextDeadline)
        }
        for subscriber in finished { subscriber.finish() }
        if changed { didChange() }
        return deadline
    }

    /// The error with this activity's id in front of its message.
    private func identified(_ error: ActivityError) -> ActivityError {
        ActivityError(error.code, "activity \"\(id)\": \(error.message)")
    }

    private func subscribe<Element>(
        _ subscriber: (AsyncStream<Element>.Continuation) -> ActivitySubscriber<Attributes>,
        replaying latest: ((Storage) -> Element)? = nil
    ) -> ActivityUpdates<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let token = storage.withLock { storage -> Int? in
            if let latest { continuation.yield(latest(storage)) }
            guard storage.machine.state != .dismissed else { return nil }
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
