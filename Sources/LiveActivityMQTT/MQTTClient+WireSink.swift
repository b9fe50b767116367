import LiveActivity
import MyelineWire
import MQTT

extension MQTTClient: WireSink {
    /// Publishes `message` at QoS 1, retained unless it is a command result, with its MQTT 5
    /// content type (`application/json`) and message expiry.
    ///
    /// A broker that lost the session (``MQTT/MQTTError/Code/sessionLost``) may never have had the
    /// message: it is sent again on the new session.
    ///
    /// - Throws: `MQTTError` (`.publishRefused` with the broker's reason, `.payloadTooLarge`,
    ///   `.clientShutDown`, ...) or `CancellationError`.
    public func publish(_ message: WireMessage) async throws {
        let properties = MQTTPublishProperties(contentType: message.contentType, messageExpiry: message.messageExpiry)
        while true {
            do {
                try await publish(
                    message.topic, payload: message.payload, qos: .atLeastOnce, retain: message.retain,
                    properties: properties)
                return
            } catch let error as MQTTError where error.code == .sessionLost {
                continue
            }
        }
    }
}

extension MQTTMessage {
    /// The will of ``MyelineWire/ActivityWire/will(instance:)``, for ``MQTT/MQTTConfiguration/will``:
    /// retained at QoS 1, with the message's content type.
    public init(will message: WireMessage) {
        self.init(
            topic: message.topic, payload: message.payload, qos: .atLeastOnce, retain: message.retain,
            properties: MQTTPublishProperties(contentType: message.contentType))
    }
}
