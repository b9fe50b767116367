/// The messages matching one subscription's filters, in the order the broker delivered them.
///
/// Ends when the client shuts down. Ending the iteration unsubscribes the filters that no other
/// subscription of the client uses.
public struct MQTTSubscription: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage

    private let stream: AsyncStream<MQTTMessage>

    init(stream: AsyncStream<MQTTMessage>) {
        self.stream = stream
    }

    /// Makes the iterator; iterate once.
    public func makeAsyncIterator() -> AsyncStream<MQTTMessage>.Iterator {
        stream.makeAsyncIterator()
    }
}
