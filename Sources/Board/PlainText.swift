import Foundation
import LiveActivity

/// The board as plain lines, one per change, for a pipe or a log (`myeline-aggregator > file`):
/// no escape codes, every value in words, each line starting with the board's time (UTC).
public enum PlainText {
    /// `2026-11-25T21:00:01Z van-7/a1 ACTIVE 52.52001, 13.40495 · 44 km/h 88° fix 3D/9 ±5m · … · → Market
    /// Hall 45% ETA +12m · status: Out for delivery` (the destination now: ``ActivityRow/destination``), or for
    /// another attributes type `… van-7/pin-1 ACTIVE pin-1 · type com.example.pin, updated 3s ago · count=2, …`
    public static func row(
        _ row: ActivityRow, state: RowState, status: DeviceStatus?, health: DeviceHealth, now: Date
    ) -> String {
        let clean = TerminalText.sanitized
        var parts = [
            "\(clean(row.key.device.rawValue))/\(clean(row.key.activity)) \(state.rawValue)"
                + (row.resyncedAt != nil ? " (resynced)" : "") + " \(clean(row.name))"
        ]
        switch row.details {
        case .location(_, let content):
            parts.append(RowFormat.location(content))
            var motion: [String] = []
            if content.speed != nil { motion.append("\(RowFormat.speed(content.speed)) km/h") }
            if content.course != nil { motion.append(RowFormat.course(content.course)) }
            if content.fix != .noFix { motion.append("fix \(RowFormat.fix(content))") }
            motion.append("last fix \(RowFormat.age(since: content.fixTime ?? row.timestamp, now: now)) ago")
            parts.append(motion.joined(separator: " "))
            parts.append("\(RowFormat.distance(content.distance)) in \(RowFormat.elapsed(content.elapsed))")
            if let destination = row.destination {
                parts.append(
                    "→ \(clean(destination.name)) \(RowFormat.progress(content.progress)) ETA "
                        + RowFormat.eta(content.eta, now: now))
            }
            if let status = RowFormat.status(row) { parts.append(status) }
        case .generic(let generic):
            parts.append("type \(clean(generic.type)), updated \(RowFormat.age(since: row.timestamp, now: now)) ago")
            parts.append(clean(generic.fieldsText))
        }
        if let alert = row.lastAlert {
            let age = row.alertDate.map { " (\(RowFormat.age(since: $0, now: now)) ago)" } ?? ""
            parts.append("! \(clean(alert.title)): \(clean(alert.body))\(age)")
        }
        if !health.isHealthy { parts.append("health: \(health.summary)") }
        return stamp(now) + parts.joined(separator: " · ")
    }

    /// `2026-11-25T21:00:01Z van-7 OFFLINE for 12m (connection-lost) · last seen 12m ago · agent 0.1.0 · healthy`
    public static func device(_ device: DeviceID, fleet: Fleet, now: Date) -> String {
        let clean = TerminalText.sanitized
        let status = fleet.devices[device]
        var link = "link unknown"
        if let state = status?.state {
            link = "\(state.rawValue.uppercased()) for \(RowFormat.age(since: status?.since, now: now))"
            if let reason = status?.reason, state == .offline { link += " (\(clean(reason)))" }
        }
        var parts = ["\(clean(device.rawValue)) \(link)"]
        parts.append("last seen \(RowFormat.age(since: status?.lastSeen, now: now)) ago")
        parts.append("\(fleet.activityCount(of: device)) activities")
        if let version = status?.version { parts.append("agent \(clean(version))") }
        if let losses = status?.powerLossText { parts.append(losses) }
        let health = fleet.health(of: device)
        parts.append(health.isHealthy ? "healthy" : "health: \(health.summary)")
        if let error = status?.storageError { parts.append("storage: \(clean(error))") }
        return stamp(now) + parts.joined(separator: " · ")
    }

    /// `2026-11-25T21:00:01Z van-7/a1 removed`
    public static func removed(_ key: ActivityKey, now: Date) -> String {
        stamp(now) + "\(key.device.rawValue)/\(key.activity) removed"
    }

    /// `2026-11-25T21:00:01Z 5 activities: 1 active, … · 6 devices: 1 offline, 2 unhealthy · 1 rejected · WARNING: …`
    public static func summary(_ fleet: Fleet, now: Date, warning: String?, dropped: Int) -> String {
        let devices = fleet.deviceCounts()
        var line =
            "\(RowFormat.count(fleet.rows.count)) activities: \(FrameRenderer.summary(fleet.counts(at: now)))"
            + " · \(RowFormat.count(devices.devices)) devices: \(RowFormat.count(devices.offline)) offline, "
            + "\(RowFormat.count(devices.unhealthy)) unhealthy · \(RowFormat.count(fleet.rejectedCount)) rejected"
            + (fleet.missedCount > 0 ? " · \(RowFormat.count(fleet.missedCount)) missed" : "")
            + (dropped > 0 ? " · \(RowFormat.count(dropped)) dropped" : "")
        if let warning { line += " · WARNING: \(warning)" }
        return stamp(now) + line
    }

    private static func stamp(_ now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):"
            + "\(two(parts.second))Z "
    }
}
