import ArgumentParser
import FoundationEssentials
import LiveActivity
import MyelineWire
import MyelineConfiguration

/// `myeline-agent`: runs on each tracker and publishes its live activities over MQTT.
public struct AgentCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "myeline-agent",
        abstract: "Track this device's location as a live activity and publish it over MQTT.",
        discussion: """
            Reads locations from gpsd or a file, runs the activity lifecycle (start, update, stale, end, \
            dismiss) and publishes each activity's content state as JSON to its own MQTT topic. \
            See docs/topics.md for the topics and payloads.
            """,
        version: Myeline.version,
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, StartCommand.self, StopCommand.self, PauseCommand.self,
            ResumeCommand.self, ReportCommand.self, UpdateCommand.self, SimulateCommand.self,
            RemoveIntegrationsCommand.self,
        ]
    )

    public init() {}

    /// The program: parses the command line and runs the command.
    ///
    /// A malformed command line (an unknown flag, a flag's value out of range) is reported with the
    /// usage, exit status 64. A mistake in the configuration (``ConfigurationError``: a key's value,
    /// a file that cannot be read, a source that cannot be opened) is one line that names the cause
    /// and the fix, without the usage, exit status 64 (EX_USAGE). ``CommandFailure`` carries its own
    /// status. docs/agent.md lists every exit status.
    public static func start(arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            exit()
        } catch {
            guard let failure = failure(for: error) else { exit(withError: error) }
            StandardStream.error.write("myeline-agent: \(failure.message)\n")
            exit(withError: ExitCode(failure.kind.exitStatus))
        }
    }

    /// The failure `error` stands for when it is a mistake the user can fix (reported in one line,
    /// without the usage); nil for the errors ArgumentParser reports itself (a malformed command
    /// line, with the usage; `ExitCode`).
    public static func failure(for error: any Error) -> CommandFailure? {
        switch error {
        case let error as ConfigurationError: CommandFailure(.configuration, error.description)
        case let failure as CommandFailure: failure
        default: nil
        }
    }
}

/// A failure the user can act on, reported as one line on standard error (no usage banner) with
/// the exit status of its kind.
public struct CommandFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as sysexits(3) classifies it.
    public enum Kind: Hashable, Sendable {
        /// A mistake in the configuration or a file it names: exit status 64 (EX_USAGE).
        case configuration
        /// A service the command needs (the broker) did not answer: exit status 69 (EX_UNAVAILABLE).
        case unavailable

        /// The exit status.
        public var exitStatus: Int32 {
            switch self {
            case .configuration: 64
            case .unavailable: 69
            }
        }
    }

    /// The kind, which sets the exit status.
    public var kind: Kind
    /// The cause and the fix, in one line.
    public var message: String

    /// Creates a failure.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
