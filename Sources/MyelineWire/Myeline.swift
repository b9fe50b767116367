import LiveActivity

/// Facts about Myeline itself.
public enum Myeline {
    /// The release of the agent and aggregator, printed by `--version` and sent in status messages.
    public static let version = "0.1.0"

    /// The range of a `seq` (envelopes and track points): 1 to 2^53 − 1, the largest integer that
    /// every JSON reader keeps exactly (JavaScript's numbers are doubles), as the schemas say.
    public static let sequenceRange: ClosedRange<Int> = 1...9_007_199_254_740_991
}
