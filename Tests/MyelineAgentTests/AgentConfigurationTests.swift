import MyelineConfiguration
import ArgumentParser
import Foundation
import LiveActivity
import Location
import MQTT
import Testing

@testable import MyelineAgentKit

/// The agent's configuration: defaults, precedence, errors that name their key, the example file.
struct AgentConfigurationTests {
    /// A file that never exists, so that a developer's /etc/myeline/agent.yaml does not leak into tests.
    static let noDefaultFile = "/nonexistent/myeline/agent.yaml"

    /// Writes a YAML file in a fresh temporary directory and returns its path.
    static func yamlFile(_ text: String, name: String = "agent.yaml") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("myeline-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func load(
        flags: [String: String] = [:], yaml: String? = nil, environment: [String: String] = [:]
    ) async throws -> LoadedConfiguration {
        let file = try yaml.map { try yamlFile($0) }
        return try await ConfigurationLoader.load(
            flags: flags, file: file, environment: environment, defaultFile: noDefaultFile)
    }

    @Test func defaults() async throws {
        let loaded = try await Self.load(flags: ["device.id": "van-7"])
        let configuration = loaded.configuration
        #expect(configuration == AgentConfiguration(deviceID: try DeviceID("van-7")))
        #expect(configuration.device.name == "van-7")
        #expect(configuration.device.priority == 0)
        #expect(configuration.mqtt.broker.transport == .tcp(host: "localhost", port: BrokerAddress.defaultTCPPort))
        #expect(configuration.mqtt.clientID == "myeline-van-7")
        #expect(configuration.mqtt.keepAlive == .seconds(30))
        #expect(configuration.mqtt.protocolVersion == .v5)
        #expect(configuration.mqtt.password == nil)
        #expect(configuration.topicPrefix.rawValue == "myeline")
        #expect(configuration.source.address == .gpsd(host: "localhost", port: 2947, device: nil))
        #expect(configuration.source.pacing == .recorded)
        #expect(configuration.source.loops == false)
        #expect(configuration.stateDirectory == "/var/lib/myeline")
        #expect(configuration.activity.autostart == true)
        #expect(configuration.activity.dismissal == .immediate)
        #expect(configuration.activity.endOnExit == false)
        #expect(configuration.activity.maximumActivities == 8)
        #expect(configuration.updates.heartbeat == 60)
        #expect(configuration.updates.staleAfter == 180)
        #expect(configuration.outbox.capacity == 100_000)
        #expect(configuration.alerts.geofences.isEmpty)
        #expect(configuration.alerts.overspeedThreshold == nil)
        #expect(configuration.logLevel == .info)
        #expect(loaded.sources.source(of: .deviceID) == "--device")
        #expect(loaded.sources.source(of: .mqttBroker) == nil)
    }

