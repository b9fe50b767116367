/// One configuration key: its dotted name, the flag that sets it (if any) and its environment variable.
///
/// The environment variable is `MYELINE_` followed by the key in upper case with every `.` and `-`
/// turned into `_`: `mqtt.client-id` is `MYELINE_MQTT_CLIENT_ID`.
struct ConfigurationKey: Hashable, Sendable {
    /// The dotted key, as in the YAML file: `mqtt.broker`.
    let name: String
    /// The command-line flag that sets it, such as `--broker`, or `nil`.
    let flag: String?
    /// Whether the value is a list (`alerts.geofences`) rather than a single value.
    let isList: Bool

    init(_ name: String, flag: String? = nil, isList: Bool = false) {
        self.name = name
        self.flag = flag
        self.isList = isList
    }

    /// The environment variable for this key, such as `MYELINE_MQTT_BROKER`.
    var environmentVariable: String {
        Self.environmentVariable(for: name)
    }

    /// The environment variable for a dotted key: `MYELINE_` and the key upper-cased, `.` and `-` as `_`.
    static func environmentVariable(for name: String) -> String {
        "MYELINE_" + String(name.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// Every key the agent reads, in the order `check-config` prints them.
    static let all: [ConfigurationKey] = [
        ConfigurationKey("device.id", flag: "--device"),
        ConfigurationKey("device.name"),
        ConfigurationKey("device.vehicle"),
        ConfigurationKey("device.driver"),
        ConfigurationKey("device.destination.name"),
        ConfigurationKey("device.destination.latitude"),
        ConfigurationKey("device.destination.longitude"),
        ConfigurationKey("device.priority"),
        ConfigurationKey("mqtt.broker", flag: "--broker"),
        ConfigurationKey("mqtt.client-id"),
        ConfigurationKey("mqtt.keepalive"),
        ConfigurationKey("mqtt.protocol"),
        ConfigurationKey("mqtt.username"),
        ConfigurationKey("mqtt.password-file"),
        ConfigurationKey("mqtt.tls.ca-file"),
        ConfigurationKey("mqtt.tls.cert-file"),
        ConfigurationKey("mqtt.tls.key-file"),
        ConfigurationKey("mqtt.reconnect.initial-delay"),
        ConfigurationKey("mqtt.reconnect.max-delay"),
        ConfigurationKey("topic-prefix", flag: "--prefix"),
        ConfigurationKey("source.address", flag: "--source"),
        ConfigurationKey("source.speed", flag: "--speed"),
        ConfigurationKey("source.loop", flag: "--loop"),
        ConfigurationKey("state-directory", flag: "--state-dir"),
        ConfigurationKey("activity.autostart"),
        ConfigurationKey("activity.dismissal"),
        ConfigurationKey("activity.end-on-exit", flag: "--end-on-exit"),
        ConfigurationKey("activity.max-activities"),
        ConfigurationKey("updates.min-distance"),
        ConfigurationKey("updates.min-interval"),
        ConfigurationKey("updates.heartbeat"),
        ConfigurationKey("updates.stale-after"),
        ConfigurationKey("updates.no-fix-grace"),
        ConfigurationKey("outbox.capacity"),
        ConfigurationKey("alerts.geofences", isList: true),
        ConfigurationKey("alerts.overspeed.threshold"),
        ConfigurationKey("alerts.overspeed.duration"),
        ConfigurationKey("log-level", flag: "--log-level"),
    ]

    /// The keys by name.
    static let byName: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The known key closest to a mistyped one, for a "did you mean" hint; `nil` if none is close.
    static func suggestion(for name: String, among candidates: [String] = all.map(\.name)) -> String? {
        let scored = candidates.map { ($0, editDistance(name, $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, name.count / 4) else { return nil }
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
