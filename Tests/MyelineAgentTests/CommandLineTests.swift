import ArgumentParser
import LiveActivity
import Testing

@testable import MyelineAgent
@testable import MyelineAggregator

/// The executables' help and version, pinned at an 80-column terminal.
struct CommandLineTests {
    @Test func agentHelp() {
        #expect(
            AgentCommand.helpMessage(columns: 80) == """
                OVERVIEW: Track this device's location as a live activity and publish it over
                MQTT.

                Reads locations from gpsd or a file, runs the activity lifecycle (start,
                update, stale, end, dismiss) and publishes each activity's content state as
                JSON to its own MQTT topic. See docs/topics.md for the topics and payloads.

                USAGE: myeline-agent

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test func aggregatorHelp() {
        #expect(
            AggregatorCommand.helpMessage(columns: 80) == """
                OVERVIEW: Show a live board of every Myeline tracker's activities.

                Subscribes to the status and activity topics of every device under a topic
                prefix and shows them as a live board in the terminal. See docs/topics.md for
                the topics and payloads.

                USAGE: myeline-aggregator

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test(arguments: ["myeline-agent", "myeline-aggregator"])
    func versionIsTheRelease(command: String) throws {
        let type: any ParsableCommand.Type = command == "myeline-agent" ? AgentCommand.self : AggregatorCommand.self
        #expect(type.configuration.version == Myeline.version)
        #expect(Myeline.version.split(separator: ".").count == 3)
        let error = #expect(throws: (any Error).self) { try type.parseAsRoot(["--version"]) }
        #expect(type.exitCode(for: error!) == .success)
        #expect(type.message(for: error!) == Myeline.version)
    }

    @Test func unknownOptionsAreUsageErrors() {
        let error = #expect(throws: (any Error).self) { try AgentCommand.parseAsRoot(["--frobnicate"]) }
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
        #expect(AgentCommand.message(for: error!) == "Unknown option '--frobnicate'")
    }
}
