import CMosquitto
import Glibc

/// An owned MQTT 5 property list, freed when the scope that made it ends.
enum MosquittoProperties {
    /// Calls `body` with libmosquitto's property list for `properties`, freed when `body` returns.
    static func with<R>(
        _ properties: MQTTPublishProperties, protocolVersion: MQTTProtocolVersion,
        _ body: (OpaquePointer?) throws(MQTTError) -> R
    ) throws(MQTTError) -> R {
        var list = try make(properties, protocolVersion: protocolVersion)
        defer { mosquitto_property_free_all(&list) }
        return try body(list)
    }

    /// Makes libmosquitto's property list for `properties`, owned by the caller; `nil` when there
    /// are none or the protocol is 3.1.1 (which has no properties).
    static func make(
        _ properties: MQTTPublishProperties, protocolVersion: MQTTProtocolVersion
    ) throws(MQTTError) -> OpaquePointer? {
        guard protocolVersion == .v5, !properties.isEmpty else { return nil }
        var list: OpaquePointer? = nil
        do {
            if let contentType = properties.contentType {
                try MosquittoStatus(
                    mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), contentType)
                ).check("invalid content type \"\(contentType)\"")
            }
            if let expiry = properties.messageExpiry {
                try MosquittoStatus(
                    mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
                ).check("invalid message expiry \(expiry)")
            }
        } catch {
            mosquitto_property_free_all(&list)
            throw error
        }
        return list
    }

    /// Reads the properties Myeline uses from a received message's property list.
    static func read(_ list: OpaquePointer?) -> MQTTPublishProperties {
        guard let list else { return MQTTPublishProperties() }
        var result = MQTTPublishProperties()
        var text: UnsafeMutablePointer<CChar>? = nil
        if mosquitto_property_read_string(list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), &text, false) != nil,
            let text
        {
            result.contentType = String(cString: text)
            free(text)
        }
        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &expiry, false)
            != nil
        {
            result.messageExpiry = expiry
        }
        return result
    }
}
