import Configuration

/// Reads one key at a time and checks it, turning every problem into a ``ConfigurationError``
/// that names the key and where its value came from.
///
/// Every read takes a ``ConfigurationKey`` (a constant such as ``ConfigurationKey/mqttBroker``),
/// never a string: a mistyped key does not compile, where a mistyped string read nothing.
public struct KeyReader {
    /// The configuration reader.
    public let reader: ConfigReader
    /// Where each value came from; the reader's access reporter.
    public let sources: ValueSources

    /// Creates a key reader over `reader`, whose access reporter must be `sources`.
    public init(reader: ConfigReader, sources: ValueSources) {
        self.reader = reader
        self.sources = sources
    }

    /// An error about `key`, naming where its value came from.
    public func error(_ key: ConfigurationKey, _ message: String) -> ConfigurationError {
        ConfigurationError(key: key.name, source: sources.source(of: key), message)
    }

    private func checkLookup(_ key: ConfigurationKey) throws(ConfigurationError) {
        if let problem = sources.record(for: key.name)?.error {
            throw error(key, "cannot be read (\(problem)): give \(key.isList ? "a list of strings" : "a single value")")
        }
    }

    /// The key's text; `nil` when unset.
    ///
    /// - Throws: when the value is empty or cannot be read as a single value.
    public func string(_ key: ConfigurationKey) throws(ConfigurationError) -> String? {
        let value = reader.string(forKey: key.configKey)
        try checkLookup(key)
        guard let value else { return nil }
        guard !value.isEmpty else { throw error(key, "is empty: give a value or leave the key out") }
        return value
    }

    /// The key's list of strings; `nil` when unset.
    public func list(_ key: ConfigurationKey) throws(ConfigurationError) -> [String]? {
        let value = reader.stringArray(forKey: key.configKey)
        try checkLookup(key)
        return value
    }

    /// Parses `text`, the value of `key`, turning a parse error into one naming the key.
    public func check<T, E: Error>(_ key: ConfigurationKey, _ text: String, _ parse: (String) throws(E) -> T)
        throws(ConfigurationError) -> T
    {
        do {
            return try parse(text)
        } catch let failure as ConfigurationError {
            throw error(key, failure.message)
        } catch {
            throw self.error(key, "\(error)")
        }
    }

    /// The key's value parsed by `parse`; `nil` when unset.
    public func value<T, E: Error>(_ key: ConfigurationKey, _ parse: (String) throws(E) -> T)
        throws(ConfigurationError) -> T?
    {
        guard let text = try string(key) else { return nil }
        return try check(key, text, parse)
    }

    /// The key as a number within `range` (in `unit`, for messages); `nil` when unset.
    ///
    /// The number is swift-configuration's (`Double(text)` in every layer: `1e3` and `.5` are
    /// numbers, `0x10` is not); the message quotes the text as given.
    public func number(_ key: ConfigurationKey, in range: ClosedRange<Double>, unit: String)
        throws(ConfigurationError) -> Double?
    {
        let number = reader.double(forKey: key.configKey)
        guard let number, sources.record(for: key.name)?.error == nil, range.contains(number) else {
            try invalid(key, unset: number == nil) { text in
                "invalid value \"\(text)\": use a number from \(ConfigurationFormat.number(range.lowerBound)) "
                    + "to \(ConfigurationFormat.number(range.upperBound))\(unit.isEmpty ? "" : " \(unit)")"
            }
            return nil
        }
        return number
    }

    /// The key as a whole number within `range` (in `unit`, for messages); `nil` when unset.
    ///
    /// The number is swift-configuration's (`Int(text)` in every layer).
    public func integer(_ key: ConfigurationKey, in range: ClosedRange<Int>, unit: String) throws(ConfigurationError)
        -> Int?
    {
        let number = reader.int(forKey: key.configKey)
        guard let number, sources.record(for: key.name)?.error == nil, range.contains(number) else {
            try invalid(key, unset: number == nil) { text in
                "invalid value \"\(text)\": use a whole number from \(range.lowerBound) to \(range.upperBound) \(unit)"
            }
            return nil
        }
        return number
    }

    /// Throws `message` quoting the key's text, when a typed read found a value it could not take:
    /// out of its range, or not convertible (then the text is read again, which also reports an
    /// empty value or a list as such). Returns when the key is unset.
    private func invalid(_ key: ConfigurationKey, unset: Bool, _ message: (String) -> String)
        throws(ConfigurationError)
    {
        let failed = sources.record(for: key.name)?.error != nil
        guard failed || !unset else { return }
        guard let text = try string(key) else { return }
        throw error(key, message(text))
    }

    /// The key as a boolean (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, in any case); `nil`
    /// when unset.
    ///
    /// Read as text: swift-configuration's booleans leave out `on`/`off`, which the documentation
    /// has always accepted.
    public func boolean(_ key: ConfigurationKey) throws(ConfigurationError) -> Bool? {
        guard let text = try string(key) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw error(key, "invalid value \"\(text)\": use true or false")
        }
    }

    /// The key as one of `choices` (text and value); `nil` when unset.
    public func choice<T>(_ key: ConfigurationKey, _ choices: [(String, T)]) throws(ConfigurationError) -> T? {
        guard let text = try string(key) else { return nil }
        guard let match = choices.first(where: { $0.0 == text }) else {
            throw error(key, "invalid value \"\(text)\": use one of \(choices.map(\.0).joined(separator: ", "))")
        }
        return match.1
    }
}
