import ArgumentParser
import LiveActivity
import MyelineWire
import Testing

@testable import MyelineAgentKit

/// The intent subcommands' help, pinned at an 80-column terminal.
struct IntentCommandLineTests {
    /// The usage of the options every intent subcommand takes.
    static let usage =
        "[--config <file>] [--device <id>] [--broker <url>] [--prefix <prefix>] [--activity <id>] [--timeout <seconds>] [--json]"

    /// The help of the options every intent subcommand takes.
    static let options = """
          --config <file>         The YAML configuration file (default:
                                  /etc/myeline/agent.yaml, if it exists).
          --device <id>           The tracker's device id (device.id).
          --broker <url>          The broker URL (mqtt.broker), such as
                                  mqtts://broker:8883.
          --prefix <prefix>       The topic prefix (topic-prefix).
          --activity <id>         The activity concerned (default: the device's current
                                  one).
          --timeout <seconds>     How long to wait for the answer, in seconds (default:
                                  10).
          --json                  Print the JSON payloads received instead of readable
                                  lines.
        """

    /// The end of every intent subcommand's discussion.
    static let exitStatuses = """
        from the configuration, as for run. Exit status: 0 done, 1 refused by the agent
        (its reason on standard error), 3 no answer within the timeout or the broker
        unreachable, 64 a configuration mistake. See docs/intents.md.
        """

    @Test func startHelp() {
        #expect(
            AgentCommand.helpMessage(for: StartCommand.self, columns: 80) == """
                OVERVIEW: Ask a device's agent to start tracking and an activity.

                Sends the start command to PREFIX/DEVICE/cmd and waits for the agent's result
                on PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
                \(Self.exitStatuses)

                USAGE: myeline-agent start <options>

                OPTIONS:
                \(Self.options)
                  --new                   Start another activity even when one runs, up to the
                                          agent's limit.
                  --name <text>           The activity's display name, over device.name.
                  --vehicle <text>        The vehicle, such as a registration plate, over
                                          device.vehicle.
                  --driver <text>         The driver's name, over device.driver.
                  --destination <name:lat,lon>
                                          Where the trip goes, as NAME:LATITUDE,LONGITUDE
                                          (degrees); progress and ETA count toward it.
                  --status <text>         A status text to show, such as "Out for delivery".
                  --relevance <number>    The activity's relevance score, -1000000...1000000.
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test func updateHelp() {
        #expect(
            AgentCommand.helpMessage(for: UpdateCommand.self, columns: 80) == """
                OVERVIEW: Change a device's running activity: destination, status, relevance,
                alert.

                Sends the update command to PREFIX/DEVICE/cmd and waits for the agent's result
                on PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
                \(Self.exitStatuses)

                USAGE: myeline-agent update <options>

                OPTIONS:
                \(Self.options)
                  --destination <name:lat,lon>
                                          Where the trip goes, as NAME:LATITUDE,LONGITUDE
                                          (degrees); progress and ETA count toward it.
                  --status <text>         A status text to show, such as "Out for delivery".
                  --relevance <number>    The activity's relevance score, -1000000...1000000.
                  --alert-title <text>    An alert's title (with --alert-body).
                  --alert-body <text>     The alert's text (with --alert-title).
                  --alert-sound <name>    The alert's sound name (default: the receiver's).
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    /// Mistakes in the changes are usage errors (64) naming the flag, before anything connects.
    @Test(arguments: [
        (
            ["--destination", "Depot"],
            "--destination: \"Depot\" has no ':': use NAME:LATITUDE,LONGITUDE in degrees, such as \"Depot:52.52,13.40\""
        ),
        (
            ["--destination", "Depot:52.52"],
            "--destination: \"Depot:52.52\" has no latitude,longitude: use NAME:LATITUDE,LONGITUDE in degrees, such as \"Depot:52.52,13.40\""
        ),
        (
            ["--destination", ":52.52,13.40"],
            "--destination: \":52.52,13.40\" has an empty name: use NAME:LATITUDE,LONGITUDE in degrees, such as \"Depot:52.52,13.40\""
        ),
        (["--destination", "Depot:91,13.40"], "--destination: latitude 91.0 is outside -90...90 degrees"),
        (["--destination", "Depot:52.52,181"], "--destination: longitude 181.0 is outside -180...180 degrees"),
        (["--status", " "], "--status is empty: give a value or leave the flag out"),
        (["--relevance", "2000000"], "--relevance: 2000000.0 is outside -1000000...1000000"),
        (["--alert-title", "New stop"], "--alert-title needs --alert-body too"),
        ([], "nothing to update: give --destination, --status, --relevance or --alert-title with --alert-body"),
    ])
    func updateMistakes(_ arguments: [String], _ message: String) {
        let error = #expect(throws: (any Error).self) { try AgentCommand.parseAsRoot(["update"] + arguments) }
        #expect(AgentCommand.message(for: error!) == message)
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
    }

