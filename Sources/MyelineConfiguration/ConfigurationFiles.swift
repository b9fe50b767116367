import Configuration
import FoundationEssentials
import SystemPackage
import Yams

/// A configuration reader over flags, `MYELINE_*` environment variables and a YAML file, in that
/// order of precedence, with every file key and variable checked against a schema first.
public struct LayeredConfiguration: Sendable {
    /// The reader; its access reporter is `sources`.
    public let reader: ConfigReader
    /// Where each value read came from.
    public let sources: ValueSources
    /// The YAML file read, if any.
    public let filePath: String?

    /// Checks the environment and the file against `schema`, then makes the reader.
    ///
    /// - Parameters:
    ///   - flags: values given on the command line, by dotted key.
    ///   - file: the `--config` file; `nil` reads `defaultFile` if it exists.
    ///   - environment: the process environment.
    ///   - defaultFile: the file read without `--config`, if it exists.
    ///   - schema: the keys that may be set.
    /// - Throws: ``ConfigurationError`` naming an unknown variable or key (with a "did you mean"
    ///   hint), a file that cannot be read, or a password written into the file.
    public init(
        flags: [String: String], file: String?, environment: [String: String], defaultFile: String,
        schema: ConfigurationSchema
    ) async throws(ConfigurationError) {
        try Self.checkEnvironment(environment, schema: schema)
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
            let text = try Self.read(filePath)
            try Self.checkKeys(yaml: text, path: filePath, schema: schema)
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(filePath)))
            } catch {
                throw ConfigurationError(key: filePath, "cannot be read as configuration: \(error)")
            }
        }
        sources = ValueSources(filePath: filePath, schema: schema)
        reader = ConfigReader(providers: providers, accessReporter: sources)
        self.filePath = filePath
    }

    /// A key reader over this configuration.
    public var keys: KeyReader { KeyReader(reader: reader, sources: sources) }

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
    static func checkEnvironment(_ environment: [String: String], schema: ConfigurationSchema)
        throws(ConfigurationError)
    {
        let known = Set(schema.keys.map(\.environmentVariable) + schema.otherVariables)
        for name in environment.keys.sorted() where name.hasPrefix("MYELINE_") && !known.contains(name) {
            let hint = ConfigurationKey.suggestion(for: name, among: known.sorted()).map { ": did you mean \($0)?" }
            throw ConfigurationError(
                key: name, "is not a configuration variable\(hint ?? ": see \(schema.documentation) for the list")")
        }
    }

    /// Checks every key of a YAML file against the known keys, so that a typo is never silently ignored.
    ///
    /// - Throws: ``ConfigurationError`` naming the first unknown or misshapen key and its line.
    static func checkKeys(yaml: String, path: String, schema: ConfigurationSchema) throws(ConfigurationError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(key: path, "is not valid YAML: \(error)")
        }
        guard let root else { return }
        guard case .mapping(let mapping) = root else {
            throw ConfigurationError(
                key: path, "is not a YAML mapping of keys: start with keys such as \(schema.exampleSections)")
        }
        try check(mapping, prefix: "", path: path, schema: schema)
    }

    private static func check(
        _ mapping: Node.Mapping, prefix: String, path: String, schema: ConfigurationSchema
    ) throws(ConfigurationError) {
        for (keyNode, value) in mapping {
            let line = (keyNode.mark?.line).map { " (line \($0))" } ?? ""
            let location = "\(path)\(line)"
            // A YAML key may be a list or a mapping (`? - a`); a configuration key is a name.
            guard let keyName = keyNode.string else {
                throw ConfigurationError(
                    key: prefix.isEmpty ? path : String(prefix.dropLast()), source: location,
                    "has a key that is a list or a mapping, not a name: use keys such as \(schema.exampleSections)")
            }
            let name = prefix + keyName
            if name == "mqtt.password" {
                throw ConfigurationError(
                    key: name, source: location,
                    "the password never goes in this file: use mqtt.password-file or \(MQTTSettings.passwordVariable)"
                )
            }
            if let key = schema.byName[name] {
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
            let isSection = schema.keys.contains { $0.name.hasPrefix(name + ".") }
            if isSection, case .mapping(let children) = value {
                try check(children, prefix: name + ".", path: path, schema: schema)
                continue
            }
            if isSection, case .scalar(let scalar) = value, ["", "~", "null"].contains(scalar.string) {
                continue  // a section whose keys are all commented out
            }
            if isSection {
                throw ConfigurationError(key: name, source: location, "is a section: give its keys, such as \(name).…")
            }
            let hint = schema.suggestion(for: name).map { ": did you mean \($0)?" }
            throw ConfigurationError(
                key: name, source: location, "is not a configuration key\(hint ?? ": see \(schema.documentation)")")
        }
    }
}
