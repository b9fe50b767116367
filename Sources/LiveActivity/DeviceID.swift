/// The id of one device (one Raspberry Pi): a topic level such as `van-7`.
///
/// Valid ids have 1-64 characters a-z, 0-9, `.`, `_` or `-` and start with a letter or digit, so
/// they never contain the topic separators and wildcards `/`, `+` or `#`. On the wire it is a string.
public struct DeviceID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The id as written, such as `van-7`.
    public let rawValue: String

    /// Checks and wraps an id.
    ///
    /// - Throws: `ActivityError` `.invalidDeviceID` naming the value and the rule, for example
    ///   `invalid device id "Van 7": use 1-64 characters a-z, 0-9, '.', '_' or '-', starting with a letter or digit`.
    public init(_ rawValue: String) throws(ActivityError) {
        if let problem = Identifier.problem(rawValue, as: .device) {
            throw ActivityError(.invalidDeviceID, problem)
        }
        self.rawValue = rawValue
    }

    /// The id as written.
    public var description: String { rawValue }

    /// Decodes an id from a string.
    ///
    /// - Throws: `DecodingError.dataCorrupted` with the same message as ``init(_:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let rawValue = try container.decode(String.self)
        if let problem = Identifier.problem(rawValue, as: .device) {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: problem)
        }
        self.rawValue = rawValue
    }

    /// Encodes the id as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
