/// Checks of MQTT topic names and filters, in libmosquitto's own terms.
public enum MQTTTopic {
    /// Checks a topic to publish to: non-empty UTF-8 without `+`, `#` or NUL.
    ///
    /// - Throws: `MQTTError` `.invalidTopic` naming the topic.
    public static func validate(publishTopic topic: String) throws(MQTTError) {
        guard !topic.isEmpty, MosquittoTopic.isValidPublishTopic(topic) else {
            throw MQTTError(
                .invalidTopic, "invalid topic \"\(topic)\": a publish topic is non-empty and has no + or # wildcards")
        }
    }

    /// Checks a subscription filter: `+` only as a whole level, `#` only as the whole last level.
    ///
    /// - Throws: `MQTTError` `.invalidTopic` naming the filter.
    public static func validate(filter: String) throws(MQTTError) {
        guard !filter.isEmpty, MosquittoTopic.isValidFilter(filter) else {
            throw MQTTError(
                .invalidTopic,
                "invalid subscription filter \"\(filter)\": + must fill a whole level and # must be the last level")
        }
    }

    /// Whether a topic matches a subscription filter (for example `a/+/c` matches `a/b/c`).
    public static func matches(filter: String, topic: String) -> Bool {
        MosquittoTopic.matches(filter: filter, topic: topic)
    }
}
