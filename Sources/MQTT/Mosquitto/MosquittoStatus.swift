import CMosquitto
import Glibc

/// The outcome of a libmosquitto call: success, or its failure in words.
///
/// Made at once from the call's `MOSQ_ERR_*` return code, so that `MOSQ_ERR_ERRNO` is resolved
/// through the call's own `errno`.
struct MosquittoStatus: Equatable, Sendable {
    /// The failure: the return code as an `MQTTError.Code` and libmosquitto's (or the system's)
    /// text for it; nil for success.
    let failure: LibraryFailure?

    init(_ rc: Int32) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else {
            failure = nil
            return
        }
        let text =
            rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
        failure = LibraryFailure(code: Self.code(for: rc), text: text)
    }

    /// Whether the call succeeded.
    var isSuccess: Bool { failure == nil }

    static let success = MosquittoStatus(MOSQ_ERR_SUCCESS.rawValue)
    /// The connection has ended (`MOSQ_ERR_NO_CONN`).
    static let noConnection = MosquittoStatus(MOSQ_ERR_NO_CONN.rawValue)

    /// Whether the call failed because the client is not connected (`MOSQ_ERR_NO_CONN`).
    var isNotConnected: Bool { failure?.code == .notConnected }

    /// Throws the failure, after `context` ("cannot publish to a/b"), unless the call succeeded.
    func check(_ context: @autoclosure () -> String) throws(MQTTError) {
        if let failure { throw MQTTError(failure, context: context()) }
    }

    private static func code(for rc: Int32) -> MQTTError.Code {
        switch mosq_err_t(rawValue: rc) {
        case MOSQ_ERR_NO_CONN: .notConnected
        case MOSQ_ERR_CONN_LOST, MOSQ_ERR_KEEPALIVE: .connectionLost
        case MOSQ_ERR_CONN_REFUSED, MOSQ_ERR_AUTH: .connectionRefused
        case MOSQ_ERR_TLS, MOSQ_ERR_TLS_HANDSHAKE, MOSQ_ERR_OCSP: .tls
        case MOSQ_ERR_ERRNO, MOSQ_ERR_EAI, MOSQ_ERR_LOOKUP, MOSQ_ERR_TIMEOUT, MOSQ_ERR_PROXY: .network
        case MOSQ_ERR_INVAL, MOSQ_ERR_MALFORMED_UTF8: .invalidTopic
        case MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_OVERSIZE_PACKET: .payloadTooLarge
        default: .library
        }
    }
}

/// libmosquitto's words for MQTT reason codes.
enum MosquittoText {
    /// The text of an MQTT 5 reason code (a PUBACK, SUBACK, DISCONNECT or CONNACK reason).
    static func reason(_ code: Int32) -> String {
        String(cString: mosquitto_reason_string(code))
    }

    /// The text of a CONNACK refusal, in the words of the protocol in use.
    static func refusal(_ code: Int32, protocolVersion: MQTTProtocolVersion) -> String {
        switch protocolVersion {
        case .v5: reason(code)
        case .v311: String(cString: mosquitto_connack_string(code))
        }
    }
}

/// Checks of topic names and filters, and matching, in libmosquitto's own terms.
enum MosquittoTopic {
    /// Whether `topic` is valid UTF-8 without wildcards.
    static func isValidPublishTopic(_ topic: String) -> Bool {
        mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue && isValidUTF8(topic)
    }

    /// Whether `filter` is valid UTF-8 with `+` only as a whole level and `#` only as the last one.
    static func isValidFilter(_ filter: String) -> Bool {
        mosquitto_sub_topic_check(filter) == MOSQ_ERR_SUCCESS.rawValue && isValidUTF8(filter)
    }

    /// Whether `topic` matches the subscription filter `filter`.
    static func matches(filter: String, topic: String) -> Bool {
        var result = false
        return mosquitto_topic_matches_sub(filter, topic, &result) == MOSQ_ERR_SUCCESS.rawValue && result
    }

    private static func isValidUTF8(_ text: String) -> Bool {
        mosquitto_validate_utf8(text, Int32(text.utf8.count)) == MOSQ_ERR_SUCCESS.rawValue
    }
}
