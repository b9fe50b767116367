import FoundationEssentials

/// One activity's lifecycle as a value: its state machine, its current content and the numbering
/// of its events, with no clock, lock or stream.
///
/// ``Activity`` is this value behind a lock, with streams for its consumers; an agent that keeps
/// its activities in a state machine of its own holds the value directly. Every method takes the
/// current date and returns the changes it made, in the order consumers see them.
public struct ActivityModel<Attributes: ActivityAttributes>: Sendable {
    /// The content type of this activity.
    public typealias Content = ActivityContent<Attributes.ContentState>

    /// One change, in the order it happened.
    public enum Change: Hashable, Sendable {
        /// New content (from an update, or an end with final content).
        case content(Content)
        /// An event: what a publisher turns into a wire message.
        case event(ActivityEvent<Attributes>)
        /// A new lifecycle state.
        case state(ActivityState)
    }

    /// The activity's id.
    public let id: String
    /// The attributes the activity was started with.
    public let attributes: Attributes
    /// The current content: the last one given to `init`, `update` or `end`.
    public private(set) var content: Content
    /// The latest event: the start (or, for a resumed activity, its first update), or the change that followed.
    public private(set) var lastEvent: ActivityEvent<Attributes>
    /// The activity's events in brief, oldest first: its first event (the start, or a resumed
    /// activity's first update), then the latest update since, its end and its dismissal, those
    /// that happened. Updates between them are left out, as a retained message leaves them out:
    /// what a consumer that comes late needs to show the whole lifecycle. At most four events.
    public private(set) var history: [ActivityEvent<Attributes>]
    private var machine: ActivityStateMachine

    /// A new activity, whose first event is its start (seq 1); or, with `resumingAfter`, one that
    /// was running before a restart, whose first event is an update numbered `resumingAfter + 1`.
    public init(id: String, attributes: Attributes, content: Content, now: Date, resumingAfter lastSeq: Int? = nil) {
        self.id = id
        self.attributes = attributes
        self.content = content
        lastEvent = ActivityEvent(
            seq: (lastSeq ?? 0) + 1, activityID: id, attributes: attributes, timestamp: now,
            kind: lastSeq == nil ? .start(content) : .update(content, alert: nil))
        history = [lastEvent]
        machine = ActivityStateMachine(staleDate: content.staleDate, now: now)
    }

    /// Checks an activity id: 1-64 characters a-z, 0-9, `.`, `_` or `-`, starting with a letter or
    /// digit (it is an MQTT topic level).
    ///
    /// - Throws: `ActivityError` `.invalidActivityID` naming the value and the rule.
    public static func validate(id: String) throws(ActivityError) {
        if let problem = Identifier.problem(id, as: .activity) {
            throw ActivityError(.invalidActivityID, problem)
        }
    }

    /// Checks that `Attributes.typeName` can go on the wire as `attributes-type` (docs/topics.md,
    /// attributes types): receivers reject an envelope whose type is not an id.
    ///
    /// - Throws: `ActivityError` `.invalidAttributesType` naming the type and the rule.
    public static func validateTypeName() throws(ActivityError) {
        if let problem = Identifier.problem(Attributes.typeName, as: .attributesType) {
            throw ActivityError(
                .invalidAttributesType,
                "cannot start an activity of \(Attributes.self): \(problem) (name your own types with a reversed domain name, such as \"com.example.pin\")"
            )
        }
    }

    /// The most bytes a content state may take as JSON (`content-state` as the wire writes it):
    /// 4 KiB, the limit ActivityKit puts on an activity's dynamic data.
    public static var maximumContentStateSize: Int { 4096 }

    /// Checks that `state` fits ``maximumContentStateSize`` as JSON.
    ///
    /// - Throws: `ActivityError` `.contentTooLarge` with the size and the limit, or
    ///   `.invalidPayload` when it does not encode at all.
    public static func validateSize(of state: Attributes.ContentState) throws(ActivityError) {
        guard let size = ContentJSON.size(of: state) else {
            throw ActivityError(.invalidPayload, "the content state of \(Attributes.self) does not encode as JSON")
        }
        guard size <= maximumContentStateSize else {
            throw ActivityError(
                .contentTooLarge,
                "the content state is \(size) bytes as JSON, over the \(maximumContentStateSize) bytes (4 KiB) ActivityKit also allows: shorten its texts"
            )
        }
    }

    /// The current lifecycle state.
    public var state: ActivityState { machine.state }

    /// When ``tick(now:)`` next changes the state (the stale date of an active activity, the
    /// dismissal date of an ended one); nil when only an event can.
    public var nextDeadline: Date? { machine.nextDeadline }

    /// Replaces the content, optionally with an alert: the content, the update event, and the
    /// state if the new stale date flips it.
    ///
    /// - Throws: `ActivityError` `.activityEnded` (naming the activity) if it has ended or was dismissed.
    public mutating func update(_ content: Content, alert: AlertConfiguration? = nil, now: Date) throws(ActivityError)
        -> [Change]
    {
        let states: [ActivityState]
        do throws(ActivityError) {
            states = try machine.update(staleDate: content.staleDate, now: now)
        } catch {
            throw identified(error)
        }
        self.content = content
        return [.content(content), record(.update(content, alert: alert), at: now)] + settle(states, at: now)
    }

    /// Ends the activity, optionally with final content (nil keeps the current content), and
    /// schedules its dismissal by `dismissalPolicy`: the end event, then `.ended` (and the
    /// dismissal at once when its date is not in the future).
    ///
    /// - Throws: `ActivityError` `.activityEnded` (naming the activity) if it has ended or was dismissed.
    public mutating func end(_ content: Content?, dismissalPolicy: ActivityUIDismissalPolicy, now: Date)
        throws(ActivityError) -> [Change]
    {
        let ending: ActivityStateMachine.Ending
        do throws(ActivityError) {
            ending = try machine.end(dismissalPolicy: dismissalPolicy, now: now)
        } catch {
            throw identified(error)
        }
        var changes: [Change] = []
        if let content {
            self.content = content
            changes.append(.content(content))
        }
        changes.append(record(.end(self.content, dismissalDate: ending.dismissalDate), at: now))
        return changes + settle(ending.stateChanges, at: now)
    }

    /// Lets time act on the activity: it turns stale or active by its stale date, and an ended one
    /// is dismissed (the `.dismissed` state, then its event) once its dismissal date has come.
    public mutating func tick(now: Date) -> [Change] {
        settle(machine.tick(now: now), at: now)
    }

    /// The states entered, each followed by the dismissal event where it is `.dismissed`.
    private mutating func settle(_ states: [ActivityState], at now: Date) -> [Change] {
        states.flatMap { state -> [Change] in
            state == .dismissed ? [.state(state), record(.dismissed, at: now)] : [.state(state)]
        }
    }

    private mutating func record(_ kind: ActivityEvent<Attributes>.Kind, at now: Date) -> Change {
        lastEvent = ActivityEvent(
            seq: lastEvent.seq + 1, activityID: id, attributes: attributes, timestamp: now, kind: kind)
        if case .update = kind, history.count > 1, case .update = history[history.count - 1].kind {
            history[history.count - 1] = lastEvent
        } else {
            history.append(lastEvent)
        }
        return .event(lastEvent)
    }

    /// The error with this activity's id in front of its message.
    private func identified(_ error: ActivityError) -> ActivityError {
        ActivityError(error.code, "activity \"\(id)\": \(error.message)")
    }
}
