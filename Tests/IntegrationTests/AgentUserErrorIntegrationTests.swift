import Foundation
import LiveActivity
import Testing
import TestSupport

/// What went wrong when the agent was tried as a new user would (the agent-core issue), each
/// with the built binary against a private broker: a mistake is a configuration error before
/// anything connects, and an ended activity does not outlive its dismissal date on the broker.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentUserErrorIntegrationTests {
    /// How `myeline-agent run` ended: its status, its standard error, and what it left retained.
    struct Outcome {
        var status: Int32
        var standardError: String
        var retained: [String: [UInt8]]
    }

    /// Runs the agent to its end with `arguments` after `run --device van-7 --broker BROKER`.
    static func run(_ broker: TestBroker, _ arguments: [String]) async throws -> Outcome {
        try await withTemporaryDirectory { directory in
            let errors = "\(directory)/stderr"
            let agent = try TestProcess(
                name: "myeline-agent", executable: try builtProductPath("myeline-agent"),
                arguments: ["run", "--device", "van-7", "--broker", "\(broker.address)"] + arguments,
                standardErrorFile: errors)
            defer { agent.signal(SIGKILL) }
            let status = try await withDeadline(.seconds(30), what: "the agent to exit", process: agent) {
                try await agent.waitForExit()
            }
            return Outcome(
                status: status, standardError: try String(contentsOfFile: errors, encoding: .utf8),
                retained: try await AgentHarness.retained(broker, filter: "myeline/#"))
        }
    }

    enum BadSource: String, CaseIterable, Sendable {
        case missing, empty, directory, notAPositionFile

        /// The `--source` value for this case, made in `directory`.
        func path(in directory: String) throws -> String {
            switch self {
            case .missing:
                return "\(directory)/nonexistent.gpx"
            case .empty:
                let path = "\(directory)/empty.gpx"
                try Data("<gpx version=\"1.1\" creator=\"test\"><trk><trkseg></trkseg></trk></gpx>".utf8)
                    .write(to: URL(fileURLWithPath: path))
                return path
            case .directory:
                return directory
            case .notAPositionFile:
                let path = "\(directory)/notes.txt"
                try Data("shopping list\nmilk\n".utf8).write(to: URL(fileURLWithPath: path))
                return path
            }
        }

        var message: String {
            switch self {
            case .missing: "cannot open"
            case .empty: "has no position"
            case .directory: "is a directory"
            case .notAPositionFile: "has no position"
            }
        }
    }

    /// Failures 1 and 10: a source that does not exist logged "Activity started", failed, kept the
    /// activity for the next start and exited 0, leaving a retained activity that never ran; a GPX
    /// with no points ran and exited 0 without a word.
    @Test(arguments: BadSource.allCases)
    func aSourceThatCannotBeReplayedIsAConfigurationErrorBeforeConnecting(_ source: BadSource) async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { directory in
                let outcome = try await Self.run(
                    broker, ["--source", try source.path(in: directory), "--state-dir", "\(directory)/state"])
                #expect(outcome.status == 64)
                #expect(outcome.standardError.hasPrefix("myeline-agent: source.address"), "\(outcome.standardError)")
                #expect(outcome.standardError.contains(source.message), "\(outcome.standardError)")
                #expect(!outcome.standardError.contains("Usage"))
                #expect(outcome.standardError.split(separator: "\n").count == 1, "\(outcome.standardError)")
                #expect(outcome.retained.isEmpty, "nothing published: \(outcome.retained.keys)")
            }
        }
    }

    /// Failure 8: an unwritable state directory exited 1 with `NSCocoaErrorDomain Code=513`, a
    /// password file that is a directory said `read error`, and configuration errors ended with
    /// the whole usage banner.
    @Test func aStateDirectoryThatCannotBeWrittenIsAConfigurationError() async throws {
        try await TestBroker.with { broker in
            // /proc cannot be written, not even by root.
            let outcome = try await Self.run(
                broker, ["--source", AgentHarness.capture, "--state-dir", "/proc/myeline-state"])
            #expect(outcome.status == 64)
            #expect(
                outcome.standardError.hasPrefix("myeline-agent: state-directory: cannot create /proc/myeline-state"))
            #expect(outcome.standardError.contains("install -d"), "the fix: \(outcome.standardError)")
            #expect(!outcome.standardError.contains("NSCocoaErrorDomain"))
            #expect(!outcome.standardError.contains("Usage"))
            #expect(outcome.retained.isEmpty)
        }
    }

    @Test func aPasswordFileThatIsADirectoryIsNamed() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { directory in
                let outcome = try await Self.run(
                    broker,
                    [
                        "--source", AgentHarness.capture, "--state-dir", "\(directory)/state", "--config",
                        try Self.configuration(
                            in: directory, "mqtt:\n  username: van-7\n  password-file: \(directory)\n"),
                    ])
                #expect(outcome.status == 64)
                #expect(
                    outcome.standardError
                        == "myeline-agent: mqtt.password-file: the password file \(directory) is a directory: point mqtt.password-file at a file holding the password\n"
                )
            }
        }
    }

    @Test func aBadValueNamesItsKeyWithoutTheUsage() async throws {
        try await TestBroker.with { broker in
            let outcome = try await Self.run(broker, ["--source", AgentHarness.capture, "--speed", "fast"])
            #expect(outcome.status == 64)
            #expect(outcome.standardError.hasPrefix("myeline-agent: source.speed (from --speed): invalid replay speed"))
            #expect(!outcome.standardError.contains("Usage"))
        }
    }

    @Test func aMalformedCommandLineStillShowsTheUsage() async throws {
        try await TestBroker.with { broker in
            let outcome = try await Self.run(broker, ["--no-such-flag"])
            #expect(outcome.status == 64)
            #expect(outcome.standardError.contains("Usage: myeline-agent run"))
        }
    }

    static func configuration(in directory: String, _ text: String) throws -> String {
        let path = "\(directory)/agent.yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Failure 4: `--end-on-exit` with a delayed dismissal on a replay exited at once and left the
    /// ended envelope retained until the device's agent ran again. On MQTT 5 the end carries the
    /// dismissal date as its message expiry: the broker drops it then, agent or not.
    @Test func anEndedActivityLeavesTheBrokerAtItsDismissalDateAfterTheAgentExited() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let agent = try AgentHarness.agent(
                broker, state: state, ["--speed", "max", "--end-on-exit"],
                environment: ["MYELINE_ACTIVITY_DISMISSAL": "after:5"])
            defer { agent.signal(SIGKILL) }
            #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
            let line = try await observer.waitForLine(containing: "\"event\":\"end\"")
            let ended = try #require(AgentHarness.Message(line[...])).envelope()
            let dismissal = try #require(ended.dismissalDate)
            let topic = "myeline/van-7/activities/\(ended.header.activity)"
            // The agent is gone. Before the dismissal date the broker still holds the end (read
            // now, when there is time enough left to be sure it is before); after it, nothing,
            // without anyone clearing it: polled until it is gone, within a bound.
            if dismissal.timeIntervalSinceNow > 1 {
                let retained = try await AgentHarness.retained(broker, filter: topic)
                #expect(retained.count == 1 || Date() >= dismissal, "the end is retained until its dismissal date")
            }
            var gone = false
            while !gone, Date() < dismissal + 20 {
                gone = try await AgentHarness.retained(broker, filter: topic).isEmpty
                if !gone { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(gone, "the ended activity is still retained 20 s after its dismissal date")
            // Message expiry is whole seconds, rounded up: never before the date.
            #expect(Date() >= dismissal - 0.5, "gone \(dismissal.timeIntervalSinceNow) s before its dismissal date")
            #expect(!observer.output.contains("/activities/\(ended.header.activity)|0|"), "nobody cleared it")
        }
    }
}
