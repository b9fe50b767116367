import ArgumentParser
import LiveActivity

/// An intent subcommand: sends its intent to a device's agent and prints the answer.
protocol IntentCommand: AsyncParsableCommand {
    /// The intent sent; also the subcommand's name.
    static var intent: Command.Intent { get }
    /// The one-line summary of the subcommand's help.
    static var abstract: String { get }
    /// The options every intent subcommand takes.
    var options: IntentOptions { get }
}

extension IntentCommand {
    /// The subcommand's name and help, the discussion shared by every intent subcommand.
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: intent.rawValue,
            abstract: abstract,
            discussion: """
                Sends the \(intent.rawValue) command to PREFIX/DEVICE/cmd and waits for the agent's result on \
                PREFIX/DEVICE/cmd/result. The broker, credentials, device id and prefix come from the \
                configuration, as for run. Exit status: 0 done, 1 refused by the agent (its reason on standard \
                error), 3 no answer within the timeout or the broker unreachable, 64 a configuration mistake. \
                See docs/intents.md.
                """)
    }

    func run() async throws {
        try await options.run(Self.intent)
    }
}

/// `myeline-agent start`: asks the agent to start tracking and a location activity.
struct StartCommand: IntentCommand {
    static let intent = Command.Intent.start
    static let abstract = "Ask a device's agent to start tracking and an activity."

    @OptionGroup var options: IntentOptions

    @Flag(name: .customLong("new"), help: "Start another activity even when one runs, up to the agent's limit.")
    var startsAnother = false

    func run() async throws {
        try await options.run(Self.intent, new: startsAnother)
    }
}

/// `myeline-agent stop`: asks the agent to stop tracking and end the activity.
struct StopCommand: IntentCommand {
    static let (intent, abstract) = (Command.Intent.stop, "Ask a device's agent to stop tracking and end the activity.")
    @OptionGroup var options: IntentOptions
}

/// `myeline-agent pause`: asks the agent to pause the trip.
struct PauseCommand: IntentCommand {
    static let (intent, abstract) = (Command.Intent.pause, "Ask a device's agent to pause the trip.")
    @OptionGroup var options: IntentOptions
}

/// `myeline-agent resume`: asks the agent to resume a paused trip.
struct ResumeCommand: IntentCommand {
    static let (intent, abstract) = (Command.Intent.resume, "Ask a device's agent to resume a paused trip.")
    @OptionGroup var options: IntentOptions
}

/// `myeline-agent report`: asks the agent to publish its status and activity again, and prints them.
struct ReportCommand: IntentCommand {
    static let (intent, abstract) = (
        Command.Intent.report, "Ask a device's agent to publish its status and activity again, and print them."
    )
    @OptionGroup var options: IntentOptions
}
