import FoundationEssentials

/// How long an ended activity stays visible, as in ActivityKit.
public enum ActivityUIDismissalPolicy: Hashable, Sendable {
    /// Stays visible until four hours after it ended.
    case `default`
    /// Is dismissed as soon as it ends.
    case immediate
    /// Is dismissed at a date: one before the end means at once, one later than four hours after
    /// the end means four hours after the end.
    case after(Date)

    /// The longest an ended activity stays visible: four hours, in seconds.
    static let maximumDisplayDuration: TimeInterval = 4 * 60 * 60

    /// The date when an activity that ended at `end` is dismissed under this policy.
    public func dismissalDate(endedAt end: Date) -> Date {
        let latest = end.addingTimeInterval(Self.maximumDisplayDuration)
        switch self {
        case .default: return latest
        case .immediate: return end
        case .after(let date): return min(max(date, end), latest)
        }
    }
}
