import MQTT

extension MQTTPublishProperties {
    /// Every payload the agent publishes is JSON: MQTT 5's content type says so.
    static let json = MQTTPublishProperties(contentType: "application/json")
}
