import ArgumentParser
import LiveActivity
import MyelineWire

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

/// `myeline-agent start`: asks the agent to start tracking and a location activity, with
/// attributes of its own if given (push-to-start).
struct StartCommand: IntentCommand {
    static let intent = Command.Intent.start
    static let abstract = "Ask a device's agent to start tracking and an activity."

    @OptionGroup var options: IntentOptions

    @Flag(name: .customLong("new"), help: "Start another activity even when one runs, up to the agent's limit.")
    var startsAnother = false

    @Option(help: ArgumentHelp("The activity's display name, over device.name.", valueName: "text"))
    var name: String?

    @Option(help: ArgumentHelp("The vehicle, such as a registration plate, over device.vehicle.", valueName: "text"))
    var vehicle: String?

    @Option(help: ArgumentHelp("The driver's name, over device.driver.", valueName: "text"))
    var driver: String?

    @OptionGroup var content: ContentOptions

    func validate() throws { _ = try changes() }

    /// The attributes (the destination among them), status and relevance given, checked.
    func changes() throws -> IntentChanges {
        var changes = try content.changes()
        let attributes = Command.Attributes(
            name: try IntentChanges.text(name, flag: "--name"),
            vehicle: try IntentChanges.text(vehicle, flag: "--vehicle"),
            driver: try IntentChanges.text(driver, flag: "--driver"), destination: changes.destination)
        changes.attributes = attributes.isEmpty ? nil : attributes
        changes.destination = nil
        return changes
    }

    func run() async throws {
        try await options.run(Self.intent, new: startsAnother, changes: try changes())
    }
}

/// `myeline-agent update`: changes the running activity's content from afar (a push update).
struct UpdateCommand: IntentCommand {
    static let (intent, abstract) = (
        Command.Intent.update, "Change a device's running activity: destination, status, relevance, alert."
    )

    @OptionGroup var options: IntentOptions

    @OptionGroup var content: ContentOptions

    @Option(
        name: .customLong("alert-title"), help: ArgumentHelp("An alert's title (with --alert-body).", valueName: "text")
    )
    var alertTitle: String?

    @Option(
        name: .customLong("alert-body"), help: ArgumentHelp("The alert's text (with --alert-title).", valueName: "text")
    )
    var alertBody: String?

    @Option(
        name: .customLong("alert-sound"),
        help: ArgumentHelp("The alert's sound name (default: the receiver's).", valueName: "name"))
    var alertSound: String?

    func validate() throws { _ = try changes() }

    /// The changes given, checked: at least one.
    func changes() throws -> IntentChanges {
        var changes = try content.changes()
        switch (
            try IntentChanges.text(alertTitle, flag: "--alert-title"),
            try IntentChanges.text(alertBody, flag: "--alert-body")
        ) {
        case (let title?, let body?):
            changes.alert = AlertConfiguration(
                title: title, body: body, sound: try IntentChanges.text(alertSound, flag: "--alert-sound"))
        case (nil, nil):
            if alertSound != nil { throw ValidationError("--alert-sound needs --alert-title and --alert-body") }
        case (_?, nil):
            throw ValidationError("--alert-title needs --alert-body too")
        case (nil, _?):
            throw ValidationError("--alert-body needs --alert-title too")
        }
        guard changes != IntentChanges() else {
            throw ValidationError(
                "nothing to update: give --destination, --status, --relevance or --alert-title with --alert-body")
        }
        return changes
    }

    func run() async throws {
        try await options.run(Self.intent, changes: try changes())
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

/// The content options `start` and `update` share: destination, status, relevance.
struct ContentOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where the trip goes, as NAME:LATITUDE,LONGITUDE (degrees); progress and ETA count toward it.",
            valueName: "name:lat,lon"))
    var destination: String?

    @Option(help: ArgumentHelp("A status text to show, such as \"Out for delivery\".", valueName: "text"))
    var status: String?

    @Option(help: ArgumentHelp("The activity's relevance score, -1000000...1000000.", valueName: "number"))
    var relevance: Double?

    /// The destination, status and relevance given, checked.
    func changes() throws -> IntentChanges {
        IntentChanges(
            destination: try destination.map { text in try IntentChanges.destination(text, flag: "--destination") },
            status: try IntentChanges.text(status, flag: "--status"),
            relevanceScore: try IntentChanges.relevance(relevance, flag: "--relevance"))
    }
}
