import Locking

/// Anything that yields location updates: gpsd (``GpsdSource``) or a recorded file (``FileSource``).
///
/// The Linux counterpart of `CLLocationUpdate.liveUpdates()`: iterate ``updates`` to start the
/// source (connect to gpsd, open the file) and stop iterating, or cancel the task, to stop it.
public protocol LocationSource: Sendable {
    /// The updates: endless for a live source, finite for a file replayed once. Each iteration
    /// runs the source afresh.
    var updates: LocationUpdates { get }
    /// Counters of what the source read, used, rejected and dropped, over all its iterations so far.
    var statistics: SourceStatistics { get }
}

/// The updates of one location source, in the order the source produced them.
///
/// Ends (returns `nil`) when a finite source is done or the iterating task is cancelled; throws a
/// ``LocationError`` only for what the source cannot recover from (an unreadable file). Iterate
/// from one task at a time.
public struct LocationUpdates: AsyncSequence, Sendable {
    public typealias Element = LocationUpdate
    public typealias Failure = LocationError

    private let start: @Sendable () -> any UpdateProducer

    init(start: @escaping @Sendable () -> any UpdateProducer) {
        self.start = start
    }

    /// Starts the source and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(producer: start())
    }

    /// Iterates the updates; the source stops when the iterator is discarded.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = LocationUpdate
        public typealias Failure = LocationError

        private let producer: any UpdateProducer

        init(producer: any UpdateProducer) {
            self.producer = producer
        }

        /// The next update, or `nil` at the end or on cancellation.
        public mutating func next() async throws(LocationError) -> LocationUpdate? {
            try await producer.next(isolation: nil)
        }

        /// The next update, or `nil` at the end or on cancellation, on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(LocationError) -> LocationUpdate?
        {
            try await producer.next(isolation: actor)
        }
    }
}

/// The engine behind one iteration of a source.
protocol UpdateProducer: AnyObject {
    func next(isolation actor: isolated (any Actor)?) async throws(LocationError) -> LocationUpdate?
}

/// Statistics shared by a source and its running iterations.
final class StatisticsStore: Sendable {
    private let value = Locked(SourceStatistics())

    var snapshot: SourceStatistics { value.withLock { $0 } }

    func update(_ change: (inout SourceStatistics) -> Void) {
        value.withLock { change(&$0) }
    }

    /// Adds what a decoder counted since `previous` (its last published snapshot).
    func add(_ current: SourceStatistics, since previous: SourceStatistics) {
        value.withLock { $0.add(current, minus: previous) }
    }
}

extension SourceStatistics {
    /// Adds the difference `current - previous` to these counters.
    mutating func add(_ current: SourceStatistics, minus previous: SourceStatistics) {
        linesRead += current.linesRead - previous.linesRead
        bytesRead += current.bytesRead - previous.bytesRead
        linesDecoded += current.linesDecoded - previous.linesDecoded
        linesIgnored += current.linesIgnored - previous.linesIgnored
        updates += current.updates - previous.updates
        fixes += current.fixes - previous.fixes
        weekRolloverCorrections += current.weekRolloverCorrections - previous.weekRolloverCorrections
        nonFiniteFieldsCleared += current.nonFiniteFieldsCleared - previous.nonFiniteFieldsCleared
        connections += current.connections - previous.connections
        disconnections += current.disconnections - previous.disconnections
        silentTimeouts += current.silentTimeouts - previous.silentTimeouts
        gpsdErrors += current.gpsdErrors - previous.gpsdErrors
        updatesDiscarded += current.updatesDiscarded - previous.updatesDiscarded
        for (reason, count) in current.rejected {
            let delta = count - (previous.rejected[reason] ?? 0)
            if delta != 0 { rejected[reason, default: 0] += delta }
        }
        for (reason, count) in current.dropped {
            let delta = count - (previous.dropped[reason] ?? 0)
            if delta != 0 { dropped[reason, default: 0] += delta }
        }
    }
}
