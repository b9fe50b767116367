import Foundation
import LiveActivity

/// The board's rows as JSON lines, for scripts: `--json` prints one object per activity, `--follow
/// --json` one object per change.
///
/// Keys are sorted, dates are UNIX epoch seconds, speeds m/s, distances metres, as on the wire;
/// absent values are omitted.
public enum BoardJSON {
    /// One activity in `state`: device, activity, state, attributes, content and envelope fields.
    public static func row(_ row: ActivityRow, state: RowState, change: String? = nil) -> String {
        let content = row.content
        let attributes = row.attributes
        var object = JSONObject()
        object["device"] = .string(row.key.device.rawValue)
        object["activity"] = .string(row.key.activity)
        object["state"] = .string(state.rawValue.lowercased())
        object["name"] = .string(attributes.name)
        object["event"] = .string(row.event.rawValue)
        object["seq"] = .int(row.seq)
        object["timestamp"] = .number(seconds(row.timestamp))
        object["relevance-score"] = .number(row.relevance)
        object["fix"] = .string(content.fix.rawValue)
        object["distance"] = .number(content.distance)
        object["elapsed"] = .number(content.elapsed)
        object["paused"] = .bool(content.paused)
        object["change"] = change.map(JSONValue.string)
        object["vehicle"] = attributes.vehicle.map(JSONValue.string)
        object["driver"] = attributes.driver.map(JSONValue.string)
        object["destination"] = attributes.destination.map { destination in
            var value = JSONObject()
            value["name"] = .string(destination.name)
            value["latitude"] = .number(destination.latitude)
            value["longitude"] = .number(destination.longitude)
            return .object(value)
        }
        object["latitude"] = content.latitude.map(JSONValue.number)
        object["longitude"] = content.longitude.map(JSONValue.number)
        object["altitude"] = content.altitude.map(JSONValue.number)
        object["speed"] = content.speed.map(JSONValue.number)
        object["course"] = content.course.map(JSONValue.number)
        object["horizontalAccuracy"] = content.horizontalAccuracy.map(JSONValue.number)
        object["satellites"] = content.satellites.map(JSONValue.int)
        object["fixTime"] = content.fixTime.map { .number(seconds($0)) }
        object["progress"] = content.progress.map(JSONValue.number)
        object["eta"] = content.eta.map { .number(seconds($0)) }
        object["stale-date"] = row.staleDate.map { .number(seconds($0)) }
        object["dismissal-date"] = row.dismissalDate.map { .number(seconds($0)) }
        object["alert"] = row.lastAlert.map { alert in
            var value = JSONObject()
            value["title"] = .string(alert.title)
            value["body"] = .string(alert.body)
            value["sound"] = alert.sound.map(JSONValue.string)
            return .object(value)
        }
        return object.text
    }

    /// A removed activity: `{"change":"removed","device":…,"activity":…}`.
    public static func removed(_ key: ActivityKey) -> String {
        var object = JSONObject()
        object["change"] = .string("removed")
        object["device"] = .string(key.device.rawValue)
        object["activity"] = .string(key.activity)
        return object.text
    }

    /// A device's status: `{"change":"status","device":…,"status":"online"|"offline"|"unknown",…}`,
    /// with `"duplicate":true` when two agents publish it in turn (``Fleet/duplicatedDevices``).
    public static func status(_ device: DeviceID, fleet: Fleet) -> String {
        var object = JSONObject()
        object["change"] = .string("status")
        object["device"] = .string(device.rawValue)
        if let status = fleet.devices[device] {
            object["status"] = .string(status.state.rawValue)
            object["since"] = .number(seconds(status.since))
            object["reason"] = status.reason.map(JSONValue.string)
            if fleet.duplicatedDevices.contains(device) { object["duplicate"] = .bool(true) }
        } else {
            object["status"] = .string("unknown")
        }
        return object.text
    }

    /// The header's figures: `{"change":"summary","activities":…,"active":…,…,"rejected":…,"missed":…,"dropped":…}`;
    /// `dropped` is the messages the board's client dropped (``BoardHeader/dropped``).
    public static func summary(_ fleet: Fleet, now: Date, warning: String?, dropped: Int = 0) -> String {
        var object = JSONObject()
        object["change"] = .string("summary")
        object["activities"] = .int(fleet.rows.count)
        object["rejected"] = .int(fleet.rejectedCount)
        object["missed"] = .int(fleet.missedCount)
        object["dropped"] = .int(dropped)
        for (state, count) in fleet.counts(at: now) { object[state.rawValue.lowercased()] = .int(count) }
        object["warning"] = warning.map(JSONValue.string)
        return object.text
    }

    private static func seconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1000).rounded() / 1000
    }
}
