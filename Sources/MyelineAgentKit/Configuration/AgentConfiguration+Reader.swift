import AgentCore
import Configuration
import LiveActivity
import MyelineWire
import Location
import Logging
import MQTT
import MyelineConfiguration

extension AgentConfiguration {
    /// Reads and checks the configuration.
    ///
    /// The reader's providers give precedence: flags, then `MYELINE_*` environment variables, then
    /// the YAML file; a key none of them sets has its default. Every value is checked here, so a
    /// configuration that reads is one the agent can start with (files other than the password file
    /// are not opened).
    ///
    /// | Key | Type | Default |
    /// |---|---|---|
    /// | `device.id` | device id (a-z, 0-9, `.`, `_`, `-`; 1-64) | none: required |
    /// | `device.name` | string | `device.id` |
    /// | `device.vehicle` | string | none |
    /// | `device.driver` | string | none |
    /// | `device.destination.name` | string | none |
    /// | `device.destination.latitude` | degrees, -90...90 | none |
    /// | `device.destination.longitude` | degrees, -180...180 | none |
    /// | `device.priority` | number (the relevance score) | `0` |
    /// | `mqtt.broker` | `mqtt://HOST[:PORT]`, `mqtts://HOST[:PORT]`, `unix:/PATH` | `mqtt://localhost` |
    /// | `mqtt.client-id` | string, 1-65535 bytes | `myeline-` + `device.id` |
    /// | `mqtt.keepalive` | whole seconds, 5...65535 | `30` |
    /// | `mqtt.protocol` | `5` or `3.1.1` | `5` |
    /// | `mqtt.username` | string | none (anonymous) |
    /// | `mqtt.password-file` | path | none (then `MYELINE_MQTT_PASSWORD`, if set) |
    /// | `mqtt.allow-plain-password` | boolean | `false` |
    /// | `mqtt.tls.ca-file` | path | none (system CAs with `mqtts://`) |
    /// | `mqtt.tls.cert-file` | path | none |
    /// | `mqtt.tls.key-file` | path | none |
    /// | `mqtt.reconnect.initial-delay` | seconds, > 0 | `1` |
    /// | `mqtt.reconnect.max-delay` | seconds, ≥ initial delay | `60` |
    /// | `topic-prefix` | topic levels | `myeline` |
    /// | `source.address` | `gpsd://HOST[:PORT][/DEVICE]` or a file path | `gpsd://localhost` |
    /// | `source.speed` | positive factor or `max` | `1` (recorded pace) |
    /// | `source.loop` | boolean | `false` |
    /// | `source.silence-timeout` | seconds, > 0, `auto` or `off` | `auto`: 5 s past the source's usual interval |
    /// | `state-directory` | absolute path | `/var/lib/myeline` |
    /// | `activity.autostart` | boolean | `true` |
    /// | `activity.dismissal` | `default`, `immediate` or `after:SECONDS` | `immediate` |
    /// | `activity.end-on-exit` | boolean | `false` |
    /// | `activity.max-activities` | integer, 1...64 | `8` |
    /// | `updates.min-distance` | metres, ≥ 0 | `25` |
    /// | `updates.min-interval` | seconds, ≥ 0 | `5` |
    /// | `updates.heartbeat` | seconds, > 0, ≥ min-interval | `60` |
    /// | `updates.stale-after` | seconds, > 0 | 3 × `updates.heartbeat` |
    /// | `updates.no-fix-grace` | seconds, ≥ 0 | `30` |
    /// | `outbox.capacity` | track points, 1...10000000 | `100000` |
    /// | `storage.durability` | `interval` or `every-fix` | `interval` |
    /// | `storage.sync-interval` | seconds, 0.1...3600 | `5` |
    /// | `storage.spool-directory` | absolute path | `$RUNTIME_DIRECTORY/spool`, else in `/dev/shm`, else `STATE-DIRECTORY/spool` |
    /// | `alerts.geofences` | list of `NAME:LATITUDE:LONGITUDE:RADIUS` (degrees, metres) | none |
    /// | `alerts.overspeed.threshold` | m/s, > 0 | none (no overspeed alert) |
    /// | `alerts.overspeed.duration` | seconds, ≥ 0 | `5` |
    /// | `log-level` | `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical` | `info` |
    /// | `owntracks.*`, `homeassistant.*` | see ``readIntegrations(_:)`` | off |
    ///
    /// The password is never a key: it is read from `mqtt.password-file`, or else from the
    /// environment variable `MYELINE_MQTT_PASSWORD`, and only when a connection needs it.
    ///
    /// - Parameters:
    ///   - reader: the configuration reader; its access reporter must be `sources`.
    ///   - sources: records where each value came from, to name it in errors.
    ///   - environment: the process environment, for `MYELINE_MQTT_PASSWORD`.
    /// - Throws: ``ConfigurationError`` naming the first key at fault, its value and the fix.
    init(reader: ConfigReader, sources: ValueSources, environment: [String: String]) throws(ConfigurationError) {
        let values = KeyReader(reader: reader, sources: sources)

        guard let deviceText = try values.string(.deviceID) else {
            throw ConfigurationError(
                key: .deviceID,
                "no device id: set device.id in the file, MYELINE_DEVICE_ID, or --device (such as van-7)")
        }
        let deviceID = try values.check(.deviceID, deviceText) { text throws(ActivityError) in try DeviceID(text) }
        self.init(deviceID: deviceID)

        // device
        if let name = try values.string(.deviceName) { device.name = name }
        device.vehicle = try values.string(.deviceVehicle)
        device.driver = try values.string(.deviceDriver)
        let destinationName = try values.string(.deviceDestinationName)
        let latitude = try values.number(.deviceDestinationLatitude, in: -90...90, unit: "degrees")
        let longitude = try values.number(.deviceDestinationLongitude, in: -180...180, unit: "degrees")
        switch (destinationName, latitude, longitude) {
        case (nil, nil, nil): break
        case (let name?, let latitude?, let longitude?):
            device.destination = .init(name: name, latitude: latitude, longitude: longitude)
        default:
            let missing = [
                (ConfigurationKey.deviceDestinationName, destinationName == nil),
                (.deviceDestinationLatitude, latitude == nil),
                (.deviceDestinationLongitude, longitude == nil),
            ].first { $0.1 }!.0
            throw ConfigurationError(
                key: missing, "a destination needs a name, a latitude and a longitude: set \(missing) too")
        }
        if let priority = try values.number(.devicePriority, in: -1e6...1e6, unit: "") { device.priority = priority }

        // mqtt
        try mqtt.read(values, environment: environment)

        // topics, source, state
        if let prefix = try values.value(.topicPrefix, { text throws(ActivityError) in try TopicPrefix(text) }) {
            topicPrefix = prefix
        }
        if let address = try values.value(
            .sourceAddress, { text throws(LocationError) in try LocationSourceAddress(parsing: text) })
        {
            source.address = address
        }
        if let speed = try values.string(.sourceSpeed) {
            source.pacing = try values.check(.sourceSpeed, speed) { text throws(ConfigurationError) in
                try Self.pacing(text)
            }
        }
        if let loops = try values.boolean(.sourceLoop) { source.loops = loops }
        if let silence = try values.string(.sourceSilenceTimeout) {
            source.silence = try values.check(.sourceSilenceTimeout, silence) { text throws(ConfigurationError) in
                try Self.silence(text)
            }
        }
        if let directory = try values.string(.stateDirectory) {
            guard directory.hasPrefix("/") else {
                throw values.error(
                    .stateDirectory, "\"\(directory)\" is not an absolute path: use one such as /var/lib/myeline")
            }
            stateDirectory = directory
        }

        // activity
        if let autostart = try values.boolean(.activityAutostart) { activity.autostart = autostart }
        if let dismissal = try values.string(.activityDismissal) {
            activity.dismissal = try values.check(.activityDismissal, dismissal) { text throws(ConfigurationError) in
                try Self.dismissal(text)
            }
        }
        if let endOnExit = try values.boolean(.activityEndOnExit) { activity.endOnExit = endOnExit }
        if let maximum = try values.integer(.activityMaxActivities, in: 1...64, unit: "activities") {
            activity.maximumActivities = maximum
        }

        // updates
        if let distance = try values.number(.updatesMinDistance, in: 0...1_000_000, unit: "metres") {
            updates.minimumDistance = distance
        }
        if let interval = try values.number(.updatesMinInterval, in: 0...86_400, unit: "seconds") {
            updates.minimumInterval = interval
        }
        if let heartbeat = try values.number(.updatesHeartbeat, in: 1...86_400, unit: "seconds") {
            updates.heartbeat = heartbeat
        }
        guard updates.heartbeat >= updates.minimumInterval else {
            throw values.error(
                .updatesHeartbeat,
                "\(ConfigurationFormat.number(updates.heartbeat)) s is shorter than updates.min-interval "
                    + "(\(ConfigurationFormat.number(updates.minimumInterval)) s): make it at least as long")
        }
        updates.staleAfterSetting = try values.number(.updatesStaleAfter, in: 1...604_800, unit: "seconds")
        if let grace = try values.number(.updatesNoFixGrace, in: 0...86_400, unit: "seconds") {
            updates.noFixGrace = grace
        }

        // outbox, alerts, logs
        if let capacity = try values.integer(.outboxCapacity, in: 1...10_000_000, unit: "track points") {
            outbox.capacity = capacity
        }
        let syncInterval = try values.number(.storageSyncInterval, in: 0.1...3600, unit: "seconds")
        let interval = AgentStorage.Durability.interval(.seconds(syncInterval ?? 5))
        storage.durability =
            try values.choice(.storageDurability, [("interval", interval), ("every-fix", .everyFix)]) ?? interval
        if case .everyFix = storage.durability, syncInterval != nil {
            throw values.error(
                .storageSyncInterval,
                "has no effect with storage.durability: every-fix, which writes every fix at once: remove one of them")
        }
        if let spool = try values.string(.storageSpoolDirectory) {
            guard spool.hasPrefix("/") else {
                throw values.error(
                    .storageSpoolDirectory,
                    "\"\(spool)\" is not an absolute path: use one such as /run/myeline/spool")
            }
            storage.spoolDirectory = spool
        }
        if let fences = try values.list(.alertsGeofences) {
            var names: Set<String> = []
            for text in fences {
                let fence = try values.check(.alertsGeofences, text) { text throws(ConfigurationError) in
                    try Self.geofence(text)
                }
                guard names.insert(fence.name).inserted else {
                    throw values.error(.alertsGeofences, "two geofences are named \"\(fence.name)\": rename one")
                }
                alerts.geofences.append(fence)
            }
        }
        alerts.overspeedThreshold = try values.number(.alertsOverspeedThreshold, in: 0.1...1000, unit: "m/s")
        if let duration = try values.number(.alertsOverspeedDuration, in: 0...3600, unit: "seconds") {
            alerts.overspeedDuration = duration
        }
        let levels = Logger.Level.allCases.map { ($0.rawValue, $0) }
        if let level = try values.choice(.logLevel, levels) { logLevel = level }
        try readIntegrations(values)
    }

