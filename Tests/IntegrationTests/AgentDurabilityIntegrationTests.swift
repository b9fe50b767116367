import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// The durability table of docs/agent-store.md, with real processes: what the agent loses when it
/// is killed, and when the power goes (its spool, in memory, gone with it), at each
/// `storage.durability`. The broker is away while the agent tracks, so that every point must be
/// kept; it is back for the restart, which delivers what was kept.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct AgentDurabilityIntegrationTests {
    enum Failure: String, CaseIterable, Sendable {
        /// SIGKILL: the process dies, the machine does not (the spool in memory survives).
        case sigkill
        /// A power cut: the process dies and the spool with it.
        case powerCut
        /// A power cut in the middle of a group commit: the journal's last segment also loses its
        /// last bytes (a write the card had not finished).
        case powerCutInACommit
    }

    /// A real 1 Hz capture, replayed at 10 times its pace: a point every 0.1 s.
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LocationTests/Data/gpsd-logs/ublox-8.log").path

    /// What the subscriber got of the activity, and how far the first agent had got.
    struct Outcome {
        /// The track seq the first agent had handed over when it died.
        var published: Int
        /// Every track point of the activity delivered, duplicates included.
        var points: [TrackPoint]

        /// The seqs up to `published` never delivered.
        var missing: [Int] { Set(1...published).subtracting(points.map(\.seq)).sorted() }
        /// Seqs delivered for two different points: a seq used twice.
        var reused: [Int] {
            Dictionary(grouping: points, by: \.seq).filter { Set($0.value.map(\.time)).count > 1 }.keys.sorted()
        }
        /// Whether the second agent went on with the activity after the points kept.
        var resumed: Bool { points.contains { $0.seq > published } }
        /// The `power-losses` of the second agent's `online` statuses (nil: absent).
        var powerLosses: [UInt64?]
    }

    /// The agent tracks offline until the journal has had a commit and `points` more track points
    /// were made after it, then `failure`; then, the broker back, a second agent on the same
    /// state delivers what the first kept and goes on with the activity.
    static func run(_ failure: Failure, durability: [String: String], points: Int) async throws -> Outcome {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { state in
                await broker.stop()
                let environment = durability.merging(FaultScenario.eager) { $1 }
                let first = try AgentHarness.agent(
                    broker, state: state, ["--speed", "10", "--loop"], environment: environment, source: Self.capture)
                defer { first.signal(SIGKILL) }
                // Tracking offline: its points wait. Polled: the agent says nothing of them.
                func made() -> Int { (try? AgentRunIntegrationTests.savedActivities(in: state).first?.trackSeq) ?? 0 }
                func journaled() -> Bool {
                    ((try? FileManager.default.contentsOfDirectory(atPath: state + "/activities")) ?? []).contains {
                        $0.hasSuffix(".state")
                    }
                }
                let deadline = ContinuousClock.now + .seconds(60)
                while !journaled() {
                    try #require(ContinuousClock.now < deadline, "a commit of the journal:\n\(first.output)")
                    try await Task.sleep(for: .milliseconds(100))
                }
                let target = made() + points
                while made() < target {
                    try #require(ContinuousClock.now < deadline, "\(points) more points:\n\(first.output)")
                    try await Task.sleep(for: .milliseconds(100))
                }
                first.signal(SIGKILL)
                _ = try await first.waitForExit()
                let record = try #require(try AgentRunIntegrationTests.savedActivities(in: state).first)
                if failure != .sigkill { try? FileManager.default.removeItem(atPath: state + "/spool") }
                if failure == .powerCutInACommit { try Self.tearLastSegment(in: state + "/outbox") }
                try await broker.start()
                let observer = try await AgentHarness.observer(broker)
                defer { observer.signal(SIGKILL) }
                let second = try AgentHarness.agent(
                    broker, state: state, ["--speed", "10", "--loop"], environment: environment, source: Self.capture)
                defer { second.signal(SIGKILL) }
                // The resumed activity goes on after the kept points.
                try await observer.waitForLine(description: "a point after the kept ones") { line in
                    guard line.contains("/activities/\(record.activityID)/track|"),
                        let point = try? AgentHarness.Message(line[...])?.trackPoint()
                    else { return false }
                    return point.seq > record.trackSeq
                }
                let messages = try await AgentHarness.stop(second, observedBy: observer)
                let points = try AgentHarness.trackPoints(messages).filter { $0.activity == record.activityID }
                let statuses = messages.filter { $0.topic.hasSuffix("/status") }.compactMap {
                    try? WireCodec.decode(StatusMessage.self, from: $0.data)
                }
                return Outcome(
                    published: record.trackSeq, points: points,
                    powerLosses: statuses.filter { $0.state == .online }.map(\.powerLosses))
            }
        }
    }

    /// Cuts the last few bytes of the newest segment: the record a power cut interrupted.
    static func tearLastSegment(in outbox: String) throws {
        let segments = try FileManager.default.contentsOfDirectory(atPath: outbox).filter { $0.hasPrefix("segment-") }
        guard let last = segments.sorted().last else { return }
        let path = outbox + "/" + last
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        guard size > 40 else { return }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size - 7))
        try handle.close()
    }

    @Test func sigkillLosesNothing() async throws {
        let outcome = try await Self.run(.sigkill, durability: [:], points: 20)
        #expect(
            outcome.missing.isEmpty, "\(outcome.missing.count) of \(outcome.published) points lost: \(outcome.missing)")
        #expect(outcome.reused.isEmpty, "seqs used twice: \(outcome.reused)")
        #expect(outcome.resumed)
        #expect(!outcome.powerLosses.isEmpty && outcome.powerLosses.allSatisfy { $0 == nil }, "\(outcome.powerLosses)")
        FaultScenario.report("SIGKILL, interval: \(outcome.published) points kept, \(outcome.missing.count) lost")
    }

    /// With the default durability, a power cut loses at most the points of the last interval (2 s
    /// here, 20 points at 10 a second) not yet delivered, and never lets a seq be used twice.
    @Test func aPowerCutLosesAtMostTheLastIntervalAndNeverReusesASeq() async throws {
        let outcome = try await Self.run(
            .powerCutInACommit, durability: ["MYELINE_STORAGE_SYNC_INTERVAL": "2"], points: 25)
        let missing = outcome.missing
        // At most an interval's points (2 s at 10 a second), the batch being written and the torn one.
        #expect(missing.count <= 30, "\(missing.count) of \(outcome.published) points lost")
        // What is lost is the end, not the middle.
        #expect(missing.allSatisfy { $0 > outcome.published - 30 }, "lost: \(missing)")
        #expect(outcome.reused.isEmpty, "seqs used twice: \(outcome.reused)")
        #expect(outcome.resumed)
        // Said: the second agent's status counts the power loss.
        #expect(!outcome.powerLosses.isEmpty && outcome.powerLosses.allSatisfy { $0 == 1 }, "\(outcome.powerLosses)")
        FaultScenario.report(
            "power cut, interval 2 s: \(missing.count) of \(outcome.published) points lost, none reused")
    }

    /// With `storage.durability: every-fix` a power cut loses nothing.
    @Test func everyFixLosesNothingInAPowerCut() async throws {
        let outcome = try await Self.run(.powerCut, durability: ["MYELINE_STORAGE_DURABILITY": "every-fix"], points: 20)
        #expect(outcome.missing.isEmpty, "\(outcome.missing.count) of \(outcome.published) points lost")
        #expect(outcome.reused.isEmpty, "seqs used twice: \(outcome.reused)")
        #expect(outcome.resumed)
        FaultScenario.report("power cut, every-fix: \(outcome.missing.count) of \(outcome.published) points lost")
    }
}
