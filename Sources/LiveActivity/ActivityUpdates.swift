/// A stream of one activity's changes (states, contents or events), one per consumer.
///
/// It finishes when the activity is dismissed; ending the consuming task's iteration unsubscribes.
public struct ActivityUpdates<Element: Sendable>: AsyncSequence, Sendable {
    /// Iterates the changes in the order they happened.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncStream<Element>.Iterator

        /// The next change, or nil once the activity is dismissed.
        public mutating func next() async -> Element? {
            await base.next()
        }

        /// The next change, or nil once the activity is dismissed.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await base.next(isolation: actor)
        }
    }

    private let base: AsyncStream<Element>

    init(_ base: AsyncStream<Element>) {
        self.base = base
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}
