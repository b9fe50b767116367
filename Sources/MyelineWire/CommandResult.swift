import FoundationEssentials
import LiveActivity

/// The answer on `PREFIX/DEVICE/cmd/result` (QoS 1, not retained) to a ``Command``, with its `id`.
public struct CommandResult: WirePayload, Codable, Hashable, Sendable {
    /// The schema of command results, `myeline.command-result.v1`.
    public static let schema = "myeline.command-result.v1"

    /// The id of the command answered (`id`).
    public let id: String
    /// The intent of the command answered (`intent`); nil when the command had none the agent
    /// knows, or one that results do not name (``Command/Intent/isEchoedInResults``: `update`).
    public let intent: Command.Intent?
    /// Why the command failed (`error`), readable by people; nil when it succeeded.
    public let error: String?
    /// The activity concerned (`activity`), such as the one a `start` created.
    public let activity: String?
    /// When the command was carried out or refused (`timestamp`).
    public let timestamp: Date

    /// Whether the command succeeded (`ok`): true exactly when there is no ``error``.
    public var ok: Bool { error == nil }

    /// The result of a command that succeeded.
    public static func success(for command: Command, activity: String? = nil, timestamp: Date) -> CommandResult {
        CommandResult(
            id: command.id, intent: command.echoedIntent, error: nil, activity: activity, timestamp: timestamp)
    }

    /// The refusal of a command that did not decode but whose `id` could be read.
    public static func malformed(id: String, error: String, timestamp: Date) -> CommandResult {
        CommandResult(id: id, intent: nil, error: error, activity: nil, timestamp: timestamp)
    }

    /// The result of a command that failed, with a readable reason.
    public static func failure(
        for command: Command, error: String, activity: String? = nil, timestamp: Date
    ) -> CommandResult {
        CommandResult(
            id: command.id, intent: command.echoedIntent, error: error, activity: activity, timestamp: timestamp)
    }
}

extension Command {
    /// The intent a result names: the command's, when results name it.
    fileprivate var echoedIntent: Intent? { intent.isEchoedInResults ? intent : nil }
}
