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
        let mqtt = MQTTMessage(wire: message)
        while true {
            do {
                try await publish(
                    mqtt.topic, payload: mqtt.payload, qos: mqtt.qos, retain: mqtt.retain, properties: mqtt.properties)
                return
            } catch let error as MQTTError where error.code == .sessionLost {
                continue
            }
        }
    }

    /// Publishes `message` as ``publish(_:)`` does and hands the outcome to `completion` on the
    /// client's network thread as the broker's PUBACK arrives
    /// (``MQTT/MQTTClient/publishInOrder(_:completion:)``); a message whose session the broker
    /// lost is to be sent again (``SendAgain``).
    public func publish(_ message: WireMessage, completion: @escaping @Sendable ((any Error)?) -> Void) async {
        await publishInOrder([MQTTMessage(wire: message)]) { _, failure in
            guard let error = failure as? MQTTError, error.code == .sessionLost else { return completion(failure) }
            completion(SendAgain())
        }
    }
}

extension MQTTMessage {
    /// `message` at QoS 1, retained unless it is a command result, with its MQTT 5 content type
    /// (`application/json`) and message expiry.
    init(wire message: WireMessage) {
        self.init(
            topic: message.topic, payload: message.payload, qos: .atLeastOnce, retain: message.retain,
            properties: MQTTPublishProperties(contentType: message.contentType, messageExpiry: message.messageExpiry))
    }

    /// The will of ``MyelineWire/ActivityWire/will(instance:)``, for ``MQTT/MQTTConfiguration/will``:
    /// retained at QoS 1, with the message's content type.
    public init(will message: WireMessage) {
        self.init(
            topic: message.topic, payload: message.payload, qos: .atLeastOnce, retain: message.retain,
            properties: MQTTPublishProperties(contentType: message.contentType))
    }
}
