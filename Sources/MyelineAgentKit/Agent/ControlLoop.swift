import AgentCore
import AgentStore
import AsyncSupport
import FoundationEssentials
import LiveActivity
import MyelineWire
import LiveActivityMQTT
import Logging
import MQTT
import ServiceLifecycle

/// The shell around ``AgentCore/AgentCore``: it feeds the core the inbox's events in batches, and
/// ``AgentCore/AgentCore/Event/tick`` at the core's deadline, and performs the actions the core
/// returns, in order: saves, then hands messages to the `ActivityPublisher`, asks the
/// ``OutboxDrainer`` to deliver, forwards fixes to the integrations, logs.
///
/// Returns when the core finishes: the source ended (a replay without a loop), or on graceful
/// shutdown (SIGTERM, SIGINT), which it turns into the core's `shutdown` event. Then it winds
/// down within ``drainTimeout``: the last envelopes are published, the outbox is delivered as
/// far as the broker allows, and `offline` is published, each only while connected (offline
/// the will tells the story). A source that failed makes it throw afterwards: the agent exits
/// non-zero.
///
/// It runs on the storage's spool thread (a task executor preference), not on Swift's pool.
struct ControlLoop: Service, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "ControlLoop" }

    let settings: AgentCoreSettings
    let inbox: AgentInbox
    let storage: AgentStorage
    let publisher: ActivityPublisher
    let drainer: OutboxDrainer
    let client: MQTTClient
    let integrations: IntegrationLink?
    let clock: any WallClock
    let logger: Logger
    /// How long the wind-down may take, all steps together.
    let drainTimeout: Duration

    /// How the core's run ended.
    private struct Finish {
        var failure: String?
        var farewell: StatusMessage
    }

    /// The monotonic clock's origin, for the core's `uptime`.
    private static let origin = ContinuousClock.now

    /// Seconds on the monotonic clock: what the core measures durations with.
    private var uptime: TimeInterval { (ContinuousClock.now - Self.origin).inSeconds }

    func run() async throws {
        // On the spool's thread: a batch's append (``AgentStorage/persist(points:records:milestones:)``)
        // runs there at once, without a hop to that thread and back (issue 24). The loop's own
        // work is short; the calls of the drainer's that reach the spool run in turn with it.
        try await withTaskExecutorPreference(storage.spoolExecutor) { try await loop() }
    }

    private func loop() async throws {
        var core = AgentCore(settings: settings, now: clock.now, uptime: uptime) { UUID().uuidString.lowercased() }
        let finish = await withGracefulShutdownHandler {
            // Before any other event: the resume must know the saved activities before it sees
            // the retained ones (else they look like orphans).
            let saved = await storage.load(tail: AgentInbox.defaultCapacity * settings.maximumActivities)
            var finish = await perform(
                core.handle(
                    .started(
                        saved: saved.saved, outboxTail: saved.outboxTail, dropped: saved.dropped,
                        powerLosses: saved.powerLosses),
                    now: clock.now, uptime: uptime), core: &core)
            finish = await inbox.withAlarm(clock: clock) {
                while finish == nil, let batch = await inbox.next(until: core.nextDeadline, clock: clock) {
                    finish = await perform(
                        core.handle(batch.isEmpty ? [.tick] : batch, now: clock.now, uptime: uptime), core: &core)
                }
                return finish
            }
            if let finish { return finish }
            // The inbox finished without a shutdown event: shut down all the same.
            return await perform(core.handle(.shutdown, now: clock.now, uptime: uptime), core: &core)
                ?? Finish(farewell: .offline(device: settings.device, since: clock.now, instance: settings.instance))
        } onGracefulShutdown: {
            inbox.post(.shutdown)
        }
        await windDown(finish, core: &core)
        if let failure = finish.failure {
            throw CommandFailure(.unavailable, "the location source failed: \(failure)")
        }
    }

    /// Performs `actions` in order, and the actions of the events they report back (what the disk
    /// said); returns the finish when one of them is the core's.
    private func perform(_ actions: [AgentCore.Action], core: inout AgentCore) async -> Finish? {
        var queue = actions[...]
        var finish: Finish?
        while let action = queue.popFirst() {
            switch action {
            case .persist(let points, let records, let milestones):
                let (failure, dropped) = await storage.persist(points: points, records: records, milestones: milestones)
                queue += core.handle(.persisted(failure: failure, dropped: dropped), now: clock.now, uptime: uptime)
            case .publish(let message):
                publish(message)
            case .removeState(let activityID):
                await storage.remove(activityID: activityID)
            case .deliverPoints:
                drainer.notify()
            case .reconnectSlowly:
                client.reconnectSlowly(true)
            case .forward(let fix):
                integrations?.send(fix)
            case .log(let entry):
                logger.log(
                    level: entry.level, "\(entry.message)", metadata: entry.metadata.mapValues { .string($0) })
            case .finish(let failure, let farewell):
                finish = Finish(failure: failure, farewell: farewell)
            }
        }
        return finish
    }

    /// Queues one of the core's messages on the publisher.
    private func publish(_ message: AgentCore.Outgoing) {
        do {
            publisher.enqueue(try publisher.wire.message(for: message))
        } catch {
            logger.error("Cannot encode a message", metadata: ["event": "agent.encode.failed", "error": "\(error)"])
        }
    }

    /// Publishes the last envelopes, delivers the outbox and says `offline`, within ``drainTimeout``.
    private func windDown(_ finish: Finish, core: inout AgentCore) async {
        let deadline = ContinuousClock.now.advanced(by: drainTimeout)
        func remaining() -> Duration { max(.zero, deadline - ContinuousClock.now) }
        if !core.hasConnected, !client.isConnected {
            // Not an outage: the start (a short replay can end before the first connection is
            // made). Its connection is waited for, within the bound, and tried at once: the
            // backoff may have drawn the next attempt past the bound (up to 10 s ahead).
            let client = client
            logger.info("Connecting at once to deliver before stopping", metadata: ["event": "agent.drain.connect"])
            client.connectNow()
            _ = await withTimeout(remaining()) { try? await client.waitUntilConnected() }
        }
        guard client.isConnected else {
            logger.warning(
                "Shutting down offline: the last envelopes, the track points in the outbox and offline are not published; the will says offline",
                metadata: ["event": "agent.shutdown.offline"]
            )
            return
        }
        // A connection not seen yet is announced; clears that reached the broker end their activities.
        _ = await perform(core.handle(inbox.takeAll() ?? [], now: clock.now, uptime: uptime), core: &core)
        if await !publisher.waitUntilEmpty(within: remaining()) {
            logger.warning(
                "Shutting down before the activities' last envelopes were published",
                metadata: ["event": "agent.shutdown.envelopes-unpublished"])
        }
        _ = await perform(core.handle(inbox.takeAll() ?? [], now: clock.now, uptime: uptime), core: &core)
        if let pending = await drainer.drain(within: remaining()), pending == 0 {
            logger.debug("Every track point was delivered", metadata: ["event": "agent.shutdown.delivered"])
        } else {
            let pending = await storage.pendingCount()
            logger.warning(
                "Shutting down with undelivered track points",
                metadata: ["event": "agent.shutdown.undelivered", "outbox.count": "\(pending)"])
        }
        publish(.status(finish.farewell))
        if await !publisher.waitUntilEmpty(within: max(remaining(), .seconds(1))) {
            logger.warning(
                "Shutting down without publishing offline: the broker did not acknowledge it",
                metadata: ["event": "agent.shutdown.farewell-unacknowledged"])
        }
    }
}
