import AsyncSupport

/// How configuration values are written back in messages and reports.
public enum ConfigurationFormat {
    /// A number as the configuration writes it: `30`, not `30.0`.
    public static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A duration in seconds as the configuration writes it, such as `1.5`.
    public static func seconds(_ duration: Duration) -> String {
        number(duration.inSeconds)
    }
}
