import Foundation
import MyelineConfiguration
import Testing

@testable import MyelineAgentKit

/// Issue 23, finding 8: the agent sent its password over plain `mqtt://` to a remote host without
/// a word, and a password file every user could read went unnoticed.
struct PlaintextPasswordTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var broker: String
        var allow: String? = nil
        var refused: Bool
        var testDescription: String { "\(broker)\(allow.map { " with mqtt.allow-plain-password \($0)" } ?? "")" }
    }

    @Test(arguments: [
        Row(broker: "mqtt://broker.example.net", refused: true),
        Row(broker: "mqtt://192.0.2.7:1884", refused: true),
        Row(broker: "mqtt://[2001:db8::7]", refused: true),
        Row(broker: "mqtt://localhost.example.net", refused: true),
        Row(broker: "mqtt://broker.example.net", allow: "true", refused: false),
        Row(broker: "mqtt://broker.example.net", allow: "false", refused: true),
        Row(broker: "mqtts://broker.example.net", refused: false),
        Row(broker: "mqtt://localhost", refused: false),
        Row(broker: "mqtt://LOCALHOST:1884", refused: false),
        Row(broker: "mqtt://broker.localhost", refused: false),
        Row(broker: "mqtt://127.0.0.1", refused: false),
        Row(broker: "mqtt://127.3.2.1", refused: false),
        Row(broker: "mqtt://[::1]:18830", refused: false),
        Row(broker: "mqtt://[::ffff:127.0.0.1]", refused: false),
        Row(broker: "unix:/run/mosquitto/broker.sock", refused: false),
    ])
    func aPasswordOverPlainMQTTToAnotherHostIsRefusedUnlessAllowed(_ row: Row) async throws {
        var environment = [
            "MYELINE_MQTT_BROKER": row.broker, "MYELINE_MQTT_USERNAME": "van-7", "MYELINE_MQTT_PASSWORD": "hunter2",
        ]
        if let allow = row.allow { environment["MYELINE_MQTT_ALLOW_PLAIN_PASSWORD"] = allow }
        let load = {
            try await ConfigurationLoader.load(
                flags: ["device.id": "van-7"], file: nil, environment: environment,
                defaultFile: AgentConfigurationTests.noDefaultFile)
        }
        guard row.refused else {
            let loaded = try await load()
            #expect(loaded.configuration.mqtt.allowsPlaintextPassword == (row.allow == "true"))
            return
        }
        let error = await #expect(throws: ConfigurationError.self) { try await load() }
        #expect(error?.key == "mqtt.broker")
        #expect(error?.source == "MYELINE_MQTT_BROKER")
        let message = error?.description ?? ""
        #expect(message.contains("unencrypted") && message.contains("use mqtts://"), "\(message)")
        #expect(message.contains("mqtt.allow-plain-password: true"), "\(message)")
        #expect(!message.contains("hunter2"))
    }

    @Test func withoutAPasswordPlainMQTTToAnotherHostIsNotRefused() async throws {
        let loaded = try await ConfigurationLoader.load(
            flags: ["device.id": "van-7"], file: nil,
            environment: ["MYELINE_MQTT_BROKER": "mqtt://broker.example.net:18830", "MYELINE_MQTT_USERNAME": "van-7"],
            defaultFile: AgentConfigurationTests.noDefaultFile)
        #expect(loaded.configuration.mqtt.broker.description == "mqtt://broker.example.net:18830")
    }

    @Test(arguments: [(0o600, false), (0o640, false), (0o644, true), (0o604, true)])
    func aPasswordFileReadableByEveryoneIsWarnedAbout(mode: Int, warned: Bool) throws {
        let path = try AgentConfigurationTests.yamlFile("hunter2\n", name: "password")
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        var settings = MQTTSettings(clientID: "c")
        settings.username = "van-7"
        settings.password = .file(path)
        let warning = settings.passwordFileExposure()
        #expect((warning != nil) == warned)
        if let warning {
            #expect(warning.message.contains("0640"))
            #expect(warning.metadata["mqtt.password_file"] == path)
            #expect(warning.metadata["file.mode"] == String(mode, radix: 8))
        }
    }
}
