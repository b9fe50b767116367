import Foundation
import LiveActivity
import TestSupport
import Testing

/// `myeline-agent simulate` against a real broker, seen by an independent subscriber: every message
/// arrives, each valid against the published schemas.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct SimulateIntegrationTests {
    static let track = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LocationTests/Data/gpx/korita-zbevnica.gpx").path

    @Test(arguments: ["0", "1", "2"])
    func aSimulatedFleetPublishesWhatAgentsWould(qos: String) async throws {
        try await AgentHarness.scenario { broker, observer, _ in
            let simulate = try await IntentCommandIntegrationTests.agent([
                "simulate", "--device", "sim", "--broker", "\(broker.address)", "--devices", "20", "--rate", "max",
                "--count", "100", "--qos", qos, "--track", Self.track,
            ])
            #expect(simulate.status == 0, "simulate: \(simulate.standardError)")
            #expect(
                simulate.standardOutput.hasPrefix("simulate: 20 devices, 100 updates (240 messages with the starts)"))
            try await observer.waitForLine(description: "the last track point") {
                $0.contains("|myeline/sim-20/activities/") && $0.contains("/track|") && $0.contains("\"seq\":5,")
            }
            await observer.stop()
            let messages = AgentHarness.messages(observer)
            #expect(messages.count == 240)
            #expect(messages.filter { $0.topic.hasSuffix("/status") }.count == 20)
            let envelopes = try AgentHarness.envelopes(messages)
            #expect(envelopes.count == 120)
            #expect(Set(envelopes.map(\.header.device)).count == 20)
            let points = try AgentHarness.trackPoints(messages)
            #expect(points.count == 100)
            #expect(
                points.allSatisfy { abs($0.latitude - 45.4) < 0.2 && abs($0.longitude - 14.2) < 0.2 },
                "the drive's area")
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }

    @Test func withoutATrackItSaysWhichOptionIsMissing() async throws {
        let simulate = try await IntentCommandIntegrationTests.agent([
            "simulate", "--device", "sim", "--broker", "mqtt://127.0.0.1:9",
        ])
        #expect(simulate.status == 64)
        #expect(simulate.standardError.contains("--track: give at least one GPX file to drive along"))
    }
}
