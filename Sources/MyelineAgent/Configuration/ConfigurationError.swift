/// A configuration mistake: the key (or file) at fault, where its value came from, and what to do.
///
/// `myeline-agent` reports it on stderr and exits with status 64 (EX_USAGE) before connecting to anything.
struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The dotted key at fault, such as `mqtt.broker`, or the file or variable that could not be used.
    var key: String
    /// Where the bad value came from, such as `--broker`, `MYELINE_MQTT_BROKER` or a file path; `nil` if nowhere.
    var source: String?
    /// What is wrong, quoting the value, and the fix.
    var message: String

    init(key: String, source: String? = nil, _ message: String) {
        self.key = key
        self.source = source
        self.message = message
    }

    /// `KEY (from SOURCE): MESSAGE`.
    var description: String {
        if let source { return "\(key) (from \(source)): \(message)" }
        return "\(key): \(message)"
    }
}
