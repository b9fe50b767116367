import Locking
import Logging
import Synchronization

/// The state shared by the client's API (any task) and its network thread (libmosquitto callbacks):
/// acknowledgements awaited, subscriptions, connection observers, and what the callbacks report
/// about the current connection attempt.
///
/// Passed to libmosquitto as the user pointer: the callbacks in `Mosquitto/MosquittoCallbacks.swift`
/// turn it back into this object. Its locks are never held while calling into libmosquitto or
/// resuming a continuation; the connection's own life is ``MQTTConnectionStateMachine``'s, and
/// the lock held across libmosquitto calls is ``MosquittoHandle``'s gate, which is taken before
/// these when both are.
final class ClientContext: Sendable {
    let configuration: MQTTConfiguration
    let logger: Logger
    private let state = Locked(State())
    /// What the callbacks saw of the current attempt; the network thread alone reads it.
    private let attempt = Locked(Attempt())
    /// Messages dropped because a subscriber fell `subscriptionBufferSize` messages behind.
    let droppedMessages = Atomic<Int>(0)
    /// Whether every lost connection waits the maximum reconnect delay (`MQTTClient.reconnectSlowly(_:)`).
    let reconnectsSlowly = Atomic<Bool>(false)

    init(configuration: MQTTConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// What the broker said about one packet id (mid): a PUBACK/PUBCOMP reason code, or SUBACK results.
    enum Acknowledgement: Sendable {
        case published(reasonCode: Int32)
        case subscribed(grantedQoS: [Int32])
        case unsubscribed
    }

    /// What is done with an acknowledgement, or the error that stands for it: a task resumed, or a
    /// handler run on the network thread (``onAcknowledgement(of:_:)``).
    typealias AckHandler = @Sendable (Result<Acknowledgement, any Error>) -> Void

    private enum PendingAck {
        case waiting(AckHandler)
        case arrived(Acknowledgement)
        case ignored
    }

    /// Where a subscription's messages go, whatever its element type.
    struct SubscriptionSink: Sendable {
        /// Hands over one message; returns false when the subscriber's buffer was full and a
        /// message was dropped.
        var deliver: @Sendable (MQTTMessage) -> Bool
        /// Ends the subscriber's sequence.
        var finish: @Sendable () -> Void

        /// A sink that runs `transform` on each message (on the network thread) and buffers the
        /// results in `continuation`.
        init<Element: Sendable>(
            _ continuation: AsyncStream<Element>.Continuation,
            transform: @escaping @Sendable (MQTTMessage) -> Element
        ) {
            deliver = { message in
                if case .dropped = continuation.yield(transform(message)) { return false }
                return true
            }
            finish = { continuation.finish() }
        }
    }

    private struct SubscriptionEntry {
        var filters: [String]
        var qos: MQTTQoS
        /// MQTT 5's No Local: the broker leaves out this client's own messages.
        var noLocal: Bool
        var sink: SubscriptionSink
    }

    /// How a filter is subscribed to: the highest QoS any of its subscriptions asks for, and No
    /// Local only when all of them ask for it.
    struct FilterOptions: Hashable, Sendable {
        var qos: MQTTQoS
        var noLocal: Bool
    }

    private struct State {
        var shutDown = false
        var acks: [Int32: PendingAck] = [:]
        var subscriptions: [UInt64: SubscriptionEntry] = [:]
        var observers: [UInt64: AsyncStream<MQTTConnectionEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// The last event reported, which a new observer learns first.
        var lastEvent: MQTTConnectionEvent?

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    /// What libmosquitto's callbacks reported during one connection attempt.
    private struct Attempt {
        /// The session-present flag of a CONNACK success not yet handed to the state machine.
        var acceptance: Bool?
        /// A refusal, a broker's DISCONNECT reason, libmosquitto's last error line.
        var end = MQTTConnectionStateMachine.ConnectionEnd()
    }

    // MARK: The current attempt

    /// Called by the connect callback on the network thread. A success is handed to the state
    /// machine by the network loop once libmosquitto is done with the CONNACK
    /// (``takeAcceptance()``).
    ///
    /// Not in the callback itself: libmosquitto resends the messages left in flight by the last
    /// connection only after that callback returns (`message__retry_check` in `handle__connack`),
    /// so a message published from the callback on could reach the broker before them, and a
    /// track point cut on the way would arrive after the points that follow it.
    func didReceiveConnack(reasonCode: Int32, sessionPresent: Bool) {
        guard reasonCode == 0 else {
            let text = MosquittoText.refusal(reasonCode, protocolVersion: configuration.protocolVersion)
            attempt.withLock { $0.end.refusal = .init(code: reasonCode, text: text) }
            return
        }
        attempt.withLock { $0.acceptance = sessionPresent }
    }

    /// Called by the disconnect callback on the network thread with libmosquitto's code: the
    /// reason code of the broker's DISCONNECT (MQTT 5), or one of libmosquitto's own small error
    /// numbers, which stay below MQTT's failure reason codes (0x80 and above).
    func didDisconnect(code: Int32) {
        guard code >= 0x80 else { return }
        let text = MosquittoText.reason(code)
        attempt.withLock { $0.end.brokerDisconnect = .init(code: code, text: text) }
    }

    /// Called by the log callback on the network thread for a warning or an error.
    func recordLibraryError(_ line: String) {
        attempt.withLock { $0.end.libraryDetail = line }
    }

    /// The session-present flag of a CONNACK success that arrived since the last call, if one did.
    func takeAcceptance() -> Bool? {
        attempt.withLock { attempt in
            defer { attempt.acceptance = nil }
            return attempt.acceptance
        }
    }

    /// What the callbacks reported about the attempt that has just ended (the failure that ended it
    /// is the caller's to add); starts the next one's.
    func takeEnding() -> MQTTConnectionStateMachine.ConnectionEnd {
        attempt.withLock { attempt in
            defer { attempt = Attempt() }
            return attempt.end
        }
    }

    // MARK: Connection events

    func makeEventStream() -> AsyncStream<MQTTConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: MQTTConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> UInt64? in
            guard !state.shutDown else { return nil }
            let id = state.makeID()
            state.observers[id] = continuation
            // A new observer learns where things stand: connected, or why the last attempt failed.
            if let last = state.lastEvent { continuation.yield(last) }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    func broadcast(_ event: MQTTConnectionEvent) {
        let observers = state.withLock { state in
            state.lastEvent = event
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(event) }
    }

    // MARK: Acknowledgements

    /// Waits for the broker's acknowledgement of packet `mid`, which may already have arrived.
    func acknowledgement(of mid: Int32) async throws -> Acknowledgement {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Cancelled before waiting: `onCancel` has run already and found no waiter.
                onAcknowledgement(of: mid, unlessCancelled: true) { continuation.resume(with: $0) }
            }
        } onCancel: {
            let waiting = state.withLock { state -> AckHandler? in
                guard case .waiting(let handler) = state.acks[mid] else { return nil }
                state.acks[mid] = .ignored
                return handler
            }
            waiting?(.failure(CancellationError()))
        }
    }

    /// Runs `handler` with the broker's acknowledgement of packet `mid`, or the error that stands
    /// for it (the client shut down, the session lost): at once when it has arrived already,
    /// otherwise on the network thread when it comes. Nothing is woken for it: for a publisher that
    /// must not be (``MQTTClient/publishInOrder(_:completion:)``). Keep `handler` short.
    func onAcknowledgement(of mid: Int32, _ handler: @escaping AckHandler) {
        onAcknowledgement(of: mid, unlessCancelled: false, handler)
    }

    private func onAcknowledgement(of mid: Int32, unlessCancelled: Bool, _ handler: @escaping AckHandler) {
        let outcome = state.withLock { state -> Result<Acknowledgement, any Error>? in
            if state.shutDown { return .failure(Self.shutDownError) }
            if case .arrived(let ack) = state.acks[mid] {
                state.acks[mid] = nil
                return .success(ack)
            }
            if unlessCancelled && Task.isCancelled {
                state.acks[mid] = .ignored
                return .failure(CancellationError())
            }
            state.acks[mid] = .waiting(handler)
            return nil
        }
        if let outcome { handler(outcome) }
    }

    /// Fails every publish still waiting for its acknowledgement with `error`, and ignores the
    /// acknowledgements that come for them later: called when a reconnection finds that the
    /// broker kept no session, before anything new is sent.
    ///
    /// A QoS 2 message whose PUBREC came from the broker that died is then completed by
    /// libmosquitto's PUBREL and the new broker's PUBCOMP, though the new broker never had it:
    /// only its publisher can send it again. (Subscriptions wait for no acknowledgement across a
    /// connection's end; publishes are the only waiters left at a reconnection.)
    func failUnacknowledged(with error: MQTTError) -> Int {
        let waiting = state.withLock { state -> [AckHandler] in
            var waiting: [AckHandler] = []
            for (mid, pending) in state.acks {
                guard case .waiting(let handler) = pending else { continue }
                waiting.append(handler)
                state.acks[mid] = .ignored
            }
            return waiting
        }
        for handler in waiting { handler(.failure(error)) }
        return waiting.count
    }

    /// Marks packet `mid` as one nobody waits for (QoS 0, a failed call, a resubscription).
    func ignoreAcknowledgement(of mid: Int32) {
        state.withLock { state in
            if case .arrived = state.acks[mid] {
                state.acks[mid] = nil
            } else {
                state.acks[mid] = .ignored
            }
        }
    }

    /// Called by the publish and subscribe callbacks on the network thread.
    func didAcknowledge(_ mid: Int32, _ ack: Acknowledgement) {
        let waiting = state.withLock { state -> AckHandler? in
            switch state.acks.removeValue(forKey: mid) {
            case .waiting(let handler): return handler
            case .ignored: return nil
            case .arrived, nil:
                state.acks[mid] = .arrived(ack)
                return nil
            }
        }
        waiting?(.success(ack))
    }

    // MARK: Subscriptions

    func addSubscription(
        filters: [String], qos: MQTTQoS, noLocal: Bool, sink: SubscriptionSink
    ) throws(MQTTError) -> UInt64 {
        let id = state.withLock { state -> UInt64? in
            guard !state.shutDown else { return nil }
            let id = state.makeID()
            state.subscriptions[id] = SubscriptionEntry(filters: filters, qos: qos, noLocal: noLocal, sink: sink)
            return id
        }
        guard let id else { throw Self.shutDownError }
        return id
    }

    /// Every filter subscribed to now.
    var subscribedFilters: [String] {
        state.withLock { Array(Self.activeFilters($0.subscriptions).keys) }
    }

    /// Removes a subscription; returns the filters no other subscription still needs.
    func removeSubscription(_ id: UInt64) -> [String] {
        state.withLock { state in
            guard let removed = state.subscriptions.removeValue(forKey: id) else { return [] }
            let remaining = Self.activeFilters(state.subscriptions)
            return removed.filters.filter { remaining[$0] == nil }
        }
    }

    /// Called by the message callback on the network thread.
    func deliver(_ message: MQTTMessage) {
        let targets = state.withLock { state in
            state.subscriptions.values.filter { entry in
                entry.filters.contains { MQTTTopic.matches(filter: $0, topic: message.topic) }
            }.map(\.sink)
        }
        for target in targets where !target.deliver(message) {
            droppedMessages.add(1, ordering: .relaxed)
        }
    }

    private static func activeFilters(_ subscriptions: [UInt64: SubscriptionEntry]) -> [String: FilterOptions] {
        var filters: [String: FilterOptions] = [:]
        for entry in subscriptions.values {
            for filter in entry.filters {
                let known = filters[filter]
                filters[filter] = FilterOptions(
                    qos: known.map { $0.qos.rawValue >= entry.qos.rawValue ? $0.qos : entry.qos } ?? entry.qos,
                    noLocal: (known?.noLocal ?? true) && entry.noLocal)
            }
        }
        return filters
    }

    /// How `filters` are subscribed to now, as one SUBSCRIBE for them all would ask: what
    /// ``MQTTClient`` sends for a new subscription, which may share a filter with an older one.
    func options(of filters: [String]) -> FilterOptions? {
        state.withLock { state in
            let active = Self.activeFilters(state.subscriptions)
            let options = filters.compactMap { active[$0] }
            guard let first = options.first else { return nil }
            return FilterOptions(
                qos: options.map(\.qos).max { $0.rawValue < $1.rawValue } ?? first.qos,
                noLocal: options.allSatisfy(\.noLocal))
        }
    }

    /// Subscribes again to every filter, through the gate the network thread has just opened.
    func resubscribe(through connection: MosquittoHandle.OpenHandle) {
        let filters = state.withLock { Self.activeFilters($0.subscriptions) }
        for (filter, options) in filters {
            let (status, mid) = connection.subscribe(
                [filter], qos: options.qos, noLocal: options.noLocal && configuration.protocolVersion == .v5)
            ignoreAcknowledgement(of: mid)
            if let failure = status.failure {
                let error = MQTTError(failure, context: "cannot resubscribe to \(filter)")
                logger.info(
                    "Cannot subscribe again after the reconnection",
                    metadata: ["event": "mqtt.resubscribe.failed", "mqtt.filter": "\(filter)", "error": "\(error)"])
            }
        }
    }

    // MARK: Shut-down

    static let shutDownError = MQTTError(.clientShutDown, "the MQTT client was shut down")

    /// Fails every waiter and finishes every stream; later calls fail at once.
    func shutDown() {
        let (acks, subscriptions, observers) = state.withLock { state in
            state.shutDown = true
            defer {
                state.acks = [:]
                state.subscriptions = [:]
                state.observers = [:]
            }
            return (state.acks, state.subscriptions, state.observers)
        }
        for case .waiting(let handler) in acks.values {
            handler(.failure(Self.shutDownError))
        }
        for entry in subscriptions.values { entry.sink.finish() }
        for observer in observers.values { observer.finish() }
    }
}
