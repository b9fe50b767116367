import Foundation
import LiveActivity
import Locking
import Logging
import MQTT

/// Publishes one activity's events in order: each start, update and end as a retained QoS 1
/// envelope on the activity's topic, the dismissal as a zero-length retained message.
///
/// Updates coalesce: while one envelope waits for the broker (offline, or a slow link), a newer
/// update replaces an older one still waiting, so after an outage the broker gets the latest
/// content rather than every update missed. Starts, ends and the dismissal are never skipped.
///
/// ``run(_:)`` returns after the dismissal, or after the event ``stop(after:)`` names.
final class EnvelopePublisher: Sendable {
    private let client: MQTTClient
    private let device: DeviceID
    private let topic: String
    private let logger: Logger

    fileprivate struct Progress {
        /// Events received and not yet published, oldest first; at most one update at the end.
        var waiting: [ActivityEvent<LocationActivityAttributes>] = []
        /// The seq of the last event published (or given up).
        var published = 0
        /// The seq after which ``run(_:)`` returns.
        var stopAt: Int?
    }

    private let progress = Locked(Progress())

    init(client: MQTTClient, device: DeviceID, topic: String, logger: Logger) {
        self.client = client
        self.device = device
        self.topic = topic
        self.logger = logger
    }

    /// Publishes the events of `events` until the activity is dismissed or ``stop(after:)`` says so.
    ///
    /// - Returns: whether the dismissal reached the broker (the retained envelope is cleared).
    @discardableResult
    func run(_ events: ActivityUpdates<ActivityEvent<LocationActivityAttributes>>) async -> Bool {
        let (ready, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    self.progress.withLock { $0.enqueue(event) }
                    signal.yield()
                }
                signal.finish()
            }
            var cleared = false
            for await _ in ready {
                if let outcome = await publishWaiting() {
                    cleared = outcome
                    break
                }
            }
            group.cancelAll()
            return cleared
        }
    }

    /// Where publishing stands, for logs: the last seq published, those waiting, the stop seq.
    var state: String {
        progress.withLock { progress in
            "published \(progress.published), waiting \(progress.waiting.map(\.seq)), stop after \(progress.stopAt.map(String.init) ?? "-")"
        }
    }

    /// Asks ``run(_:)`` to return once event `seq` is published.
    ///
    /// - Returns: whether it is published already (then `run` waits for a next event: cancel it).
    func stop(after seq: Int) -> Bool {
        progress.withLock { progress in
            progress.stopAt = seq
            return progress.published >= seq
        }
    }

    /// Publishes what waits, oldest first; returns nil while ``run(_:)`` goes on, or when it is
    /// done, whether the dismissal reached the broker.
    private func publishWaiting() async -> Bool? {
        while let event = progress.withLock({ $0.waiting.first }) {
            var delivered = false
            do {
                let payload = try ActivityEnvelope(event: event, device: device).map(WireCodec.encode) ?? Data()
                try await client.publish(
                    topic, payload: Array(payload), qos: .atLeastOnce, retain: true, properties: AgentService.json)
                delivered = true
                logger.debug(
                    "Published an activity event",
                    metadata: ["myeline.activity": "\(event.activityID)", "myeline.seq": "\(event.seq)"])
            } catch is CancellationError {
                return false
            } catch {
                logger.error(
                    "Cannot publish an activity event",
                    metadata: ["myeline.seq": "\(event.seq)", "error": "\(error)"])
            }
            let done = progress.withLock { progress in
                progress.waiting.removeFirst()
                progress.published = event.seq
                return progress.stopAt.map { event.seq >= $0 } ?? false
            }
            if event.kind == .dismissed { return delivered }
            if done { return false }
        }
        return nil
    }
}

extension EnvelopePublisher.Progress {
    /// Adds an event; an update replaces an update waiting behind the one being published (the
    /// first waiting).
    fileprivate mutating func enqueue(_ event: ActivityEvent<LocationActivityAttributes>) {
        if case .update = event.kind, waiting.count >= 2, case .update = waiting[waiting.count - 1].kind {
            waiting[waiting.count - 1] = event
        } else {
            waiting.append(event)
        }
    }
}
