import Foundation
import Interop
import Logging
import MQTT
import TestSupport
import Testing

/// deploy/mosquitto/production.conf and deploy/mosquitto/acl as shipped, with the integrations
/// (docs/integrations.md): the real agent of `dev-a` with both options publishes what the board may
/// read on its one connection, and a device's credentials reach only its own OwnTracks and Home
/// Assistant topics.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct InteropLockdownIntegrationTests {
    /// Lines of the agent's log that say the connection to the broker was made or lost.
    static func connectionLines(_ agent: TestProcess) -> [Substring] {
        agent.output.split(separator: "\n").filter {
            $0.contains("event=agent.connected") || $0.contains("event=mqtt.connection.lost")
        }
    }

    /// With both options on, the agent keeps one connection under `use_username_as_clientid`:
    /// before the integrations rode on the agent's connection, their own connection (the same
    /// account, so the same client id) and the agent's took each other over about five times a
    /// second.
    @Test(.tags(.slow)) func aDeviceWritesOnlyItsOwnIntegrationTopics() async throws {
        try await FleetCredentials.withLockedBroker { broker, credentials in
            guard let mosquitto = broker.currentProcess else { throw TestSupportError("no broker") }
            // The board's account reads OwnTracks locations (--owntracks) and the fleet.
            let board = try ContractIntegrationTests.mosquittoSub(
                try credentials.mosquittoArguments(broker, "aggregator") + [
                    "-t", "owntracks/+/+", "-t", "myeline/dev-a/activities/+", "-q", "1", "-d", "-F",
                    "MSG|%r|%t|%l|%p",
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
                try await board.waitForLine(containing: "|myeline/dev-a/activities/")
                // The broker acknowledged the discovery configs (PUBACK without a refusal).
                try await agent.waitForLine(containing: "event=homeassistant.discovery.published")

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
                #expect(!agent.output.contains("event=integration.publish.failed"), "\(agent.output)")
                // Seconds of both integrations publishing, and no takeover meanwhile.
                #expect(
                    !mosquitto.output.contains("already connected, closing old connection"), "\(mosquitto.output)")
                let connections = Self.connectionLines(agent)
                #expect(connections.count == 1, "\(connections)")

                // A stolen dev-b's credentials cannot write the running dev-a's integration topics, nor command it.
                try await MQTTClient.withClient(
                    configuration: credentials.client(broker, "dev-b"), logger: Logger(label: "test")
                ) { thief in
                    try await thief.waitUntilConnected()
                    for topic in [
                        "owntracks/myeline/dev-a", "owntracks/myeline/dev-a/cmd",
                        "homeassistant/device_tracker/dev-a/tracker/config", "homeassistant/sensor/dev-a/speed/config",
                        "homeassistant/device_tracker/dev-a/tracker/attributes",
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

    /// An agent whose `owntracks.user` the ACL does not grant (`fleet`, where the shipped ACL grants
    /// `myeline`): the broker refuses its first OwnTracks location on the agent's own connection,
    /// and, under a broker with `max_queued_messages 0` (set here instead of production.conf's
    /// count: mosquitto 2.0.11 then closes that connection), costs it its connection. The agent logs
    /// the refusal once, publishes nothing more for OwnTracks (each refusal would cost the connection
    /// again), and its Myeline track and Home Assistant's discovery go on. The broker logs the
    /// publishes it denies (`log_type debug`, the one line added to production.conf here).
    @Test func anIntegrationTheACLRefusesIsGivenUpAndTheAgentGoesOn() async throws {
        let debugLog = [
            ("\nmax_connections 30000\n", "\nmax_connections 30000\nlog_type debug\n"),
            ("\nmax_queued_messages 1000000\n", "\nmax_queued_messages 0\n"),
        ]
        try await FleetCredentials.withLockedBroker(replacing: debugLog) { broker, credentials in
            guard let mosquitto = broker.currentProcess else { throw TestSupportError("no broker") }
            let board = try await AgentHarness.observer(
                connection: try credentials.mosquittoArguments(broker, "aggregator"),
                topics: ["myeline/dev-a/activities/#"])
            defer { board.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                let options = [
                    "MYELINE_OWNTRACKS_ENABLED": "true", "MYELINE_OWNTRACKS_USER": "fleet",
                    "MYELINE_HOMEASSISTANT_ENABLED": "true",
                ]
                // 30 s of a 5 Hz receiver replayed at twice its pace: a new second every half second.
                let agent = try AgentHarness.agent(
                    broker, state: state, ["--speed", "2"],
                    environment: credentials.environment(broker, "dev-a").merging(options) { $1 },
                    source: Self.capture, device: "dev-a")
                defer { agent.signal(SIGKILL) }
                let refusal = "The broker refused an integration's message"
                try await agent.waitForLine(containing: refusal)
                try await agent.waitForLine(containing: "event=homeassistant.discovery.published")
                // Track points of fixes 4 s past the refusal, published by the agent on its
                // connection: their fixes went to the OwnTracks pacing, which released the
                // locations of 3 later seconds, none of which the agent may publish.
                let refusedAt = Date()
                try await board.waitForLine(timeout: .seconds(30), description: "a track point 4 s later") { line in
                    guard let message = AgentHarness.Message(Substring(line)), message.isTrack,
                        let point = try? message.trackPoint()
                    else { return false }
                    return point.time > refusedAt.addingTimeInterval(4)
                }
                let denied = mosquitto.output.split(separator: "\n").filter {
                    $0.contains("Denied PUBLISH from dev-a") && $0.contains("'owntracks/fleet/dev-a'")
                }
                // One message refused. When the broker's close came before the agent read its
                // PUBACK (a busy machine), libmosquitto sends that message again on the new
                // connection, flagged d1 with the same mid, and that resend is refused too.
                let deniedMessages = Set(denied.compactMap { line in line.firstMatch(of: /, m(\d+),/)?.1 })
                #expect(deniedMessages.count == 1 && denied.count <= 2, "\(denied)")
                let refusals = agent.output.split(separator: "\n").filter { $0.contains(refusal) }
                #expect(
                    refusals.count == 1 && refusals[0].contains("myeline.integration=owntracks"), "\(agent.output)")
                // The broker closed the connection once per refusal of that message (mosquitto
                // 2.0.11), and the agent published its Myeline messages on it before and after.
                let losses = agent.output.split(separator: "\n").filter { $0.contains("event=mqtt.connection.lost") }
                #expect(losses.count <= denied.count, "\(agent.output)")
                #expect(
                    !mosquitto.output.contains("already connected, closing old connection"), "\(mosquitto.output)")
            }
        }
    }

    /// A 5 Hz receiver's capture, 150 fixes over 30 s (InteropIntegrationTests).
    static let capture = URL(fileURLWithPath: AgentHarness.capture).deletingLastPathComponent()
        .appendingPathComponent("quectel-l76k-nmea.log").path
}
