import Foundation
import LiveActivity
import Locking
import Logging
import MQTT

/// Notices a second agent with the same device id, reports it, and keeps the two from evicting
/// each other every second.
///
/// The broker lets one connection per client id, and the agent's comes from its device id: when
/// the other agent connects, the broker closes this one's connection. Two signs give it away:
/// the broker's MQTT 5 reason "session taken over" (mosquitto 2.0.15 and later, EMQX, HiveMQ),
/// and, with any broker, an `online` status of another `instance` on this device's own status
/// topic. Not a sign: the retained status at this process's first connection, which an earlier
/// run of this agent left, nor a status from before this process started.
///
/// Once it knows, the agent logs one error that names the device and the fix, and every lost
/// connection waits `mqtt.reconnect.max-delay` before taking the session back: the two agents
/// take turns once per maximum delay. Each later loss is logged at info with its count, and the
/// agent no longer takes the other's retained activities for orphans to end.
final class DeviceConflict: Sendable {
    let device: DeviceID
    let instance: String
    let startedAt: Date
    let clientID: String
    let logger: Logger
    /// Called once, when the conflict is found: the agent makes its client reconnect slowly.
    let onDetected: @Sendable () -> Void
    private let state = Locked(State())

    private struct State {
        var connections = 0
        var detected = false
        var lossesSince = 0
    }

    init(
        device: DeviceID, instance: String, startedAt: Date, clientID: String, logger: Logger,
        onDetected: @escaping @Sendable () -> Void
    ) {
        self.device = device
        self.instance = instance
        self.startedAt = startedAt
        self.clientID = clientID
        self.logger = logger
        self.onDetected = onDetected
    }

    /// Whether another agent with this device id has been seen: its activities, retained on this
    /// device's topics, are then not orphans to end and clear.
    var isDetected: Bool { state.withLock { $0.detected } }

    /// A connection event of the agent's client.
    func observe(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected:
            state.withLock { $0.connections += 1 }
        case .disconnected(let error?):
            let losses = state.withLock { state -> Int? in
                guard state.detected else { return nil }
                state.lossesSince += 1
                return state.lossesSince
            }
            if error.code == .sessionTakenOver { detect(["mqtt.reason": "session taken over"]) }
            guard let losses else { return }
            logger.info(
                "Connection lost while another agent uses this device id",
                metadata: ["myeline.device": "\(device)", "mqtt.losses": "\(losses)"])
        case .disconnected(nil), .connectionFailed:
            break
        }
    }

    /// A status on this device's own topic, `retained` as the broker flagged it.
    func observe(_ status: StatusMessage, retained: Bool) {
        guard status.state == .online, let other = status.instance, other != instance else { return }
        guard let since = status.since, since > startedAt else { return }
        let firstConnection = state.withLock { $0.connections <= 1 }
        if retained && firstConnection { return }
        detect(["myeline.instance.other": "\(other)"])
    }

    private func detect(_ evidence: Logger.Metadata) {
        let first = state.withLock { state in
            defer { state.detected = true }
            return !state.detected
        }
        guard first else { return }
        onDetected()
        logger.error(
            """
            Two agents use this device id: give each tracker its own device.id (each takes the other's \
            broker session over; this one now reconnects after mqtt.reconnect.max-delay)
            """,
            metadata: evidence.merging(
                [
                    "myeline.device": "\(device)", "myeline.instance": "\(instance)",
                    "mqtt.client_id": "\(clientID)",
                ],
                uniquingKeysWith: { $1 }))
    }
}
