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
    /// Rung when a drain is asked for.
    private let signal = Doorbell()
    /// Drains asked for and the waiters of each: a waiter is resumed after a drain that began after it asked.
    private let rounds = Locked(Rounds())

    private struct Rounds {
        var requested = 0
        var completed = 0
        var waiters: [(round: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// The round of the batch published and not yet acknowledged (or failed), if one is.
        var inFlight: Int?
        /// Whether a round found a batch in flight and left its work to the round after it.
        var deferred = false
    }

    init(storage: AgentStorage, client: MQTTClient, logger: Logger) {
        self.storage = storage
        self.client = client
        self.logger = logger
    }

    /// Asks for a drain: there is something new, or the client connected.
    func notify() {
        rounds.withLock { $0.requested += 1 }
        signal.ring()
    }

    /// Asks for a drain and waits, for at most `timeout`, until one has run to its end; returns
    /// the points still in the outbox then (nil when the time ran out).
    func drain(within timeout: Duration) async -> Int? {
        let round = rounds.withLock { rounds -> Int in
            rounds.requested += 1
            return rounds.requested
        }
        signal.ring()
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
            while await self.signal.wait() {
                let round = self.rounds.withLock { $0.requested }
                // A round that leaves a batch in flight ends with the batch's acknowledgement.
                if await self.drain(round: round) { continue }
                self.complete(round)
            }
        }
        resume { _ in true }
    }

    /// Round `round` has run to its end: its waiters go on.
    private func complete(_ round: Int) {
        rounds.withLock { $0.completed = max($0.completed, round) }
        resume { $0 <= round }
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

    /// Publishes the outbox's oldest batch, if connected; returns whether it left a batch in
    /// flight, which ends the round when the broker has acknowledged it (and starts the next
    /// round when there is more).
    ///
    /// The last batch is not waited for: its acknowledgement is taken where the MQTT connection
    /// reads it, as it arrives (the agent's event loop; ``AgentStorage/delivered(through:)`` is
    /// memory and a lock), and the drainer is woken again only when there is more to do (a full
    /// batch, a failure, points appended meanwhile). At 1 Hz the PUBCOMP of a point then wakes no
    /// other task (issue 24: it woke the spool's thread, once a fix).
    private func drain(round: Int) async -> Bool {
        let busy = rounds.withLock { rounds -> Bool in
            guard rounds.inFlight != nil else { return false }
            rounds.deferred = true
            return true
        }
        // The batch in flight signals again when it ends: this round is done by the one it starts.
        if busy { return true }
        guard client.isConnected, !Task.isCancelled else { return false }
        let records: [OutboxRecord]
        do {
            records = try await storage.peek(max: Self.batchSize)
        } catch {
            logger.error("Cannot read the outbox", metadata: ["event": "agent.outbox.unreadable", "error": "\(error)"])
            return false
        }
        guard !records.isEmpty else { return false }
        rounds.withLock { $0.inFlight = round }
        let full = records.count == Self.batchSize
        let indices = records.map(\.index)
        await client.publishInOrder(
            records.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .exactlyOnce, properties: .json) }
        ) { [self] acknowledged, failure in
            batchEnded(indices: indices, acknowledged: acknowledged, failure: failure, full: full)
        }
        return true
    }

    /// A batch's outcome, on the MQTT client's network thread (or the drainer's, when a message
    /// was refused at once): takes the delivery of what was acknowledged, and either ends the
    /// batch's round or, when there is more to do, signals a round that publishes it.
    private func batchEnded(indices: [UInt64], acknowledged: Int, failure: (any Error)?, full: Bool) {
        if let failure {
            logger.debug(
                "Outbox delivery interrupted", metadata: ["event": "agent.delivery.interrupted", "error": "\(failure)"])
        }
        if acknowledged > 0 { storage.delivered(through: indices[acknowledged - 1]) }
        let (round, again) = rounds.withLock { rounds -> (Int?, Bool) in
            defer {
                rounds.inFlight = nil
                rounds.deferred = false
            }
            // A whole full batch delivered: the outbox may hold more. A round deferred meanwhile
            // has points appended since. A failure waits for the next notify() (a reconnection).
            return (rounds.inFlight, rounds.deferred || (failure == nil && full))
        }
        if again {
            signal.ring()
        } else if let round {
            complete(round)
        }
    }
}
