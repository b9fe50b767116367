import FoundationEssentials

/// One change of an activity, in the order it happened: what an agent turns into a wire message.
///
/// Every start, update, end and dismissal produces exactly one event; staleness does not, because
/// receivers derive it from the stale date. `seq` is 1 for the start and grows by one per event.
public struct ActivityEvent<Attributes: ActivityAttributes>: Hashable, Sendable {
    /// What changed.
    public enum Kind: Hashable, Sendable {
        /// The activity started with this content.
        case start(ActivityContent<Attributes.ContentState>)
        /// The content changed, optionally with an alert.
        case update(ActivityContent<Attributes.ContentState>, alert: AlertConfiguration?)
        /// The activity ended with this final content and will be dismissed at `dismissalDate`.
        case end(ActivityContent<Attributes.ContentState>, dismissalDate: Date)
        /// The activity was dismissed; nothing follows.
        case dismissed
    }

    /// The position of this event among the activity's events: 1 for the start, then +1 each.
    public let seq: Int
    /// The id of the activity that changed.
    public let activityID: String
    /// The activity's attributes.
    public let attributes: Attributes
    /// When the change happened, by the activity center's clock.
    public let timestamp: Date
    /// What changed.
    public let kind: Kind
}