    @Test func staleAfterFollowsTheHeartbeatUnlessSet() async throws {
        let derived = try await Self.load(environment: ["MYELINE_DEVICE_ID": "v", "MYELINE_UPDATES_HEARTBEAT": "20"])
        #expect(derived.configuration.updates.staleAfter == 60)
        let set = try await Self.load(
            environment: [
                "MYELINE_DEVICE_ID": "v", "MYELINE_UPDATES_HEARTBEAT": "20", "MYELINE_UPDATES_STALE_AFTER": "45",
            ])
        #expect(set.configuration.updates.staleAfter == 45)
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() async throws {
        let yaml = """
            device:
              id: from-file
            mqtt:
              broker: mqtt://file.example
              keepalive: 40
              protocol: 3.1.1
            topic-prefix: file/prefix
            """
        let environment = [
            "MYELINE_MQTT_BROKER": "mqtt://env.example",
            "MYELINE_MQTT_KEEPALIVE": "50",
            "MYELINE_DEVICE_ID": "from-env",
        ]
        let loaded = try await Self.load(
            flags: ["mqtt.broker": "mqtt://flag.example"], yaml: yaml, environment: environment)
        let configuration = loaded.configuration
        #expect(configuration.mqtt.broker.transport == .tcp(host: "flag.example", port: BrokerAddress.defaultTCPPort))
        #expect(configuration.mqtt.keepAlive == .seconds(50))
        #expect(configuration.device.id.rawValue == "from-env")
        #expect(configuration.mqtt.protocolVersion == .v311)
        #expect(configuration.topicPrefix.rawValue == "file/prefix")
        #expect(configuration.updates.heartbeat == 60)
        #expect(loaded.sources.source(of: .mqttBroker) == "--broker")
        #expect(loaded.sources.source(of: .mqttKeepAlive) == "MYELINE_MQTT_KEEPALIVE")
        #expect(loaded.sources.source(of: .topicPrefix) == loaded.filePath)
        #expect(loaded.sources.source(of: .updatesHeartbeat) == nil)
    }

    @Test func everyKeyHasItsEnvironmentVariable() async throws {
        #expect(ConfigurationKey.byName["mqtt.client-id"]?.environmentVariable == "MYELINE_MQTT_CLIENT_ID")
        #expect(ConfigurationKey.byName["topic-prefix"]?.environmentVariable == "MYELINE_TOPIC_PREFIX")
        let environment = [
            "MYELINE_DEVICE_ID": "van-7",
            "MYELINE_DEVICE_DESTINATION_NAME": "Depot",
            "MYELINE_DEVICE_DESTINATION_LATITUDE": "52.52",
            "MYELINE_DEVICE_DESTINATION_LONGITUDE": "13.405",
            "MYELINE_MQTT_CLIENT_ID": "tracker-7",
            "MYELINE_SOURCE_ADDRESS": "/var/lib/myeline/trip.nmea",
            "MYELINE_SOURCE_SPEED": "max",
            "MYELINE_SOURCE_LOOP": "true",
            "MYELINE_ACTIVITY_DISMISSAL": "after:90",
            "MYELINE_ALERTS_GEOFENCES": "depot:52.52:13.405:150,home:52.4:13.3:80",
            "MYELINE_ALERTS_OVERSPEED_THRESHOLD": "33.3",
            "MYELINE_LOG_LEVEL": "debug",
        ]
        let configuration = try await Self.load(environment: environment).configuration
        #expect(configuration.device.destination == .init(name: "Depot", latitude: 52.52, longitude: 13.405))
        #expect(configuration.mqtt.clientID == "tracker-7")
        #expect(configuration.source.address == .file(path: "/var/lib/myeline/trip.nmea"))
        #expect(configuration.source.pacing == .asFastAsPossible)
        #expect(configuration.source.loops)
        #expect(configuration.activity.dismissal == .after(seconds: 90))
        #expect(
            configuration.alerts.geofences == [
                .init(name: "depot", latitude: 52.52, longitude: 13.405, radius: 150),
                .init(name: "home", latitude: 52.4, longitude: 13.3, radius: 80),
            ])
        #expect(configuration.alerts.overspeedThreshold == 33.3)
        #expect(configuration.logLevel == .debug)
    }

    /// One invalid value: where it is given, the key the error must name, and text the message must hold.
    struct Invalid: Sendable, CustomTestStringConvertible {
        var flags: [String: String] = [:]
        var environment: [String: String] = [:]
        var yaml: String? = nil
        var key: String
        var message: String

        var testDescription: String { "\(key): \(message)" }
    }

