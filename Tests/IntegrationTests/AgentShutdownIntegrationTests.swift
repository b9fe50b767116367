import Foundation
import LiveActivity
import Logging
import ServiceLifecycle
import Testing
import TestSupport

@testable import MyelineAgentKit

/// How the agent's services end: structured, every task awaited, within the drain bound.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentShutdownIntegrationTests {
    /// The agent's libraries (and the publisher it shares with programs on the library) start no
    /// unstructured task: everything runs as a service of the
    /// agent's `ServiceGroup` or as a child of a task group, so when the group's `run()` returns
    /// nothing it started is left running (structured concurrency's guarantee).
    @Test func theAgentsLibrariesStartNoUnstructuredTask() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        // `Task {`, `Task(priority:…) {`, `Task.detached`, a stored `Task<…>`; not a task group's `addTask {`.
        let unstructured = try Regex(#"(^|[^A-Za-z_.])Task(\s*\{|\(|\.detached|<)"#)
        var found: [String] = []
        for module in ["AgentCore", "LiveActivityMQTT", "MyelineAgentKit", "MyelineAgent"] {
            let directory = sources.appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains(unstructured) {
                    found.append("\(module)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "unstructured tasks:\n\(found.joined(separator: "\n"))")
    }

    /// The agent in this process, in a `ServiceGroup` as `run` builds it: a graceful shutdown
    /// makes the group's `run()` return, which it does only once every service (and every child
    /// task of theirs) has returned; the agent said `offline` on its way out.
    @Test func aGracefulShutdownEndsEveryServiceAndSaysOffline() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            var configuration = AgentConfiguration(deviceID: try DeviceID("van-7"))
            configuration.mqtt.broker = broker.address
            configuration.source.address = .file(path: AgentHarness.capture)
            configuration.source.loops = true
            configuration.stateDirectory = state
            let group = RunCommand.buildServiceGroup(configuration: configuration, password: nil)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await observer.waitForLine(containing: "/track|")
                await group.triggerGracefulShutdown()
                // Returns only when every service has ended.
                try await tasks.waitForAll()
            }
            try await observer.waitForLine(containing: "\"reason\":\"shutdown\"")
            #expect(try AgentRunIntegrationTests.savedActivities(in: state).count == 1, "kept for the next start")
        }
    }

    /// SIGTERM while the broker is gone: the agent does not wait for a broker that is not there;
    /// it ends within its drain bound (10 s), its points kept in the outbox for the next start.
    @Test func sigtermDuringABrokerOutageEndsWithinTheDrainBound() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let agent = try AgentHarness.agent(broker, state: state, ["--speed", "5", "--loop"])
            defer { agent.signal(SIGKILL) }
            try await observer.waitForLine(containing: "/track|")
            await broker.stop()
            try await agent.waitForLine(containing: "event=mqtt.connection.lost")
            let signalled = ContinuousClock.now
            agent.signal(SIGTERM)
            let status = try await withDeadline(.seconds(30), what: "the agent to exit", process: agent) {
                try await agent.waitForExit()
            }
            let took = ContinuousClock.now - signalled
            #expect(status == 0, "\(agent.tail)")
            #expect(took < AgentService.drainTimeout + .seconds(2), "\(took)")
            #expect(agent.output.contains("event=agent.shutdown.offline"))
        }
    }

    /// A replay that ends before the agent's first connection (a short file at full speed, a broker
    /// a moment late) is still published: the start is not an outage, and its connection is waited
    /// for within the drain bound. Before, the agent exited at once, "Shutting down offline",
    /// having published nothing (seen under load in `AgentUserErrorIntegrationTests`).
    @Test func aReplayEndingBeforeTheFirstConnectionIsStillPublished() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { state in
                await broker.stop()
                // Kept retained after its end, for the subscriber below. The reconnection settings
                // are the defaults: the next attempt is drawn up to 10 s ahead, and one drawn at
                // 10 s fell past the 10 s drain bound (CI, 1 run in many); the agent now tries at
                // once when it starts to wind down, and says so.
                let agent = try AgentHarness.agent(
                    broker, state: state, ["--speed", "max", "--end-on-exit"],
                    environment: ["MYELINE_ACTIVITY_DISMISSAL": "after:60"])
                defer { agent.signal(SIGKILL) }
                try await agent.waitForLine(containing: "event=agent.source.ended")
                try await broker.start()
                let status = try await withDeadline(.seconds(30), what: "the agent to exit", process: agent) {
                    try await agent.waitForExit()
                }
                #expect(status == 0, "\(agent.tail)")
                #expect(!agent.output.contains("event=agent.shutdown.offline"))
                #expect(agent.output.contains("event=agent.drain.connect"), "\(agent.output)")
                // Its end is retained (until its dismissal date): a new subscriber gets it.
                let observer = try await AgentHarness.observer(broker)
                defer { observer.signal(SIGKILL) }
                _ = try await observer.waitForLine(containing: "\"event\":\"end\"")
            }
        }
    }
}
