import MyelineConfiguration

/// A checked configuration and where each of its values came from.
public struct LoadedConfiguration: Sendable {
    /// The configuration.
    var configuration: AgentConfiguration
    /// Where each value came from.
    var sources: ValueSources
    /// The YAML file read, if any.
    var filePath: String?
}

/// Reads the agent's configuration from flags, `MYELINE_*` environment variables and a YAML file.
public enum ConfigurationLoader {
    /// The file read when `--config` is not given, if it exists.
    public static let defaultFilePath = "/etc/myeline/agent.yaml"

    /// Reads and checks the configuration.
    ///
    /// - Parameters:
    ///   - flags: values given on the command line, by dotted key.
    ///   - file: the `--config` file; `nil` reads `defaultFile` if it exists.
    ///   - environment: the process environment.
    ///   - defaultFile: the file read without `--config`, if it exists.
    /// - Throws: ``ConfigurationError`` naming the key, file or variable at fault.
    public static func load(
        flags: [String: String], file: String?, environment: [String: String],
        defaultFile: String = defaultFilePath
    ) async throws(ConfigurationError) -> LoadedConfiguration {
        let layers = try await LayeredConfiguration(
            flags: flags, file: file, environment: environment, defaultFile: defaultFile,
            schema: ConfigurationKey.agentSchema)
        let configuration = try AgentConfiguration(
            reader: layers.reader, sources: layers.sources, environment: environment)
        return LoadedConfiguration(configuration: configuration, sources: layers.sources, filePath: layers.filePath)
    }
}
