import FoundationEssentials

/// An event of an activity of any attributes type, as ``ActivityCenter/events`` gives them: what
/// changed, and the typed event inside (``base``), which a publisher opens to encode it.
public struct AnyActivityEvent: Sendable {
    /// The position of this event among the activity's events: 1 for the start, then +1 each.
    public let seq: Int
    /// The id of the activity that changed.
    public let activityID: String
    /// The activity's attributes type (`attributes-type`).
    public let attributesType: String
    /// When the change happened, by the center's clock.
    public let timestamp: Date
    /// The typed event, to open where the attributes type matters (as a publisher does to encode it).
    public let base: any AnyActivityEventBase

    /// Erases the type of `event`.
    public init<Attributes: ActivityAttributes>(_ event: ActivityEvent<Attributes>) {
        seq = event.seq
        activityID = event.activityID
        attributesType = Attributes.typeName
        timestamp = event.timestamp
        base = event
    }

    /// The event with its type, when its attributes are of type `type`.
    public func event<Attributes: ActivityAttributes>(as type: Attributes.Type) -> ActivityEvent<Attributes>? {
        base as? ActivityEvent<Attributes>
    }
}

/// An ``ActivityEvent`` of some attributes type: what ``AnyActivityEvent/base`` holds.
public protocol AnyActivityEventBase: Sendable {
    /// The attributes type of the event.
    associatedtype Attributes: ActivityAttributes
    /// The event itself.
    var event: ActivityEvent<Attributes> { get }
}

extension ActivityEvent: AnyActivityEventBase {
    /// The event itself.
    public var event: ActivityEvent<Attributes> { self }
}
