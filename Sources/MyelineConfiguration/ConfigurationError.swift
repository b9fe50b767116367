/// A configuration mistake: the key (or file) at fault, where its value came from, and what to do.
///
/// The Myeline executables report it on stderr and exit with status 64 (EX_USAGE) before connecting
/// to anything.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The dotted key at fault, such as `mqtt.broker`, or the file or variable that could not be used.
    public var key: String
    /// Where the bad value came from, such as `--broker`, `MYELINE_MQTT_BROKER` or a file path; `nil` if nowhere.
    public var source: String?
    /// What is wrong, quoting the value, and the fix.
    public var message: String

    /// Creates an error about `key`, whose value came from `source`.
    public init(key: String, source: String? = nil, _ message: String) {
        self.key = key
        self.source = source
        self.message = message
    }

    /// Creates an error about `key`, whose value came from `source`.
    public init(key: ConfigurationKey, source: String? = nil, _ message: String) {
        self.init(key: key.name, source: source, message)
    }

    /// `KEY (from SOURCE): MESSAGE`.
    public var description: String {
        if let source { return "\(key) (from \(source)): \(message)" }
        return "\(key): \(message)"
    }
}
