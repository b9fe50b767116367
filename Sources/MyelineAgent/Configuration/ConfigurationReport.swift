import Location

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
        let format = AgentConfiguration.format
        let password: (String, String, String) =
            switch c.mqtt.password {
            case nil: ("mqtt.password", "(none)", "default")
            case .file(let path)?: ("mqtt.password", "********", path)
            case .environment(let name)?: ("mqtt.password", "********", name)
            }
        rows = [
            row("device.id", c.device.id.rawValue),
            row("device.name", c.device.name, derived: "device.id"),
            row("device.vehicle", c.device.vehicle),
            row("device.driver", c.device.driver),
            row("device.destination.name", c.device.destination?.name),
            row("device.destination.latitude", c.device.destination.map { format($0.latitude) }),
            row("device.destination.longitude", c.device.destination.map { format($0.longitude) }),
            row("device.priority", format(c.device.priority)),
            row("mqtt.broker", c.mqtt.broker.description),
            row("mqtt.client-id", c.mqtt.clientID, derived: "device.id"),
            row("mqtt.keepalive", "\(c.mqtt.keepAlive.components.seconds) s"),
            row("mqtt.protocol", c.mqtt.protocolVersion.rawValue),
            row("mqtt.username", c.mqtt.username),
            row("mqtt.password-file", { if case .file(let path)? = c.mqtt.password { path } else { nil } }()),
            password,
            row("mqtt.tls.ca-file", c.mqtt.tls.caFile),
            row("mqtt.tls.cert-file", c.mqtt.tls.certificateFile),
            row("mqtt.tls.key-file", c.mqtt.tls.keyFile),
            row("mqtt.reconnect.initial-delay", "\(Self.seconds(c.mqtt.reconnect.initialDelay)) s"),
            row("mqtt.reconnect.max-delay", "\(Self.seconds(c.mqtt.reconnect.maximumDelay)) s"),
            row("topic-prefix", c.topicPrefix.rawValue),
            row("source.address", c.source.address.description),
            row("source.speed", Self.speed(c.source.pacing)),
            row("source.loop", String(c.source.loops)),
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
            row(
                "alerts.geofences",
                c.alerts.geofences.isEmpty ? nil : c.alerts.geofences.map(\.description).joined(separator: ", ")),
            row("alerts.overspeed.threshold", c.alerts.overspeedThreshold.map { "\(format($0)) m/s" }),
            row("alerts.overspeed.duration", "\(format(c.alerts.overspeedDuration)) s"),
            row("log-level", c.logLevel.rawValue),
        ]
    }

    /// The rows as aligned columns under a header line, ending with a newline.
    var text: String {
        let header = ("KEY", "VALUE", "SOURCE")
        let all = [header] + rows
        let keyWidth = all.map(\.0.count).max()!
        let valueWidth = all.map(\.1.count).max()!
        return all.map { key, value, source in
            key.padding(keyWidth) + "  " + value.padding(valueWidth) + "  " + source
        }.joined(separator: "\n") + "\n"
    }

    private static func seconds(_ duration: Duration) -> String {
        let parts = duration.components
        return AgentConfiguration.format(Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    private static func speed(_ pacing: ReplayPacing) -> String {
        switch pacing {
        case .recorded: "1"
        case .scaled(let factor): AgentConfiguration.format(factor)
        case .asFastAsPossible: "max"
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
