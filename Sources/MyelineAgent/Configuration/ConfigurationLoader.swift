import Configuration
import Foundation
import SystemPackage
import Yams

/// A checked configuration and where each of its values came from.
struct LoadedConfiguration: Sendable {
    /// The configuration.
    var configuration: AgentConfiguration
    /// Where each value came from.
    var sources: ValueSources
    /// The YAML file read, if any.
    var filePath: String?
}

/// Reads the agent's configuration from flags, `MYELINE_*` environment variables and a YAML file.
enum ConfigurationLoader {
    /// The file read when `--config` is not given, if it exists.
    static let defaultFilePath = "/etc/myeline/agent.yaml"

    /// Reads and checks the configuration.
    ///
    /// - Parameters:
    ///   - flags: values given on the command line, by dotted key.
    ///   - file: the `--config` file; `nil` reads `defaultFile` if it exists.
    ///   - environment: the process environment.
    ///   - defaultFile: the file read without `--config`, if it exists.
    /// - Throws: ``ConfigurationError`` naming the key, file or variable at fault.
    static func load(
        flags: [String: String], file: String?, environment: [String: String],
        defaultFile: String = defaultFilePath
    ) async throws(ConfigurationError) -> LoadedConfiguration {
        try checkEnvironment(environment)
        var filePath = file
        if file == nil, FileManager.default.fileExists(atPath: defaultFile) { filePath = defaultFile }

        let flagValues = Dictionary(
            uniqueKeysWithValues: flags.map {
                (AbsoluteConfigKey(ConfigKey($0.key)), ConfigValue(.string($0.value), isSecret: false))
            }
        )
        let environmentValues = EnvironmentVariablesProvider(environmentVariables: environment)
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flagValues),
            KeyMappingProvider(upstream: environmentValues) { key in key.prepending(["myeline"]) },
        ]
        if let filePath {
            let text = try read(filePath)
            try checkKeys(yaml: text, path: filePath)
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(filePath)))
            } catch {
                throw ConfigurationError(key: filePath, "cannot be read as configuration: \(error)")
            }
        }
        let sources = ValueSources(filePath: filePath)
        let reader = ConfigReader(providers: providers, accessReporter: sources)
        let configuration = try AgentConfiguration(reader: reader, sources: sources, environment: environment)
        return LoadedConfiguration(configuration: configuration, sources: sources, filePath: filePath)
    }

    private static func read(_ path: String) throws(ConfigurationError) -> String {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError(key: "--config", "the file \(path) does not exist: check the path")
        }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(
                key: "--config", "cannot read the file \(path) as UTF-8 text: make it readable by this user")
        }
    }

    /// Rejects `MYELINE_*` variables that name no key, such as a mistyped `MYELINE_MQTT_BORKER`.
    static func checkEnvironment(_ environment: [String: String]) throws(ConfigurationError) {
        let known = Set(ConfigurationKey.all.map(\.environmentVariable) + [AgentConfiguration.passwordVariable])
        for name in environment.keys.sorted() where name.hasPrefix("MYELINE_") && !known.contains(name) {
            let hint = ConfigurationKey.suggestion(for: name, among: known.sorted()).map { ": did you mean \($0)?" }
            throw ConfigurationError(
                key: name, "is not a configuration variable\(hint ?? ": see docs/configuration.md for the list")")
        }
    }

    /// Checks every key of a YAML file against the known keys, so that a typo is never silently ignored.
    ///
    /// - Throws: ``ConfigurationError`` naming the first unknown or misshapen key and its line.
    static func checkKeys(yaml: String, path: String) throws(ConfigurationError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(key: path, "is not valid YAML: \(error)")
        }
        guard let root else { return }
        guard case .mapping(let mapping) = root else {
            throw ConfigurationError(
                key: path, "is not a YAML mapping of keys: start with keys such as device: or mqtt:")
        }
        try check(mapping, prefix: "", path: path)
    }

    private static func check(_ mapping: Node.Mapping, prefix: String, path: String) throws(ConfigurationError) {
        for (keyNode, value) in mapping {
            let line = (keyNode.mark?.line).map { " (line \($0))" } ?? ""
            let name = prefix + (keyNode.string ?? "\(keyNode)")
            let location = "\(path)\(line)"
            if name == "mqtt.password" {
                throw ConfigurationError(
                    key: name, source: location,
                    "the password never goes in this file: use mqtt.password-file or \(AgentConfiguration.passwordVariable)"
                )
            }
            if let key = ConfigurationKey.byName[name] {
                switch value {
                case .scalar where !key.isList: continue
                case .sequence(let items) where key.isList:
                    guard items.allSatisfy({ if case .scalar = $0 { true } else { false } }) else {
                        throw ConfigurationError(
                            key: name, source: location, "each item must be a string such as depot:52.52:13.405:150")
                    }
                    continue
                default:
                    throw ConfigurationError(
                        key: name, source: location, key.isList ? "must be a list of strings" : "must be a single value"
                    )
                }
            }
            let isSection = ConfigurationKey.all.contains { $0.name.hasPrefix(name + ".") }
            if isSection, case .mapping(let children) = value {
                try check(children, prefix: name + ".", path: path)
                continue
            }
            if isSection, case .scalar(let scalar) = value, ["", "~", "null"].contains(scalar.string) {
                continue  // a section whose keys are all commented out
            }
            if isSection {
                throw ConfigurationError(key: name, source: location, "is a section: give its keys, such as \(name).…")
            }
            let hint = ConfigurationKey.suggestion(for: name).map { ": did you mean \($0)?" }
            throw ConfigurationError(
                key: name, source: location, "is not a configuration key\(hint ?? ": see docs/configuration.md")")
        }
    }
}
