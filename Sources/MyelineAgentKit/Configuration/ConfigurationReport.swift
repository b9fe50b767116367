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
        func row(_ key: String, _ value: String?, derived: String = "default") -> (String, String, String) {
            (key, value ?? "(none)", sources.source(of: key) ?? derived)
        }
        let c = configuration
        let format = ConfigurationFormat.number
        var rows: [(key: String, value: String, source: String)] = [
            row("device.id", c.device.id.rawValue),
            row("device.name", c.device.name, derived: "device.id"),
            row("device.vehicle", c.device.vehicle),
            row("device.driver", c.device.driver),
            row("device.destination.name", c.device.destination?.name),
            row("device.destination.latitude", c.device.destination.map { format($0.latitude) }),
            row("device.destination.longitude", c.device.destination.map { format($0.longitude) }),
            row("device.priority", format(c.device.priority)),
        ]
        rows += c.mqtt.reportRows(sources: sources, clientIDDefault: "device.id")
        rows += [
            row("topic-prefix", c.topicPrefix.rawValue),
            row("source.address", c.source.address.description),
            row("source.speed", Self.speed(c.source.pacing)),
            row("source.loop", String(c.source.loops)),
            row("source.silence-timeout", c.source.silence.description),
            row("state-directory", c.stateDirectory),
            row("activity.autostart", String(c.activity.autostart)),
            row("activity.dismissal", c.activity.dismissal.description),
            row("activity.end-on-exit", String(c.activity.endOnExit)),
            row("activity.max-activities", String(c.activity.maximumActivities)),
            row("updates.min-distance", "\(format(c.updates.minimumDistance)) m"),
            row("updates.min-interval", "\(format(c.updates.minimumInterval)) s"),
            row("updates.heartbeat", "\(format(c.updates.heartbeat)) s"),
            row("updates.stale-after", "\(format(c.updates.staleAfter)) s", derived: "3 x updates.heartbeat"),
            row("updates.no-fix-grace", "\(format(c.updates.noFixGrace)) s"),
            row("outbox.capacity", "\(c.outbox.capacity) points"),
            row("storage.durability", c.storage.durability.keyValue),
            row(
                "storage.sync-interval",
                c.storage.durability.syncInterval.map { "\(ConfigurationFormat.seconds($0)) s" } ?? "every fix"),
            row("storage.spool-directory", c.storage.spoolDirectory ?? "in memory"),
            row(
                "alerts.geofences",
                c.alerts.geofences.isEmpty ? nil : c.alerts.geofences.map(\.description).joined(separator: ", ")),
            row("alerts.overspeed.threshold", c.alerts.overspeedThreshold.map { "\(format($0)) m/s" }),
            row("alerts.overspeed.duration", "\(format(c.alerts.overspeedDuration)) s"),
            row("log-level", c.logLevel.rawValue),
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
