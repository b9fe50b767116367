import FoundationEssentials
import LiveActivity

/// The retained message on `PREFIX/DEVICE/status` (QoS 1): whether the device's agent is online.
///
/// The offline message without `since` is also the agent's MQTT will, registered at connect time
/// and published by the broker when the connection is lost; the time of death is unknown then, so
/// receivers use the time they received it.
public struct StatusMessage: WirePayload, Codable, Hashable, Sendable {
    /// The schema of status messages, `myeline.status.v1`.
    public static let schema = "myeline.status.v1"

    /// Whether the agent is connected.
    public enum State: String, CaseIterable, Codable, Hashable, Sendable {
        /// The agent is connected.
        case online
        /// The agent stopped or lost its connection.
        case offline

        /// Decodes the state, naming the accepted values when the string is none of them.
        public init(from decoder: any Decoder) throws {
            self = try decoder.decodeEnum()
        }
    }

    /// Why the agent went offline; receivers must accept values they do not know.
    public struct Reason: RawRepresentable, Codable, Hashable, Sendable {
        /// The agent stopped cleanly, `shutdown`.
        public static let shutdown = Reason(rawValue: "shutdown")
        /// The connection was lost (the will), `connection-lost`.
        public static let connectionLost = Reason(rawValue: "connection-lost")

        /// The reason as written on the wire.
        public let rawValue: String

        /// Wraps a reason as written on the wire.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }
    }

    /// The device (`device`).
    public let device: DeviceID
    /// Online or offline (`state`).
    public let state: State
    /// Since when the state holds (`since`); always set when online, nil in the will.
    public let since: Date?
    /// Why the agent is offline (`reason`), if known.
    public let reason: Reason?
    /// The agent's version (`version`), such as `0.1.0`.
    public let version: String
    /// How many track points the agent has dropped, oldest first, because its outbox was full
    /// while the broker was unreachable (`dropped`), counted since its state directory was
    /// created; nil when not reported.
    public let dropped: UInt64?
    /// A random id of the agent process that published the message (`instance`), 1-64 characters;
    /// nil from agents before it existed. Two agents with the same device id show as two instances.
    public let instance: String?
    /// Why the agent cannot save to its state directory now (`storage-error`), such as a full
    /// disk, naming the file and the system's reason; nil when saving works. While it is set, the
    /// agent keeps publishing its activities' live updates but keeps no track points.
    public let storageError: String?
    /// How far the agent's wall clock is from its receiver's GPS time, in seconds (`clock-offset`):
    /// the clock's reading minus the fix's time, positive when the clock is ahead; nil when they
    /// agree (within 30 s) or when the agent has no receiver to compare with. While it is set, the
    /// agent's own timestamps (`timestamp`, `since`) are off by about that much; fix times and
    /// the stale dates made from them are the receiver's.
    public let clockOffset: Int?
    /// How many times the agent started after a power cut (`power-losses`): it had stopped without
    /// a clean shutdown and the spool it keeps in memory was gone, so the track points of the last
    /// `storage.sync-interval` before the cut that were not yet delivered may be lost (their seqs
    /// are never used again). Counted since its state directory was created; nil when none or
    /// not reported.
    public let powerLosses: UInt64?

    /// The message of an agent that connected at `since`, with the track points it has dropped so
    /// far, why it cannot save to its state directory (if it cannot), its clock's offset from
    /// its receiver (if they disagree) and the power losses it resumed after (if any).
    public static func online(
        device: DeviceID, since: Date, dropped: UInt64? = nil, instance: String? = nil,
        storageError: String? = nil, clockOffset: Int? = nil, powerLosses: UInt64? = nil,
        version: String = Myeline.version
    ) -> StatusMessage {
        StatusMessage(
            device: device, state: .online, since: since, reason: nil, version: version, dropped: dropped,
            instance: instance, storageError: storageError, clockOffset: clockOffset, powerLosses: powerLosses)
    }

    /// The message of an agent that goes offline cleanly at `since`.
    public static func offline(
        device: DeviceID, since: Date, reason: Reason = .shutdown, instance: String? = nil,
        version: String = Myeline.version
    ) -> StatusMessage {
        StatusMessage(
            device: device, state: .offline, since: since, reason: reason, version: version, dropped: nil,
            instance: instance, storageError: nil, clockOffset: nil, powerLosses: nil)
    }

    /// The MQTT will: offline, reason `connection-lost`, without `since`.
    public static func will(device: DeviceID, instance: String? = nil, version: String = Myeline.version)
        -> StatusMessage
    {
        StatusMessage(
            device: device, state: .offline, since: nil, reason: .connectionLost, version: version, dropped: nil,
            instance: instance, storageError: nil, clockOffset: nil, powerLosses: nil)
    }
}
