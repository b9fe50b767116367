import FoundationEssentials
import LiveActivity

/// A request on `PREFIX/DEVICE/cmd` (QoS 1, not retained) for the device's agent, answered with a
/// ``CommandResult`` carrying the same `id` on `PREFIX/DEVICE/cmd/result`.
public struct Command: WirePayload, Codable, Hashable, Sendable {
    /// The schema of commands, `myeline.command.v1`.
    public static let schema = "myeline.command.v1"

    /// What the agent is asked to do, like the iOS app's intents.
    public enum Intent: String, CaseIterable, Codable, Hashable, Sendable {
        /// Start tracking and a location activity.
        case start
        /// Stop tracking and end the activity.
        case stop
        /// Pause the trip (distance and elapsed time stop counting).
        case pause
        /// Resume a paused trip.
        case resume
        /// Publish the status and the current activity again.
        case report
        /// Change the running activity's content from afar, as an ActivityKit push update:
        /// ``Command/destination``, ``Command/status``, ``Command/relevanceScore``, ``Command/alert``.
        case update

        /// Whether a command result names this intent: only the five of the contract's first
        /// release do, so that a v1 reader checking a result's `intent` against them keeps working
        /// (docs/topics.md, command result); a result of a later intent is matched by its `id`.
        public var isEchoedInResults: Bool { self != .update }

        /// Decodes the intent, naming the accepted values when the string is none of them.
        public init(from decoder: any Decoder) throws {
            self = try decoder.decodeEnum()
        }
    }

    /// The request id chosen by the sender, 1-128 characters (`id`); the result repeats it.
    public let id: String
    /// What to do (`intent`).
    public let intent: Intent
    /// The activity the command is about (`activity`); nil means the device's current one.
    public let activity: String?
    /// For `start` only: start another activity even when one is running, up to the agent's
    /// limit (`new`); without it, a `start` while an activity runs answers with the running one.
    public let new: Bool
    /// For `start` only: the new activity's attributes, over the agent's configured ones
    /// (`attributes`), as ActivityKit's push-to-start carries them; nil keeps the configured ones.
    public let attributes: Attributes?
    /// For `update`: the activity's new destination (`destination`); progress and ETA count
    /// toward it from now on.
    public let destination: LocationActivityAttributes.Destination?
    /// For `start` and `update`: a status text to show with the activity (`status`), such as
    /// `Out for delivery`.
    public let status: String?
    /// For `start` and `update`: the activity's relevance score from now on (`relevance-score`).
    public let relevanceScore: Double?
    /// For `update`: an alert to show with the change (`alert`).
    public let alert: AlertConfiguration?
    /// When the command was sent (`timestamp`).
    public let timestamp: Date

    /// The attributes a `start` may carry, each replacing the agent's configured one; the device
    /// is always the agent's own.
    public struct Attributes: Codable, Hashable, Sendable {
        /// The display name (`name`).
        public var name: String?
        /// The vehicle (`vehicle`), such as a registration plate.
        public var vehicle: String?
        /// The driver's name (`driver`).
        public var driver: String?
        /// Where the trip goes (`destination`).
        public var destination: LocationActivityAttributes.Destination?

        /// Attributes to send with a `start`; nil ones keep the agent's configured values.
        public init(
            name: String? = nil, vehicle: String? = nil, driver: String? = nil,
            destination: LocationActivityAttributes.Destination? = nil
        ) {
            self.name = name
            self.vehicle = vehicle
            self.driver = driver
            self.destination = destination
        }

        /// Whether no attribute is given.
        public var isEmpty: Bool { self == Attributes() }
    }

    /// The rule for request ids: 1-128 Unicode code points.
    static var idRule: ValueRule<String> { .length(1...128) }

    /// Creates a command.
    ///
    /// - Throws: `ActivityError` `.invalidCommandID` when `id` is empty or longer than 128
    ///   characters, `.invalidActivityID` when `activity` is not a valid id.
    public init(
        id: String, intent: Intent, activity: String? = nil, new: Bool = false, attributes: Attributes? = nil,
        destination: LocationActivityAttributes.Destination? = nil, status: String? = nil,
        relevanceScore: Double? = nil, alert: AlertConfiguration? = nil, timestamp: Date
    ) throws(ActivityError) {
        if let problem = Self.idRule.problem(id) {
            throw ActivityError(.invalidCommandID, "invalid command id \(String(reflecting: id)): \(problem)")
        }
        if let problem = activity.flatMap(ValueRule.activityID.problem) {
            throw ActivityError(.invalidActivityID, problem)
        }
        self.id = id
        self.intent = intent
        self.activity = activity
        self.new = new
        self.attributes = attributes
        self.destination = destination
        self.status = status
        self.relevanceScore = relevanceScore
        self.alert = alert
        self.timestamp = timestamp
    }
}
