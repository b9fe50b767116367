import LiveActivity
import MyelineWire

/// Where an ``ActivityPublisher``'s messages go: an `MQTTClient`, or anything else that can carry
/// a ``LiveActivity/WireMessage`` (a test's recorder, another transport).
public protocol WireSink: Sendable {
    /// Whether messages go out now. While they do not, the publisher's queue keeps only the
    /// newest of the replaceable messages waiting (``LiveActivity/PublishQueue``).
    var isConnected: Bool { get }

    /// Publishes one message with its topic, payload, retain flag and expiry, and returns once
    /// the receiver has it (for MQTT at QoS 1, the broker's acknowledgement); offline, it waits
    /// for the connection.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled (the publisher stops);
    ///   any other error gives the message up (the publisher logs and counts it).
    func publish(_ message: WireMessage) async throws
}
