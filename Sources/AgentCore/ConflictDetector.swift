import FoundationEssentials
import LiveActivity
import MyelineWire

/// Notices a second agent with the same device id: a pure state machine over the agent's
/// connection events and the statuses on its own status topic.
///
/// The broker lets one connection per client id, and the agent's comes from its device id (or,
/// under mosquitto's `use_username_as_clientid`, is its username): when the other agent connects,
/// the broker closes this one's connection. Two signs give it away: the broker's MQTT 5 reason
/// "session taken over" (mosquitto 2.0.15 and later, EMQX, HiveMQ), and, with any broker, an
/// `online` status of another `instance` on this device's own status topic. Not a sign: the
/// retained status at this process's first connection, which an earlier run of this agent left,
/// nor a status from before this process started.
///
/// One sign alone proves nothing: a client that may write this status topic can leave one forged
/// `online` there, and on a broker that does not bind client ids to usernames any client can take
/// the session over once. Only a pattern that two live agents make counts (docs/agent.md, "Presence"):
/// - a takeover and a status of another instance, in either order;
/// - statuses of another instance seen during two distinct connections of this agent (the other
///   agent connected again while this one lives: they take turns);
/// - two takeovers (the other client came back).
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
    /// This process's connections so far (the first is 1).
    public private(set) var connections = 0
    /// Takeovers the broker reported before the conflict was detected.
    private var takeovers = 0
    /// The connection during which the first status of another instance was seen.
    private var statusSeenIn: Int?

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
        if isDetected {
            lossesSince += 1
            return .lostAgain(lossesSince)
        }
        guard sessionTakenOver else { return .nothing }
        takeovers += 1
        guard takeovers >= 2 || statusSeenIn != nil else { return .nothing }
        return detect(evidence: "mqtt.reason", value: "session taken over")
    }

    /// A status on this device's own topic, `retained` as the broker flagged it.
    public mutating func observe(_ status: StatusMessage, retained: Bool) -> Finding {
        guard !isDetected, isAnotherLiveInstance(status), !(retained && connections <= 1),
            let other = status.instance
        else { return .nothing }
        if let first = statusSeenIn {
            guard first != connections else { return .nothing }
        } else {
            statusSeenIn = connections
            guard takeovers > 0 else { return .nothing }
        }
        return detect(evidence: "myeline.instance.other", value: other)
    }

    /// Whether `status` is the `online` of another instance, since this process started.
    func isAnotherLiveInstance(_ status: StatusMessage) -> Bool {
        guard status.state == .online, let other = status.instance, other != instance, let since = status.since
        else { return false }
        return since > startedAt
    }

    private mutating func detect(evidence: String, value: String) -> Finding {
        isDetected = true
        return .detected(evidence: evidence, value: value)
    }
}
