import AgentStore
import Logging
import MQTT

/// Delivers the outbox's track points to the broker in order, oldest first, while connected, at
/// QoS 2: each record is acknowledged in the outbox only after the broker's PUBCOMP, so a point is
/// never lost; with the agent's persistent session, a point in flight when the connection breaks
/// is completed after the reconnection rather than delivered twice (only a crash of the agent
/// between PUBCOMP and the outbox's acknowledgement sends one again).
///
/// When the outbox cannot record a delivery (its disk is full), the delivered records are not
/// published again: the drainer retries the acknowledgement at each drain, publishing nothing
/// more until it succeeds, and logs the failure once until then.
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

    /// What ``run()`` carries from one drain to the next.
    private struct Progress {
        /// The last record delivered whose acknowledgement the outbox could not save.
        var unacknowledged: UInt64?
    }

    /// Drains whenever notified, until ``finish()`` or cancellation.
    func run() async {
        var progress = Progress()
        for await _ in signals { await drain(&progress) }
        await drain(&progress)
    }

    /// The points still waiting.
    func pendingCount() async -> Int {
        (try? await blocking.run { [outbox] in outbox.count }) ?? 0
    }

    /// How many records one round publishes, all in flight at once.
    static let batchSize = 256

    private func drain(_ progress: inout Progress) async {
        let outbox = outbox
        if let delivered = progress.unacknowledged {
            guard await acknowledge(through: delivered, &progress) else { return }
        }
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
            guard await acknowledge(through: records[acknowledged - 1].index, &progress) else { return }
            if acknowledged < records.count { return }
        }
    }

    /// Records in the outbox that every record through `index` was delivered; on failure keeps
    /// `index` in `progress` for the next drain and logs once. Returns whether it succeeded.
    private func acknowledge(through index: UInt64, _ progress: inout Progress) async -> Bool {
        let outbox = outbox
        do {
            try await blocking.run { try outbox.acknowledge(through: index) }
        } catch {
            if progress.unacknowledged == nil {
                logger.error(
                    "Cannot record delivered track points in the outbox; holding back the rest until it works",
                    metadata: ["error": "\(error)"])
            }
            progress.unacknowledged = index
            return false
        }
        if progress.unacknowledged != nil {
            logger.notice("Recording delivered track points in the outbox works again")
            progress.unacknowledged = nil
        }
        return true
    }
}
