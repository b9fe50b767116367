import LiveActivity

/// Facts about Myeline itself.
public enum Myeline {
    /// The release of the agent and aggregator, printed by `--version` and sent in status messages.
    public static let version = "0.1.0"
}
