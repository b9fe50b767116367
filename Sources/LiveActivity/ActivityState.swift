/// Where an activity is in its lifecycle, as in ActivityKit.
public enum ActivityState: String, Sendable, Codable {
    /// Running, with content that is not outdated.
    case active
    /// Running, but the current content's stale date has passed.
    case stale
    /// Ended, but still shown until its dismissal date.
    case ended
    /// Gone for good; its streams have finished.
    case dismissed
}
