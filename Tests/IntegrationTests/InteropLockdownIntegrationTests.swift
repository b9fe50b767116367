import Foundation
import Interop
import Logging
import MQTT
import TestSupport
import Testing

/// deploy/mosquitto/acl with the integrations (docs/integrations.md): the real agent of `dev-a`
/// with both options publishes what the board may read, and a device's credentials reach only its
/// own OwnTracks and Home Assistant topics.
@Suite(.timeLimit(.minutes(3)))
struct InteropLockdownIntegrationTests {
    /// An agent with the integrations opens a second connection with its account (IntegrationLink):
    /// under production.conf's `use_username_as_clientid` the two would take each other's session
    /// over, so a fleet with integrations turns that line off (docs/security.md), as here.
    static let integrationsBroker = [("\nuse_username_as_clientid true\n", "\nuse_username_as_clientid false\n")]

    @Test func aDeviceWritesOnlyItsOwnIntegrationTopics() async throws {
        try await FleetCredentials.withLockedBroker(replacing: Self.integrationsBroker) { broker, credentials in
            // The board's account reads OwnTracks locations (--owntracks).
            let board = try ContractIntegrationTests.mosquittoSub(
                try credentials.mosquittoArguments(broker, "aggregator") + [
                    "-t", "owntracks/+/+", "-q", "1", "-d", "-F", "MSG|%r|%t|%l|%p",
                ])
            defer { board.signal(SIGKILL) }
            try await board.waitForLine(containing: "SUBACK")
            try await withTemporaryDirectory { state in
                let options = [
                    "MYELINE_OWNTRACKS_ENABLED": "true", "MYELINE_HOMEASSISTANT_ENABLED": "true",
                ]
                let agent = try AgentHarness.agent(
                    broker, state: state, environment: credentials.environment(broker, "dev-a").merging(options) { $1 },
                    device: "dev-a")
                defer { agent.signal(SIGKILL) }
                try await board.waitForLine(containing: "|owntracks/myeline/dev-a|")

                // The operator's reportLocation is allowed through and answered.
                try await MQTTClient.withClient(
                    configuration: credentials.client(broker, "operator"), logger: Logger(label: "test")
                ) { operatorClient in
                    try await operatorClient.waitUntilConnected()
                    try await operatorClient.publish(
                        "owntracks/myeline/dev-a/cmd",
                        payload: OwnTracksCodec.encode(.command(action: "reportLocation")))
                }
                try await board.waitForLine(containing: #""t":"r""#)
                #expect(!agent.output.contains("Cannot publish to an integration topic"), "\(agent.output)")

                // A stolen dev-a's credentials cannot write dev-b's integration topics, nor command it.
                try await MQTTClient.withClient(
                    configuration: credentials.client(broker, "dev-a"), logger: Logger(label: "test")
                ) { thief in
                    try await thief.waitUntilConnected()
                    for topic in [
                        "owntracks/myeline/dev-b", "owntracks/myeline/dev-b/cmd",
                        "homeassistant/device_tracker/dev-b/tracker/config", "homeassistant/sensor/dev-b/speed/config",
                        "homeassistant/device_tracker/dev-b/tracker/attributes",
                    ] {
                        let error = await #expect(throws: MQTTError.self, "\(topic)") {
                            try await thief.publish(topic, payload: Array("{}".utf8), qos: .atLeastOnce, retain: true)
                        }
                        #expect(error?.code == .publishRefused, "\(topic): \(String(describing: error))")
                    }
                }
            }
        }
    }
}
