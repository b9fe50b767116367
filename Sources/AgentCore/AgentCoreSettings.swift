import FoundationEssentials
import LiveActivity
import MyelineWire
import Tracking

/// What the agent core needs of the configuration: plain values, no file or network.
public struct AgentCoreSettings: Hashable, Sendable {
    /// Where locations come from, as far as the core cares.
    public enum SourceKind: Hashable, Sendable {
        /// A live receiver (gpsd): its fix times are true UTC, against which the wall clock is judged.
        case receiver
        /// A recorded file: its times pace the replay and time the trip; every fix is stamped with
        /// the wall clock when it is replayed, so the activity runs in the present.
        case replay
    }

    /// How long a source may say nothing before the activity drops its position.
    public enum SilenceTimeout: Hashable, Sendable {
        /// This many seconds past the usual interval between the source's updates (the longest of
        /// the recent intervals, ``SourceWatch/cadenceWindow`` of them).
        case afterCadence(margin: TimeInterval)
        /// This many seconds, whatever the cadence.
        case fixed(TimeInterval)
        /// Never (a source that reports on its own schedule only).
        case off

        /// The default: 5 s past the usual cadence.
        public static let `default` = SilenceTimeout.afterCadence(margin: 5)
    }

    /// This device.
    public var device: DeviceID
    /// The topics of this device.
    public var topics: TopicTree
    /// The attributes of the activities this device starts.
    public var attributes: LocationActivityAttributes
    /// The tracker's policy: update budget, no-fix grace, alerts.
    public var policy: TrackingPolicy
    /// The most live (not yet dismissed) activities at once.
    public var maximumActivities: Int
    /// How long an ended activity stays before it is dismissed.
    public var dismissal: DismissalSetting
    /// Whether a shutdown ends the running activities (rather than keeping them for the next start).
    public var endOnExit: Bool
    /// Whether an activity starts at once when none runs.
    public var autostart: Bool
    /// The kind of location source.
    public var source: SourceKind
    /// When the source's silence drops the position.
    public var silence: SilenceTimeout
    /// This process's random id, in every status it publishes.
    public var instance: String
    /// Whether the broker connection is MQTT 5, whose message expiry lets the broker clear an
    /// ended activity's retained envelope at its dismissal date even when the agent is gone.
    public var messageExpiry: Bool
    /// The state directory, for the log lines about it.
    public var stateDirectory: String

    /// Creates settings; the defaults are the configuration's.
    public init(
        device: DeviceID, topics: TopicTree, attributes: LocationActivityAttributes, policy: TrackingPolicy,
        maximumActivities: Int = 8, dismissal: DismissalSetting = .immediate, endOnExit: Bool = false,
        autostart: Bool = true, source: SourceKind = .receiver, silence: SilenceTimeout = .default,
        instance: String, messageExpiry: Bool = true, stateDirectory: String = "/var/lib/myeline"
    ) {
        self.device = device
        self.topics = topics
        self.attributes = attributes
        self.policy = policy
        self.maximumActivities = maximumActivities
        self.dismissal = dismissal
        self.endOnExit = endOnExit
        self.autostart = autostart
        self.source = source
        self.silence = silence
        self.instance = instance
        self.messageExpiry = messageExpiry
        self.stateDirectory = stateDirectory
    }
}

/// The dismissal policy of an ended activity, as configured (`activity.dismissal`).
public enum DismissalSetting: Hashable, Sendable {
    /// Visible until four hours after the end (`default`).
    case `default`
    /// Dismissed at once (`immediate`).
    case immediate
    /// Dismissed this many seconds after the end (`after:SECONDS`), at most four hours.
    case after(seconds: Double)

    /// The ActivityKit dismissal policy for an activity that ends at `end`.
    public func policy(endingAt end: Date) -> ActivityUIDismissalPolicy {
        switch self {
        case .default: .default
        case .immediate: .immediate
        case .after(let seconds): .after(end.addingTimeInterval(seconds))
        }
    }
}
