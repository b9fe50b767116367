import AsyncSupport
import Locking
import Logging
import Synchronization

/// An MQTT client on libmosquitto, with async publish and subscribe and automatic reconnection.
///
/// Use it inside `withClient(configuration:logger:_:)`, which starts it, and disconnects and frees
/// it when the body returns or throws. The client connects in the background and reconnects after
/// any loss (``MQTTConnectionStateMachine`` has the policy: a backoff, and prompt retries while a
/// loss is recent), resubscribing its subscriptions each time; watch
/// `connectionEvents` or await `waitUntilConnected()` to follow it. All methods may be called from
/// any task; libmosquitto's blocking calls run on the client's own network thread, never on Swift's
/// cooperative pool.
public final class MQTTClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: MQTTConfiguration
    private let context: ClientContext
    private let handle: MosquittoHandle
    private let loop: NetworkLoop
    /// The topic last published to, checked already: a tracker publishes to the same topic at
    /// every fix, and checking it again cost as much as libmosquitto's whole publish (issue 24).
    private let checkedTopic = Locked<String?>(nil)

    private init(configuration: MQTTConfiguration, logger: Logger, eventLoop: EventLoop?) throws(MQTTError) {
        try configuration.validate()
        self.configuration = configuration
        self.context = ClientContext(configuration: configuration, logger: logger)
        self.handle = try MosquittoHandle(configuration: configuration, context: context)
        self.loop = NetworkLoop(handle: handle, context: context, eventLoop: eventLoop)
    }

    /// Runs `body` with a started client, then disconnects cleanly (no will is sent) and frees it.
    ///
    /// The body runs at once, connected or not: a tracker must work offline. The client is shut
    /// down however the body ends, by return, throw or cancellation.
    ///
    /// With an `eventLoop`, a connection's traffic runs on it once the connection is complete
    /// (the callbacks, the subscriptions' `transform`s and the acknowledgements' completions too),
    /// and a message published from that loop's thread is written in the same turn, without
    /// waking another thread: for a user whose own work runs on that loop (the agent, issue 24).
    /// The loop must outlive the client. Without one, everything runs on the client's network thread.
    /// - Throws: `MQTTError` `.invalidConfiguration` before starting when the configuration or one of
    ///   its files is invalid; otherwise whatever `body` throws.
    public static func withClient<Result>(
        configuration: MQTTConfiguration,
        logger: Logger,
        eventLoop: EventLoop? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (MQTTClient) async throws -> sending Result
    ) async throws -> sending Result {
        let client = try MQTTClient(configuration: configuration, logger: logger, eventLoop: eventLoop)
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
    public var isConnected: Bool { handle.isOpen }

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

    /// Tries to connect at once, and then every second until connected: a wait between attempts is
    /// cut short (an attempt under way goes on). Nothing happens when the client is connected.
    ///
    /// For a client about to stop with messages still to deliver (an agent whose replay ended
    /// before its first connection), whose time is bounded: the backoff may have drawn the next
    /// attempt past it. Once connected, lost connections are paced by the backoff again.
    public func connectNow() {
        loop.connectNow()
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
    public func publishInOrder(_ messages: [MQTTMessage]) async -> (acknowledged: Int, failure: (any Error)?) {
        let outcome = await submitInOrder(messages)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                outcome.whenComplete { continuation.resume(returning: ($0, $1)) }
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    /// Publishes messages in order, all of them in flight at once, as ``publishInOrder(_:)``, but
    /// returns once libmosquitto has them all (offline, once connected) and hands the outcome to
    /// `completion` instead: how many of them, from the first, the broker acknowledged, and the
    /// first failure. `completion` runs once, on the client's network thread as the last
    /// acknowledgement arrives (or before this returns, when a message was refused at once): keep
    /// it short and non-blocking. Nothing else is woken for the acknowledgements, which is the
    /// point (the agent's outbox drainer: one thread wake-up a track point less, issue 24).
    public func publishInOrder(
        _ messages: [MQTTMessage],
        completion: @escaping @Sendable (_ acknowledged: Int, _ failure: (any Error)?) -> Void
    ) async {
        await submitInOrder(messages).whenComplete(completion)
    }

    /// Hands `messages` to libmosquitto in order, up to the first that fails, and follows their
    /// acknowledgements.
    private func submitInOrder(_ messages: [MQTTMessage]) async -> InOrderAcknowledgements {
        var submitted: [(mid: Int32?, topic: String)] = []
        var failure: (any Error)?
        for message in messages {
            do {
                let mid = try await submit(
                    message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
                    properties: message.properties)
                submitted.append((mid, message.topic))
            } catch {
                failure = error
                break
            }
        }
        let outcome = InOrderAcknowledgements(count: submitted.count, submitFailure: failure)
        for (index, message) in submitted.enumerated() {
            guard let mid = message.mid else {
                outcome.resolve(index, with: nil)
                continue
            }
            let topic = message.topic
            context.onAcknowledgement(of: mid) { result in
                outcome.resolve(index, with: Self.failure(of: result, topic: topic))
            }
        }
        return outcome
    }

    /// The error an acknowledgement stands for, if any: a refusal by the broker, or what stood in for it.
    private static func failure(of result: Result<ClientContext.Acknowledgement, any Error>, topic: String)
        -> (any Error)?
    {
        switch result {
        case .success(.published(let reasonCode)) where reasonCode >= 0x80:
            return MQTTError(
                .publishRefused, "broker refused the message to \(topic): \(MosquittoText.reason(reasonCode))")
        case .success:
            return nil
        case .failure(let error):
            return error
        }
    }

    /// Hands a message to libmosquitto; returns the packet id whose acknowledgement to wait for,
    /// nil when none will come (QoS 0, sent or not).
    private func submit(
        _ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTPublishProperties
    ) async throws -> Int32? {
        while true {
            if case .handedOver(let mid) = try handOver(
                topic, payload: payload, qos: qos, retain: retain, properties: properties)
            {
                return mid
            }
            try await awaitConnection()
        }
    }

    /// What ``handOver(_:payload:qos:retain:properties:)`` did with a message.
    private enum HandOver {
        /// libmosquitto has it: the packet id to wait for, nil when none will come.
        case handedOver(Int32?)
        /// Not connected: a QoS 1 or 2 message waits for the connection.
        case offline
    }

    /// Hands a message to libmosquitto, only while connected: a message handed over while its
    /// network thread is inside mosquitto_connect can miss the resend of queued messages and never
    /// go out. Before a connection, QoS 1 and 2 messages wait (``HandOver/offline``) and go out
    /// once connected.
    ///
    /// Synchronous, apart from ``submit(_:payload:qos:retain:properties:)`` and untyped: the Swift
    /// 6.3 compiler crashes (signal 11, splitting the coroutine) on a release build when these
    /// typed-throws calls are inside the async function.
    @inline(never)
    private func handOver(
        _ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTPublishProperties
    ) throws -> HandOver {
        if checkedTopic.withLock({ $0 != topic }) {
            try MQTTTopic.validate(publishTopic: topic)
            checkedTopic.withLock { $0 = topic }
        }
        let sent = try handle.whileOpen { connection throws(MQTTError) in
            try connection.publish(
                topic, payload: payload, qos: qos, retain: retain, properties: properties,
                protocolVersion: configuration.protocolVersion)
        }
        guard let (status, mid) = sent else {
            if qos == .atMostOnce { throw MQTTError(.notConnected, "cannot publish to \(topic): not connected") }
            return .offline
        }
        // A connection lost since: libmosquitto keeps a QoS 1 or 2 message and resends it after
        // the reconnection.
        let queuedOffline = status.isNotConnected && qos != .atMostOnce
        if qos == .atMostOnce || (!status.isSuccess && !queuedOffline) {
            context.ignoreAcknowledgement(of: mid)
            try status.check("cannot publish to \(topic)")
            return .handedOver(nil)
        }
        return .handedOver(mid)
    }

    /// Returns at the next connection (at once when connected).
    /// - Throws: `.clientShutDown` when the client shuts down first, or `CancellationError`.
    private func awaitConnection() async throws {
        for await event in connectionEvents {
            // The first event is the last one reported, which may be a connection that has just
            // ended: only a connection still open counts.
            if case .connected = event, isConnected { return }
        }
        try Task.checkCancellation()
        throw ClientContext.shutDownError
    }

    /// Waits for the broker's acknowledgement of a published message.
    private func confirm(_ mid: Int32, topic: String) async throws {
        let ack = try await context.acknowledgement(of: mid)
        if let failure = Self.failure(of: .success(ack), topic: topic) { throw failure }
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
    ///
    /// With `noLocal` (MQTT 5's No Local), the broker leaves out the messages this client publishes
    /// itself, such as the echo of every retained envelope an agent publishes on the topics it
    /// subscribes to for their retained messages; mosquitto still sends the retained messages at the
    /// subscription, this client's included. Ignored on MQTT 3.1.1, which has no such option. A
    /// filter that another subscription of this client shares gets No Local only if both ask for it.
    public func subscribe(
        to filters: [String], qos: MQTTQoS = .atLeastOnce, noLocal: Bool = false
    ) async throws -> MQTTSubscription<MQTTMessage> {
        try await subscribe(to: filters, qos: qos, noLocal: noLocal) { $0 }
    }

    /// Subscribes to topic filters like ``subscribe(to:qos:)``, yielding what `transform` makes of
    /// each message.
    ///
    /// `transform` runs on the client's network thread as each message arrives, beside the task that
    /// iterates: costly per-message work such as decoding then runs on another core than the consumer.
    /// Keep it short and non-blocking; the client reads nothing else while it runs.
    public func subscribe<Element: Sendable>(
        to filters: [String], qos: MQTTQoS = .atLeastOnce, noLocal: Bool = false,
        transform: @escaping @Sendable (MQTTMessage) -> Element
    ) async throws -> MQTTSubscription<Element> {
        let (stream, continuation) = try makeSubscription(filters, qos: qos, noLocal: noLocal, transform: transform)
        for filter in filters {
            guard try await send([filter], finishingOnFailure: continuation) else { break }
        }
        return MQTTSubscription(stream: stream)
    }

    /// Registers a subscription to `filters` (validated) whose stream unsubscribes, when it ends,
    /// from the filters no other subscription uses.
    private func makeSubscription<Element: Sendable>(
        _ filters: [String], qos: MQTTQoS, noLocal: Bool, transform: @escaping @Sendable (MQTTMessage) -> Element
    ) throws -> (AsyncStream<Element>, AsyncStream<Element>.Continuation) {
        for filter in filters { try MQTTTopic.validate(filter: filter) }
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: .bufferingNewest(configuration.subscriptionBufferSize))
        let sink = ClientContext.SubscriptionSink(continuation, transform: transform)
        let id = try context.addSubscription(filters: filters, qos: qos, noLocal: noLocal, sink: sink)
        continuation.onTermination = { [context, handle] _ in
            // Under the gate: ordered against the connection's changes and the handle's
            // destruction, which a subscriber cancelled during the client's shut-down can race.
            handle.withGate { connection in
                let unused = context.removeSubscription(id)
                guard let connection, !unused.isEmpty else { return }
                context.ignoreAcknowledgement(of: connection.unsubscribe(unused).mid)
            }
        }
        return (stream, continuation)
    }

    /// Sends one SUBSCRIBE for `filters` and waits for its acknowledgement: with the options of
    /// every subscription to them together (``ClientContext/options(of:)``), so that a new
    /// subscription does not lower what an older one to the same filter asked for.
    ///
    /// - Returns: false when there is no point sending more now: offline or connecting (the
    ///   filters go out with the resubscription at the connection), or the connection ended
    ///   before the acknowledgement (libmosquitto does not send a SUBSCRIBE again; the
    ///   resubscription at the next connection carries them).
    /// - Throws: `MQTTError` when libmosquitto refuses the call or the broker the filters; the
    ///   subscription's stream is then finished.
    private func send<Element>(
        _ filters: [String], finishingOnFailure continuation: AsyncStream<Element>.Continuation
    ) async throws -> Bool {
        let described = filters.joined(separator: ", ")
        guard let options = context.options(of: filters) else { return false }
        let noLocal = options.noLocal && configuration.protocolVersion == .v5
        guard let (status, mid) = handle.whileOpen({ $0.subscribe(filters, qos: options.qos, noLocal: noLocal) }),
            !status.isNotConnected
        else { return false }
        guard status.isSuccess else {
            continuation.finish()
            try status.check("cannot subscribe to \(described)")
            return false
        }
        guard let ack = try await acknowledgementUnlessDisconnected(mid) else { return false }
        if case .subscribed(let granted) = ack, let failure = granted.first(where: { $0 >= 0x80 }) {
            continuation.finish()
            throw MQTTError(
                .subscriptionRefused,
                "broker refused the subscription to \(described): \(MosquittoText.reason(failure))")
        }
        return true
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
        let (stream, continuation) = try makeSubscription(filters, qos: qos, noLocal: false, transform: transform)
        _ = try await send(filters, finishingOnFailure: continuation)
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
        let filters = context.subscribedFilters
        let marker = filters.isEmpty ? ["$quiesce/" + configuration.clientID] : filters
        guard let (status, mid) = handle.whileOpen({ $0.unsubscribe(marker) }), status.isSuccess else { return }
        // A task of its own, awaited here, so that the caller's cancellation does not reach the
        // wait: a cancelled body is how a service stops, and the broker must fall silent then too.
        let context = context
        await Task {
            _ = await withTimeout(timeout) { try? await context.acknowledgement(of: mid) }
        }.value
    }
}
