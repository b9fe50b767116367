import AsyncSupport
import FoundationEssentials
import Logging

/// Live locations from gpsd, over its JSON protocol on TCP (not libgps).
///
/// Iterating ``updates`` connects to gpsd, sends `?WATCH={"enable":true,"json":true}` (with the
/// configured device, if any), checks the VERSION greeting (protocol 3), and yields one update per
/// epoch (see ``GpsdDecoder``): fixes, and updates without a fix when the receiver has none, the
/// device goes away (``LocationUpdate/Status/deviceUnavailable``) or gpsd cannot be reached
/// (``LocationUpdate/Status/sourceUnavailable``). It never ends on its own: when gpsd restarts, or
/// says nothing for ``GpsdConfiguration/silenceTimeout``, the source reconnects with growing,
/// randomised waits (``GpsdConfiguration/reconnect``) and watches again. Stop it by ending the
/// iteration or cancelling its task. A speed or course gpsd did not report is derived from the
/// positions (``MotionEstimator``).
///
/// The network work runs on an ``AsyncSupport/EventLoop``: the one given, or a thread of its own
/// for each iteration; a consumer slower than gpsd loses the oldest
/// updates beyond ``GpsdConfiguration/bufferSize`` (counted in ``SourceStatistics/updatesDiscarded``).
public struct GpsdSource: LocationSource {
    /// Where gpsd is and how the source behaves.
    public let configuration: GpsdConfiguration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let loop: EventLoop?
    private let store = StatisticsStore()

    /// Creates a source; nothing connects until ``updates`` is iterated.
    ///
    /// - Parameters:
    ///   - configuration: where gpsd is and how the source behaves.
    ///   - logger: the source's logger; nothing is logged without one.
    ///   - now: the wall clock (UTC), the time of a fix that gpsd reports without one (a receiver that
    ///     sends no date, GGA or GLL only); the system clock by default.
    ///   - loop: the event loop the connection runs on: the consumer's (the agent's), so that an
    ///     update reaches a consumer that prefers it without a thread switch; nil for a thread of
    ///     the source's own, started with each iteration and ended with it.
    /// - Throws: ``LocationError`` with code `.invalidConfiguration` for an out-of-range value.
    public init(
        configuration: GpsdConfiguration = GpsdConfiguration(), logger: Logger = .discarding,
        now: @escaping @Sendable () -> Date = { Date() }, loop: EventLoop? = nil
    ) throws(LocationError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        self.now = now
        self.loop = loop
    }

    /// The updates; see ``GpsdSource``.
    public var updates: LocationUpdates {
        let configuration = configuration
        let logger = logger
        let store = store
        let now = now
        let loop = loop
        return LocationUpdates {
            GpsdStream(configuration: configuration, logger: logger, store: store, now: now, loop: loop)
        }
    }

    /// What the source read, used, rejected, dropped, and how often it (re)connected, so far.
    public var statistics: SourceStatistics { store.snapshot }
}

/// One iteration of a gpsd source: the link and the channel it feeds.
private final class GpsdStream: UpdateProducer {
    private let link: GpsdLink
    private let channel: HandOff<LocationUpdate>
    private var started = false

    init(
        configuration: GpsdConfiguration, logger: Logger, store: StatisticsStore,
        now: @escaping @Sendable () -> Date, loop: EventLoop?
    ) {
        channel = HandOff(capacity: configuration.bufferSize, cancellation: .finishes)
        link = GpsdLink(
            configuration: configuration, logger: logger, store: store, channel: channel, now: now, loop: loop)
    }

    deinit {
        link.stop()
    }

    func next(isolation actor: isolated (any Actor)?) async throws(LocationError) -> LocationUpdate? {
        if !started {
            started = true
            link.start()
        }
        guard let update = await channel.next() else {
            // Cancelled, or the link ended: either way it stops (again, which does nothing).
            link.stop()
            return nil
        }
        return update
    }
}
