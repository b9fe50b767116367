import MyelineConfiguration

// The agent's keys (docs/configuration.md lists them; `ConfigurationKeyTests` checks that each is
// read and documented). The `mqtt.*` keys, `topic-prefix` and `log-level` are MyelineConfiguration's.
extension ConfigurationKey {
    /// This tracker's id.
    static let deviceID = ConfigurationKey("device.id", flag: "--device")
    /// The name shown on the board.
    static let deviceName = ConfigurationKey("device.name")
    /// The vehicle, such as a registration plate.
    static let deviceVehicle = ConfigurationKey("device.vehicle")
    /// The driver's name.
    static let deviceDriver = ConfigurationKey("device.driver")
    /// The trip destination's name.
    static let deviceDestinationName = ConfigurationKey("device.destination.name")
    /// The destination's latitude, degrees.
    static let deviceDestinationLatitude = ConfigurationKey("device.destination.latitude")
    /// The destination's longitude, degrees.
    static let deviceDestinationLongitude = ConfigurationKey("device.destination.longitude")
    /// The activities' relevance score.
    static let devicePriority = ConfigurationKey("device.priority")
    /// Where locations come from: gpsd or a file.
    static let sourceAddress = ConfigurationKey("source.address", flag: "--source")
    /// A file replay's speed.
    static let sourceSpeed = ConfigurationKey("source.speed", flag: "--speed")
    /// Whether a file replay starts again at its end.
    static let sourceLoop = ConfigurationKey("source.loop", flag: "--loop")
    /// How long the source may say nothing.
    static let sourceSilenceTimeout = ConfigurationKey("source.silence-timeout")
    /// Where the activities and the outbox are kept.
    static let stateDirectory = ConfigurationKey("state-directory", flag: "--state-dir")
    /// Whether `run` starts an activity at once.
    static let activityAutostart = ConfigurationKey("activity.autostart")
    /// How long an ended activity stays visible.
    static let activityDismissal = ConfigurationKey("activity.dismissal")
    /// Whether a shutdown ends the activity.
    static let activityEndOnExit = ConfigurationKey("activity.end-on-exit", flag: "--end-on-exit")
    /// The most live activities at once.
    static let activityMaxActivities = ConfigurationKey("activity.max-activities")
    /// The distance that publishes an update, metres.
    static let updatesMinDistance = ConfigurationKey("updates.min-distance")
    /// The shortest interval between updates, seconds.
    static let updatesMinInterval = ConfigurationKey("updates.min-interval")
    /// The longest interval between updates, seconds.
    static let updatesHeartbeat = ConfigurationKey("updates.heartbeat")
    /// The stale date's distance from the last fix, seconds.
    static let updatesStaleAfter = ConfigurationKey("updates.stale-after")
    /// How long without a fix before content without a location, seconds.
    static let updatesNoFixGrace = ConfigurationKey("updates.no-fix-grace")
    /// The most track points kept.
    static let outboxCapacity = ConfigurationKey("outbox.capacity")
    /// What a power cut may lose.
    static let storageDurability = ConfigurationKey("storage.durability")
    /// The interval between two writes of the card, seconds.
    static let storageSyncInterval = ConfigurationKey("storage.sync-interval")
    /// Where the spool is kept.
    static let storageSpoolDirectory = ConfigurationKey("storage.spool-directory")
    /// The geofences, `NAME:LATITUDE:LONGITUDE:RADIUS`.
    static let alertsGeofences = ConfigurationKey("alerts.geofences", isList: true)
    /// The overspeed alert's threshold, m/s.
    static let alertsOverspeedThreshold = ConfigurationKey("alerts.overspeed.threshold")
    /// How long the speed must stay above it, seconds.
    static let alertsOverspeedDuration = ConfigurationKey("alerts.overspeed.duration")
    /// Whether fixes are also published as OwnTracks locations.
    static let ownTracksEnabled = ConfigurationKey("owntracks.enabled")
    /// The OwnTracks topic's user level.
    static let ownTracksUser = ConfigurationKey("owntracks.user")
    /// The OwnTracks topic's device level.
    static let ownTracksDevice = ConfigurationKey("owntracks.device")
    /// The OwnTracks tracker id (`tid`).
    static let ownTracksTrackerID = ConfigurationKey("owntracks.tid")
    /// Whether Home Assistant discovery configs are published.
    static let homeAssistantEnabled = ConfigurationKey("homeassistant.enabled")
    /// Home Assistant's discovery prefix.
    static let homeAssistantPrefix = ConfigurationKey("homeassistant.prefix")
}

extension ConfigurationKey {
    /// Every key the agent reads, in the order `check-config` prints them.
    static let all: [ConfigurationKey] =
        [
            .deviceID, .deviceName, .deviceVehicle, .deviceDriver, .deviceDestinationName, .deviceDestinationLatitude,
            .deviceDestinationLongitude, .devicePriority,
        ]
        + MQTTSettings.keys + [
            .topicPrefix, .sourceAddress, .sourceSpeed, .sourceLoop, .sourceSilenceTimeout, .stateDirectory,
            .activityAutostart, .activityDismissal, .activityEndOnExit, .activityMaxActivities, .updatesMinDistance,
            .updatesMinInterval, .updatesHeartbeat, .updatesStaleAfter, .updatesNoFixGrace, .outboxCapacity,
            .storageDurability, .storageSyncInterval, .storageSpoolDirectory, .alertsGeofences,
            .alertsOverspeedThreshold, .alertsOverspeedDuration, .logLevel,
        ] + AgentConfiguration.integrationKeys

    /// The agent's keys by name.
    static let byName: [String: ConfigurationKey] = agentSchema.byName

    /// The agent's keys and the password variable.
    static let agentSchema = ConfigurationSchema(
        keys: all, otherVariables: [MQTTSettings.passwordVariable], exampleSections: "device: or mqtt:",
        documentation: "docs/configuration.md")
}
