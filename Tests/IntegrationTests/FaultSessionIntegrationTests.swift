import Foundation
import LiveActivity
import MyelineWire
import MQTT
import Testing
import TestSupport

/// Scenario 12: a broker without persistence (deploy/mosquitto/development.conf, what the README
/// offers to try with) SIGKILLed and restarted five times under a 10 Hz replay, each time while
/// a track point is half way through its QoS 2 handshake: the broker has stored it and answered
/// PUBREC, the agent's PUBREL has not arrived. The restarted broker knows nothing of it; the
/// agent's libmosquitto sends its PUBREL again, the new broker answers PUBCOMP, and the point
/// was taken as delivered and lost, once at each restart. Now the agent's client fails the
/// publishes left waiting when the broker kept no session (`sessionLost`) and the agent sends
/// them again: duplicates may come (the same `seq`), gaps may not.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct FaultSessionIntegrationTests {
    @Test(.tags(.slow)) func aBrokerThatForgetsItsSessionsLosesNoTrackPoint() async throws {
        try await TestBroker.with(listener: .tcp) { broker in
            guard case .tcp(_, let brokerPort) = broker.address.transport else { return }
            // At QoS 1: a QoS 2 subscriber gets a message only at the end of its own handshake,
            // which a broker killed in the middle of it cuts (the broker's loss, not the agent's).
            let observer = try await AgentHarness.observer(
                connection: ["-h", "127.0.0.1", "-p", "\(brokerPort)"], ["-q", "1"])
            defer { observer.signal(SIGKILL) }
            let (messages, cuts) = try await TestTCPProxy.with(upstreamPort: brokerPort) { proxy in
                try await withTemporaryDirectory { state in
                    // The drive's fixes are a second apart: at 10 times the pace, 10 a second.
                    let agent = try AgentHarness.agent(
                        broker, state: state, ["--speed", "10", "--loop"], environment: FaultScenario.eager,
                        source: FaultScenario.drive, address: BrokerAddress(.tcp(host: "127.0.0.1", port: proxy.port)))
                    defer { agent.signal(SIGKILL) }
                    for restart in 1...5 {
                        // A track point (QoS 2) held between PUBREC and PUBREL; the proxy then lets
                        // nobody through, so that the subscriber is back before the agent is.
                        proxy.plan([TestTCPProxy.Cut(qos: 2, kind: .beforeRelease)], spacing: 10)
                        try await proxy.waitForCuts(restart, timeout: .seconds(30))
                        await broker.kill()
                        try await broker.start()
                        try await observer.waitForLine(
                            containing: "SUBACK", occurrence: restart + 1, timeout: .seconds(30))
                        proxy.setOpen(true)
                    }
                    return (
                        try await FaultScenario.stopAfterMorePoints(agent, observedBy: observer),
                        try proxy.cuts.map {
                            try WireCodec.decode(TrackPoint.self, from: Data(#require($0.jsonPayload)))
                        }
                    )
                }
            }
            let seqs = try AgentHarness.trackPoints(messages).map(\.seq)
            let highest = try #require(seqs.max())
            let missing = Set(1...highest).subtracting(seqs).sorted()
            #expect(cuts.count == 5)
            #expect(
                missing.isEmpty,
                "\(missing.count) track points lost: \(missing); held at the restarts: \(cuts.map(\.seq))")
            FaultScenario.report(
                "broker without persistence restarted 5 times, a point in its QoS 2 handshake each time "
                    + "(\(cuts.map(\.seq))): \(seqs.count) track points for seqs 1...\(highest), "
                    + "\(seqs.count - Set(seqs).count) duplicates, \(missing.count) missing")
        }
    }
}
