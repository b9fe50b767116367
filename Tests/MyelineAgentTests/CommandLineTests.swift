import ArgumentParser
import LiveActivity
import MyelineWire
import Testing

@testable import Aggregator
@testable import MyelineAgentKit

/// The executables' help and version, pinned at an 80-column terminal.
struct CommandLineTests {
    /// The options `check-config` and `run` share (`ConfigurationOptions`), as help prints them.
    static let configurationOptionsHelp = """
        OPTIONS:
          --config <file>         The YAML configuration file (default:
                                  /etc/myeline/agent.yaml, if it exists).
          --device <id>           The tracker's device id (device.id).
          --broker <url>          The broker URL (mqtt.broker), such as
                                  mqtts://broker:8883.
          --source <source>       Where locations come from (source.address):
                                  gpsd://host[:port][/device] or a file.
          --speed <n|max>         File replay speed (source.speed): a factor such as 2,
                                  or max.
          --loop/--no-loop        Replay a file again and again (source.loop).
          --prefix <prefix>       The topic prefix (topic-prefix).
          --state-dir <dir>       Where the activity state and outbox are kept
                                  (state-directory).
          --end-on-exit/--no-end-on-exit
                                  End the activity when the agent shuts down
                                  (activity.end-on-exit).
          --log-level <level>     The lowest level logged (log-level): trace ...
                                  critical.
          --version               Show the version.
          -h, --help              Show help information.
        """

    /// The same options in the usage line.
    static let configurationOptionsUsage =
        "[--config <file>] [--device <id>] [--broker <url>] [--source <source>] [--speed <n|max>] [--loop] [--no-loop] [--prefix <prefix>] [--state-dir <dir>] [--end-on-exit] [--no-end-on-exit] [--log-level <level>]"

    @Test func agentHelp() {
        #expect(
            AgentCommand.helpMessage(columns: 80) == """
                OVERVIEW: Track this device's location as a live activity and publish it over
                MQTT.

                Reads locations from gpsd or a file, runs the activity lifecycle (start,
                update, stale, end, dismiss) and publishes each activity's content state as
                JSON to its own MQTT topic. See docs/topics.md for the topics and payloads.

                USAGE: myeline-agent <subcommand>

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  run                     Track this device and publish its live activity over
                                          MQTT.
                  check-config            Validate the configuration and print the effective
                                          values.
                  start                   Ask a device's agent to start tracking and an
                                          activity.
                  stop                    Ask a device's agent to stop tracking and end the
                                          activity.
                  pause                   Ask a device's agent to pause the trip.
                  resume                  Ask a device's agent to resume a paused trip.
                  report                  Ask a device's agent to publish its status and
                                          activity again, and print them.
                  update                  Change a device's running activity: destination,
                                          status, relevance, alert.
                  simulate                Publish the envelopes and track points of a simulated
                                          fleet driving real tracks (a load generator).
                  remove-integrations     Remove this device's Home Assistant entities and
                                          retained OwnTracks location.

                  See 'myeline-agent help <subcommand>' for detailed help.
                """)
    }

    @Test func checkConfigHelp() {
        #expect(
            AgentCommand.helpMessage(for: CheckConfigCommand.self, columns: 80) == """
                OVERVIEW: Validate the configuration and print the effective values.

                Reads flags, MYELINE_* environment variables and the YAML file, in that order
                of precedence, and prints every key with its value and where it came from.
                Secrets are masked. Exits with status 64 naming the key when a value is
                invalid. Connects to nothing. See docs/configuration.md for every key.

                USAGE: myeline-agent check-config \(Self.configurationOptionsUsage)

                \(Self.configurationOptionsHelp)

                """)
    }

    @Test func runHelp() {
        #expect(
            AgentCommand.helpMessage(for: RunCommand.self, columns: 80) == """
                OVERVIEW: Track this device and publish its live activity over MQTT.

                Reads the configuration as check-config does and checks the state directory and
                a file source (exit status 64 on a mistake, before connecting), connects to the
                broker, starts a location activity and publishes its updates and track points
                until the source ends or SIGTERM or SIGINT arrives. See docs/agent.md.

                USAGE: myeline-agent run \(Self.configurationOptionsUsage)

                \(Self.configurationOptionsHelp)

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

    @Test(arguments: [
        (["--devices", "10", "--connections", "0"], "--connections: 0 is not in 1...10"),
        (["--devices", "10", "--connections", "11"], "--connections: 11 is not in 1...10"),
        (["--devices", "5000", "--connections", "2001"], "--connections: 2001 is not in 1...2000"),
    ])
    func simulateConnectionsAreAtMostOnePerDevice(arguments: [String], message: String) {
        let error = #expect(throws: (any Error).self) {
            try AgentCommand.parseAsRoot(["simulate", "--track", "drive.gpx"] + arguments)
        }
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
        #expect(AgentCommand.message(for: error!).hasPrefix(message), "\(AgentCommand.message(for: error!))")
    }
}
