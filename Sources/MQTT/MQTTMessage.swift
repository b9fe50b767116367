/// A message: one received from the broker, or the will a client leaves with it
/// (``MQTTConfiguration/will``).
public struct MQTTMessage: Hashable, Sendable {
    /// The topic it was published to.
    public var topic: String
    /// The payload bytes; empty for a cleared retained message.
    public var payload: [UInt8]
    /// The quality of service it was delivered with.
    public var qos: MQTTQoS
    /// Received: whether it is a retained message delivered because of a new subscription. A will:
    /// whether the broker keeps it as the topic's retained message.
    public var retain: Bool
    /// MQTT 5 properties it carried (empty with MQTT 3.1.1).
    public var properties: MQTTPublishProperties

    /// Creates a message.
    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTPublishProperties = MQTTPublishProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }
}

/// A change in the client's connection to the broker.
public enum MQTTConnectionEvent: Hashable, Sendable {
    /// The broker accepted the connection; `sessionPresent` says whether it kept an old session.
    case connected(sessionPresent: Bool)
    /// An attempt to connect failed; the client tries again after a backoff delay.
    case connectionFailed(MQTTError)
    /// An established connection ended: with an error when it was lost, `nil` when the client closed it.
    case disconnected(MQTTError?)
}
