import Location
import MyelineConfiguration
import Logging
import LiveActivity
import MyelineWire

/// The text `check-config` prints: every key, its effective value and where the value came from.
///
/// One line per key, in three columns: the key, the value, and its source (a flag, an environment
/// variable, the file's path, or `default`). The password is shown as `********` and never read here.
struct ConfigurationReport {
    /// Each line's key, value and source.
    let rows: [(key: String, value: String, source: String)]

    init(_ loaded: LoadedConfiguration) {
        let configuration = loaded.configuration
        let sources = loaded.sources
        func row(_ key: ConfigurationKey, _ value: String?, derived: String = "default") -> (String, String, String) {
            (key.name, value ?? "(none)", sources.source(of: key) ?? derived)
        }
        let c = configuration
        let format = ConfigurationFormat.number
        var rows: [(key: String, value: String, source: String)] = [
            row(.deviceID, c.device.id.rawValue),
            row(.deviceName, c.device.name, derived: ConfigurationKey.deviceID.name),
            row(.deviceVehicle, c.device.vehicle),
            row(.deviceDriver, c.device.driver),
            row(.deviceDestinationName, c.device.destination?.name),
            row(.deviceDestinationLatitude, c.device.destination.map { format($0.latitude) }),
            row(.deviceDestinationLongitude, c.device.destination.map { format($0.longitude) }),
            row(.devicePriority, format(c.device.priority)),
        ]
        rows += c.mqtt.reportRows(sources: sources, clientIDDefault: ConfigurationKey.deviceID.name)
        rows += [
            row(.topicPrefix, c.topicPrefix.rawValue),
            row(.sourceAddress, c.source.address.description),
            row(.sourceSpeed, Self.speed(c.source.pacing)),
            row(.sourceLoop, String(c.source.loops)),
            row(.sourceSilenceTimeout, c.source.silence.description),
            row(.stateDirectory, c.stateDirectory),
            row(.activityAutostart, String(c.activity.autostart)),
            row(.activityDismissal, c.activity.dismissal.description),
            row(.activityEndOnExit, String(c.activity.endOnExit)),
            row(.activityMaxActivities, String(c.activity.maximumActivities)),
            row(.updatesMinDistance, "\(format(c.updates.minimumDistance)) m"),
            row(.updatesMinInterval, "\(format(c.updates.minimumInterval)) s"),
            row(.updatesHeartbeat, "\(format(c.updates.heartbeat)) s"),
            row(.updatesStaleAfter, "\(format(c.updates.staleAfter)) s", derived: "3 x updates.heartbeat"),
            row(.updatesNoFixGrace, "\(format(c.updates.noFixGrace)) s"),
            row(.outboxCapacity, "\(c.outbox.capacity) points"),
            row(.storageDurability, c.storage.durability.keyValue),
            row(
                .storageSyncInterval,
                c.storage.durability.syncInterval.map { "\(ConfigurationFormat.seconds($0)) s" } ?? "every fix"),
            row(.storageSpoolDirectory, c.storage.spoolDirectory ?? "in memory"),
            row(
                .alertsGeofences,
                c.alerts.geofences.isEmpty ? nil : c.alerts.geofences.map(\.description).joined(separator: ", ")),
            row(.alertsOverspeedThreshold, c.alerts.overspeedThreshold.map { "\(format($0)) m/s" }),
            row(.alertsOverspeedDuration, "\(format(c.alerts.overspeedDuration)) s"),
            row(.logLevel, c.logLevel.rawValue),
        ]
        rows += c.integrationRows { key, value, derived in row(key, value, derived: derived) }
        self.rows = rows
    }

    /// The rows as aligned columns under a header line, ending with a newline.
    var text: String { ConfigurationTable.text(rows) }

    private static func speed(_ pacing: ReplayPacing) -> String {
        switch pacing {
        case .recorded: "1"
        case .scaled(let factor): ConfigurationFormat.number(factor)
        case .asFastAsPossible: "max"
        }
    }
}
