import AgentStore
import Logging
import MQTT

/// Delivers the outbox's track points to the broker in order, oldest first, while connected, at
/// QoS 2: each record is acknowledged in the outbox only after the broker's PUBCOMP, so a point is
/// never lost; with the agent's persistent session, a point in flight when the connection breaks
/// is completed after the reconnection rather than delivered twice (only a crash of the agent
/// between PUBCOMP and the outbox's acknowledgement sends one again).
///
/// ``notify()`` after an append or a reconnection; ``finish()`` makes ``run()`` drain what it
/// can once more and return.
final class OutboxDrainer: Sendable {
    private let outbox: Outbox
    private let blocking: BlockingQueue
    private let client: MQTTClient
    private let logger: Logger
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(outbox: Outbox, blocking: BlockingQueue, client: MQTTClient, logger: Logger) {
        self.outbox = outbox
        self.blocking = blocking
        self.client = client
        self.logger = logger
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a drain: there is something new, or the client reconnected.
    func notify() { signal.yield() }

    /// Asks ``run()`` to drain once more and return.
    func finish() { signal.finish() }

    /// Drains whenever notified, until ``finish()`` or cancellation.
    func run() async {
        for await _ in signals { await drain() }
        await drain()
    }

    /// The points still waiting.
    func pendingCount() async -> Int {
        (try? await blocking.run { [outbox] in outbox.count }) ?? 0
    }

    /// How many records one round publishes, all in flight at once.
    static let batchSize = 256

    private func drain() async {
        let outbox = outbox
        while client.isConnected, !Task.isCancelled {
            let records: [OutboxRecord]
            do {
                records = try await blocking.run { try outbox.peek(max: Self.batchSize) }
            } catch {
                logger.error("Cannot read the outbox", metadata: ["error": "\(error)"])
                return
            }
            guard !records.isEmpty else { return }
            let (acknowledged, failure) = await client.publishInOrder(
                records.map { ($0.topic, $0.payload) }, qos: .exactlyOnce, properties: AgentService.json)
            if let failure { logger.debug("Outbox delivery interrupted", metadata: ["error": "\(failure)"]) }
            guard acknowledged > 0 else { return }
            let delivered = records[acknowledged - 1].index
            do {
                try await blocking.run { try outbox.acknowledge(through: delivered) }
            } catch {
                logger.error("Cannot acknowledge delivered track points", metadata: ["error": "\(error)"])
                return
            }
            if acknowledged < records.count { return }
        }
    }
}
