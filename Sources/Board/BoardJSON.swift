import Foundation
import LiveActivity

/// The board's rows as JSON lines, for scripts: `--json` prints one object per activity, `--follow
/// --json` one object per change.
///
/// Keys are sorted, dates are UNIX epoch seconds, speeds m/s, distances metres, as on the wire;
/// absent values are omitted.
public enum BoardJSON {
    /// One activity: device, activity, state, attributes, content and envelope fields.
    public static func row(_ row: ActivityRow, fleet: Fleet, now: Date, change: String? = nil) -> String {
        let content = row.content
        let attributes = row.attributes
        var object: [String: Any] = [
            "device": row.key.device.rawValue,
            "activity": row.key.activity,
            "state": fleet.state(of: row, at: now).rawValue.lowercased(),
            "name": attributes.name,
            "event": row.event.rawValue,
            "seq": row.seq,
            "timestamp": seconds(row.timestamp),
            "relevance-score": row.relevance,
            "fix": content.fix.rawValue,
            "distance": content.distance,
            "elapsed": content.elapsed,
            "paused": content.paused,
        ]
        object["change"] = change
        object["vehicle"] = attributes.vehicle
        object["driver"] = attributes.driver
        object["destination"] = attributes.destination.map {
            ["name": $0.name, "latitude": $0.latitude, "longitude": $0.longitude]
        }
        object["latitude"] = content.latitude
        object["longitude"] = content.longitude
        object["altitude"] = content.altitude
        object["speed"] = content.speed
        object["course"] = content.course
        object["horizontalAccuracy"] = content.horizontalAccuracy
        object["satellites"] = content.satellites
        object["fixTime"] = content.fixTime.map(seconds)
        object["progress"] = content.progress
        object["eta"] = content.eta.map(seconds)
        object["stale-date"] = row.staleDate.map(seconds)
        object["dismissal-date"] = row.dismissalDate.map(seconds)
        object["alert"] = row.lastAlert.map { alert -> [String: Any] in
            var value: [String: Any] = ["title": alert.title, "body": alert.body]
            value["sound"] = alert.sound
            return value
        }
        return line(object)
    }

    /// A removed activity: `{"change":"removed","device":…,"activity":…}`.
    public static func removed(_ key: ActivityKey) -> String {
        line(["change": "removed", "device": key.device.rawValue, "activity": key.activity])
    }

    /// A device's status: `{"change":"status","device":…,"status":"online"|"offline"|"unknown",…}`.
    public static func status(_ device: DeviceID, fleet: Fleet) -> String {
        var object: [String: Any] = ["change": "status", "device": device.rawValue]
        if let status = fleet.devices[device] {
            object["status"] = status.state.rawValue
            object["since"] = seconds(status.since)
            object["reason"] = status.reason
        } else {
            object["status"] = "unknown"
        }
        return line(object)
    }

    /// The header's figures: `{"change":"summary","activities":…,"active":…,…,"rejected":…}`.
    public static func summary(_ fleet: Fleet, now: Date, warning: String?) -> String {
        var object: [String: Any] = [
            "change": "summary", "activities": fleet.rows.count, "rejected": fleet.rejectedCount,
        ]
        for (state, count) in fleet.counts(at: now) { object[state.rawValue.lowercased()] = count }
        object["warning"] = warning
        return line(object)
    }

    private static func seconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1000).rounded() / 1000
    }

    private static func line(_ object: [String: Any]) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