    static let invalidValues: [Invalid] = [
        Invalid(key: "device.id", message: "no device id"),
        Invalid(flags: ["device.id": "Van 7"], key: "device.id", message: "\"Van 7\""),
        Invalid(flags: ["mqtt.broker": "http://broker"], key: "mqtt.broker", message: "unknown scheme \"http\""),
        Invalid(environment: ["MYELINE_MQTT_BROKER": "mqtt://a@b"], key: "mqtt.broker", message: "credentials"),
        Invalid(environment: ["MYELINE_MQTT_KEEPALIVE": "2"], key: "mqtt.keepalive", message: "\"2\""),
        Invalid(yaml: "mqtt:\n  keepalive: soon\n", key: "mqtt.keepalive", message: "\"soon\""),
        Invalid(yaml: "mqtt:\n  protocol: 4\n", key: "mqtt.protocol", message: "use one of 5, 3.1.1"),
        Invalid(yaml: "mqtt:\n  client-id: \"\"\n", key: "mqtt.client-id", message: "is empty"),
        Invalid(
            environment: ["MYELINE_MQTT_PASSWORD": "x"], key: "mqtt.username", message: "set mqtt.username"),
        Invalid(
            yaml: "mqtt:\n  broker: mqtts://b\n  tls:\n    cert-file: /c.pem\n", key: "mqtt.tls.key-file",
            message: "both"),
        Invalid(yaml: "mqtt:\n  tls:\n    ca-file: /ca.pem\n", key: "mqtt.tls.ca-file", message: "use mqtts://"),
        Invalid(
            yaml: "mqtt:\n  reconnect:\n    initial-delay: 10\n    max-delay: 5\n", key: "mqtt.reconnect.max-delay",
            message: "not above the maximum"),
        Invalid(flags: ["topic-prefix": "fleet/#"], key: "topic-prefix", message: "wildcard"),
        Invalid(flags: ["source.address": "http://gps"], key: "source.address", message: "'http'"),
        Invalid(flags: ["source.speed": "fast"], key: "source.speed", message: "\"fast\""),
        Invalid(flags: ["source.loop": "maybe"], key: "source.loop", message: "\"maybe\""),
        Invalid(flags: ["state-directory": "var/lib"], key: "state-directory", message: "absolute path"),
        Invalid(yaml: "activity:\n  dismissal: later\n", key: "activity.dismissal", message: "after:SECONDS"),
        Invalid(yaml: "activity:\n  max-activities: 0\n", key: "activity.max-activities", message: "\"0\""),
        Invalid(yaml: "activity:\n  autostart: sometimes\n", key: "activity.autostart", message: "true or false"),
        Invalid(yaml: "updates:\n  min-distance: -1\n", key: "updates.min-distance", message: "metres"),
        Invalid(
            yaml: "updates:\n  min-interval: 90\n  heartbeat: 60\n", key: "updates.heartbeat",
            message: "updates.min-interval"),
        Invalid(yaml: "updates:\n  stale-after: 0\n", key: "updates.stale-after", message: "\"0\""),
        Invalid(yaml: "updates:\n  no-fix-grace: x\n", key: "updates.no-fix-grace", message: "\"x\""),
        Invalid(yaml: "outbox:\n  capacity: 1e3\n", key: "outbox.capacity", message: "whole number"),
        Invalid(
            yaml: "device:\n  destination:\n    name: Depot\n    latitude: 91\n    longitude: 0\n",
            key: "device.destination.latitude", message: "\"91\""),
        Invalid(
            yaml: "device:\n  destination:\n    name: Depot\n", key: "device.destination.latitude",
            message: "a latitude"),
        Invalid(yaml: "device:\n  priority: high\n", key: "device.priority", message: "\"high\""),
        Invalid(yaml: "alerts:\n  geofences: [\"depot:95:0:10\"]\n", key: "alerts.geofences", message: "depot:95:0:10"),
        Invalid(yaml: "alerts:\n  geofences: depot:1:2:3\n", key: "alerts.geofences", message: "list of strings"),
        Invalid(
            yaml: "alerts:\n  geofences:\n    - {name: depot}\n", key: "alerts.geofences",
            message: "each item must be a string"),
        Invalid(
            yaml: "alerts:\n  geofences: [\"a:1:2:3\", \"a:4:5:6\"]\n", key: "alerts.geofences",
            message: "two geofences are named \"a\""),
        Invalid(yaml: "alerts:\n  overspeed:\n    threshold: 0\n", key: "alerts.overspeed.threshold", message: "m/s"),
        Invalid(flags: ["log-level": "loud"], key: "log-level", message: "trace, debug, info"),
        Invalid(yaml: "mqtt:\n  broker: [a, b]\n", key: "mqtt.broker", message: "single value"),
        Invalid(yaml: "mqtt: mqtt://x\n", key: "mqtt", message: "is a section"),
        Invalid(yaml: "mqtt:\n  password: hunter2\n", key: "mqtt.password", message: "never goes in this file"),
    ]

