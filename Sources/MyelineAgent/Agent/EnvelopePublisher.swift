import Foundation
import LiveActivity
import Logging
import MQTT
import Synchronization

/// Publishes one activity's events in order: each start, update and end as a retained QoS 1
/// envelope on the activity's topic, the dismissal as a zero-length retained message.
///
/// ``run(_:)`` returns after the dismissal, or after the event ``stop(after:)`` names.
final class EnvelopePublisher: Sendable {
    private let client: MQTTClient
    private let device: DeviceID
    private let topic: String
    private let logger: Logger
    private let progress = Mutex<(published: Int, stopAt: Int?)>((0, nil))

    init(client: MQTTClient, device: DeviceID, topic: String, logger: Logger) {
        self.client = client
        self.device = device
        self.topic = topic
        self.logger = logger
    }

    /// Publishes every event of `events` until the activity is dismissed or ``stop(after:)`` says so.
    func run(_ events: ActivityUpdates<ActivityEvent<LocationActivityAttributes>>) async {
        for await event in events {
            do {
                let payload = try ActivityEnvelope(event: event, device: device).map(WireCodec.encode) ?? Data()
                try await client.publish(
                    topic, payload: Array(payload), qos: .atLeastOnce, retain: true, properties: AgentService.json)
                logger.debug(
                    "Published an activity event",
                    metadata: ["myeline.activity": "\(event.activityID)", "myeline.seq": "\(event.seq)"])
            } catch is CancellationError {
                return
            } catch {
                logger.error(
                    "Cannot publish an activity event",
                    metadata: ["myeline.seq": "\(event.seq)", "error": "\(error)"])
            }
            let done = progress.withLock { progress in
                progress.published = event.seq
                return progress.stopAt.map { event.seq >= $0 } ?? false
            }
            if done { return }
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
}
