import LiveActivity

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
    ///
    /// Reads the topic's bytes: a board routes every message it receives, and splitting the topic as
    /// a `String` (by `Character`) cost about 10,000 instructions a message.
    public func route(_ topic: String) -> Route? {
        var (topic, prefix) = (topic, prefix.rawValue)
        return topic.withUTF8 { topic in prefix.withUTF8 { prefix in route(topic, under: prefix) } }
    }

    private func route(_ topic: UnsafeBufferPointer<UInt8>, under prefix: UnsafeBufferPointer<UInt8>) -> Route? {
        guard topic.count > prefix.count, topic.starts(with: prefix), topic[prefix.count] == Self.separator else {
            return nil
        }
        // The levels after the prefix, up to four; ids and level names are ASCII, so byte levels are
        // the topic's levels wherever it can match.
        var levels: [Range<Int>] = []
        var start = prefix.count + 1
        while levels.count < 5 {
            let end = topic[start...].firstIndex(of: Self.separator) ?? topic.count
            levels.append(start..<end)
            if end == topic.count { break }
            start = end + 1
        }
        func text(_ index: Int) -> String { String(decoding: topic[levels[index]], as: UTF8.self) }
        func level(_ index: Int, is name: String) -> Bool {
            var name = name
            return name.withUTF8 { topic[levels[index]].elementsEqual($0) }
        }
        func activityID(_ index: Int) -> String? {
            let id = text(index)
            return Identifier.isValid(id) ? id : nil
        }
        guard let device = try? DeviceID(text(0)) else { return nil }
        switch levels.count {
        case 2 where level(1, is: Level.status): return .status(device: device)
        case 2 where level(1, is: Level.command): return .command(device: device)
        case 3 where level(1, is: Level.command) && level(2, is: Level.result): return .commandResult(device: device)
        case 3 where level(1, is: Level.activities):
            return activityID(2).map { .activity(device: device, activityID: $0) }
        case 4 where level(1, is: Level.activities) && level(3, is: Level.track):
            return activityID(2).map { .track(device: device, activityID: $0) }
        default: return nil
        }
    }

    private static let separator = UInt8(ascii: "/")

    private func topic(_ device: String, _ levels: String...) -> String {
        ([prefix.rawValue, device] + levels).joined(separator: "/")
    }
}