    static func pacing(_ text: String) throws(ConfigurationError) -> ReplayPacing {
        if text.lowercased() == "max" { return .asFastAsPossible }
        guard let factor = Double(text), factor.isFinite, factor > 0, factor <= 10_000 else {
            throw ConfigurationError(
                key: .sourceSpeed,
                "invalid replay speed \"\(text)\": use a factor such as 1, 2 or 0.5 (up to 10000), or max")
        }
        return factor == 1 ? .recorded : .scaled(factor)
    }

    static func silence(_ text: String) throws(ConfigurationError) -> AgentCoreSettings.SilenceTimeout {
        switch text.lowercased() {
        case "auto": return .default
        case "off": return .off
        default:
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw ConfigurationError(
                    key: .sourceSilenceTimeout,
                    "invalid silence timeout \"\(text)\": use auto, off, or seconds such as 10 (up to 86400)")
            }
            return .fixed(seconds)
        }
    }

    static func dismissal(_ text: String) throws(ConfigurationError) -> DismissalSetting {
        switch text {
        case "default": return .default
        case "immediate": return .immediate
        default:
            if text.hasPrefix("after:"), let seconds = Double(text.dropFirst("after:".count)), seconds >= 0,
                seconds <= 4 * 3600
            {
                return .after(seconds: seconds)
            }
            throw ConfigurationError(
                key: .activityDismissal,
                "invalid dismissal policy \"\(text)\": use default, immediate or after:SECONDS (0 to 14400)")
        }
    }

    static func geofence(_ text: String) throws(ConfigurationError) -> Geofence {
        let usage = "use NAME:LATITUDE:LONGITUDE:RADIUS, such as depot:52.52:13.405:150 (degrees, metres)"
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 4 else {
            throw ConfigurationError(key: .alertsGeofences, "invalid geofence \"\(text)\": \(usage)")
        }
        let name = parts.dropLast(3).joined(separator: ":").trimmingWhitespace()
        let numbers = parts.suffix(3).map { Double(String($0).trimmingWhitespace()) }
        guard !name.isEmpty, let latitude = numbers[0], let longitude = numbers[1], let radius = numbers[2],
            (-90...90).contains(latitude), (-180...180).contains(longitude), radius > 0, radius <= 1_000_000
        else {
            throw ConfigurationError(
                key: .alertsGeofences,
                "invalid geofence \"\(text)\": \(usage); latitude -90 to 90, longitude -180 to 180, radius above 0")
        }
        return Geofence(name: name, latitude: latitude, longitude: longitude, radius: radius)
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
