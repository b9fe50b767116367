/// The MQTT topics of a fleet under one prefix (see docs/topics.md):
///
/// - `PREFIX/DEVICE/status`: the device's ``StatusMessage`` (retained, QoS 1);
/// - `PREFIX/DEVICE/activities/ACTIVITY`: the activity's latest ``ActivityEnvelope`` (retained, QoS 1);
/// - `PREFIX/DEVICE/activities/ACTIVITY/track`: ``TrackPoint``s (QoS 2, not retained);
/// - `PREFIX/DEVICE/cmd` and `PREFIX/DEVICE/cmd/result`: ``Command``s and ``CommandResult``s (QoS 1, not retained).
///
/// Activity ids passed in must be valid ids (1-64 characters a-z, 0-9, `.`, `_` or `-`); those of
/// an ``Activity`` and of decoded payloads are.
public struct TopicTree: Hashable, Sendable {
    /// What a received topic is about.
    public enum Route: Hashable, Sendable {
        /// `PREFIX/DEVICE/status`.
        case status(device: DeviceID)
        /// `PREFIX/DEVICE/activities/ACTIVITY`.
        case activity(device: DeviceID, activityID: String)
        /// `PREFIX/DEVICE/activities/ACTIVITY/track`.
        case track(device: DeviceID, activityID: String)
        /// `PREFIX/DEVICE/cmd`.
        case command(device: DeviceID)
        /// `PREFIX/DEVICE/cmd/result`.
        case commandResult(device: DeviceID)
    }

    private enum Level {
        static let status = "status"
        static let activities = "activities"
        static let track = "track"
        static let command = "cmd"
        static let result = "result"
    }

    /// The prefix of every topic.
    public let prefix: TopicPrefix

    /// Creates the tree under `prefix` (`myeline` by default).
    public init(prefix: TopicPrefix = .default) {
        self.prefix = prefix
    }

    /// `PREFIX/DEVICE/status`.
    public func status(device: DeviceID) -> String { topic(device.rawValue, Level.status) }

    /// `PREFIX/DEVICE/activities/ACTIVITY`.
    public func activity(device: DeviceID, activityID: String) -> String {
        topic(device.rawValue, Level.activities, activityID)
    }

    /// `PREFIX/DEVICE/activities/ACTIVITY/track`.
    public func track(device: DeviceID, activityID: String) -> String {
        topic(device.rawValue, Level.activities, activityID, Level.track)
    }

    /// `PREFIX/DEVICE/cmd`.
    public func command(device: DeviceID) -> String { topic(device.rawValue, Level.command) }

    /// `PREFIX/DEVICE/cmd/result`.
    public func commandResult(device: DeviceID) -> String { topic(device.rawValue, Level.command, Level.result) }

    /// The filter for one device's activities, `PREFIX/DEVICE/activities/+`.
    public func activities(device: DeviceID) -> String { topic(device.rawValue, Level.activities, "+") }

    /// The filter for every device's status, `PREFIX/+/status`.
    public var allStatus: String { topic("+", Level.status) }

    /// The filter for every device's activities, `PREFIX/+/activities/+`.
    public var allActivities: String { topic("+", Level.activities, "+") }

    /// The filter for every activity's track points, `PREFIX/+/activities/+/track`.
    public var allTracks: String { topic("+", Level.activities, "+", Level.track) }

    /// The filter for every device's command results, `PREFIX/+/cmd/result`.
    public var allCommandResults: String { topic("+", Level.command, Level.result) }

    /// Parses a received topic; nil for topics outside this prefix, of another shape, or with an
    /// invalid device or activity id.
    public func route(_ topic: String) -> Route? {
        let start = Array((prefix.rawValue + "/").utf8)
        guard topic.utf8.starts(with: start) else { return nil }
        let levels = String(decoding: topic.utf8.dropFirst(start.count), as: UTF8.self)
            .split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let first = levels.first, let device = try? DeviceID(first) else { return nil }
        let rest = Array(levels.dropFirst())
        switch rest.count {
        case 1 where rest[0] == Level.status: return .status(device: device)
        case 1 where rest[0] == Level.command: return .command(device: device)
        case 2 where rest == [Level.command, Level.result]: return .commandResult(device: device)
        case 2 where rest[0] == Level.activities && Identifier.isValid(rest[1]):
            return .activity(device: device, activityID: rest[1])
        case 3 where rest[0] == Level.activities && Identifier.isValid(rest[1]) && rest[2] == Level.track:
            return .track(device: device, activityID: rest[1])
        default: return nil
        }
    }

    private func topic(_ device: String, _ levels: String...) -> String {
        ([prefix.rawValue, device] + levels).joined(separator: "/")
    }
}
