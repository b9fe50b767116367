/// The OwnTracks topic layout: a device publishes its locations (and its last will) on
/// `owntracks/USER/DEVICE` and takes commands on `owntracks/USER/DEVICE/cmd`.
public struct OwnTracksTopic: Hashable, Sendable {
    /// The first level of every OwnTracks topic.
    public static let root = "owntracks"
    /// The filter that matches every device's location topic: `owntracks/+/+`.
    public static let allDevices = "\(root)/+/+"

    /// The user level.
    public let user: String
    /// The device level.
    public let device: String

    /// Creates the topics of `user`'s `device`; both must be valid topic levels (``isValidLevel(_:)``).
    public init?(user: String, device: String) {
        guard Self.isValidLevel(user), Self.isValidLevel(device) else { return nil }
        self.user = user
        self.device = device
    }

    /// The topic of an OwnTracks device's location topic, or nil when `topic` is not one
    /// (`owntracks/USER/DEVICE`, exactly three levels).
    public init?(parsing topic: String) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[0] == Self.root else { return nil }
        self.init(user: String(levels[1]), device: String(levels[2]))
    }

    /// `owntracks/USER/DEVICE`: locations and the last will.
    public var location: String { "\(Self.root)/\(user)/\(device)" }
    /// `owntracks/USER/DEVICE/cmd`: commands to the device.
    public var command: String { "\(location)/cmd" }

    /// Whether `level` can be a topic level here: 1-64 characters, none of `/`, `+`, `#`, NUL or a
    /// control character.
    public static func isValidLevel(_ level: String) -> Bool {
        (1...64).contains(level.count)
            && !level.unicodeScalars.contains {
                $0 == "/" || $0 == "+" || $0 == "#" || $0.properties.generalCategory == .control
            }
    }
}
