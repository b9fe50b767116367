import MyelineConfiguration
import ArgumentParser
import FoundationEssentials
import LiveActivity
import Logging

/// The options of every intent subcommand (`start`, `stop`, `pause`, `resume`, `report`).
///
/// The broker, credentials, TLS files, device id and prefix come from the same configuration as
/// `run` (flags, `MYELINE_*` variables, the YAML file, defaults), so that the same file serves both.
struct IntentOptions: ParsableArguments {
    /// The default of `--timeout`, seconds.
    static let defaultTimeout: Double = 10

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .customLong("prefix"), help: ArgumentHelp("The topic prefix (topic-prefix).", valueName: "prefix"))
    var prefix: String?

    @Option(help: ArgumentHelp("The activity concerned (default: the device's current one).", valueName: "id"))
    var activity: String?

    @Option(
        help: ArgumentHelp(
            "How long to wait for the answer, in seconds (default: \(ConfigurationFormat.number(Self.defaultTimeout))).",
            valueName: "seconds"))
    var timeout: Double?

    @Flag(help: "Print the JSON payloads received instead of readable lines.")
    var json = false

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout: \(timeout) is not a number of seconds in 0...86400, such as 10 or 0.5")
        }
    }

    /// The time to wait, seconds.
    var effectiveTimeout: Double { timeout ?? Self.defaultTimeout }

    /// The command for `intent`, with a new request id (a lowercased UUID) and the current time.
    ///
    /// - Throws: a `ValidationError` (exit status 64) when `--activity` is not a valid activity id.
    func command(_ intent: Command.Intent, new: Bool) throws -> Command {
        do {
            return try Command(
                id: UUID().uuidString.lowercased(), intent: intent, activity: activity, new: new, timestamp: Date())
        } catch {
            throw ValidationError("--activity: \(error)")
        }
    }

    /// Sends the command for `intent` and prints the answer.
    ///
    /// - Throws: a `ValidationError` (exit status 64) for a configuration mistake, or `ExitCode` 1
    ///   (refused) or 3 (no answer, broker unreachable) after printing why.
    func run(_ intent: Command.Intent, new: Bool = false) async throws {
        let environment = ProcessInfo.processInfo.environment
        let (loaded, password) = try await ConfigurationOptions.connecting(connection, prefix: prefix)
            .loadWithPassword(environment: environment)
        let configuration = loaded.configuration
        let command = try command(intent, new: new)
        // One line is the whole answer: the client's routine connection logs would drown it, so only
        // a configured debug or trace level shows more than warnings.
        let level = configuration.logLevel <= .debug ? configuration.logLevel : .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let mqtt = configuration.mqtt.clientConfiguration(password: password).withOneShotClientID()
        let outcome = try await IntentClient.send(
            command, to: configuration.device.id, topics: TopicTree(prefix: configuration.topicPrefix), mqtt: mqtt,
            timeout: .milliseconds(Int64((effectiveTimeout * 1000).rounded())),
            logger: Logger(label: "myeline.intent"))
        let output = outcome.output(
            device: configuration.device.id, broker: configuration.mqtt.broker, timeout: effectiveTimeout, json: json)
        StandardStream.output.write(output.standardOutput)
        StandardStream.error.write(output.standardError)
        if output.status != IntentOutput.success { throw ExitCode(output.status) }
    }
}