    @Test(arguments: invalidValues)
    func invalidValuesNameTheirKey(_ invalid: Invalid) async throws {
        var flags = invalid.flags
        if invalid.key != "device.id", flags["device.id"] == nil { flags["device.id"] = "van-7" }
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: flags, yaml: invalid.yaml, environment: invalid.environment)
        }
        #expect(error?.key == invalid.key)
        #expect(error?.description.hasPrefix(invalid.key) == true)
        #expect(error?.description.contains(invalid.message) == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("hunter2") == false)
    }

    /// A key written both dotted and nested: Yams' reading kept whichever came last without a word.
    @Test func aKeySetTwiceInTheFileIsRefused() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(yaml: "device.id: a\nmqtt:\n  broker: mqtt://x\ndevice:\n  id: b\n")
        }
        #expect(error?.key == "device.id")
        #expect(error?.source?.hasSuffix("agent.yaml (line 5)") == true)
        #expect(error?.message == "is set twice in this file (first on line 1): keep one")
        let nestedFirst = await #expect(throws: ConfigurationError.self) {
            try await Self.load(yaml: "device:\n  id: b\ndevice.id: a\n")
        }
        #expect(nestedFirst?.source?.hasSuffix("agent.yaml (line 3)") == true)
        #expect(nestedFirst?.message == "is set twice in this file (first on line 2): keep one")
    }

    /// A file with no keys was refused by swift-configuration's YAML provider ("Top level YAML
    /// value is not a mapping"); now the message says what to write.
    @Test func aFileWithoutKeysIsRefused() async throws {
        for (yaml, what) in [
            ("", "holds no keys"), ("# all commented out\n", "holds no keys"), ("- a\n", "is not a YAML mapping"),
        ] {
            let error = await #expect(throws: ConfigurationError.self) {
                try await Self.load(flags: ["device.id": "v"], yaml: yaml)
            }
            #expect(error?.key.hasSuffix("agent.yaml") == true)
            #expect(error?.message.hasPrefix(what) == true, "\(error!)")
            #expect(error?.message.hasSuffix("(an empty configuration is {})") == true, "\(error!)")
        }
        let empty = try await Self.load(flags: ["device.id": "v"], yaml: "{}\n")
        #expect(empty.configuration == AgentConfiguration(deviceID: try DeviceID("v")))
    }

    /// What the YAML reader refuses names the file, the line and the column.
    @Test func yamlTheReaderLeavesOutIsRefusedWithItsPlace() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "a: &x 1\n")
        }
        #expect(error?.key.hasSuffix("agent.yaml") == true)
        #expect(
            error?.message
                == "is not valid YAML, or uses YAML this reader leaves out: line 1, column 4: anchors (&name) are not read: write the value out"
        )
    }

    @Test func unknownFileKeysAreReportedWithASuggestion() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "device:\n  id: v\nmqtt:\n  borker: mqtt://x\n")
        }
        #expect(error?.key == "mqtt.borker")
        #expect(error?.source?.hasSuffix("agent.yaml (line 4)") == true)
        #expect(error?.message == "is not a configuration key: did you mean mqtt.broker?")

        let far = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "colour: blue\n")
        }
        #expect(far?.message == "is not a configuration key: see docs/configuration.md")
    }

    /// Found by fuzzing: a list as a key was reported as Yams' dump of it, and a 1 KB key took
    /// seconds to compare with every key for a suggestion.
    @Test func aKeyThatIsNotANameIsNamedAsSuch() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "mqtt:\n  [a, b]: x\n")
        }
        #expect(
            error?.message.hasSuffix("line 2, column 9: a list or a mapping as a key: keys are names, such as device:")
                == true, "\(error!)")
        let explicit = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "? - a\n  - b\n: x\n")
        }
        #expect(
            explicit?.message.hasSuffix("line 1, column 1: explicit keys ('? ') are not read: write key: value")
                == true, "\(explicit!)")
        let long = String(repeating: "x", count: 1_000)
        let far = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], yaml: "\(long): 1\n")
        }
        #expect(far?.key.count == 1_000)
        #expect(far?.message == "is not a configuration key: see docs/configuration.md")
    }

    @Test func unknownEnvironmentVariablesAreReported() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await Self.load(flags: ["device.id": "v"], environment: ["MYELINE_MQTT_BORKER": "mqtt://x"])
        }
        #expect(
            error?.description
                == "MYELINE_MQTT_BORKER: is not a configuration variable: did you mean MYELINE_MQTT_BROKER?")
    }

    @Test func aMissingConfigFileIsAnError() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await ConfigurationLoader.load(
                flags: ["device.id": "v"], file: "/nonexistent/agent.yaml", environment: [:],
                defaultFile: Self.noDefaultFile)
        }
        #expect(error?.description == "--config: the file /nonexistent/agent.yaml does not exist: check the path")
    }

    @Test func theDefaultFileIsReadOnlyIfItExists() async throws {
        let path = try Self.yamlFile("topic-prefix: from-default-file\n")
        let loaded = try await ConfigurationLoader.load(
            flags: ["device.id": "v"], file: nil, environment: [:], defaultFile: path)
        #expect(loaded.configuration.topicPrefix.rawValue == "from-default-file")
        #expect(loaded.filePath == path)
    }

    /// The repository's config/agent.example.yaml.
    static var examplePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/agent.example.yaml").path
    }

    /// As `check-config --config config/agent.example.yaml` reads it: no flag, no variable (it
    /// had no device id and exited 64, although docs/configuration.md says it loads as it is).
    @Test func theExampleFileLoadsAsItIsAndHoldsTheDefaults() async throws {
        let loaded = try await ConfigurationLoader.load(
            flags: [:], file: Self.examplePath, environment: [:], defaultFile: Self.noDefaultFile)
        #expect(loaded.configuration == AgentConfiguration(deviceID: try DeviceID("van-7")))
        #expect(loaded.sources.source(of: .mqttBroker) == Self.examplePath)
    }

    @Test func theExampleFileMentionsEveryKey() throws {
        let text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
        for key in ConfigurationKey.all {
            let leaf = key.name.split(separator: ".").last!
            #expect(text.contains("\(leaf):"), "\(key.name) is not in config/agent.example.yaml")
        }
    }
}
