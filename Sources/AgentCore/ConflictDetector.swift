import Foundation
import LiveActivity

/// Notices a second agent with the same device id: a pure state machine over the agent's
/// connection events and the statuses on its own status topic.
///
/// The broker lets one connection per client id, and the agent's comes from its device id: when
/// the other agent connects, the broker closes this one's connection. Two signs give it away:
/// the broker's MQTT 5 reason "session taken over" (mosquitto 2.0.15 and later, EMQX, HiveMQ),
/// and, with any broker, an `online` status of another `instance` on this device's own status
/// topic. Not a sign: the retained status at this process's first connection, which an earlier
/// run of this agent left, nor a status from before this process started.
///
/// Once it knows, the agent reports it once, reconnects slowly (the two agents take turns once per
/// maximum reconnect delay) and no longer takes the other's retained activities for orphans.
public struct ConflictDetector: Hashable, Sendable {
    /// This process's random id.
    public let instance: String
    /// When this process started.
    public let startedAt: Date
    /// Whether another agent with this device id has been seen.
    public private(set) var isDetected = false
    /// Connection losses since the conflict was detected.
    public private(set) var lossesSince = 0
    private var connections = 0

    /// Creates a detector for the process `instance` started at `startedAt`.
    public init(instance: String, startedAt: Date) {
        self.instance = instance
        self.startedAt = startedAt
    }

    /// What one observation showed.
    public enum Finding: Hashable, Sendable {
        /// Nothing new.
        case nothing
        /// The conflict, just found, by this evidence (a metadata key and value for the log).
        case detected(evidence: String, value: String)
        /// Another connection loss while the conflict lasts: the count since it was found.
        case lostAgain(Int)
    }

    /// The agent's client connected.
    public mutating func connected() {
        connections += 1
    }

    /// The agent's client lost its connection; `sessionTakenOver` when the broker said why.
    public mutating func disconnected(sessionTakenOver: Bool) -> Finding {
        let wasDetected = isDetected
        if wasDetected { lossesSince += 1 }
        if sessionTakenOver, let found = detect(evidence: "mqtt.reason", value: "session taken over") {
            return found
        }
        return wasDetected ? .lostAgain(lossesSince) : .nothing
    }

    /// A status on this device's own topic, `retained` as the broker flagged it.
    public mutating func observe(_ status: StatusMessage, retained: Bool) -> Finding {
        guard status.state == .online, let other = status.instance, other != instance,
            let since = status.since, since > startedAt
        else { return .nothing }
        if retained && connections <= 1 { return .nothing }
        return detect(evidence: "myeline.instance.other", value: other) ?? .nothing
    }

    private mutating func detect(evidence: String, value: String) -> Finding? {
        guard !isDetected else { return nil }
        isDetected = true
        return .detected(evidence: evidence, value: value)
    }
}
