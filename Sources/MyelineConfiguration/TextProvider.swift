import Configuration

/// Values given as text, the flags' or the YAML file's, answering typed lookups the way
/// swift-configuration's `EnvironmentVariablesProvider` answers them for `MYELINE_*` variables:
/// an integer is `Int(text)`, a number `Double(text)`, a boolean `true`/`false`, `yes`/`no`,
/// `1`/`0` in any case. So a key reads alike from every layer, and ``KeyReader`` takes numbers
/// from swift-configuration's typed getters rather than parsing them again.
///
/// A list answers string-array lookups only, and a single value every other one, as
/// swift-configuration's YAML provider did.
struct TextProvider: ConfigProvider, ConfigSnapshot {
    /// One key's text.
    enum Text: Sendable {
        /// A single value.
        case single(String)
        /// A list of values (a YAML sequence of scalars).
        case list([String])
    }

    let providerName: String
    let values: [AbsoluteConfigKey: Text]

    /// Creates a provider named `name` over `values`, by dotted key.
    init(name: String, values: [String: Text]) {
        providerName = "TextProvider[\(name)]"
        self.values = Dictionary(uniqueKeysWithValues: values.map { (AbsoluteConfigKey(ConfigKey($0.key)), $0.value) })
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let encodedKey = key.components.joined(separator: ".")
        guard let text = values[key] else { return LookupResult(encodedKey: encodedKey, value: nil) }
        let content: ConfigContent? =
            switch (text, type) {
            case (.single(let text), .string): .string(text)
            case (.single(let text), .int): Int(text).map { .int($0) }
            case (.single(let text), .double): Double(text).map { .double($0) }
            case (.single(let text), .bool): Self.boolean(text).map { .bool($0) }
            case (.list(let texts), .stringArray): .stringArray(texts)
            default: nil
            }
        guard let content else { throw NotConvertible(key: encodedKey, type: type) }
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: false))
    }

    /// A value that is not of the type asked for.
    struct NotConvertible: Error, CustomStringConvertible {
        let key: String
        let type: ConfigType
        var description: String { "the value of \(key) is not of type \(type)" }
    }

    /// `EnvironmentVariablesProvider`'s booleans.
    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>)
            async throws ->
            Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { self }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws ->
            Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
