import MyelineConfiguration

extension ConfigurationKey {
    /// Every key the agent reads, in the order `check-config` prints them.
    static let all: [ConfigurationKey] =
        [
            ConfigurationKey("device.id", flag: "--device"),
            ConfigurationKey("device.name"),
            ConfigurationKey("device.vehicle"),
            ConfigurationKey("device.driver"),
            ConfigurationKey("device.destination.name"),
            ConfigurationKey("device.destination.latitude"),
            ConfigurationKey("device.destination.longitude"),
            ConfigurationKey("device.priority"),
        ] + MQTTSettings.keys + [
            ConfigurationKey("topic-prefix", flag: "--prefix"),
            ConfigurationKey("source.address", flag: "--source"),
            ConfigurationKey("source.speed", flag: "--speed"),
            ConfigurationKey("source.loop", flag: "--loop"),
            ConfigurationKey("source.silence-timeout"),
            ConfigurationKey("state-directory", flag: "--state-dir"),
            ConfigurationKey("activity.autostart"),
            ConfigurationKey("activity.dismissal"),
            ConfigurationKey("activity.end-on-exit", flag: "--end-on-exit"),
            ConfigurationKey("activity.max-activities"),
            ConfigurationKey("updates.min-distance"),
            ConfigurationKey("updates.min-interval"),
            ConfigurationKey("updates.heartbeat"),
            ConfigurationKey("updates.stale-after"),
            ConfigurationKey("updates.no-fix-grace"),
            ConfigurationKey("outbox.capacity"),
            ConfigurationKey("storage.durability"),
            ConfigurationKey("storage.sync-interval"),
            ConfigurationKey("storage.spool-directory"),
            ConfigurationKey("alerts.geofences", isList: true),
            ConfigurationKey("alerts.overspeed.threshold"),
            ConfigurationKey("alerts.overspeed.duration"),
            ConfigurationKey("log-level", flag: "--log-level"),
        ] + AgentConfiguration.integrationKeys

    /// The agent's keys by name.
    static let byName: [String: ConfigurationKey] = agentSchema.byName

    /// The agent's keys and the password variable.
    static let agentSchema = ConfigurationSchema(
        keys: all, otherVariables: [MQTTSettings.passwordVariable], exampleSections: "device: or mqtt:",
        documentation: "docs/configuration.md")
}
