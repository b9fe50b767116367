import ArgumentParser
import Foundation
import Testing

@testable import MyelineAgentKit

/// `myeline-agent check-config`: the printed configuration, masked secrets, and exit status 64.
struct CheckConfigTests {
    /// Parses a command line as the root command would and returns the check-config command.
    static func command(_ arguments: [String]) throws -> CheckConfigCommand {
        try #require(try AgentCommand.parseAsRoot(["check-config"] + arguments) as? CheckConfigCommand)
    }

    static func render(_ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        try await command(arguments).render(
            environment: environment, defaultFile: AgentConfigurationTests.noDefaultFile)
    }

    @Test func goldenOutput() async throws {
        let file = try AgentConfigurationTests.yamlFile(
            """
            device:
              name: Van 7
              vehicle: B-MY 1234
              priority: 2.5
              destination: {name: Depot North, latitude: 52.52, longitude: 13.405}
            mqtt:
              broker: mqtts://broker.example
              username: van-7
            alerts:
              geofences: ["depot:52.52:13.405:150"]
              overspeed: {threshold: 33.3}
            """, name: "golden.yaml")
        let text = try await Self.render(
            ["--config", file, "--device", "van-7", "--speed", "max", "--loop"],
            environment: ["MYELINE_MQTT_PASSWORD": "hunter2", "MYELINE_UPDATES_HEARTBEAT": "30"])
        let expected = """
            KEY                           VALUE                        SOURCE
            device.id                     van-7                        --device
            device.name                   Van 7                        FILE
            device.vehicle                B-MY 1234                    FILE
            device.driver                 (none)                       default
            device.destination.name       Depot North                  FILE
            device.destination.latitude   52.52                        FILE
            device.destination.longitude  13.405                       FILE
            device.priority               2.5                          FILE
            mqtt.broker                   mqtts://broker.example:8883  FILE
            mqtt.client-id                myeline-van-7                device.id
            mqtt.keepalive                30 s                         default
            mqtt.protocol                 5                            default
            mqtt.username                 van-7                        FILE
            mqtt.password-file            (none)                       default
            mqtt.password                 ********                     MYELINE_MQTT_PASSWORD
            mqtt.allow-plain-password     false                        default
            mqtt.tls.ca-file              (none)                       default
            mqtt.tls.cert-file            (none)                       default
            mqtt.tls.key-file             (none)                       default
            mqtt.reconnect.initial-delay  1 s                          default
            mqtt.reconnect.max-delay      60 s                         default
            topic-prefix                  myeline                      default
            source.address                gpsd://localhost:2947        default
            source.speed                  max                          --speed
            source.loop                   true                         --loop
            source.silence-timeout        auto                         default
            state-directory               /var/lib/myeline             default
            activity.autostart            true                         default
            activity.dismissal            immediate                    default
            activity.end-on-exit          false                        default
            activity.max-activities       8                            default
            updates.min-distance          25 m                         default
            updates.min-interval          5 s                          default
            updates.heartbeat             30 s                         MYELINE_UPDATES_HEARTBEAT
            updates.stale-after           90 s                         3 x updates.heartbeat
            updates.no-fix-grace          30 s                         default
            outbox.capacity               100000 points                default
            storage.durability            interval                     default
            storage.sync-interval         5 s                          default
            storage.spool-directory       in memory                    default
            alerts.geofences              depot:52.52:13.405:150       FILE
            alerts.overspeed.threshold    33.3 m/s                     FILE
            alerts.overspeed.duration     5 s                          default
            log-level                     info                         default
            owntracks.enabled             false                        default
            owntracks.user                myeline                      default
            owntracks.device              van-7                        device.id
            owntracks.tid                 n7                           owntracks.device
            homeassistant.enabled         false                        default
            homeassistant.prefix          homeassistant                default

            """
        // The file's path is a fresh temporary one; it is the last column, so it does not change the layout.
        #expect(text.replacingOccurrences(of: file, with: "FILE") == expected)
    }

    @Test func passwordsAreMasked() async throws {
        let passwordFile = try AgentConfigurationTests.yamlFile("hunter2\n", name: "mqtt-password")
        let text = try await Self.render(
            ["--device", "van-7"],
            environment: ["MYELINE_MQTT_USERNAME": "van-7", "MYELINE_MQTT_PASSWORD_FILE": passwordFile])
        #expect(!text.contains("hunter2"))
        #expect(text.contains("mqtt.password-file            \(passwordFile)"))
        #expect(text.contains("mqtt.password                 ********"))

        let fromEnvironment = try await Self.render(
            ["--device", "van-7"], environment: ["MYELINE_MQTT_USERNAME": "u", "MYELINE_MQTT_PASSWORD": "hunter2"])
        #expect(!fromEnvironment.contains("hunter2"))
        #expect(fromEnvironment.contains("********"))
    }

    @Test func anUnreadablePasswordFileIsAUsageError() async throws {
        let error = await #expect(throws: (any Error).self) {
            try await Self.render(
                ["--device", "van-7"],
                environment: ["MYELINE_MQTT_USERNAME": "u", "MYELINE_MQTT_PASSWORD_FILE": "/nonexistent/password"])
        }
        let thrown = try #require(error)
        let failure = try #require(AgentCommand.failure(for: thrown))
        #expect(failure.kind.exitStatus == 64)
        #expect(failure.message.hasPrefix("mqtt.password-file: cannot read the password file"))
    }

    @Test(arguments: [
        (["--device", "van-7", "--broker", "http://broker"], "mqtt.broker (from --broker): invalid broker URL"),
        (["--device", "Van 7"], "device.id (from --device): invalid device id \"Van 7\""),
        (["--device", "van-7", "--speed", "0"], "source.speed (from --speed): invalid replay speed \"0\""),
        (["--device", "van-7", "--log-level", "loud"], "log-level (from --log-level): invalid value \"loud\""),
        ([], "device.id: no device id"),
    ])
    func invalidConfigurationExitsWith64(arguments: [String], message: String) async throws {
        let error = await #expect(throws: (any Error).self) { try await Self.render(arguments) }
        let thrown = try #require(error)
        let failure = try #require(AgentCommand.failure(for: thrown))
        #expect(failure.kind.exitStatus == 64)
        #expect(failure.message.hasPrefix(message), "\(failure.message)")
    }

    @Test func thereIsNoPasswordFlag() {
        let error = #expect(throws: (any Error).self) {
            try AgentCommand.parseAsRoot(["check-config", "--password", "hunter2"])
        }
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
    }
}
