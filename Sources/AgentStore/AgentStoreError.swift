import Glibc

/// The one error type of the AgentStore module.
///
/// `code` says what kind of failure it was, for callers that branch on it; `message` names the
/// file at fault, the system's reason (`strerror`) and, where there is one, the fix.
public struct AgentStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure; an extensible set of values rather than a closed enum.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidConfiguration, diskFull, io, recordTooLarge, closed, encoding
        }
        private let value: Value

        /// A configuration value is out of range (capacity, segment size, sync interval).
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The file system is full (`ENOSPC`) or over quota (`EDQUOT`); nothing was half-written.
        public static let diskFull = Code(value: .diskFull)
        /// Any other failure of a file operation (permissions, read-only file system, I/O error).
        public static let io = Code(value: .io)
        /// A record is larger than the outbox accepts (topic over 65,535 bytes or record over the limit).
        public static let recordTooLarge = Code(value: .recordTooLarge)
        /// The outbox was used after `close()`.
        public static let closed = Code(value: .closed)
        /// The activity state could not be encoded or decoded as JSON.
        public static let encoding = Code(value: .encoding)

        public var description: String { value.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A readable explanation that names the file at fault and, where there is one, the fix.
    public var message: String

    /// Creates an error with a code and a readable message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension AgentStoreError {
    /// The error for a failed system call on `path`, read from `errno`, which the caller must not
    /// have disturbed since the call.
    static func system(_ operation: String, path: String, errno number: Int32 = errno) -> AgentStoreError {
        let reason = String(cString: strerror(number))
        switch number {
        case ENOSPC, EDQUOT:
            return AgentStoreError(
                .diskFull,
                "\(operation) \(path) failed: \(reason); free space on that file system or lower the outbox capacity")
        case EACCES, EPERM, EROFS:
            return AgentStoreError(
                .io,
                "\(operation) \(path) failed: \(reason); make the state directory writable by the agent's user")
        default:
            return AgentStoreError(.io, "\(operation) \(path) failed: \(reason)")
        }
    }
}
