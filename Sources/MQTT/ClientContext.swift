import CMosquitto
import Locking
import Logging
import Synchronization

/// The state shared by the client's API (any task) and its network thread (libmosquitto callbacks).
///
/// Passed to libmosquitto as the user pointer: the callbacks in `Mosquitto/MosquittoCallbacks.swift`
/// turn it back into this object. All mutable state sits behind one `Locked` lock, which is never held
/// while calling into libmosquitto or resuming a continuation.
final class ClientContext: Sendable {
    let configuration: MQTTConfiguration
    let logger: Logger
    private let state = Locked(State())
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

    private enum PendingAck {
        case waiting(CheckedContinuation<Acknowledgement, any Error>)
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
        var sink: SubscriptionSink
    }

    private struct State {
        var connected = false
        var shutDown = false
        var acks: [Int32: PendingAck] = [:]
        var subscriptions: [UInt64: SubscriptionEntry] = [:]
        var observers: [UInt64: AsyncStream<MQTTConnectionEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// A CONNACK refusal seen by the connect callback, for the network loop to report.
        var refusal: MQTTError?
        /// Whether the current connection attempt reached CONNACK success.
        var connectedThisAttempt = false
        /// A CONNACK success the network loop has yet to complete the connection for, with its
        /// session-present flag (``ClientContext/completeConnection(handle:)``).
        var connackPending: Bool?
        /// The last connection attempt's failure or loss, until the next connection.
        var lastFailure: MQTTConnectionEvent?
        /// libmosquitto's last error log line, which carries OpenSSL's reason for a TLS failure.
        var lastLibraryError: String?
        /// The reason code of a DISCONNECT the broker sent (MQTT 5), for the network loop to report.
        var brokerDisconnectReason: Int32?

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    // MARK: Connection state

    var isConnected: Bool { state.withLock { $0.connected } }

    /// Runs `body`, a libmosquitto call that sends, only while connected, and never at the same
    /// time as the connection state changes (CONNACK, end of a connection); nil when not connected.
    func whileConnected<R>(_ body: () -> R) -> R? {
        state.withLock { $0.connected ? body() : nil }
    }

    /// Called by the connect callback on the network thread. A success is completed by
    /// ``completeConnection(handle:)`` once libmosquitto is done with the CONNACK.
    func didReceiveConnack(reasonCode: Int32, sessionPresent: Bool) {
        guard reasonCode == 0 else {
            let error = MQTTError.connectionRefused(
                reasonCode: reasonCode, protocolVersion: configuration.protocolVersion)
            state.withLock { $0.refusal = error }
            return
        }
        state.withLock { state in
            state.connectedThisAttempt = true
            state.connackPending = sessionPresent
        }
    }

    /// Called by the network loop after each round of libmosquitto's loop: when a CONNACK success
    /// arrived in it, the client is connected from now on; publishing resumes and the
    /// subscriptions are sent again.
    ///
    /// Not in the connect callback: libmosquitto resends the messages left in flight by the last
    /// connection only after that callback returns (`message__retry_check` in `handle__connack`),
    /// so a message published from the callback on could reach the broker before them, and a
    /// track point cut on the way would arrive after the points that follow it.
    func completeConnection(handle: OpaquePointer) {
        let completed = state.withLock { state -> (sessionPresent: Bool, filters: [String: MQTTQoS])? in
            guard let sessionPresent = state.connackPending else { return nil }
            state.connackPending = nil
            state.connected = true
            return (sessionPresent, Self.activeFilters(state.subscriptions))
        }
        guard let completed else { return }
        logger.info("mqtt.connected", metadata: ["mqtt.broker": "\(configuration.broker)"])
        resubscribe(completed.filters, handle: handle)
        broadcast(.connected(sessionPresent: completed.sessionPresent))
    }

    /// Called by the network loop when an attempt or a connection ends (`requested`: because the
    /// client is shutting down); returns what to report.
    func endAttempt(returnCode: Int32, requested: Bool) -> MQTTConnectionEvent {
        let (wasConnected, refusal, detail, brokerReason) = state.withLock { state in
            defer {
                state.connected = false
                state.connectedThisAttempt = false
                state.connackPending = nil
                state.refusal = nil
                state.lastLibraryError = nil
                state.brokerDisconnectReason = nil
            }
            return (state.connectedThisAttempt, state.refusal, state.lastLibraryError, state.brokerDisconnectReason)
        }
        if requested { return .disconnected(nil) }
        if let refusal { return .connectionFailed(refusal) }
        if wasConnected, let brokerReason {
            let reason = String(cString: mosquitto_reason_string(brokerReason))
            if brokerReason == Int32(MQTT_RC_SESSION_TAKEN_OVER.rawValue) {
                return .disconnected(
                    MQTTError(
                        .sessionTakenOver,
                        "connection closed by the broker: \(reason): another client connected with client id "
                            + "\(configuration.clientID)"))
            }
            return .disconnected(MQTTError(.connectionLost, "connection closed by the broker: \(reason)"))
        }
        var error =
            MQTTError.from(returnCode: returnCode, context: wasConnected ? "connection lost" : "cannot connect")
            ?? MQTTError(.connectionLost, "connection closed by the broker")
        if let detail, error.code == .tls || error.code == .network { error.message += " (\(detail))" }
        if wasConnected, error.code == .notConnected {
            error = MQTTError(.connectionLost, "connection lost: closed by the broker")
        }
        return wasConnected ? .disconnected(error) : .connectionFailed(error)
    }

    /// Called by the disconnect callback on the network thread with libmosquitto's code: the
    /// reason code of the broker's DISCONNECT (MQTT 5), or one of libmosquitto's own small error
    /// numbers, which stay below MQTT's failure reason codes (0x80 and above).
    func didDisconnect(code: Int32) {
        guard code >= 0x80 else { return }
        state.withLock { $0.brokerDisconnectReason = code }
    }

    func recordLibraryError(_ line: String) {
        state.withLock { $0.lastLibraryError = line }
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
            if state.connected {
                continuation.yield(.connected(sessionPresent: false))
            } else if let failure = state.lastFailure {
                continuation.yield(failure)
            }
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
            if case .connected = event { state.lastFailure = nil } else { state.lastFailure = event }
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(event) }
    }

