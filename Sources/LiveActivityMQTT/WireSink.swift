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

    /// Publishes one message as ``publish(_:)`` does, but returns once it is on its way (offline,
    /// once connected) and hands the outcome to `completion`: nil once the receiver has it, else
    /// the error that gave it up (`CancellationError` when the calling task was cancelled before
    /// the message went out), or ``SendAgain`` when it must be published again. `completion` runs
    /// once, on any thread (for MQTT, the client's network thread as the acknowledgement arrives):
    /// keep it short and non-blocking. Nothing waits for the acknowledgement, so no other thread
    /// is woken for it (issue 24).
    func publish(_ message: WireMessage, completion: @escaping @Sendable ((any Error)?) -> Void) async
}

/// What a ``WireSink`` hands the completion of ``WireSink/publish(_:completion:)`` when the
/// message must be published again: an MQTT broker that lost the session may never have had it.
public struct SendAgain: Error, Sendable {
    public init() {}
}

extension WireSink {
    /// Waits for ``publish(_:)`` and hands its outcome to `completion`.
    public func publish(_ message: WireMessage, completion: @escaping @Sendable ((any Error)?) -> Void) async {
        do {
            try await publish(message)
            completion(nil)
        } catch {
            completion(error)
        }
    }
}
