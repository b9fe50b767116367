import MyelineConfiguration
import ArgumentParser
import Logging

/// The configuration flags every agent command that reads the configuration takes.
///
/// Each flag overrides its key from the environment and the file; docs/configuration.md lists every
/// key. There is deliberately no password flag: command lines show in `ps`.
struct ConfigurationOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions

    @Option(
        help: ArgumentHelp(
            "Where locations come from (source.address): gpsd://host[:port][/device] or a file.", valueName: "source"))
    var source: String?

    @Option(help: ArgumentHelp("File replay speed (source.speed): a factor such as 2, or max.", valueName: "n|max"))
    var speed: String?

    @Flag(inversion: .prefixedNo, help: "Replay a file again and again (source.loop).")
    var loop: Bool?

    @Option(name: .customLong("prefix"), help: ArgumentHelp("The topic prefix (topic-prefix).", valueName: "prefix"))
    var prefix: String?

    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp("Where the activity state and outbox are kept (state-directory).", valueName: "dir"))
    var stateDirectory: String?

    @Flag(inversion: .prefixedNo, help: "End the activity when the agent shuts down (activity.end-on-exit).")
    var endOnExit: Bool?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("The lowest level logged (log-level): trace ... critical.", valueName: "level"))
    var logLevel: String?

    /// The flags of a command that takes only the connection and the prefix (the intents, `simulate`);
    /// the others stay unset.
    static func connecting(_ connection: ConnectionOptions, prefix: String?) throws -> ConfigurationOptions {
        var options = try ConfigurationOptions.parse([])
        options.connection = connection
        options.prefix = prefix
        return options
    }

    /// The values given, by dotted key.
    var values: [String: String] {
        let given: [(ConfigurationKey, String?)] = [
            (.deviceID, connection.device), (.mqttBroker, connection.broker), (.sourceAddress, source),
            (.sourceSpeed, speed), (.sourceLoop, loop.map { String($0) }), (.topicPrefix, prefix),
            (.stateDirectory, stateDirectory), (.activityEndOnExit, endOnExit.map { String($0) }),
            (.logLevel, logLevel),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { key, value in value.map { (key.name, $0) } })
    }

    /// Reads and checks the configuration, with these flags first.
    ///
    /// - Throws: ``ConfigurationError`` (exit status 64, without the usage) naming the key at fault.
    func load(
        environment: [String: String], defaultFile: String = ConfigurationLoader.defaultFilePath
    ) async throws(ConfigurationError) -> LoadedConfiguration {
        try await ConfigurationLoader.load(
            flags: values, file: connection.configFile, environment: environment, defaultFile: defaultFile)
    }

    /// Reads and checks the configuration, then reads the broker password, if one is configured.
    ///
    /// - Returns: the configuration and the password (`nil` without one); the password is never logged.
    /// - Throws: ``ConfigurationError`` (exit status 64) naming the key or variable at fault.
    func loadWithPassword(
        environment: [String: String], defaultFile: String = ConfigurationLoader.defaultFilePath
    ) async throws(ConfigurationError) -> (loaded: LoadedConfiguration, password: String?) {
        let loaded = try await load(environment: environment, defaultFile: defaultFile)
        return (loaded, try loaded.configuration.mqtt.loadPassword(environment: environment))
    }
}
