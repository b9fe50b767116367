import AggregatorWeb
import Board
import Foundation
import LiveActivity
import MyelineWire
import Logging
import MyelineConfiguration

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
            ConfigurationKey("topic-prefix", flag: "--prefix"),
            ConfigurationKey("board.layout", flag: "--layout"),
            ConfigurationKey("board.show", flag: "--show"),
            ConfigurationKey("board.bell", flag: "--no-bell"),
            ConfigurationKey("board.max-activities-per-device", flag: "--max-activities-per-device"),
            ConfigurationKey("board.once-timeout", flag: "--timeout"),
            ConfigurationKey("log-level", flag: "--log-level"),
            ConfigurationKey("owntracks.subscribe", flag: "--owntracks"),
            ConfigurationKey("owntracks.stale-after"),
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
        if let prefix = try values.value("topic-prefix", { text throws(ActivityError) in try TopicPrefix(text) }) {
            topicPrefix = prefix
        }
        if let layout = try values.choice("board.layout", BoardLayout.allCases.map { ($0.rawValue, $0) }) {
            self.layout = layout
        }
        if let rows = try values.choice("board.show", RowFilter.allCases.map { ($0.rawValue, $0) }) {
            self.rows = rows
        }
        if let bell = try values.boolean("board.bell") { self.bell = bell }
        if let limit = try values.number("board.max-activities-per-device", in: 1...1000, unit: "activities") {
            maximumActivitiesPerDevice = Int(limit)
        }
        if let timeout = try values.number("board.once-timeout", in: 0.1...3600, unit: "seconds") {
            onceTimeout = timeout
        }
        if let level = try values.choice("log-level", Logger.Level.allCases.map { ($0.rawValue, $0) }) {
            logLevel = level
        }
        if let subscribe = try values.boolean("owntracks.subscribe") { ownTracks = subscribe }
        if let staleAfter = try values.number("owntracks.stale-after", in: 1...604_800, unit: "seconds") {
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
