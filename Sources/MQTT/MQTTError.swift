/// The one error type of the MQTT module.
///
/// `code` says what kind of failure it was, for callers that branch on it; `message` is the
/// human-readable text, with libmosquitto's own wording where the failure came from it
/// (`mosquitto_strerror`, `mosquitto_connack_string`, `mosquitto_reason_string`).
public struct MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure; an extensible set of values rather than a closed enum.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidConfiguration, connectionRefused, tls, notConnected, connectionLost,
                network, publishRefused, subscriptionRefused, invalidTopic, payloadTooLarge,
                clientShutDown, library, sessionTakenOver, sessionLost
        }
        private let value: Value

        /// A configuration value is wrong (broker URL, credentials, files); the message names it.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The broker answered CONNECT with a refusal (bad credentials, not authorised, ...).
        public static let connectionRefused = Code(value: .connectionRefused)
        /// TLS failed: handshake, certificate verification or a TLS file the library rejected.
        public static let tls = Code(value: .tls)
        /// A QoS 0 message could not be sent because the client is offline.
        public static let notConnected = Code(value: .notConnected)
        /// An established connection was lost.
        public static let connectionLost = Code(value: .connectionLost)
        /// The broker closed the connection because another client connected with the same client
        /// id (MQTT 5 reason code 0x8E, "session taken over"). MQTT 3.1.1 brokers close the
        /// connection without a reason, which is then `.connectionLost`.
        public static let sessionTakenOver = Code(value: .sessionTakenOver)
        /// The broker could not be reached (lookup failed, connection refused, unreachable).
        public static let network = Code(value: .network)
        /// The broker answered a QoS 1/2 publish with a failure reason code (MQTT v5).
        public static let publishRefused = Code(value: .publishRefused)
        /// The broker refused a subscription filter (SUBACK failure).
        public static let subscriptionRefused = Code(value: .subscriptionRefused)
        /// A topic or filter is not valid MQTT (empty, wildcard in a publish topic, bad UTF-8).
        public static let invalidTopic = Code(value: .invalidTopic)
        /// The payload exceeds MQTT's 268,435,455-byte limit or the broker's maximum packet size.
        public static let payloadTooLarge = Code(value: .payloadTooLarge)
        /// The client was shut down while the operation was waiting.
        public static let clientShutDown = Code(value: .clientShutDown)
        /// Any other libmosquitto failure.
        public static let library = Code(value: .library)
        /// The broker kept no session for this client across a reconnection (session present 0:
        /// a broker without persistence restarted, or the session expired): a QoS 1 or 2 message
        /// published before it may never have been delivered, even if libmosquitto completes its
        /// handshake with the new broker. Publish it again (a duplicate is possible, a gap is not).
        public static let sessionLost = Code(value: .sessionLost)

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

    /// Whether retrying the same connection is unlikely to help until someone changes the
    /// configuration or the broker: refusals and TLS failures, as opposed to network trouble.
    public var needsAttention: Bool {
        code == .connectionRefused || code == .tls || code == .invalidConfiguration
    }
}

/// A libmosquitto call's failure in words: its return code as an ``MQTTError/Code`` and the text for
/// it (libmosquitto's, or the system's for an `errno`).
struct LibraryFailure: Hashable, Sendable {
    var code: MQTTError.Code
    var text: String
}

extension MQTTError {
    /// The error for a failed libmosquitto call, after `context` ("cannot connect: Connection refused").
    init(_ failure: LibraryFailure, context: String) {
        self.init(failure.code, "\(context): \(failure.text)")
    }
}
