import Foundation
import LiveActivity
import Testing
import TestSupport

/// Failure 2 of the agent-core issue: a silent receiver (gpsd up and answering, the receiver
/// sending nothing) was not noticed: nothing was published for a minute, then the heartbeat
/// republished the minute-old fix as a current position.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentSourceSilenceIntegrationTests {
    @Test func aReceiverThatFallsSilentDropsThePositionAndNoHeartbeatShowsTheOldOne() async throws {
        try await SilentServer.with(greeting: true, receiverFixes: 4) { server in
            try await AgentHarness.scenario { broker, observer, state in
                let agent = try AgentHarness.agent(
                    broker, state: state, [],
                    environment: [
                        "MYELINE_UPDATES_MIN_DISTANCE": "0", "MYELINE_UPDATES_MIN_INTERVAL": "0",
                        "MYELINE_UPDATES_HEARTBEAT": "3",
                    ], source: "gpsd://127.0.0.1:\(server.port)")
                defer { agent.signal(SIGKILL) }
                let located: @Sendable (AgentHarness.Message) -> Bool = { message in
                    message.isEnvelope && !message.payload.isEmpty && message.payload.contains("\"latitude\"")
                }
                try await observer.waitForLine(timeout: .seconds(30), description: "a position") { line in
                    AgentHarness.Message(line[...]).map(located) ?? false
                }
                let unlocated: @Sendable (AgentHarness.Message) -> Bool = { message in
                    message.isEnvelope && !message.payload.isEmpty && !message.payload.contains("\"latitude\"")
                }
                // Envelopes without a position before the first fix (the start's).
                let before = AgentHarness.messages(observer).prefix { !located($0) }.filter(unlocated).count
                // The receiver's last fix, then silence: 1 Hz, so the position goes 1 + 5 s later,
                // and heartbeats every 3 s afterwards.
                try await observer.waitForLine(
                    occurrence: before + 3, timeout: .seconds(30),
                    description: "content without a position, then two heartbeats"
                ) { line in AgentHarness.Message(line[...]).map(unlocated) ?? false }
                let envelopes = try AgentHarness.envelopes(AgentHarness.messages(observer))
                let lastLocated = try #require(envelopes.lastIndex { $0.content.state.latitude != nil })
                // None after the silence shows the old position as current.
                #expect(envelopes.count - lastLocated - 1 >= 3)
                #expect(envelopes[(lastLocated + 1)...].allSatisfy { $0.content.state.latitude == nil })
                #expect(agent.output.contains("event=agent.source.silent"))
                // gpsd itself was never given up: the connection stayed, as it answered.
                #expect(server.connections == 1)
            }
        }
    }
}
