import Configuration

/// One configuration key: its dotted name, the flag that sets it (if any) and its environment variable.
///
/// Each key is a constant (``mqttBroker``; each executable declares its own beside the code that
/// reads them): the executable's ``ConfigurationSchema`` is built from the constants, and
/// ``KeyReader`` reads only keys, so a key's name is written once.
///
/// The environment variable is `MYELINE_` followed by the key in upper case with every `.` and `-`
/// turned into `_`: `mqtt.client-id` is `MYELINE_MQTT_CLIENT_ID`.
public struct ConfigurationKey: Hashable, Sendable, CustomStringConvertible {
    /// The dotted key, as in the YAML file: `mqtt.broker`.
    public let name: String
    /// The command-line flag that sets it, such as `--broker`, or `nil`.
    public let flag: String?
    /// Whether the value is a list (`alerts.geofences`) rather than a single value.
    public let isList: Bool

    /// Creates a key named `name`, set by `flag` if given.
    public init(_ name: String, flag: String? = nil, isList: Bool = false) {
        self.name = name
        self.flag = flag
        self.isList = isList
    }

    /// The dotted name.
    public var description: String { name }

    /// The dotted name and its flag, as errors name a key the user may set: `source.address (--source)`.
    public var nameAndFlag: String {
        flag.map { "\(name) (\($0))" } ?? name
    }

    /// The key as swift-configuration names it.
    var configKey: ConfigKey { ConfigKey(name) }

    /// The environment variable for this key, such as `MYELINE_MQTT_BROKER`.
    public var environmentVariable: String {
        Self.environmentVariable(for: name)
    }

    /// The environment variable for a dotted key: `MYELINE_` and the key upper-cased, `.` and `-` as `_`.
    public static func environmentVariable(for name: String) -> String {
        "MYELINE_" + String(name.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// The candidate closest to a mistyped name, for a "did you mean" hint; `nil` if none is close.
    public static func suggestion(for name: String, among candidates: [String]) -> String? {
        let limit = max(2, name.count / 4)
        // The distance is at least the difference in length: candidates further off than the limit
        // are not compared (a 1 KB name, found by fuzzing, took seconds against every key).
        let scored = candidates.filter { abs($0.count - name.count) <= limit }.map { ($0, editDistance(name, $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit else { return nil }
        return best.0
    }

    /// The Levenshtein distance: how many characters to insert, delete or replace to turn `a` into `b`.
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, characterOfA) in a.enumerated() {
            var current = [i + 1]
            for (j, characterOfB) in b.enumerated() {
                current.append(
                    min(previous[j + 1] + 1, current[j] + 1, previous[j] + (characterOfA == characterOfB ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Every key one executable reads, with the environment variables it accepts besides them.
public struct ConfigurationSchema: Sendable {
    /// The keys, in the order reports print them.
    public let keys: [ConfigurationKey]
    /// The keys by name.
    public let byName: [String: ConfigurationKey]
    /// `MYELINE_*` variables that are not keys but are accepted, such as `MYELINE_MQTT_PASSWORD`.
    public let otherVariables: [String]
    /// Keys to quote when a file is not a mapping, such as `device: or mqtt:`.
    public let exampleSections: String
    /// The page that lists every key, for hints.
    public let documentation: String

    /// Creates a schema from its keys.
    public init(keys: [ConfigurationKey], otherVariables: [String], exampleSections: String, documentation: String) {
        self.keys = keys
        self.byName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })
        self.otherVariables = otherVariables
        self.exampleSections = exampleSections
        self.documentation = documentation
    }

    /// The known key closest to a mistyped one; `nil` if none is close.
    public func suggestion(for name: String) -> String? {
        ConfigurationKey.suggestion(for: name, among: keys.map(\.name))
    }
}

extension ConfigurationKey {
    /// The first topic levels of every topic (`topic-prefix`, `--prefix`), read by both executables.
    public static let topicPrefix = ConfigurationKey("topic-prefix", flag: "--prefix")
    /// The lowest level logged (`log-level`, `--log-level`), read by both executables.
    public static let logLevel = ConfigurationKey("log-level", flag: "--log-level")
}
