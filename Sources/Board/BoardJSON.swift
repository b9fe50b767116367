import Foundation
import LiveActivity

/// The board's JSON lines, for scripts: one object per line, each with a `kind` (`activity`,
/// `device`, `removed`, `summary`); `--follow --json` adds `change` (docs/aggregator.md lists every
/// key; docs/schema/board-line.json checks them).
///
/// Keys are sorted, dates are UNIX epoch seconds, speeds m/s, distances metres, as on the wire;
/// absent values are omitted, and so are `issues` when the device is healthy.
public enum BoardJSON {
    /// One activity in `state`: device, activity, state, attributes type, attributes, content and
    /// envelope fields, and its device's link state and health. A `location` activity's attributes
    /// and content have keys of their own (its `destination` is the destination now,
    /// ``ActivityRow/destination``, and `status-text` the status text a command set); another
    /// type's content is one `content` object of its top-level strings, numbers and booleans
    /// (``GenericActivity``).
    public static func row(_ row: ActivityRow, state: RowState, change: String? = nil, fleet: Fleet) -> String {
        self.row(
            row, state: state, change: change, status: fleet.devices[row.key.device],
            health: fleet.health(of: row.key.device))
    }

    /// One activity in `state`, with its device's `status` and `health` when given (copied out of a
    /// fleet, so that the line can be written away from it).
    public static func row(
        _ row: ActivityRow, state: RowState, change: String? = nil, status: DeviceStatus? = nil,
        health: DeviceHealth? = nil
    ) -> String {
        // A location's keys, or another type's `content`.
        var attributes: LocationActivityAttributes?
        var content: LocationActivityAttributes.ContentState?
        var generic: GenericActivity?
        switch row.details {
        case .location(let locationAttributes, let state): (attributes, content) = (locationAttributes, state)
        case .generic(let other): generic = other
        }
        // Members in the keys' sorted order (by their UTF-8 bytes), as JSONObject would write them.
        var line = SortedJSONWriter(capacity: 640)
        line.add("activity", .string(row.key.activity))
        line.add(
            "alert",
            row.lastAlert.map { alert in
                var value = JSONObject()
                value["title"] = .string(alert.title)
                value["body"] = .string(alert.body)
                value["sound"] = alert.sound.map(JSONValue.string)
                value["date"] = row.alertDate.map { .number(seconds($0)) }
                return .object(value)
            })
        line.add("altitude", content?.altitude.map(JSONValue.number))
        line.add("change", change.map(JSONValue.string))
        line.add(
            "content",
            generic.map { generic in
                var value = JSONObject()
                for field in generic.fields { value[field.key] = field.value }
                return .object(value)
            })
        line.add("course", content?.course.map(JSONValue.number))
        line.add(
            "destination",
            row.destination.map { destination in
                var value = JSONObject()
                value["name"] = .string(destination.name)
                value["latitude"] = .number(destination.latitude)
                value["longitude"] = .number(destination.longitude)
                return .object(value)
            })
        line.add("device", .string(row.key.device.rawValue))
        line.add("dismissal-date", row.dismissalDate.map { .number(seconds($0)) })
        line.add("distance", content.map { .number($0.distance) })
        line.add("driver", attributes?.driver.map(JSONValue.string))
        line.add("elapsed", content.map { .number($0.elapsed) })
        line.add("eta", content?.eta.map { .number(seconds($0)) })
        line.add("event", .string(row.event.rawValue))
        line.add("fix", content.map { .string($0.fix.rawValue) })
        line.add("fixTime", content?.fixTime.map { .number(seconds($0)) })
        line.add("healthy", health.map { .bool($0.isHealthy) })
        line.add("horizontalAccuracy", content?.horizontalAccuracy.map(JSONValue.number))
        line.add("issues", health.flatMap(issues))
        line.add("kind", .string("activity"))
        line.add("latitude", content?.latitude.map(JSONValue.number))
        line.add("longitude", content?.longitude.map(JSONValue.number))
        line.add("name", .string(row.name))
        line.add("paused", content.map { .bool($0.paused) })
        line.add("progress", content?.progress.map(JSONValue.number))
        line.add("relevance-score", .number(row.relevance))
        line.add("resynced-at", row.resyncedAt.map { .number(seconds($0)) })
        line.add("satellites", content?.satellites.map(JSONValue.int))
        line.add("seq", .int(row.seq))
        line.add("speed", content?.speed.map(JSONValue.number))
        line.add("stale-date", row.staleDate.map { .number(seconds($0)) })
        line.add("state", .string(name(of: state)))
        line.add("status", health.map { _ in .string(status?.state?.rawValue ?? "unknown") })
        line.add("status-text", row.statusText.map(JSONValue.string))
        line.add("timestamp", .number(seconds(row.timestamp)))
        line.add("type", .string(row.attributesType))
        line.add("vehicle", attributes?.vehicle.map(JSONValue.string))
        return line.finish()
    }

