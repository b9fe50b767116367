/// The one error type of the Location module.
///
/// `code` says what kind of failure it was, for callers that branch on it; `message` names the value
/// at fault and, where there is one, the fix.
public struct LocationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure; an extensible set of values rather than a closed enum.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidSource, invalidConfiguration, fileUnreadable, unknownFormat
        }
        private let value: Value

        /// A source address (`gpsd://...` or a path) cannot be parsed; the message names it and the fix.
        public static let invalidSource = Code(value: .invalidSource)
        /// A configuration value is out of range; the message names it.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// A replay file cannot be opened or read.
        public static let fileUnreadable = Code(value: .fileUnreadable)
        /// A replay file is neither NMEA 0183, GPX nor gpsd JSON.
        public static let unknownFormat = Code(value: .unknownFormat)

        public var description: String { value.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A readable explanation that names the value at fault and, where there is one, the fix.
    public var message: String

    /// Creates an error with a code and a readable message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