    @Test func updateCarriesItsChanges() throws {
        let parsed = try AgentCommand.parseAsRoot([
            "update", "--destination", "Depot: North:52.52,13.40", "--status", "Out for delivery", "--relevance", "80",
            "--alert-title", "New stop", "--alert-body", "Depot first",
        ])
        let update = try #require(parsed as? UpdateCommand)
        #expect(
            try update.changes()
                == IntentChanges(
                    destination: .init(name: "Depot: North", latitude: 52.52, longitude: 13.40),
                    status: "Out for delivery", relevanceScore: 80,
                    alert: AlertConfiguration(title: "New stop", body: "Depot first")))
        let start = try #require(
            try AgentCommand.parseAsRoot(["start", "--driver", "Ana", "--destination", "Depot:52.52,13.40"])
                as? StartCommand)
        #expect(
            try start.changes()
                == IntentChanges(
                    attributes: Command.Attributes(
                        driver: "Ana", destination: .init(name: "Depot", latitude: 52.52, longitude: 13.40))))
    }

    @Test(arguments: [
        (
            "stop", "Ask a device's agent to stop tracking and end the activity.",
            """
            Sends the stop command to PREFIX/DEVICE/cmd and waits for the agent's result on
            PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
            """
        ),
        (
            "pause", "Ask a device's agent to pause the trip.",
            """
            Sends the pause command to PREFIX/DEVICE/cmd and waits for the agent's result
            on PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
            """
        ),
        (
            "resume", "Ask a device's agent to resume a paused trip.",
            """
            Sends the resume command to PREFIX/DEVICE/cmd and waits for the agent's result
            on PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
            """
        ),
        (
            "report", "Ask a device's agent to publish its status and activity again, and\nprint them.",
            """
            Sends the report command to PREFIX/DEVICE/cmd and waits for the agent's result
            on PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come
            """
        ),
    ])
    func intentHelp(name: String, overview: String, sends: String) throws {
        let types: [String: any ParsableCommand.Type] = [
            "stop": StopCommand.self, "pause": PauseCommand.self, "resume": ResumeCommand.self,
            "report": ReportCommand.self,
        ]
        let type = try #require(types[name])
        #expect(
            AgentCommand.helpMessage(for: type, columns: 80) == """
                OVERVIEW: \(overview)

                \(sends)
                \(Self.exitStatuses)

                USAGE: myeline-agent \(name) \(Self.usage)

                OPTIONS:
                \(Self.options)
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test func intentSubcommandsSendTheirIntent() throws {
        let intents = try ["start", "stop", "pause", "resume", "report"].map {
            try #require(try AgentCommand.parseAsRoot([$0]) as? any IntentCommand).intentSent
        }
        #expect(intents == [.start, .stop, .pause, .resume, .report])
    }

    @Test func newIsForStartOnly() throws {
        let start = try #require(try AgentCommand.parseAsRoot(["start", "--new"]) as? StartCommand)
        #expect(start.startsAnother)
        let error = #expect(throws: (any Error).self) { try AgentCommand.parseAsRoot(["stop", "--new"]) }
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
    }

    @Test(arguments: ["0", "-0.5", "nan", "86401"])
    func timeoutMustBeAPositiveNumberOfSeconds(value: String) {
        let error = #expect(throws: (any Error).self) { try AgentCommand.parseAsRoot(["stop", "--timeout=\(value)"]) }
        #expect(AgentCommand.exitCode(for: error!) == .validationFailure)
        #expect(AgentCommand.message(for: error!).contains("--timeout"))
    }
}

extension IntentCommand {
    /// The intent this subcommand sends, for tests that hold an existential.
    fileprivate var intentSent: Command.Intent { Self.intent }
}