    // MARK: Acknowledgements

    /// Waits for the broker's acknowledgement of packet `mid`, which may already have arrived.
    func acknowledgement(of mid: Int32) async throws -> Acknowledgement {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = state.withLock { state -> Result<Acknowledgement, any Error>? in
                    if state.shutDown { return .failure(Self.shutDownError) }
                    if case .arrived(let ack) = state.acks[mid] {
                        state.acks[mid] = nil
                        return .success(ack)
                    }
                    // Cancelled before waiting: `onCancel` has run already and found no waiter.
                    if Task.isCancelled {
                        state.acks[mid] = .ignored
                        return .failure(CancellationError())
                    }
                    state.acks[mid] = .waiting(continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Acknowledgement, any Error>? in
                guard case .waiting(let continuation) = state.acks[mid] else { return nil }
                state.acks[mid] = .ignored
                return continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
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
        let waiting = state.withLock { state -> CheckedContinuation<Acknowledgement, any Error>? in
            switch state.acks.removeValue(forKey: mid) {
            case .waiting(let continuation): return continuation
            case .ignored: return nil
            case .arrived, nil:
                state.acks[mid] = .arrived(ack)
                return nil
            }
        }
        waiting?.resume(returning: ack)
    }

    // MARK: Subscriptions

    func addSubscription(filters: [String], qos: MQTTQoS, sink: SubscriptionSink) throws(MQTTError) -> UInt64 {
        let id = state.withLock { state -> UInt64? in
            guard !state.shutDown else { return nil }
            let id = state.makeID()
            state.subscriptions[id] = SubscriptionEntry(filters: filters, qos: qos, sink: sink)
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

    private static func activeFilters(_ subscriptions: [UInt64: SubscriptionEntry]) -> [String: MQTTQoS] {
        var filters: [String: MQTTQoS] = [:]
        for entry in subscriptions.values {
            for filter in entry.filters where (filters[filter]?.rawValue ?? -1) < entry.qos.rawValue {
                filters[filter] = entry.qos
            }
        }
        return filters
    }

    private func resubscribe(_ filters: [String: MQTTQoS], handle: OpaquePointer) {
        for (filter, qos) in filters {
            var mid: Int32 = 0
            let rc = mosquitto_subscribe_v5(handle, &mid, filter, qos.rawValue, 0, nil)
            ignoreAcknowledgement(of: mid)
            if let error = MQTTError.from(returnCode: rc, context: "cannot resubscribe to \(filter)") {
                logger.info("mqtt.resubscribe.failed", metadata: ["mqtt.filter": "\(filter)", "error": "\(error)"])
            }
        }
    }

    // MARK: Shut-down

    static let shutDownError = MQTTError(.clientShutDown, "the MQTT client was shut down")

    /// Fails every waiter and finishes every stream; later calls fail at once.
    func shutDown() {
        let (acks, subscriptions, observers) = state.withLock { state in
            state.shutDown = true
            state.connected = false
            defer {
                state.acks = [:]
                state.subscriptions = [:]
                state.observers = [:]
            }
            return (state.acks, state.subscriptions, state.observers)
        }
        for case .waiting(let continuation) in acks.values {
            continuation.resume(throwing: Self.shutDownError)
        }
        for entry in subscriptions.values { entry.sink.finish() }
        for observer in observers.values { observer.finish() }
    }
}
