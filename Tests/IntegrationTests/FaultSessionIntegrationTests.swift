import Foundation
import LiveActivity
import MQTT
import Testing
import TestSupport

/// Scenario 12: a broker without persistence (deploy/mosquitto/development.conf, what the README
/// offers to try with) SIGKILLed and restarted five times under a 10 Hz replay. Each restart
/// forgets every session: a QoS 2 track point whose PUBREC came from the broker that died was
/// taken as delivered when libmosquitto's PUBREL met the new broker's PUBCOMP, and one point was
/// lost at each restart. Now the agent's client fails such publishes (`sessionLost`) and the
/// agent sends them again: duplicates may come (the same `seq`), gaps may not.
@Suite(.timeLimit(.minutes(3)))
struct FaultSessionIntegrationTests {
    @Test func aBrokerThatForgetsItsSessionsLosesNoTrackPoint() async throws {
        try await TestBroker.with(listener: .tcp) { broker in
            guard case .tcp(_, let brokerPort) = broker.address.transport else { return }
            let observer = try await AgentHarness.observer(connection: ["-h", "127.0.0.1", "-p", "\(brokerPort)"])
            defer { observer.signal(SIGKILL) }
            let messages = try await TestTCPProxy.with(upstreamPort: brokerPort) { proxy in
                try await withTemporaryDirectory { state in
                    // The drive's fixes are a second apart: at 10 times the pace, 10 a second.
                    let agent = try AgentHarness.agent(
                        broker, state: state, ["--speed", "10", "--loop"], environment: FaultScenario.eager,
                        source: FaultScenario.drive, address: BrokerAddress(.tcp(host: "127.0.0.1", port: proxy.port)))
                    defer { agent.signal(SIGKILL) }
                    let isTrack: @Sendable (String) -> Bool = { $0.contains("/track|") }
                    var points = 0
                    for restart in 1...5 {
                        points += 20
                        try await observer.waitForLine(
                            occurrence: points, timeout: .seconds(30), description: "\(points) track points",
                            where: isTrack)
                        // The broker dies under the agent; while it comes back the agent cannot
                        // reach it, so that the subscriber is back first (it must see every point).
                        proxy.setOpen(false)
                        await broker.kill()
                        try await broker.start()
                        try await observer.waitForLine(
                            containing: "SUBACK", occurrence: restart + 1, timeout: .seconds(30))
                        proxy.setOpen(true)
                    }
                    points += 20
                    try await observer.waitForLine(
                        occurrence: points, timeout: .seconds(30), description: "\(points) track points", where: isTrack
                    )
                    return try await FaultScenario.stopAfterMorePoints(agent, observedBy: observer)
                }
            }
            let seqs = try AgentHarness.trackPoints(messages).map(\.seq)
            let highest = try #require(seqs.max())
            let missing = Set(1...highest).subtracting(seqs).sorted()
            #expect(missing.isEmpty, "\(missing.count) track points lost: \(missing)")
            FaultScenario.report(
                "broker without persistence restarted 5 times: \(seqs.count) track points for seqs 1...\(highest), "
                    + "\(seqs.count - Set(seqs).count) duplicates, \(missing.count) missing")
        }
    }
}
