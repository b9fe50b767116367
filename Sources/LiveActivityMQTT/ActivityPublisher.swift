import AsyncSupport
import LiveActivity
import MyelineWire
import Locking
import Logging
import ServiceLifecycle

/// Keeps the broker's retained view of a device's activities equal to the activities: every start,
/// update and end as a numbered envelope, an end with the message expiry of its dismissal date
/// (MQTT 5), the empty retained message at the dismissal; the agent publishes through it too.
///
/// Give it what to follow, ``follow(_:)-(ActivityCenter)`` (every activity of a center, missing
/// no event: follow before the first request) or ``follow(_:)-(Activity<Attributes>)``, or
/// messages of your own with ``enqueue(_:)``; ``run()`` publishes them in order, one at a time,
/// through a ``LiveActivity/PublishQueue`` (offline, only the newest update of each activity and
/// the newest status wait). ``withPublisher(configuration:device:topics:center:clock:logger:isolation:_:)``
/// does the rest for a program on MQTT: the client with the device's `offline` will, `online`
/// at each connection, `offline` at the end.
///
/// Messages a sink refuses (other than by cancellation) are logged at warning and counted in
/// ``failedCount``; an event whose content cannot be encoded is logged at error and counted too.
///
/// Graceful shutdown (a `Service` in a `ServiceGroup`): ``run()`` returns at once, cancelling a
/// publish that waits for the broker; wait for what must go out first with
/// ``waitUntilEmpty(within:)``.
public final class ActivityPublisher: Service, CustomStringConvertible, Sendable {
    /// What service-lifecycle logs for this service.
    public var description: String { "ActivityPublisher(device: \(wire.device))" }

    /// The device, topics and expiry rule of the messages.
    public let wire: ActivityWire

    private let sink: any WireSink
    private let logger: Logger
    private let delivered: @Sendable (WireMessage) -> Void
    private let state = Locked(State())
    /// Rung when there is a message to send and none in flight.
    private let signal = Doorbell()
    /// The centers and activities followed, whose events are queued as they happen.
    private let observations = Locked<[EventObservation]>([])

    private struct State {
        var queue = PublishQueue()
        /// The message in flight, when the sink asked for it again (``SendAgain``).
        var again: WireMessage?
        /// Waiters for an empty queue.
        var emptied: [CheckedContinuation<Void, Never>] = []
        var failed = 0
    }

    /// A publisher of `wire`'s messages to `sink`.
    ///
    /// - Parameter delivered: called with each message the sink took (such as a clear, which the
    ///   agent waits for), where its acknowledgement arrives (for MQTT, the client's network
    ///   thread); keep it short and non-blocking.
    public init(
        wire: ActivityWire, sink: some WireSink, logger: Logger,
        delivered: @escaping @Sendable (WireMessage) -> Void = { _ in }
    ) {
        self.wire = wire
        self.sink = sink
        self.logger = logger
        self.delivered = delivered
    }

    deinit {
        for observation in observations.withLock({ $0 }) { observation.cancel() }
    }

    /// Publishes every event of `center`'s activities from now on, of any attributes type: the
    /// brief history of those live now, then each event as it happens, those of activities
    /// requested later from their start (``LiveActivity/ActivityCenter/observeEvents(_:)``).
    /// Each event is queued before the call that caused it returns, so: follow before the first
    /// request and no event is missed, even before ``run()`` starts; and once the program's last
    /// change has returned, ``waitUntilEmpty(within:)`` waits for it too.
    public func follow(_ center: ActivityCenter) {
        observe(center.observeEvents { [weak self] event in self?.publish(event) })
    }

    /// Publishes `activity`'s events: its start and end even when it is followed late (its
    /// history, as ``LiveActivity/Activity/events`` replays it), then every later event until its
    /// dismissal, each queued before the call that caused it returns.
    public func follow<Attributes>(_ activity: Activity<Attributes>) {
        observe(activity.observeEvents { [weak self] event in self?.publish(event) })
    }

