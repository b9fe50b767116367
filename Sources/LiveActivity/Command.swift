import Foundation

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

        /// Decodes the intent, naming the accepted values when the string is none of them.
        public init(from decoder: any Decoder) throws {
            self = try decoder.decodeWireEnum()
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
    /// When the command was sent (`timestamp`).
    public let timestamp: Date

    /// The rule for request ids: 1-128 Unicode code points.
    static var idRule: WireRule<String> { .length(1...128) }

    /// Creates a command.
    ///
    /// - Throws: `ActivityError` `.invalidCommandID` when `id` is empty or longer than 128
    ///   characters, `.invalidActivityID` when `activity` is not a valid id.
    public init(
        id: String, intent: Intent, activity: String? = nil, new: Bool = false, timestamp: Date
    ) throws(ActivityError) {
        if let problem = Self.idRule.problem(id) {
            throw ActivityError(.invalidCommandID, "invalid command id \(String(reflecting: id)): \(problem)")
        }
        if let problem = activity.flatMap(WireRule.activityID.problem) {
            throw ActivityError(.invalidActivityID, problem)
        }
        self.id = id
        self.intent = intent
        self.activity = activity
        self.new = new
        self.timestamp = timestamp
    }
}
