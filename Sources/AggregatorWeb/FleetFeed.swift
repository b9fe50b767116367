import Board
import Foundation
import LiveActivity

/// What the web map reads of the board each frame: a copy of the fleet (copy-on-write, so taking
/// it under the session's lock costs a reference) and the header's figures for the summary line.
public struct FleetReading: Sendable {
    /// The board's fleet as it stands.
    public var fleet: Fleet
    /// Messages the board's MQTT client dropped (``BoardJSON/summary(_:now:warning:dropped:completeness:change:)``).
    public var dropped: Int
    /// The header's warning, if any (a cut bootstrap, a duplicated device).
    public var warning: String?

    /// Creates a reading.
    public init(fleet: Fleet, dropped: Int = 0, warning: String? = nil) {
        self.fleet = fleet
        self.dropped = dropped
        self.warning = warning
    }
}

/// The web map's change stream, as a pure value: from one reading of the fleet to the next, the
/// `--follow --json` lines that say what changed (docs/aggregator.md), and each activity's recent
/// trail. Compared frame by frame, so that a flood of envelopes between two frames costs one line
/// per activity and device that changed, never one per message.
///
/// Time alone changes what is shown (an activity turns stale past its stale date), so every frame
/// compares each row's state; rows and devices are compared only when the fleet's revision moved.
public struct FleetFeed: Sendable {
    /// The most points each activity's trail keeps (the oldest go first).
    public let trailLimit: Int

    private var revision: Int?
    private var rows: [ActivityKey: Shown] = [:]
    /// Each device's last line sent, without its `last-seen` (``withoutLastSeen(_:)``).
    private var deviceLines: [DeviceID: String] = [:]
    private var summaryLine = ""
    /// Whether ``deviceLines`` follow the fleet's last revision (not while no lines were produced).
    private var devicesCurrent = true
    /// Each located activity's recent positions, oldest first.
    public private(set) var trails: [ActivityKey: [TrailPoint]] = [:]

    private struct Shown: Equatable {
        var row: ActivityRow
        var state: RowState
    }

    /// A position on a trail: latitude and longitude in degrees.
    public struct TrailPoint: Hashable, Sendable {
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double

        /// Creates a point.
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// An empty feed keeping `trailLimit` points per activity.
    public init(trailLimit: Int) {
        self.trailLimit = max(0, trailLimit)
    }

    /// The lines that bring a reader from the previous reading to `reading` at `now`: a `device`
    /// line (change `status`) per changed device, an `activity` line (change `updated`, or `state`
    /// when only its state moved) per changed activity, a `removed` line per activity gone, and the
    /// `summary` line when its figures changed; and extends the trails.
    ///
    /// With `producingLines` false (no page is reading) only the rows and trails are followed and
    /// nothing is rendered, so that the map costs the board next to nothing while nobody looks;
    /// the next frame that produces lines then says every device whose line changed meanwhile.
    public mutating func advance(to reading: FleetReading, now: Date, producingLines: Bool = true) -> [String] {
        let fleet = reading.fleet
        var lines: [String] = []
        var changedDevices: Set<DeviceID> = []
        let moved = revision != fleet.revision
        if moved {
            revision = fleet.revision
            for key in rows.keys where fleet.rows[key] == nil {
                rows[key] = nil
                trails[key] = nil
                if producingLines { lines.append(BoardJSON.removed(key)) }
            }
        }
        if producingLines && (moved || !devicesCurrent) {
            devicesCurrent = true
            var seen: Set<DeviceID> = []
            for device in Set(fleet.devices.keys).union(fleet.rows.keys.map(\.device)) {
                seen.insert(device)
                let line = BoardJSON.device(device, fleet: fleet, change: "status")
                // As `--follow --json`: a device's line when its status or health changed, not
                // each time an envelope moves its last-seen (which would double the stream).
                let compared = Self.withoutLastSeen(line)
                if deviceLines[device] != compared {
                    deviceLines[device] = compared
                    changedDevices.insert(device)
                    lines.append(line)
                }
            }
            for device in deviceLines.keys where !seen.contains(device) { deviceLines[device] = nil }
        } else if !producingLines && moved {
            devicesCurrent = false
        }
        for (key, row) in fleet.rows {
            let shown = Shown(row: row, state: fleet.state(of: row, at: now))
            let old = rows[key]
            guard old != shown || changedDevices.contains(key.device) else { continue }
            rows[key] = shown
            // Only a location activity has a trail; another attributes type has no position.
            if let content = row.content, old?.row.content != content { extendTrail(key, content) }
            guard producingLines else { continue }
            let change = old.map { $0.row == row ? "state" : "updated" } ?? "updated"
            lines.append(BoardJSON.row(row, state: shown.state, change: change, fleet: fleet))
        }
        guard producingLines else { return [] }
        let summary = BoardJSON.summary(fleet, now: now, warning: reading.warning, dropped: reading.dropped)
        if summary != summaryLine {
            summaryLine = summary
            lines.append(summary)
        }
        return lines
    }

