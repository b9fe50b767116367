import Interop
import MyelineConfiguration
import LiveActivity

extension AgentConfiguration {
    /// The OwnTracks output: each accepted fix also published as an OwnTracks `location`.
    struct OwnTracks: Hashable, Sendable {
        /// Whether the agent publishes OwnTracks messages (`owntracks.enabled`); `false` by default.
        var enabled = false
        /// The topic's user level (`owntracks.user`); `myeline` by default.
        var user = "myeline"
        /// The topic's device level (`owntracks.device`); the device id by default.
        var device: String
        /// The tracker id maps show (`owntracks.tid`), 1-2 characters; by default the last two letters
        /// or digits of `owntracks.device` (``OwnTracksLocation/defaultTrackerID(device:)``).
        var trackerID: String

        init(device: String) {
            self.device = device
            trackerID = OwnTracksLocation.defaultTrackerID(device: device)
        }

        /// `owntracks/USER/DEVICE`; valid once read.
        var topic: OwnTracksTopic { OwnTracksTopic(user: user, device: device)! }
    }

    /// Home Assistant MQTT discovery: the tracker and its speed and satellites sensors.
    struct HomeAssistant: Hashable, Sendable {
        /// Whether the agent publishes the discovery configs (`homeassistant.enabled`); `false` by
        /// default. Off, the agent removes the configs it published before.
        var enabled = false
        /// Home Assistant's discovery prefix (`homeassistant.prefix`); `homeassistant` by default.
        var prefix = "homeassistant"
    }

    /// Reads the `owntracks.*` and `homeassistant.*` keys (docs/integrations.md).
    ///
    /// | Key | Type | Default |
    /// |---|---|---|
    /// | `owntracks.enabled` | boolean | `false` |
    /// | `owntracks.user` | topic level, 1-64 characters without `/`, `+`, `#` | `myeline` |
    /// | `owntracks.device` | topic level | `device.id` |
    /// | `owntracks.tid` | 1-2 characters | last two letters or digits of `owntracks.device` |
    /// | `homeassistant.enabled` | boolean | `false` |
    /// | `homeassistant.prefix` | topic levels without `+`, `#` | `homeassistant` |
    mutating func readIntegrations(_ values: KeyReader) throws(ConfigurationError) {
        ownTracks = OwnTracks(device: device.id.rawValue)
        if let enabled = try values.boolean(.ownTracksEnabled) { ownTracks.enabled = enabled }
        for (key, path) in [(ConfigurationKey.ownTracksUser, \OwnTracks.user), (.ownTracksDevice, \OwnTracks.device)] {
            guard let level = try values.string(key) else { continue }
            guard OwnTracksTopic.isValidLevel(level) else {
                throw values.error(
                    key, "\"\(level)\" is not a topic level: use 1-64 characters without '/', '+', '#' (such as van-7)")
            }
            ownTracks[keyPath: path] = level
        }
        ownTracks.trackerID = OwnTracksLocation.defaultTrackerID(device: ownTracks.device)
        if let trackerID = try values.string(.ownTracksTrackerID) {
            guard (1...2).contains(trackerID.count), trackerID.allSatisfy({ !$0.isWhitespace }) else {
                throw values.error(
                    .ownTracksTrackerID, "\"\(trackerID)\" is not a tracker id: use 1 or 2 characters, such as V7")
            }
            ownTracks.trackerID = trackerID
        }
        if let enabled = try values.boolean(.homeAssistantEnabled) { homeAssistant.enabled = enabled }
        if let prefix = try values.string(.homeAssistantPrefix) {
            let levels = prefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard levels.allSatisfy(OwnTracksTopic.isValidLevel) else {
                throw values.error(
                    .homeAssistantPrefix,
                    "\"\(prefix)\" is not a topic prefix: use levels without '+', '#' or empty levels (such as homeassistant)"
                )
            }
            homeAssistant.prefix = prefix
        }
    }

    /// The keys of ``readIntegrations(_:)``, in the order `check-config` prints them.
    static let integrationKeys: [ConfigurationKey] = [
        .ownTracksEnabled, .ownTracksUser, .ownTracksDevice, .ownTracksTrackerID, .homeAssistantEnabled,
        .homeAssistantPrefix,
    ]

    /// The `check-config` rows of ``readIntegrations(_:)``'s keys.
    func integrationRows(_ row: (ConfigurationKey, String?, String) -> (key: String, value: String, source: String))
        -> [(
            key: String, value: String, source: String
        )]
    {
        [
            row(.ownTracksEnabled, String(ownTracks.enabled), "default"),
            row(.ownTracksUser, ownTracks.user, "default"),
            row(.ownTracksDevice, ownTracks.device, ConfigurationKey.deviceID.name),
            row(.ownTracksTrackerID, ownTracks.trackerID, ConfigurationKey.ownTracksDevice.name),
            row(.homeAssistantEnabled, String(homeAssistant.enabled), "default"),
            row(.homeAssistantPrefix, homeAssistant.prefix, "default"),
        ]
    }
}
