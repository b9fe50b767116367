import Foundation
import LiveActivity
import TestSupport
import Testing

/// `deploy/mosquitto/bridge.conf` as it is (address, CA and password substituted) on a real site
/// broker bridged to a real central broker running `production.conf` and `acl`: an agent on the
/// site, the board and a QoS 2 subscriber on the central broker, and the site broker stopped and
/// restarted under the running agent.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct BridgeIntegrationTests {
    /// The bridge's configuration lines for a site broker that reaches `central` as `site-1`.
    static func bridge(to central: TestBroker, _ credentials: FleetCredentials) throws -> [String] {
        guard case .tls(_, let port) = central.address.transport else {
            throw TestSupportError("the central broker listens with TLS")
        }
        return try DeploymentFiles.text(
            "deploy/mosquitto/bridge.conf",
            replacing: [
                ("address central.example.net:8883", "address 127.0.0.1:\(port)"),
                ("/etc/mosquitto/certs/central-ca.crt", credentials.caFile),
                ("remote_password CHANGE-ME", "remote_password \(try credentials.password("site-1"))"),
            ]
        ).split(separator: "\n").map(String.init)
    }

    /// `myeline-aggregator --once --json` on the central broker, as the board account.
    static func board(_ central: TestBroker, _ credentials: FleetCredentials) async throws -> String {
        let board = try BrokerLockdownIntegrationTests.aggregator(central, credentials, ["--once", "--json"])
        defer { board.signal(SIGKILL) }
        let status = try await withDeadline(.seconds(30), what: "--once --json", process: board) {
            try await board.waitForExit()
        }
        #expect(status == 0, "\(board.output)")
        return board.output
    }

    @Test func theCentralBoardSeesASiteDeviceAndEveryTrackPointAfterTheSiteBrokerRestarts() async throws {
        try await FleetCredentials.withLockedBroker { central, credentials in
            let observer = try await AgentHarness.observer(
                connection: try credentials.mosquittoArguments(central, "watcher"))
            defer { observer.signal(SIGKILL) }
            // The site broker keeps its messages for the bridge across its restart, as a deployed one does.
            try await TestBroker.with(extraConfiguration: try Self.bridge(to: central, credentials), persistent: true) {
                site in
                try await site.currentProcess?.waitForLine(containing: "Connecting bridge")
                try await withTemporaryDirectory { state in
                    // Retrying every 2 s at most, so the test does not wait out a long backoff.
                    let agent = try AgentHarness.agent(
                        site, state: state, ["--speed", "50", "--loop"],
                        environment: ["MYELINE_MQTT_RECONNECT_MAX_DELAY": "2"], device: "dev-a")
                    defer { agent.signal(SIGKILL) }
                    try await observer.waitForLine(containing: "\"seq\":5,", timeout: .seconds(30))
                    let before = try await Self.board(central, credentials)
                    #expect(before.contains("\"device\":\"dev-a\""), "\(before)")

                    // Cut the bridge: stop the site broker (by its PID), while the agent keeps tracking.
                    await site.stop()
                    let down = Date()
                    try await agent.waitForLine(containing: "event=mqtt.connection.lost")
                    try await agent.waitForLine(containing: "event=mqtt.connect.failed")
                    let pointsBeforeTheRestart = try AgentHarness.trackPoints(AgentHarness.messages(observer))
                    try await site.start()

                    // Resynced: the agent's new online status reaches the central broker through the bridge.
                    try await observer.waitForLine(timeout: .seconds(60), description: "dev-a back online") { line in
                        AgentHarness.Message(line[...])?.isOnlineStatus(since: down) ?? false
                    }
                    // Points made during the outage and after: the outbox drains in order, so a point
                    // well after the last one seen before the restart means those before it are out.
                    let target = (pointsBeforeTheRestart.map(\.seq).max() ?? 0) + 30
                    try await observer.waitForLine(timeout: .seconds(60), description: "track point \(target)") {
                        $0.contains("/track|") && $0.contains("\"seq\":\(target),")
                    }
                    agent.signal(SIGTERM)
                    #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
                    try await observer.waitForLine(containing: "\"reason\":\"shutdown\"", timeout: .seconds(30))
                }
            }
            let after = try await Self.board(central, credentials)
            await observer.stop()

            let messages = AgentHarness.messages(observer)
            let points = try AgentHarness.trackPoints(messages)
            #expect(points.count > 35, "\(points.count) points")
            #expect(points.map(\.seq) == Array(1...points.count), "every point once, in order")
            #expect(Set(points.map(\.device.rawValue)) == ["dev-a"])
            // The central board shows the latest envelope the agent published, and the device offline.
            let envelopes = try AgentHarness.envelopes(messages)
            let latest = try #require(envelopes.max { $0.header.seq < $1.header.seq })
            let row = try #require(after.split(separator: "\n").first { $0.contains("\"device\":\"dev-a\"") })
            #expect(row.contains("\"seq\":\(latest.header.seq)"), "\(row)")
            #expect(row.contains("\"state\":\"offline\""), "\(row)")
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }
}
