import LiveActivity

/// The first topic levels of every Myeline topic, `myeline` by default: for example `fleet/eu`.
///
/// A prefix has one or more `/`-separated levels, none empty (so no leading, trailing or doubled
/// `/`), without the wildcards `+` and `#`, without NUL, and not starting with `$` (brokers
/// reserve such topics, as in `$SYS`).
public struct TopicPrefix: Hashable, Sendable, CustomStringConvertible {
    /// The default prefix, `myeline`.
    public static let `default` = TopicPrefix(checked: "myeline")

    /// The prefix as written, without a trailing `/`.
    public let rawValue: String

    /// Checks and wraps a prefix.
    ///
    /// - Throws: `ActivityError` `.invalidTopicPrefix` naming the value and what is wrong with it.
    public init(_ rawValue: String) throws(ActivityError) {
        if let problem = Self.problem(rawValue) {
            throw ActivityError(.invalidTopicPrefix, "invalid topic prefix \(String(reflecting: rawValue)): \(problem)")
        }
        self.rawValue = rawValue
    }

    private init(checked rawValue: String) {
        self.rawValue = rawValue
    }

    /// The prefix as written.
    public var description: String { rawValue }

    private static func problem(_ prefix: String) -> String? {
        if prefix.isEmpty {
            return "it is empty; use one or more levels such as \"myeline\" or \"fleet/eu\""
        }
        if prefix.unicodeScalars.contains(where: { $0 == "+" || $0 == "#" }) {
            return "it contains a wildcard '+' or '#'; remove it"
        }
        if prefix.unicodeScalars.contains("\0") {
            return "it contains a NUL character; remove it"
        }
        if prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "it has an empty level; remove leading, trailing and doubled '/'"
        }
        if prefix.hasPrefix("$") {
            return "it starts with '$', which brokers reserve for their own topics; remove it"
        }
        return nil
    }
}