    /// A removed activity: `{"activity":…,"change":"removed","device":…,"kind":"removed"}`.
    public static func removed(_ key: ActivityKey) -> String {
        var object = JSONObject()
        object["kind"] = .string("removed")
        object["change"] = .string("removed")
        object["device"] = .string(key.device.rawValue)
        object["activity"] = .string(key.activity)
        return object.text
    }

    /// A device: `{"kind":"device","device":…,"status":"online"|"offline"|"unknown",…}` with since
    /// when, last seen, what its agent reports (version, instance, dropped, storage-error,
    /// clock-offset, power-losses), how many activities it has, and its health; `"duplicate":true` when two agents
    /// publish its status in turn (``Fleet/duplicatedDevices``).
    public static func device(_ device: DeviceID, fleet: Fleet, change: String? = nil) -> String {
        var object = JSONObject()
        object["kind"] = .string("device")
        object["change"] = change.map(JSONValue.string)
        object["device"] = .string(device.rawValue)
        object["activities"] = .int(fleet.activityCount(of: device))
        let status = fleet.devices[device]
        object["status"] = .string(status?.state?.rawValue ?? "unknown")
        if let status {
            object["since"] = status.since.map { .number(seconds($0)) }
            object["last-seen"] = status.lastSeen.map { .number(seconds($0)) }
            object["reason"] = status.reason.map(JSONValue.string)
            object["version"] = status.version.map(JSONValue.string)
            object["instance"] = status.instance.map(JSONValue.string)
            object["dropped"] = status.dropped.map { .int(Int(clamping: $0)) }
            object["storage-error"] = status.storageError.map(JSONValue.string)
            object["clock-offset"] = status.clockOffset.map(JSONValue.int)
            object["power-losses"] = status.powerLosses.map { .int(Int(clamping: $0)) }
            object["ahead"] = status.ahead > 0 ? .number(status.ahead) : nil
        }
        if fleet.duplicatedDevices.contains(device) { object["duplicate"] = .bool(true) }
        addHealth(fleet.health(of: device), to: &object)
        return object.text
    }

    /// The header's figures and how complete the picture is: `{"kind":"summary","activities":…,
    /// "active":…,…,"devices":…,"devices-offline":…,"devices-unhealthy":…,"rejected":…,"missed":…,
    /// "dropped":…,"resynced":…}`, with `complete`, `connected` and `retained` when ``Completeness`` is
    /// given, and the header's warning; `dropped` is the messages the board's client dropped
    /// (``BoardHeader/dropped``).
    public static func summary(
        _ fleet: Fleet, now: Date, warning: String?, dropped: Int = 0, completeness: Completeness? = nil,
        change: String? = "summary"
    ) -> String {
        var object = JSONObject()
        object["kind"] = .string("summary")
        object["change"] = change.map(JSONValue.string)
        object["activities"] = .int(fleet.rows.count)
        object["rejected"] = .int(fleet.rejectedCount)
        object["missed"] = .int(fleet.missedCount)
        object["dropped"] = .int(dropped)
        object["resynced"] = .int(fleet.resyncCount)
        for (state, count) in fleet.counts(at: now) { object[name(of: state)] = .int(count) }
        let devices = fleet.deviceCounts()
        object["devices"] = .int(devices.devices)
        object["devices-offline"] = .int(devices.offline)
        object["devices-unhealthy"] = .int(devices.unhealthy)
        if let completeness {
            object["complete"] = .bool(completeness.isComplete)
            object["connected"] = .bool(completeness.connected)
            object["retained"] = .int(completeness.retained)
            object["error"] = completeness.error.map(JSONValue.string)
        }
        object["warning"] = warning.map(JSONValue.string)
        return object.text
    }

    /// How complete the picture of `--once` is, for its last `summary` line.
    public struct Completeness: Hashable, Sendable {
        /// Whether the board reached the broker at all.
        public var connected: Bool
        /// Whether every retained message arrived (the bootstrap was not cut).
        public var isComplete: Bool
        /// How many retained messages arrived.
        public var retained: Int
        /// Why it is incomplete, such as the connection's failure.
        public var error: String?

        /// Creates a verdict.
        public init(connected: Bool, isComplete: Bool, retained: Int, error: String? = nil) {
            self.connected = connected
            self.isComplete = isComplete
            self.retained = retained
            self.error = error
        }
    }

    private static func addHealth(_ health: DeviceHealth, to object: inout JSONObject) {
        object["healthy"] = .bool(health.isHealthy)
        object["issues"] = issues(health)
    }

    private static func issues(_ health: DeviceHealth) -> JSONValue? {
        health.isHealthy ? nil : .array(health.issues.map { .string($0.name) })
    }

    /// A state as the lines write it: its name in lower case, without lowercasing one on every line.
    private static func name(of state: RowState) -> String {
        switch state {
        case .active: "active"
        case .stale: "stale"
        case .paused: "paused"
        case .ended: "ended"
        case .offline: "offline"
        case .idle: "idle"
        }
    }

    private static func seconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1000).rounded() / 1000
    }
}
