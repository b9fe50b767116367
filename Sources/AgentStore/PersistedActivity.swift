import FoundationEssentials

/// One of the agent's activities as kept on disk, so a restart (even after SIGKILL or a power
/// cut) resumes the same activity and sequence.
///
/// `Attributes` is the activity's attributes type (for the agent, `LocationActivityAttributes`);
/// the trip totals are an opaque blob the agent encodes itself, so this module need not know them.
public struct PersistedActivity<Attributes: Codable & Sendable>: Codable, Sendable {
    /// The activity's identifier, as published on its topic.
    public var activityID: String
    /// The name of the attributes type (`attributes-type` on the wire), for the agent to check after loading.
    public var attributesType: String
    /// The `seq` of the last envelope published (or handed to the outbox) for this activity.
    public var lastSeq: Int
    /// The `seq` of the last track point produced for this activity.
    public var trackSeq: Int
    /// The activity's attributes.
    public var attributes: Attributes
    /// The trip totals (distance, elapsed time, ...), encoded by the agent.
    public var tripTotals: Data
    /// When the activity started, UTC.
    public var startedAt: Date
    /// For an activity that ended, when its retained envelope is to be cleared; nil while it runs.
    public var dismissalDate: Date?

    /// Creates a record of an activity.
    public init(
        activityID: String, attributesType: String, lastSeq: Int, trackSeq: Int, attributes: Attributes,
        tripTotals: Data, startedAt: Date, dismissalDate: Date? = nil
    ) {
        self.activityID = activityID
        self.attributesType = attributesType
        self.lastSeq = lastSeq
        self.trackSeq = trackSeq
        self.attributes = attributes
        self.tripTotals = tripTotals
        self.startedAt = startedAt
        self.dismissalDate = dismissalDate
    }
}

extension PersistedActivity: Equatable where Attributes: Equatable {}
extension PersistedActivity: Hashable where Attributes: Hashable {}
