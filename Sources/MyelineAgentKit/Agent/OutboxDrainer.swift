import AgentStore
import AsyncSupport
import Locking
import Logging
import MQTT
import ServiceLifecycle

/// Delivers the outbox's track points to the broker in order, oldest first, while connected, at
/// QoS 2: each record is taken as delivered only after the broker's PUBCOMP, so a point is never
/// lost; with the agent's persistent session, a point in flight when the connection breaks is
/// completed after the reconnection rather than delivered twice (only a crash of the agent
/// between PUBCOMP and the spool's record of it, made with the next fix, sends one again).
///
/// The points just appended come from memory and their delivery is taken in memory
/// (``AgentStorage/peek(max:)``, ``AgentStorage/delivered(through:)``): at 1 Hz a fix costs the
/// drainer no call to the storage's thread. When the outbox cannot record a delivery (its disk is
/// full), the storage logs it once and retries with each call; the points are not published again.
///
/// ``notify()`` after an append or a connection. Graceful shutdown: returns at once, cancelling a
/// delivery that waits for the broker; the control loop, which shuts down first, has already
/// waited (``drain(within:)``) for what it could deliver.
final class OutboxDrainer: Service, CustomStringConvertible, Sendable {
    /// What service-lifecycle logs for this service.
    var description: String { "OutboxDrainer" }

    private let storage: AgentStorage
    private let client: MQTTClient
    private let logger: Logger
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation
    /// Drains asked for and the waiters of each: a waiter is resumed after a drain that began after it asked.
    private let rounds = Locked(Rounds())

    private struct Rounds {
        var requested = 0
        var completed = 0
        var waiters: [(round: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    init(storage: AgentStorage, client: MQTTClient, logger: Logger) {
        self.storage = storage
        self.client = client
        self.logger = logger
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a drain: there is something new, or the client connected.
    func notify() {
        rounds.withLock { $0.requested += 1 }
        signal.yield()
    }

    /// Asks for a drain and waits, for at most `timeout`, until one has run to its end; returns
    /// the points still in the outbox then (nil when the time ran out).
    func drain(within timeout: Duration) async -> Int? {
        let round = rounds.withLock { rounds -> Int in
            rounds.requested += 1
            return rounds.requested
        }
        signal.yield()
        let done: Void? = await withTimeout(timeout) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let finished = self.rounds.withLock { rounds -> Bool in
                        guard rounds.completed < round, !Task.isCancelled else { return true }
                        rounds.waiters.append((round, continuation))
                        return false
                    }
                    if finished { continuation.resume() }
                }
            } onCancel: {
                self.resume { _ in true }
            }
        }
        guard done != nil else { return nil }
        return await storage.pendingCount()
    }

    func run() async {
        // On the spool's thread, with the control loop: the loop's notify() after an append
        // resumes the drainer on the thread that is already awake, and the broker's PUBCOMP
        // wakes that one thread, rather than a thread of Swift's pool each (issue 24). The
        // drainer's calls block on nothing (the points come from memory, the publish is
        // libmosquitto's queue).
        await withTaskExecutorPreference(storage.spoolExecutor) { await loop() }
    }

    private func loop() async {
        await cancelWhenGracefulShutdown {
            for await _ in self.signals {
                let round = self.rounds.withLock { $0.requested }
                await self.drain()
                self.rounds.withLock { $0.completed = max($0.completed, round) }
                self.resume { $0 <= round }
            }
        }
        resume { _ in true }
    }

    private func resume(_ due: (Int) -> Bool) {
        let ready = rounds.withLock { rounds -> [CheckedContinuation<Void, Never>] in
            let ready = rounds.waiters.filter { due($0.round) }.map(\.continuation)
            rounds.waiters.removeAll { due($0.round) }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// How many records one round publishes, all in flight at once.
    static let batchSize = 256

    private func drain() async {
        while client.isConnected, !Task.isCancelled {
            let records: [OutboxRecord]
            do {
                records = try await storage.peek(max: Self.batchSize)
            } catch {
                logger.error(
                    "Cannot read the outbox", metadata: ["event": "agent.outbox.unreadable", "error": "\(error)"])
                return
            }
            guard !records.isEmpty else { return }
            let (acknowledged, failure) = await client.publishInOrder(
                records.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .exactlyOnce, properties: .json) })
            if let failure {
                logger.debug(
                    "Outbox delivery interrupted",
                    metadata: ["event": "agent.delivery.interrupted", "error": "\(failure)"])
            }
            guard acknowledged > 0 else { return }
            storage.delivered(through: records[acknowledged - 1].index)
            // A short batch was all there was: a point appended since then comes with its own
            // notify(), so reading the outbox again would find nothing.
            if acknowledged < records.count || records.count < Self.batchSize { return }
        }
    }
}
