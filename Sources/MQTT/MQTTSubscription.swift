/// The messages matching one subscription's filters, in the order the broker delivered them, each
/// as the subscription's transform made it (the message itself unless one was given).
///
/// Ends when the client shuts down. Ending the iteration unsubscribes the filters that no other
/// subscription of the client uses.
public struct MQTTSubscription<Element: Sendable>: AsyncSequence, Sendable {
    private let stream: AsyncStream<Element>

    init(stream: AsyncStream<Element>) {
        self.stream = stream
    }

    /// Makes the iterator; iterate once.
    public func makeAsyncIterator() -> AsyncStream<Element>.Iterator {
        stream.makeAsyncIterator()
    }
}