    private func observe(_ observation: EventObservation) {
        observations.withLock { $0.append(observation) }
    }

    /// Queues a message of the contract (made by ``wire``) behind those waiting.
    public func enqueue(_ message: WireMessage) {
        let connected = sink.isConnected
        // While a message is in flight, its acknowledgement signals for the next (``finish(_:_:)``).
        let idle = state.withLock { state -> Bool in
            _ = state.queue.enqueue(message, connected: connected)
            return state.queue.inFlight == nil
        }
        if idle { signal.ring() }
    }

    /// Whether nothing waits and nothing is in flight.
    public var isEmpty: Bool { state.withLock { $0.queue.isEmpty } }

    /// How many messages were given up: refused by the sink, or events that could not be encoded.
    public var failedCount: Int { state.withLock { $0.failed } }

    /// Waits, for at most `timeout`, until everything queued is published; returns whether it was.
    public func waitUntilEmpty(within timeout: Duration) async -> Bool {
        await withTimeout(timeout, clock: .continuous) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let empty = self.state.withLock { state -> Bool in
                        guard !state.queue.isEmpty, !Task.isCancelled else { return true }
                        state.emptied.append(continuation)
                        return false
                    }
                    if empty { continuation.resume() }
                }
            } onCancel: {
                self.resumeWaiters { _ in true }
            }
            return self.isEmpty
        } ?? false
    }

    /// Publishes what is queued (the followed centers' and activities' events among it), until
    /// cancelled or graceful shutdown.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await self.send()
        }
        resumeWaiters { _ in true }
    }

    private func publish(_ event: AnyActivityEvent) {
        do {
            enqueue(try event.message(on: wire))
        } catch {
            state.withLock { $0.failed += 1 }
            logger.info(
                "Cannot publish an activity event",
                metadata: [
                    "event": "publisher.encode.failed", "myeline.activity": "\(event.activityID)",
                    "myeline.seq": "\(event.seq)", "error": "\(error)",
                ])
        }
    }

    /// Publishes the queue's messages one at a time. Each goes out through
    /// ``WireSink/publish(_:completion:)``: its acknowledgement is taken where it arrives (the MQTT
    /// client's network thread) and wakes this task only when another message waits, so an
    /// envelope a fix costs no thread wake-up for its PUBACK (issue 24).
    private func send() async {
        while await signal.wait() {
            let next = state.withLock { state -> WireMessage? in
                defer { state.again = nil }
                return state.again ?? state.queue.next()
            }
            guard let message = next else { continue }
            await sink.publish(message) { [self] failure in finish(message, failure) }
        }
    }

    /// The message in flight is done: published (`failure` nil) or given up. A cancelled publish
    /// (the publisher stops) leaves it in flight, as the stop finds it.
    private func finish(_ message: WireMessage, _ failure: (any Error)?) {
        if failure is CancellationError { return }
        if failure is SendAgain {
            state.withLock { $0.again = message }
            signal.ring()
            return
        }
        if let failure {
            state.withLock { $0.failed += 1 }
            logger.info(
                "Cannot publish",
                metadata: [
                    "event": "publisher.publish.failed", "mqtt.topic": "\(message.topic)", "error": "\(failure)",
                ])
        } else {
            logger.debug("Published", metadata: ["event": "publisher.published", "mqtt.topic": "\(message.topic)"])
            delivered(message)
        }
        let waiting = state.withLock { state -> Bool in
            state.queue.done()
            return !state.queue.isEmpty
        }
        resumeWaiters { $0.queue.isEmpty }
        if waiting { signal.ring() }
    }

    private func resumeWaiters(when condition: (State) -> Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard condition(state) else { return [] }
            defer { state.emptied = [] }
            return state.emptied
        }
        for waiter in waiters { waiter.resume() }
    }
}
