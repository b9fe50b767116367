import FoundationEssentials

/// One version of an activity's dynamic content, as in ActivityKit: the state and how to show it.
public struct ActivityContent<State: Codable & Hashable & Sendable>: Hashable, Sendable {
    /// The content state shown by the activity.
    public var state: State
    /// When this content becomes outdated (the activity turns stale); nil means never.
    public var staleDate: Date?
    /// How important this activity is compared with the device's others; higher is more important.
    ///
    /// Only the order matters. It must be finite: encoding a NaN or infinite score throws.
    public var relevanceScore: Double

    /// Creates content with a state, an optional stale date and a relevance score (default 0).
    public init(state: State, staleDate: Date?, relevanceScore: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}