    /// A device line without its `last-seen` member, for comparing two of them.
    static func withoutLastSeen(_ line: String) -> String {
        guard let start = line.range(of: #""last-seen":"#) else { return line }
        let end = line[start.upperBound...].firstIndex { $0 == "," || $0 == "}" } ?? line.endIndex
        return String(line[..<start.lowerBound] + line[end...])
    }

    /// Every line a new reader starts from, in the board's order (by relevance): each activity as
    /// last passed to ``advance(to:now:producingLines:)`` (change `updated`), each device (change
    /// `status`) and the summary, so that a reader who starts here and then takes the next frame's
    /// lines misses nothing.
    public func snapshot(of reading: FleetReading, now: Date) -> [String] {
        let fleet = reading.fleet
        var lines: [String] = []
        lines.reserveCapacity(fleet.rows.count + fleet.devices.count + 1)
        for entry in BoardView.order(fleet, sort: .relevance, filter: "", now: now) {
            if case .activity(let key) = entry, let shown = rows[key] {
                lines.append(BoardJSON.row(shown.row, state: shown.state, change: "updated", fleet: fleet))
            }
        }
        let devices = Set(fleet.devices.keys).union(fleet.rows.keys.map(\.device))
        for device in devices.sorted(by: { $0.rawValue < $1.rawValue }) {
            lines.append(BoardJSON.device(device, fleet: fleet, change: "status"))
        }
        lines.append(BoardJSON.summary(fleet, now: now, warning: reading.warning, dropped: reading.dropped))
        return lines
    }

    private mutating func extendTrail(_ key: ActivityKey, _ content: LocationActivityAttributes.ContentState) {
        guard trailLimit > 0, let latitude = content.latitude, let longitude = content.longitude,
            latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180
        else { return }
        let point = TrailPoint(latitude: latitude, longitude: longitude)
        var trail = trails[key] ?? []
        guard trail.last != point else { return }
        trail.append(point)
        if trail.count > trailLimit { trail.removeFirst(trail.count - trailLimit) }
        trails[key] = trail
    }

    /// The trails as JSON: `{"limit":N,"trails":[{"device":…,"activity":…,"points":[[lat,lon],…]},…]}`.
    public var trailsJSON: String {
        var items: [JSONValue] = []
        for (key, points) in trails.sorted(by: { $0.key < $1.key }) {
            var item = JSONObject()
            item["device"] = .string(key.device.rawValue)
            item["activity"] = .string(key.activity)
            item["points"] = .array(points.map { .array([.number($0.latitude), .number($0.longitude)]) })
            items.append(.object(item))
        }
        var object = JSONObject()
        object["limit"] = .int(trailLimit)
        object["trails"] = .array(items)
        return object.text
    }
}
