import Configuration
import Locking

/// Records, for every key the configuration reader looks up, which provider answered and any error.
///
/// The reader's providers are, in order: the flags, the `MYELINE_*` environment variables, and the
/// YAML file (when there is one); a key no provider answers has its default.
public final class ValueSources: AccessReporter, Sendable {
    /// What one lookup found.
    public struct Record: Hashable, Sendable {
        /// The index of the provider that gave the value, `nil` for the default.
        public var provider: Int?
        /// A provider's or conversion error, such as a list where a single value belongs.
        public var error: String?
    }

    private let records = Locked<[String: Record]>([:])
    /// The YAML file's path, when there is one.
    public let filePath: String?
    /// The keys, to name the flag that set one.
    public let schema: ConfigurationSchema

    /// Creates an empty record for a reader over `schema`'s keys, with the YAML file at `filePath`.
    public init(filePath: String?, schema: ConfigurationSchema) {
        self.filePath = filePath
        self.schema = schema
    }

    /// Records one lookup.
    public func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        let provider = event.providerResults.firstIndex { result in
            if case .success(let lookup) = result.result { return lookup.value != nil }
            return false
        }
        var error: String?
        for result in event.providerResults {
            if case .failure(let failure) = result.result {
                error = "\(failure)"
                break
            }
        }
        if error == nil, let conversion = event.conversionError { error = "\(conversion)" }
        records.withLock { $0[key] = Record(provider: provider, error: error) }
    }

    /// What the lookup of a key found; `nil` if the key was never read.
    public func record(for name: String) -> Record? {
        records.withLock { $0[name] }
    }

    /// The names of the keys read so far.
    public var keysRead: Set<String> {
        records.withLock { Set($0.keys) }
    }

    /// Where a key's value came from: its flag, its environment variable, the file's path, or `nil` for the default.
    public func source(of key: ConfigurationKey) -> String? {
        guard let provider = record(for: key.name)?.provider else { return nil }
        switch provider {
        case 0: return key.flag ?? "a flag"
        case 1: return key.environmentVariable
        default: return filePath ?? "the file"
        }
    }
}
