import CMosquitto
import Glibc
import Logging

/// An MQTT client on libmosquitto, with async publish and subscribe and automatic reconnection.
///
/// Use it inside `withClient(configuration:logger:_:)`, which starts it, and disconnects and frees
/// it when the body returns or throws. The client connects in the background and reconnects after
/// any loss with `ReconnectBackoff`, resubscribing its subscriptions each time; watch
/// `connectionEvents` or await `waitUntilConnected()` to follow it. All methods may be called from
/// any task; libmosquitto's blocking calls run on the client's own network thread, never on Swift's
/// cooperative pool.
public final class MQTTClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: MQTTConfiguration
    private let context: ClientContext
    private let handle: MosquittoHandle
    private let loop: NetworkLoop

    private init(configuration: MQTTConfiguration, logger: Logger) throws(MQTTError) {
        try configuration.validate()
        self.configuration = configuration
        self.context = ClientContext(configuration: configuration, logger: logger)
        self.handle = try MosquittoHandle(
            clientID: configuration.clientID, cleanSession: configuration.cleanSession,
            context: Unmanaged.passUnretained(context).toOpaque())
        do {
            try Self.configure(handle, with: configuration)
        } catch {
            handle.destroy()
            throw error
        }
        MosquittoCallbacks.install(on: handle)
        self.loop = NetworkLoop(handle: handle, context: context)
    }

    /// Runs `body` with a started client, then disconnects cleanly (no will is sent) and frees it.
    ///
    /// The body runs at once, connected or not: a tracker must work offline. The client is shut
    /// down however the body ends, by return, throw or cancellation.
    /// - Throws: `MQTTError` `.invalidConfiguration` before starting when the configuration or one of
    ///   its files is invalid; otherwise whatever `body` throws.
    public static func withClient<Result>(
        configuration: MQTTConfiguration,
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (MQTTClient) async throws -> sending Result
    ) async throws -> sending Result {
        let client = try MQTTClient(configuration: configuration, logger: logger)
        client.loop.start()
        let result: Result
        do {
            result = try await body(client)
        } catch {
            await client.shutDown()
            throw error
        }
        await client.shutDown()
        return result
    }

    /// Whether the client is connected to the broker right now.
    public var isConnected: Bool { context.isConnected }

    /// Messages dropped so far because a subscription's consumer fell behind by more than
    /// `subscriptionBufferSize` messages.
    public var droppedMessageCount: Int { context.droppedMessages.load(ordering: .relaxed) }

    /// Makes every lost connection wait the maximum reconnect delay (`true`) rather than the first
    /// step of the backoff, or goes back to the backoff (`false`).
    ///
    /// For a client that learnt that another one uses its client id: each reconnection would evict
    /// the other, which would come back and evict this one. A connection the broker closes with
    /// MQTT 5's "session taken over" waits the maximum delay anyway; MQTT 3.1.1 brokers, and
    /// mosquitto before 2.0.15, close it without saying why.
    public func reconnectSlowly(_ enabled: Bool) {
        context.reconnectsSlowly.store(enabled, ordering: .relaxed)
    }

    /// The connection's changes from now on, starting with where it stands: `.connected` if it is
    /// connected, or the last attempt's failure or loss while it is not.
    ///
    /// Each access makes a new stream; it finishes when the client shuts down.
    public var connectionEvents: AsyncStream<MQTTConnectionEvent> { context.makeEventStream() }

    /// Returns once the client is connected.
    ///
    /// Network failures are waited through (the client keeps retrying); a failure that needs a person
    /// (`MQTTError.needsAttention`: the broker refused the credentials, TLS verification failed) is
    /// thrown, although the client itself keeps retrying in case the broker is fixed.
    /// - Throws: that `MQTTError`, `.clientShutDown`, or `CancellationError`.
    public func waitUntilConnected() async throws {
        for await event in connectionEvents {
            switch event {
            case .connected: return
            case .connectionFailed(let error) where error.needsAttention: throw error
            case .connectionFailed, .disconnected: continue
            }
        }
        try Task.checkCancellation()
        throw ClientContext.shutDownError
    }

    /// Publishes a message.
    ///
    /// - QoS 0 returns once libmosquitto has the message; offline, it throws `.notConnected`.
    /// - QoS 1 and 2 return once the broker acknowledged the message. Offline, the call waits for
    ///   the connection and then sends it; cancelling that wait means the message is not sent. A
    ///   message sent just as the connection is lost stays in libmosquitto's memory and goes out
    ///   again after the reconnection (cancelling then does not take it back).
    /// - Properties are sent with MQTT 5 only.
    /// - Throws: `MQTTError` (`.invalidTopic`, `.payloadTooLarge`, `.notConnected`, `.publishRefused`
    ///   with the broker's reason, `.clientShutDown`), or `CancellationError`.
    public func publish(
        _ topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTPublishProperties = MQTTPublishProperties()
    ) async throws {
        guard let mid = try await submit(topic, payload: payload, qos: qos, retain: retain, properties: properties)
        else {
            return
        }
        try await confirm(mid, topic: topic)
    }

    /// Publishes messages in order, all of them in flight at once, and returns how many of them,
    /// from the first, the broker acknowledged: all of them, or those before the first failure
    /// (which is returned too). Faster than one ``publish(_:payload:qos:retain:properties:)``
    /// after another, which waits a round trip for each; the broker receives them in this order.
    ///
    /// Offline, QoS 1 and 2 messages wait in libmosquitto's queue and this call waits for the
    /// reconnection, as ``publish(_:payload:qos:retain:properties:)`` does.
    public func publishInOrder(
        _ messages: [(topic: String, payload: [UInt8])], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTPublishProperties = MQTTPublishProperties()
    ) async -> (acknowledged: Int, failure: (any Error)?) {
        var submitted: [(mid: Int32?, topic: String)] = []
        var failure: (any Error)?
        for message in messages {
            do {
                let mid = try await submit(
                    message.topic, payload: message.payload, qos: qos, retain: retain, properties: properties)
                submitted.append((mid, message.topic))
            } catch {
                failure = error
                break
            }
        }
        var acknowledged = 0
        for (index, message) in submitted.enumerated() {
            do {
                if let mid = message.mid { try await confirm(mid, topic: message.topic) }
                acknowledged += 1
            } catch {
                for later in submitted[(index + 1)...] {
                    if let mid = later.mid { context.ignoreAcknowledgement(of: mid) }
                }
                return (acknowledged, error)
            }
        }
        return (acknowledged, failure)
    }

    /// Hands a message to libmosquitto; returns the packet id whose acknowledgement to wait for,
    /// nil when none will come (QoS 0, sent or not).
    private func submit(
        _ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTPublishProperties
    ) async throws -> Int32? {
        try MQTTTopic.validate(publishTopic: topic)
        while true {
            var mid: Int32 = 0
            // Only while connected: a message handed to libmosquitto while its network thread is
            // inside mosquitto_connect can miss the resend of queued messages and never go out.
            // Before a connection, QoS 1 and 2 messages wait here and go out once connected.
            let sent = try MosquittoProperties.with(properties, protocolVersion: configuration.protocolVersion) {
                list throws(MQTTError) in
                context.whileConnected {
                    payload.withUnsafeBytes { bytes in
                        mosquitto_publish_v5(
                            handle.pointer, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos.rawValue, retain,
                            list)
                    }
                }
            }
            guard let rc = sent else {
                if qos == .atMostOnce { throw MQTTError(.notConnected, "cannot publish to \(topic): not connected") }
                try await awaitConnection()
                continue
            }
            // A connection lost since: libmosquitto keeps a QoS 1 or 2 message and resends it after
            // the reconnection.
            let queuedOffline = rc == MOSQ_ERR_NO_CONN.rawValue && qos != .atMostOnce
            if qos == .atMostOnce || (rc != MOSQ_ERR_SUCCESS.rawValue && !queuedOffline) {
                context.ignoreAcknowledgement(of: mid)
                try MQTTError.check(rc, "cannot publish to \(topic)")
                return nil
            }
            return mid
        }
    }

    /// Returns at the next connection (at once when connected).
    /// - Throws: `.clientShutDown` when the client shuts down first, or `CancellationError`.
    private func awaitConnection() async throws {
        for await event in connectionEvents {
            if case .connected = event { return }
        }
        try Task.checkCancellation()
        throw ClientContext.shutDownError
    }

    /// Waits for the broker's acknowledgement of a published message.
    private func confirm(_ mid: Int32, topic: String) async throws {
        guard case .published(let reasonCode) = try await context.acknowledgement(of: mid) else { return }
        if reasonCode >= 0x80 {
            throw MQTTError(
                .publishRefused,
                "broker refused the message to \(topic): \(String(cString: mosquitto_reason_string(reasonCode)))")
        }
    }

    /// Subscribes to topic filters; the returned sequence yields every matching message.
    ///
    /// Returns once the broker acknowledged every filter, or at once when offline, or when the
    /// connection is lost before the acknowledgement: the filters are sent as soon as the client
    /// connects, and again after every reconnection. Retained messages
    /// arrive first, flagged `retain`. Ending the iteration (or dropping the sequence) unsubscribes
    /// the filters no other subscription uses.
    /// - Throws: `MQTTError` `.invalidTopic` for a bad filter, `.subscriptionRefused` when the broker
    ///   refuses one (for example by its ACL), `.clientShutDown`; or `CancellationError`.
    public func subscribe(
        to filters: [String], qos: MQTTQoS = .atLeastOnce
    ) async throws -> MQTTSubscription<MQTTMessage> {
        try await subscribe(to: filters, qos: qos) { $0 }
    }

    /// Subscribes to topic filters like ``subscribe(to:qos:)``, yielding what `transform` makes of
    /// each message.
    ///
    /// `transform` runs on the client's network thread as each message arrives, beside the task that
    /// iterates: costly per-message work such as decoding then runs on another core than the consumer.
    /// Keep it short and non-blocking; the client reads nothing else while it runs.
    public func subscribe<Element: Sendable>(
        to filters: [String], qos: MQTTQoS = .atLeastOnce,
        transform: @escaping @Sendable (MQTTMessage) -> Element
    ) async throws -> MQTTSubscription<Element> {
        for filter in filters { try MQTTTopic.validate(filter: filter) }
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: .bufferingNewest(configuration.subscriptionBufferSize))
        let sink = ClientContext.SubscriptionSink(continuation, transform: transform)
        let id = try context.addSubscription(filters: filters, qos: qos, sink: sink)
        continuation.onTermination = { [context, handle] _ in
            for filter in context.removeSubscription(id) {
                var mid: Int32 = 0
                _ = mosquitto_unsubscribe_v5(handle.pointer, &mid, filter, nil)
                context.ignoreAcknowledgement(of: mid)
            }
        }
        for filter in filters {
            var mid: Int32 = 0
            // Offline (or connecting), the filters go out with the resubscription at the connection.
            let rc =
                context.whileConnected { mosquitto_subscribe_v5(handle.pointer, &mid, filter, qos.rawValue, 0, nil) }
                ?? MOSQ_ERR_NO_CONN.rawValue
            if rc == MOSQ_ERR_NO_CONN.rawValue { break }
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                continuation.finish()
                try MQTTError.check(rc, "cannot subscribe to \(filter)")
                break
            }
            guard let ack = try await acknowledgementUnlessDisconnected(mid) else {
                // libmosquitto does not send a SUBSCRIBE again; the resubscription at the next
                // connection carries these filters.
                break
            }
            guard case .subscribed(let granted) = ack else { continue }
            if let failure = granted.first(where: { $0 >= 0x80 }) {
                continuation.finish()
                throw MQTTError(
                    .subscriptionRefused,
                    "broker refused the subscription to \(filter): \(String(cString: mosquitto_reason_string(failure)))"
                )
            }
        }
        return MQTTSubscription(stream: stream)
    }

    /// Subscribes to `filters` like ``subscribe(to:qos:transform:)``, but in one SUBSCRIBE packet, in
    /// their order.
    ///
    /// A broker handles the filters of one packet together and in order: mosquitto queues each
    /// filter's retained messages as it goes, so the retained messages of a later filter are queued
    /// behind those of the earlier ones, or dropped with them when its queue for this client is full
    /// (mosquitto issue 2196). Filters sent one packet after another do not give that: mosquitto
    /// queues a later packet's retained messages once its queue has room again. The board relies on
    /// it to tell a complete retained bootstrap from a cut one (docs/aggregator.md). After a
    /// reconnection the filters are sent again like any subscription's.
    public func subscribeInOnePacket<Element: Sendable>(
        to filters: [String], qos: MQTTQoS = .atLeastOnce,
        transform: @escaping @Sendable (MQTTMessage) -> Element
    ) async throws -> MQTTSubscription<Element> {
        for filter in filters { try MQTTTopic.validate(filter: filter) }
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: .bufferingNewest(configuration.subscriptionBufferSize))
        let sink = ClientContext.SubscriptionSink(continuation, transform: transform)
        let id = try context.addSubscription(filters: filters, qos: qos, sink: sink)
        continuation.onTermination = { [context, handle] _ in
            for filter in context.removeSubscription(id) {
                var mid: Int32 = 0
                _ = mosquitto_unsubscribe_v5(handle.pointer, &mid, filter, nil)
                context.ignoreAcknowledgement(of: mid)
            }
        }
        var strings = filters.map { strdup($0) }
        defer { for string in strings { free(string) } }
        var mid: Int32 = 0
        let rc =
            context.whileConnected {
                strings.withUnsafeMutableBufferPointer { buffer in
                    mosquitto_subscribe_multiple(
                        handle.pointer, &mid, Int32(buffer.count), buffer.baseAddress, qos.rawValue, 0, nil)
                }
            } ?? MOSQ_ERR_NO_CONN.rawValue
        // Offline (or connecting), the filters go out with the resubscription at the connection.
        if rc == MOSQ_ERR_NO_CONN.rawValue { return MQTTSubscription(stream: stream) }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            continuation.finish()
            try MQTTError.check(rc, "cannot subscribe to \(filters.joined(separator: ", "))")
            return MQTTSubscription(stream: stream)
        }
        if case .subscribed(let granted)? = try await acknowledgementUnlessDisconnected(mid),
            let failure = granted.first(where: { $0 >= 0x80 })
        {
            continuation.finish()
            throw MQTTError(
                .subscriptionRefused,
                "broker refused the subscription to \(filters.joined(separator: ", ")): "
                    + String(cString: mosquitto_reason_string(failure)))
        }
        return MQTTSubscription(stream: stream)
    }

    /// The broker's acknowledgement of packet `mid`, or nil if the connection ends first (the
    /// acknowledgement of a SUBSCRIBE then never comes).
    private func acknowledgementUnlessDisconnected(_ mid: Int32) async throws -> ClientContext.Acknowledgement? {
        let (context, events) = (context, connectionEvents)
        return try await withThrowingTaskGroup(of: ClientContext.Acknowledgement?.self) { group in
            group.addTask { try await context.acknowledgement(of: mid) }
            group.addTask {
                for await event in events {
                    if case .connected = event { continue }
                    return nil
                }
                return nil
            }
            // Cancelling the other task marks the acknowledgement as one nobody waits for.
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    private func shutDown() async {
        await quiesce(within: .seconds(2))
        await loop.stop()
        context.shutDown()
        handle.destroy()
    }

    /// Lets the broker fall silent before DISCONNECT: unsubscribes every filter in one packet
    /// (or a filter never subscribed, when there is none) and waits, at most `timeout`, for its
    /// acknowledgement. The broker answers packets in order, so by then it has answered every
    /// earlier one and sends nothing more. Without this, a broker that writes to the socket the
    /// client has just closed takes it for a lost connection and publishes the will.
    private func quiesce(within timeout: Duration) async {
        guard isConnected else { return }
        let filters = context.subscribedFilters
        let marker = filters.isEmpty ? ["$quiesce/" + configuration.clientID] : filters
        var strings = marker.map { strdup($0) }
        defer { for string in strings { free(string) } }
        var mid: Int32 = 0
        let rc = strings.withUnsafeMutableBufferPointer { buffer in
            mosquitto_unsubscribe_multiple(handle.pointer, &mid, Int32(buffer.count), buffer.baseAddress, nil)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return }
        let unsubscribed = mid
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [context] in _ = try? await context.acknowledgement(of: unsubscribed) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private static func configure(_ handle: MosquittoHandle, with configuration: MQTTConfiguration) throws(MQTTError) {
        let mosq = handle.pointer
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try MQTTError.check(
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version), "cannot set the protocol")
        try MQTTError.check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "cannot set TCP_NODELAY")
        if let credentials = configuration.credentials {
            try MQTTError.check(
                mosquitto_username_pw_set(mosq, credentials.username, credentials.password),
                "invalid username \"\(credentials.username)\"")
        }
        if let will = configuration.will {
            var list = try MosquittoProperties.make(will.properties, protocolVersion: configuration.protocolVersion)
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(
                    mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, list)
            }
            // On success libmosquitto owns the property list; on failure it is ours to free.
            if rc != MOSQ_ERR_SUCCESS.rawValue { mosquitto_property_free_all(&list) }
            try MQTTError.check(rc, "invalid will on \(will.topic)")
        }
        if configuration.broker.usesTLS {
            try TLSFiles.configure(mosq, with: configuration.tls)
        }
    }
}
