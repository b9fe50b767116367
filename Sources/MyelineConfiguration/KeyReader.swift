import Configuration

/// Reads one key at a time as text and checks it, turning every problem into a ``ConfigurationError``
/// that names the key and where its value came from.
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
    public func error(_ key: String, _ message: String) -> ConfigurationError {
        ConfigurationError(key: key, source: sources.source(of: key), message)
    }

    private func checkLookup(_ key: String) throws(ConfigurationError) {
        if let problem = sources.record(for: key)?.error {
            let shape = sources.schema.byName[key]?.isList == true ? "a list of strings" : "a single value"
            throw error(key, "cannot be read (\(problem)): give \(shape)")
        }
    }

    /// The key's text; `nil` when unset.
    ///
    /// - Throws: when the value is empty or cannot be read as a single value.
    public func string(_ key: String) throws(ConfigurationError) -> String? {
        let value = reader.string(forKey: ConfigKey(key))
        try checkLookup(key)
        guard let value else { return nil }
        guard !value.isEmpty else { throw error(key, "is empty: give a value or leave the key out") }
        return value
    }

    /// The key's list of strings; `nil` when unset.
    public func list(_ key: String) throws(ConfigurationError) -> [String]? {
        let value = reader.stringArray(forKey: ConfigKey(key))
        try checkLookup(key)
        return value
    }

    /// Parses `text`, the value of `key`, turning a parse error into one naming the key.
    public func check<T, E: Error>(_ key: String, _ text: String, _ parse: (String) throws(E) -> T)
        throws(ConfigurationError)
        -> T
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
    public func value<T, E: Error>(_ key: String, _ parse: (String) throws(E) -> T) throws(ConfigurationError) -> T? {
        guard let text = try string(key) else { return nil }
        return try check(key, text, parse)
    }

    /// The key as a number within `range` (in `unit`, for messages); `nil` when unset.
    public func number(_ key: String, in range: ClosedRange<Double>, unit: String) throws(ConfigurationError) -> Double?
    {
        guard let text = try string(key) else { return nil }
        let units = unit.isEmpty ? "" : " \(unit)"
        guard let number = Double(text), range.contains(number) else {
            throw error(
                key,
                "invalid value \"\(text)\": use a number from \(ConfigurationFormat.number(range.lowerBound)) "
                    + "to \(ConfigurationFormat.number(range.upperBound))\(units)")
        }
        return number
    }

    /// The key as a whole number within `range` (in `unit`, for messages); `nil` when unset.
    public func integer(_ key: String, in range: ClosedRange<Int>, unit: String) throws(ConfigurationError) -> Int? {
        guard let text = try string(key) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw error(
                key,
                "invalid value \"\(text)\": use a whole number from \(range.lowerBound) to \(range.upperBound) \(unit)")
        }
        return number
    }

    /// The key as a boolean (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`); `nil` when unset.
    public func boolean(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let text = try string(key) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw error(key, "invalid value \"\(text)\": use true or false")
        }
    }

    /// The key as one of `choices` (text and value); `nil` when unset.
    public func choice<T>(_ key: String, _ choices: [(String, T)]) throws(ConfigurationError) -> T? {
        guard let text = try string(key) else { return nil }
        guard let match = choices.first(where: { $0.0 == text }) else {
            throw error(key, "invalid value \"\(text)\": use one of \(choices.map(\.0).joined(separator: ", "))")
        }
        return match.1
    }
}
