import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport
import Tracking

/// Replays as a user runs them (the agent-core issue, failures 5 to 7), with the built binary.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentReplayIntegrationTests {
    /// A straight drive north: `points` points 50 m and 10 s apart (950 m in 190 s for 20).
    static func straightDrive(in directory: String, points: Int = 20) throws -> String {
        let start = Date(timeIntervalSince1970: 1_600_000_000)
        let rows = (0..<points).map { index in
            let latitude = 45.0 + Double(index) * 50 / 111_195
            let time = (start + Double(index) * 10).formatted(.iso8601)
            return "<trkpt lat=\"\(latitude)\" lon=\"13.7\"><time>\(time)</time></trkpt>"
        }
        let path = "\(directory)/straight.gpx"
        try Data(
            "<gpx version=\"1.1\" creator=\"test\"><trk><trkseg>\(rows.joined())</trkseg></trk></gpx>".utf8
        ).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let eager = ["MYELINE_UPDATES_MIN_DISTANCE": "0", "MYELINE_UPDATES_MIN_INTERVAL": "0"]

    /// The retained envelope of van-7's one activity now.
    static func retainedEnvelope(_ broker: TestBroker) async throws -> ActivityEnvelope<LocationActivityAttributes> {
        let retained = try await AgentHarness.retained(broker, filter: "myeline/van-7/activities/+")
        let payload = try #require(retained.values.first, "one retained activity: \(retained.keys)")
        return try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(payload))
    }

    /// Failure 7: a replay's `elapsed` was wall time (a 7-minute trip at `--speed 20` said 22 s).
    /// Failure 6: a restart on a replay read the file from the top and added the straight line
    /// from the last counted point back to the first to the trip (1,434 m became 2,607 m).
    @Test func aReplayTimesTheTripByItsRecordingAndARestartAddsNoJump() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { directory in
                let drive = try Self.straightDrive(in: directory)
                let state = "\(directory)/state"
                for run in 1...2 {
                    // 190 recorded seconds at 100 times the pace: about 2 s.
                    let agent = try AgentHarness.agent(
                        broker, state: state, ["--speed", "100"], environment: Self.eager, source: drive)
                    defer { agent.signal(SIGKILL) }
                    let status = try await agent.waitForExit()
                    #expect(status == 0, "run \(run): \(agent.tail)")
                    let envelope = try await Self.retainedEnvelope(broker)
                    let content = envelope.content.state
                    // Each run adds the drive's 950 m and 190 s; the restart adds no jump back.
                    #expect(abs(content.distance - 950 * Double(run)) < 1, "run \(run): \(content.distance) m")
                    #expect(content.elapsed == 190 * Double(run), "run \(run): \(content.elapsed) s")
                }
            }
        }
    }

    /// Failure 5: `report` republished `online` with a new `since`, so "online since" meant "last
    /// report", and printed the previous event rather than the one it had just republished.
    @Test func reportKeepsOnlineSinceAndPrintsWhatItRepublished() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let agent = try AgentHarness.agent(broker, state: state, ["--speed", "1", "--loop"])
            defer { agent.signal(SIGKILL) }
            let line = try await observer.waitForLine(containing: "\"state\":\"online\"")
            let online = try WireCodec.decode(
                StatusMessage.self, from: try #require(AgentHarness.Message(line[...])).data)
            let since = try #require(online.since)
            try await observer.waitForLine(containing: "/track|")
            let before = try AgentHarness.envelopes(AgentHarness.messages(observer)).map(\.header.seq).max() ?? 0
            let run = try await IntentCommandIntegrationTests.agent(
                ["report"] + IntentCommandIntegrationTests.target(broker))
            #expect(run.status == 0, "\(run.standardError)")
            #expect(
                run.standardOutput.contains("status: online since \(since.formatted(.iso8601))"),
                "\(run.standardOutput)")
            // The status republished by the report, as the observer saw it: the same `since`.
            let statuses = try AgentHarness.messages(observer).filter { $0.topic.hasSuffix("/status") }.map {
                try WireCodec.decode(StatusMessage.self, from: $0.data)
            }
            #expect(statuses.count >= 2)
            #expect(statuses.allSatisfy { $0.since == since })
            // The activity line is the envelope the report made the agent publish, not the one the
            // broker kept from before.
            let printed = try #require(
                run.standardOutput.split(separator: "\n").first { $0.hasPrefix("activity ") })
            let seq = try #require(printed.split(separator: " ").dropFirst(3).first.flatMap { Int($0) }, "\(printed)")
            #expect(seq > before, "printed \(seq), published before the report \(before)")
        }
    }
}
