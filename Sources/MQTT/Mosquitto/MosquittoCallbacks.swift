import CMosquitto
import Logging

/// libmosquitto's callbacks, as C function pointers that find their `ClientContext` through the
/// user pointer given to `mosquitto_new`. They all run on the client's network thread.
enum MosquittoCallbacks {
    static func install(on handle: OpaquePointer) {
        mosquitto_connect_v5_callback_set(handle) { _, user, reasonCode, flags, _ in
            clientContext(user).didReceiveConnack(reasonCode: reasonCode, sessionPresent: flags & 1 != 0)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, user, code, _ in
            clientContext(user).didDisconnect(code: code)
        }
        mosquitto_publish_v5_callback_set(handle) { _, user, mid, reasonCode, _ in
            clientContext(user).didAcknowledge(mid, ClientContext.Acknowledgement.published(reasonCode: reasonCode))
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, user, mid, count, granted, _ in
            let qos = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            clientContext(user).didAcknowledge(mid, ClientContext.Acknowledgement.subscribed(grantedQoS: qos))
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { _, user, mid, _ in
            clientContext(user).didAcknowledge(mid, ClientContext.Acknowledgement.unsubscribed)
        }
        mosquitto_message_v5_callback_set(handle) { _, user, message, properties in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload: [UInt8] =
                if let bytes = message.payload, message.payloadlen > 0 {
                    Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
                } else {
                    []
                }
            clientContext(user).deliver(
                MQTTMessage(
                    topic: String(cString: topic), payload: payload,
                    qos: MQTTQoS(rawValue: message.qos) ?? .atMostOnce, retain: message.retain,
                    properties: MosquittoProperties.read(properties)))
        }
        installLog(on: handle)
    }

    /// The log callback: libmosquitto's errors and warnings are kept for the connection's end
    /// (``ClientContext/recordLibraryError(_:)``) and logged at debug, the rest at trace.
    /// libmosquitto formats a line for every packet while a log callback is set, whatever its level.
    static func installLog(on handle: OpaquePointer) {
        mosquitto_log_callback_set(handle) { _, user, level, text in
            guard let text else { return }
            let context = clientContext(user)
            if level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 {
                let line = String(cString: text)
                context.recordLibraryError(line)
                context.logger.debug("libmosquitto said", metadata: ["event": "mqtt.library", "mqtt.log": "\(line)"])
            } else {
                // libmosquitto logs every packet at this level: the line is made only when traced.
                context.logger.trace(
                    "libmosquitto said", metadata: ["event": "mqtt.library", "mqtt.log": "\(String(cString: text))"])
            }
        }
    }
}

/// The `ClientContext` behind a callback's user pointer, which `MQTTClient` keeps alive until the
/// handle is destroyed.
private func clientContext(_ user: UnsafeMutableRawPointer?) -> ClientContext {
    Unmanaged<ClientContext>.fromOpaque(user!).takeUnretainedValue()
}
