import AgentCore
import MyelineConfiguration
import ArgumentParser
import FoundationEssentials
import LiveActivity
import MyelineWire
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
    func command(_ intent: Command.Intent, new: Bool, changes: IntentChanges = IntentChanges()) throws -> Command {
        do {
            return try Command(
                id: UUID().uuidString.lowercased(), intent: intent, activity: activity, new: new,
                attributes: changes.attributes, destination: changes.destination, status: changes.status,
                relevanceScore: changes.relevanceScore, alert: changes.alert, timestamp: Date())
        } catch {
            throw ValidationError("--activity: \(error)")
        }
    }

    /// Sends the command for `intent` and prints the answer.
    ///
    /// - Throws: a `ValidationError` (exit status 64) for a configuration mistake, or `ExitCode` 1
    ///   (refused) or 3 (no answer, broker unreachable) after printing why.
    func run(_ intent: Command.Intent, new: Bool = false, changes: IntentChanges = IntentChanges()) async throws {
        let environment = ProcessInfo.processInfo.environment
        let (loaded, password) = try await ConfigurationOptions.connecting(connection, prefix: prefix)
            .loadWithPassword(environment: environment)
        let configuration = loaded.configuration
        let command = try command(intent, new: new, changes: changes)
        // One line is the whole answer: the client's routine connection logs would drown it, so only
        // a configured debug or trace level shows more than warnings.
        let level = configuration.logLevel <= .debug ? configuration.logLevel : .warning
        LogOutput.start(level: level)
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

/// What a `start` or `update` carries besides its intent (push-to-start, push update).
struct IntentChanges: Equatable {
    /// `start`: the attributes over the agent's configured ones.
    var attributes: Command.Attributes?
    /// `update`: the new destination.
    var destination: LocationActivityAttributes.Destination?
    /// `start`, `update`: the status text.
    var status: String?
    /// `start`, `update`: the relevance score.
    var relevanceScore: Double?
    /// `update`: the alert.
    var alert: AlertConfiguration?

    /// A destination written `NAME:LATITUDE,LONGITUDE` (the name may hold colons: the last one
    /// separates it), checked as `device.destination.*` is.
    ///
    /// - Throws: a `ValidationError` naming `flag`, the value and the form.
    static func destination(_ text: String, flag: String) throws -> LocationActivityAttributes.Destination {
        let form = "use NAME:LATITUDE,LONGITUDE in degrees, such as \"Depot:52.52,13.40\""
        guard let colon = text.lastIndex(of: ":") else {
            throw ValidationError("\(flag): \(String(reflecting: text)) has no ':': \(form)")
        }
        let name = String(text[..<colon])
        let coordinates = text[text.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        guard !name.allSatisfy(\.isWhitespace) else {
            throw ValidationError("\(flag): \(String(reflecting: text)) has an empty name: \(form)")
        }
        guard coordinates.count == 2,
            let latitude = Double(coordinates[0].trimmingWhitespace()),
            let longitude = Double(coordinates[1].trimmingWhitespace())
        else {
            throw ValidationError("\(flag): \(String(reflecting: text)) has no latitude,longitude: \(form)")
        }
        guard (-90...90).contains(latitude) else {
            throw ValidationError("\(flag): latitude \(latitude) is outside -90...90 degrees")
        }
        guard (-180...180).contains(longitude) else {
            throw ValidationError("\(flag): longitude \(longitude) is outside -180...180 degrees")
        }
        return LocationActivityAttributes.Destination(name: name, latitude: latitude, longitude: longitude)
    }

    /// A text flag's value, refused when empty, as the configuration refuses an empty key.
    ///
    /// - Throws: a `ValidationError` naming `flag`.
    static func text(_ value: String?, flag: String) throws -> String? {
        guard let value else { return nil }
        guard !value.allSatisfy(\.isWhitespace) else {
            throw ValidationError("\(flag) is empty: give a value or leave the flag out")
        }
        return value
    }

    /// A relevance score flag's value, in the range of `device.priority`.
    ///
    /// - Throws: a `ValidationError` naming `flag`.
    static func relevance(_ value: Double?, flag: String) throws -> Double? {
        guard let value else { return nil }
        guard IntentPlan.relevanceRange.contains(value) else {
            throw ValidationError("\(flag): \(value) is outside -1000000...1000000")
        }
        return value
    }
}

extension Substring {
    /// Without the whitespace at either end (FoundationEssentials has no `trimmingCharacters(in:)`).
    fileprivate func trimmingWhitespace() -> Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return self[first...last]
    }
}
