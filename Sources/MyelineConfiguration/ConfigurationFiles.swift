import Configuration
import FoundationEssentials

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

        let environmentValues = EnvironmentVariablesProvider(environmentVariables: environment)
        var providers: [any ConfigProvider] = [
            TextProvider(name: "flags", values: flags.mapValues { .single($0) }),
            KeyMappingProvider(upstream: environmentValues) { key in key.prepending(["myeline"]) },
        ]
        if let filePath {
            let root = try Self.parse(yaml: try Self.read(filePath), path: filePath, schema: schema)
            try Self.check(root, path: filePath, schema: schema)
            providers.append(TextProvider(name: filePath, values: try Self.values(of: root, path: filePath)))
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

    /// The file's root mapping, read by ``YAMLReader``.
    ///
    /// - Throws: ``ConfigurationError`` naming the file, the line and the column of what the reader
    ///   refuses, or a file that holds no mapping of keys.
    static func parse(yaml: String, path: String, schema: ConfigurationSchema) throws(ConfigurationError) -> [YAMLPair]
    {
        let root: YAMLNode?
        do {
            root = try YAMLReader.parse(yaml)
        } catch {
            throw ConfigurationError(key: path, "is not valid YAML, or uses YAML this reader leaves out: \(error)")
        }
        guard case .mapping(let pairs)? = root?.content else {
            let what = root == nil ? "holds no keys" : "is not a YAML mapping of keys"
            throw ConfigurationError(
                key: path, "\(what): start with keys such as \(schema.exampleSections) (an empty configuration is {})")
        }
        return pairs
    }

    /// The file's values as the configuration reader takes them: each scalar as text, each list as
    /// a list of texts, under its dotted key (`mqtt:` then `broker:` is `mqtt.broker`).
    ///
    /// - Throws: ``ConfigurationError`` when a key is given twice (`mqtt.broker` and `broker:`
    ///   under `mqtt:`), or a list holds a list or a mapping.
    static func values(of pairs: [YAMLPair], path: String) throws(ConfigurationError) -> [String: TextProvider.Text] {
        var values: [String: TextProvider.Text] = [:]
        var lines: [String: Int] = [:]
        // Breadth first, as swift-configuration's YAML provider went (a key given twice is named by its lines, in either order).
        var pending = pairs.map { ("", $0) }
        var next = 0
        while next < pending.count {
            let (prefix, pair) = pending[next]
            next += 1
            let name = prefix + pair.key
            let content: TextProvider.Text
            switch pair.value.content {
            case .mapping(let children):
                pending += children.map { (name + ".", $0) }
                continue
            case .scalar(let text):
                content = .single(text)
            case .sequence(let items):
                let texts = items.compactMap(\.scalar)
                guard texts.count == items.count else {
                    throw ConfigurationError(
                        key: name, source: "\(path) (line \(pair.line))",
                        "each item must be a single value, not a list or a mapping")
                }
                content = .list(texts)
            }
            if let other = lines[name] {
                throw ConfigurationError(
                    key: name, source: "\(path) (line \(max(other, pair.line)))",
                    "is set twice in this file (first on line \(min(other, pair.line))): keep one")
            }
            lines[name] = pair.line
            values[name] = content
        }
        return values
    }

    /// Checks every key of a YAML file against the known keys, so that a typo is never silently ignored.
    ///
    /// - Throws: ``ConfigurationError`` naming the first unknown or misshapen key and its line.
    static func check(
        _ pairs: [YAMLPair], prefix: String = "", path: String, schema: ConfigurationSchema
    ) throws(ConfigurationError) {
        for pair in pairs {
            let location = "\(path) (line \(pair.line))"
            let value = pair.value.content
            let name = prefix + pair.key
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
                    guard items.allSatisfy({ $0.scalar != nil }) else {
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
            if isSection, case .scalar(let text) = value, ["", "~", "null"].contains(text) {
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
