/// One consumer's stream of an activity's changes.
enum ActivitySubscriber<Attributes: ActivityAttributes>: Sendable {
    case state(AsyncStream<ActivityState>.Continuation)
    case content(AsyncStream<ActivityContent<Attributes.ContentState>>.Continuation)
    case event(AsyncStream<ActivityEvent<Attributes>>.Continuation)

    /// Ends the consumer's iteration. Call it outside the activity's lock: finishing runs the
    /// stream's termination handler, which takes that lock.
    func finish() {
        switch self {
        case .state(let continuation): continuation.finish()
        case .content(let continuation): continuation.finish()
        case .event(let continuation): continuation.finish()
        }
    }
}

extension Registrations {
    /// Sends a state change to every state stream.
    func yield<Attributes>(_ state: ActivityState) where Value == ActivitySubscriber<Attributes> {
        for case .state(let continuation) in all { continuation.yield(state) }
    }

    /// Sends new content to every content stream.
    func yield<Attributes>(_ content: ActivityContent<Attributes.ContentState>)
    where Value == ActivitySubscriber<Attributes> {
        for case .content(let continuation) in all { continuation.yield(content) }
    }

    /// Sends an event to every event stream.
    func yield<Attributes>(_ event: ActivityEvent<Attributes>) where Value == ActivitySubscriber<Attributes> {
        for case .event(let continuation) in all { continuation.yield(event) }
    }
}
