import AggregatorWeb
import Board
import Foundation
import LiveActivity
import MyelineWire
import Logging
import MyelineConfiguration

// The aggregator's own keys (docs/aggregator.md lists them; `ConfigurationKeyTests` in
// AggregatorTests checks that each is read and documented). The `mqtt.*` keys, `topic-prefix` and
// `log-level` are MyelineConfiguration's, the `web.*` keys AggregatorWeb's.
extension ConfigurationKey {
    /// The presentation: compact, expanded or minimal.
    static let boardLayout = ConfigurationKey("board.layout", flag: "--layout")
    /// Which rows to show.
    static let boardShow = ConfigurationKey("board.show", flag: "--show")
    /// Whether a new alert rings the terminal's bell.
    static let boardBell = ConfigurationKey("board.bell", flag: "--no-bell")
    /// The most rows one device may have.
    static let boardMaxActivitiesPerDevice = ConfigurationKey(
        "board.max-activities-per-device", flag: "--max-activities-per-device")
    /// How long `--once` waits to reach the broker, seconds.
    static let boardOnceTimeout = ConfigurationKey("board.once-timeout", flag: "--timeout")
    /// Whether the board also shows OwnTracks devices.
    static let ownTracksSubscribe = ConfigurationKey("owntracks.subscribe", flag: "--owntracks")
    /// How long after its last fix an OwnTracks row turns stale, seconds.
    static let ownTracksStaleAfter = ConfigurationKey("owntracks.stale-after")
}

/// Everything `myeline-aggregator` is configured with: a plain value with a default for every setting.
///
/// Read with ``init(layers:environment:)`` from flags, `MYELINE_*` environment variables and a YAML
/// file (`config/aggregator.example.yaml`), in that order; docs/aggregator.md lists every key.
struct AggregatorConfiguration: Hashable, Sendable {
    /// The file read when `--config` is not given, if it exists.
    static let defaultFilePath = "/etc/myeline/aggregator.yaml"

    /// Every key the aggregator reads, in the order `--check-config` would print them.
    static let schema = ConfigurationSchema(
        keys: MQTTSettings.keys + [
            .topicPrefix, .boardLayout, .boardShow, .boardBell, .boardMaxActivitiesPerDevice, .boardOnceTimeout,
            .logLevel, .ownTracksSubscribe, .ownTracksStaleAfter,
        ] + WebSettings.keys,
        otherVariables: [MQTTSettings.passwordVariable], exampleSections: "mqtt: or board:",
        documentation: "docs/aggregator.md")

    /// How the board reaches the broker; the client id is `myeline-aggregator-PID` by default.
    var mqtt = MQTTSettings(clientID: "myeline-aggregator-\(ProcessInfo.processInfo.processIdentifier)")
    /// The fleet's topic prefix (`topic-prefix`); `myeline` by default.
    var topicPrefix: TopicPrefix = .default
    /// The presentation (`board.layout`): `compact` (default), `expanded` or `minimal`.
    var layout: BoardLayout = .compact
    /// Which rows to show (`board.show`): `all` (default), `offline` or `unhealthy`.
    var rows: RowFilter = .all
    /// Whether a new alert rings the terminal's bell (`board.bell`); `true` by default.
    var bell = true
    /// The most rows one device may have on the board (`board.max-activities-per-device`); 8 by
    /// default, the agent's own limit; envelopes of more activities are rejected and counted.
    var maximumActivitiesPerDevice = Fleet.defaultMaximumActivitiesPerDevice
    /// How long `--once` waits to reach the broker before it gives up (`board.once-timeout`), seconds; 10 by default.
    var onceTimeout: TimeInterval = 10
    /// The lowest level logged (`log-level`); `notice` by default.
    var logLevel: Logger.Level = .notice
    /// Whether the board also shows OwnTracks devices from `owntracks/+/+` (`owntracks.subscribe`); `false` by default.
    var ownTracks = false
    /// How long after its last fix (`tst`) an OwnTracks row turns stale (`owntracks.stale-after`), seconds; 3600 by default.
    var ownTracksStaleAfter: Double = 3600

    /// The web map's settings (`web.*`, docs/web.md); nil when `web.listen` is not set (off).
    var web: WebSettings?

    /// How the board decodes OwnTracks messages; nil when it does not subscribe to them.
    var ownTracksInput: OwnTracksInput? { ownTracks ? OwnTracksInput(staleAfter: ownTracksStaleAfter) : nil }

    /// The defaults.
    init() {}

    /// Reads and checks the configuration.
    ///
    /// | Key | Type | Default |
    /// |---|---|---|
    /// | `mqtt.*` | as for the agent (see ``MQTTSettings/read(_:environment:)``) | client id `myeline-aggregator-PID` |
    /// | `topic-prefix` | topic levels | `myeline` |
    /// | `board.layout` | `compact`, `expanded` or `minimal` | `compact` |
    /// | `board.show` | `all`, `offline` or `unhealthy` | `all` |
    /// | `board.bell` | boolean | `true` |
    /// | `board.max-activities-per-device` | 1...1000 | `8` |
    /// | `board.once-timeout` | seconds, 0.1...3600 | `10` |
    /// | `log-level` | `trace` ... `critical` | `notice` |
    /// | `owntracks.subscribe` | boolean | `false` |
    /// | `owntracks.stale-after` | seconds, 1...604800 | `3600` |
    ///
    /// - Throws: ``ConfigurationError`` naming the first key at fault.
    init(layers: LayeredConfiguration, environment: [String: String]) throws(ConfigurationError) {
        let values = layers.keys
        try mqtt.read(values, environment: environment)
        if let prefix = try values.value(.topicPrefix, { text throws(ActivityError) in try TopicPrefix(text) }) {
            topicPrefix = prefix
        }
        if let layout = try values.choice(.boardLayout, BoardLayout.allCases.map { ($0.rawValue, $0) }) {
            self.layout = layout
        }
        if let rows = try values.choice(.boardShow, RowFilter.allCases.map { ($0.rawValue, $0) }) {
            self.rows = rows
        }
        if let bell = try values.boolean(.boardBell) { self.bell = bell }
        if let limit = try values.number(.boardMaxActivitiesPerDevice, in: 1...1000, unit: "activities") {
            maximumActivitiesPerDevice = Int(limit)
        }
        if let timeout = try values.number(.boardOnceTimeout, in: 0.1...3600, unit: "seconds") {
            onceTimeout = timeout
        }
        if let level = try values.choice(.logLevel, Logger.Level.allCases.map { ($0.rawValue, $0) }) {
            logLevel = level
        }
        if let subscribe = try values.boolean(.ownTracksSubscribe) { ownTracks = subscribe }
        if let staleAfter = try values.number(.ownTracksStaleAfter, in: 1...604_800, unit: "seconds") {
            ownTracksStaleAfter = staleAfter
        }
        web = try WebSettings.read(values)
    }

    /// Reads and checks the configuration from flags (by dotted key), the environment and a file.
    ///
    /// - Throws: ``ConfigurationError`` naming the key, file or variable at fault.
    static func load(
        flags: [String: String], file: String?, environment: [String: String], defaultFile: String = defaultFilePath
    ) async throws(ConfigurationError) -> AggregatorConfiguration {
        let layers = try await LayeredConfiguration(
            flags: flags, file: file, environment: environment, defaultFile: defaultFile, schema: schema)
        return try AggregatorConfiguration(layers: layers, environment: environment)
    }
}
