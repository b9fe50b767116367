import Foundation

/// The board's presentations, after the iOS app's: a line per activity, a card per activity, or one
/// line for the whole fleet.
public enum BoardLayout: String, CaseIterable, Hashable, Sendable {
    /// One line per activity (the default).
    case compact
    /// A multi-line card per activity, like the lock-screen view.
    case expanded
    /// One line for the whole fleet, such as `12 active, 2 stale, 1 offline`, for a status bar.
    case minimal

    /// The next layout in the cycle (`l`).
    public var next: BoardLayout { cycled }
}

/// What the header says besides the counts: where the board reads from and anything to worry about.
public struct BoardHeader: Hashable, Sendable {
    /// The prefix and broker, such as `myeline @ mqtt://broker`.
    public var source: String
    /// The connection's state when it is not simply connected, such as `connecting to the broker…`.
    public var connection: String?
    /// A warning to show until it is fixed, such as a truncated retained bootstrap.
    public var warning: String?
    /// Messages the board's MQTT client dropped because the board fell behind (its buffer was full).
    public var dropped: Int
    /// Whether to show the keys (the live board) or not (`--once`).
    public var showsKeys: Bool

    /// Creates a header.
    public init(
        source: String, connection: String? = nil, warning: String? = nil, dropped: Int = 0, showsKeys: Bool = true
    ) {
        self.source = source
        self.connection = connection
        self.warning = warning
        self.dropped = dropped
        self.showsKeys = showsKeys
    }
}

/// Renders the board as lines of text for a terminal of a given size: pure, so frames are golden-tested.
///
/// A frame visits every row once to count states (and the view sorts only when the order changed);
/// only the rows on screen are formatted.
public struct FrameRenderer: Sendable {
    /// The presentation.
    public var layout: BoardLayout
    /// The terminal's width, columns.
    public var columns: Int
    /// The terminal's height, lines.
    public var lines: Int
    /// Whether to colour stale, offline and ended rows, health issues and fresh alerts with ANSI escapes.
    public var colours: Bool

    /// Lines of header above the rows (compact and expanded): counts, keys, warning, recent alerts, titles.
    public static let headerLines = 5
    /// Lines per card in the expanded layout, the blank line after it included.
    public static let cardLines = 6
    /// How long an alert stays highlighted after it was raised, seconds.
    public static let alertHighlight: TimeInterval = 60

    /// Creates a renderer.
    public init(layout: BoardLayout, columns: Int, lines: Int, colours: Bool) {
        self.layout = layout
        self.columns = max(1, columns)
        self.lines = max(1, lines)
        self.colours = colours
    }

    /// How many rows fit on one screen.
    public var pageSize: Int {
        switch layout {
        case .compact: max(1, lines - Self.headerLines)
        case .expanded: max(1, (lines - Self.headerLines + 1) / Self.cardLines)
        case .minimal: 1
        }
    }

    /// One frame: exactly `lines` lines, each exactly `columns` wide (not counting colour escapes).
    public func render(_ fleet: Fleet, view: inout BoardView, header: BoardHeader, now: Date) -> [String] {
        let counts = fleet.counts(at: now)
        if layout == .minimal {
            var line = Self.summary(counts) + Self.attention(fleet, now: now)
            if let warning = header.warning { line += " (\(warning))" }
            return [fit(line)] + Array(repeating: fit(""), count: lines - 1)
        }
        let entries = view.orderedEntries(fleet, now: now)
        view.offset = min(view.offset, max(0, entries.count - pageSize))
        let shown = entries.dropFirst(view.offset).prefix(pageSize)
        var frame = headerLines(
            fleet, counts: counts, view: view, header: header, shown: shown.count, total: entries.count, now: now)
        switch layout {
        case .compact:
            let plan = BoardColumn.plan(width: columns, fields: fleet.genericCount > 0)
            frame.append(
                paint(
                    fit(
                        plan.map { TerminalText.fit($0.column.rawValue, $0.width, alignRight: $0.column.alignsRight) }
                            .joined(separator: " ")), "7"))
            for entry in shown {
                guard let state = fleet.state(of: entry, at: now) else { continue }
                frame.append(compactLine(entry, state: state, fleet: fleet, plan: plan, now: now))
            }
        case .expanded:
            frame.append(fit(String(repeating: "─", count: columns)))
            for entry in shown {
                guard let state = fleet.state(of: entry, at: now) else { continue }
                for line in card(entry, state: state, fleet: fleet, now: now) {
                    frame.append(paint(fit(line), colour(of: state)))
                }
            }
        case .minimal:
            break
        }
        frame = Array(frame.prefix(lines))
        return frame + Array(repeating: fit(""), count: lines - frame.count)
    }

    /// ` · 1,204 missed · 37 dropped`: the envelopes of shown rows that never arrived (``Fleet/missedCount``)
    /// and the messages the board dropped (``BoardHeader/dropped``), each only when there are any.
    static func losses(_ fleet: Fleet, _ header: BoardHeader) -> String {
        (fleet.missedCount > 0 ? " · \(RowFormat.count(fleet.missedCount)) missed" : "")
            + (header.dropped > 0 ? " · \(RowFormat.count(header.dropped)) dropped" : "")
            + (fleet.resyncCount > 0 ? " · \(RowFormat.count(fleet.resyncCount)) resynced" : "")
    }

    /// `12 active, 2 stale, 1 offline`: active always, the other states when there are any.
    public static func summary(_ counts: [RowState: Int]) -> String {
        let active = "\(RowFormat.count(counts[.active] ?? 0)) active"
        let others = [RowState.stale, .paused, .ended, .offline].compactMap { state -> String? in
            guard let count = counts[state], count > 0 else { return nil }
            return "\(RowFormat.count(count)) \(state.rawValue.lowercased())"
        }
        return ([active] + others).joined(separator: ", ")
    }

    /// ` · attention: car-1 offline 12m, van-7 clock +2h and 3 more`: the devices offline or unhealthy,
    /// offline first, for the minimal layout; empty when none.
    public static func attention(_ fleet: Fleet, now: Date, limit: Int = 3) -> String {
        let devices = fleet.devices.keys.sorted { $0.rawValue < $1.rawValue }
        var offline: [String] = []
        var unhealthy: [String] = []
        for device in devices {
            let name = TerminalText.sanitized(device.rawValue)
            if fleet.isOffline(device) {
                let since = fleet.devices[device]?.since.map { " " + RowFormat.age(since: $0, now: now) } ?? ""
                offline.append("\(name) offline\(since)")
            } else if let issue = fleet.health(of: device).issues.first {
                unhealthy.append("\(name) \(issue.text)")
            }
        }
        let all = offline + unhealthy
        guard !all.isEmpty else { return "" }
        let more = all.count > limit ? " and \(all.count - limit) more" : ""
        return " · attention: " + all.prefix(limit).joined(separator: ", ") + more
    }

    private func headerLines(
        _ fleet: Fleet, counts: [RowState: Int], view: BoardView, header: BoardHeader, shown: Int, total: Int,
        now: Date
    ) -> [String] {
        let devices = fleet.deviceCounts()
        let first =
            "MYELINE \(RowFormat.count(fleet.rows.count)) activities: " + Self.summary(counts)
            + " · \(RowFormat.count(devices.devices)) devices: \(RowFormat.count(devices.offline)) offline, "
            + "\(RowFormat.count(devices.unhealthy)) unhealthy"
            + " · \(RowFormat.count(fleet.rejectedCount)) rejected" + Self.losses(fleet, header)
            + " · \(TerminalText.sanitized(header.source))"
        let range = shown == 0 ? "0" : "\(RowFormat.count(view.offset + 1))-\(RowFormat.count(view.offset + shown))"
        let filter =
            view.isEditingFilter
            ? "filter: \(TerminalText.sanitized(view.filter))_ (Enter keeps, Esc clears)"
            : "filter: \(view.filter.isEmpty ? "none" : TerminalText.sanitized(view.filter))"
        let shows = view.rows == .all ? "" : " · showing: \(view.rows.rawValue)"
        let keys =
            header.showsKeys ? " · q quit, s sort, f offline/unhealthy, l layout, / filter, ↑↓ PgUp PgDn scroll" : ""
        let second =
            "sort: \(view.sort.rawValue) · \(filter)\(shows) · rows \(range) of \(RowFormat.count(total))" + keys
        let third: String
        if let warning = header.warning {
            third = paint(fit("WARNING: " + warning), "1;31")
        } else {
            third = fit(header.connection ?? "")
        }
        return [paint(fit(first), "1"), fit(second), third, alertsLine(fleet, now: now)]
    }

    /// `alerts: 12s van-7 Overspeed · 3m truck-2 Entered depot`, newest first, fresh ones highlighted.
    private func alertsLine(_ fleet: Fleet, now: Date) -> String {
        guard let newest = fleet.recentAlerts.first else { return fit("alerts: none since the board started") }
        let items = fleet.recentAlerts.prefix(8).map { recent in
            "\(RowFormat.age(since: recent.date, now: now)) \(TerminalText.sanitized(recent.key.device.rawValue)): "
                + TerminalText.sanitized(recent.alert.title)
        }
        let line = fit("alerts: " + items.joined(separator: " · "))
        return isFresh(newest.date, now: now) ? paint(line, "1;33") : line
    }

    private func isFresh(_ date: Date, now: Date) -> Bool {
        now.timeIntervalSince(date) < Self.alertHighlight
    }

    private func compactLine(
        _ entry: BoardEntry, state: RowState, fleet: Fleet, plan: [(column: BoardColumn, width: Int)], now: Date
    ) -> String {
        let device = entry.device
        let status = fleet.devices[device]
        let health = fleet.health(of: device)
        var row: ActivityRow?
        if case .activity(let key) = entry { row = fleet.rows[key] }
        // A location's columns; `-` for a device row and an activity of another type.
        let content = row?.content
        let destination = row?.destination
        let lineColour = colour(of: state)
        var cells: [String] = []
        for (column, width) in plan {
            var highlight: String?
            let value: String
            switch column {
            case .device: value = TerminalText.sanitized(device.rawValue)
            case .name: value = row.map { TerminalText.sanitized($0.name) } ?? "-"
            case .state: value = state.rawValue + (row?.resyncedAt != nil ? "↺" : "")
            case .since: value = status?.state == nil ? "-" : RowFormat.age(since: status?.since, now: now)
            case .location:
                value =
                    content.map(RowFormat.location) ?? row.map { TerminalText.sanitized($0.attributesType) }
                    ?? "no activity"
            case .fields: value = row?.generic.map { TerminalText.sanitized($0.fieldsText) } ?? "-"
            case .speed: value = content.map { RowFormat.speed($0.speed) } ?? "-"
            case .course: value = content.map { RowFormat.course($0.course) } ?? "-"
            case .fix: value = content.map(RowFormat.fix) ?? "-"
            case .accuracy: value = content.map { RowFormat.distance($0.horizontalAccuracy) } ?? "-"
            case .age: value = row.map { RowFormat.age(since: content?.fixTime ?? $0.timestamp, now: now) } ?? "-"
            case .seen: value = RowFormat.age(since: status?.lastSeen, now: now)
            case .distance: value = content.map { RowFormat.distance($0.distance) } ?? "-"
            case .elapsed: value = content.map { RowFormat.elapsed($0.elapsed) } ?? "-"
            case .progress:
                value =
                    content.flatMap { destination != nil ? RowFormat.progress($0.progress) : nil } ?? "-"
            case .eta:
                value =
                    content.flatMap { destination != nil ? RowFormat.eta($0.eta, now: now) : nil } ?? "-"
            case .health:
                value = health.isHealthy ? "ok" : health.summary
                if !health.isHealthy { highlight = "35" }
            case .alert:
                if let row, let alert = row.lastAlert {
                    // The age first, so that a narrow column cuts the title, not when it happened.
                    let age = row.alertDate.map { RowFormat.age(since: $0, now: now) + " " } ?? ""
                    value = age + TerminalText.sanitized(alert.title)
                    if let date = row.alertDate, isFresh(date, now: now) { highlight = "7" }
                } else {
                    value = ""
                }
            }
            let cell = TerminalText.fit(value, width, alignRight: column.alignsRight)
            if colours, let highlight {
                let restore = lineColour.map { "\u{1B}[0m\u{1B}[\($0)m" } ?? "\u{1B}[0m"
                cells.append("\u{1B}[\(highlight)m" + cell + restore)
            } else {
                cells.append(cell)
            }
        }
        // The plan fills the width exactly; a terminal narrower than the device column still gets a full line.
        let line = cells.joined(separator: " ")
        let padding = max(0, columns - plan.reduce(-1) { $0 + $1.width + 1 })
        return paint(line + String(repeating: " ", count: padding), lineColour)
    }

    private func card(_ entry: BoardEntry, state: RowState, fleet: Fleet, now: Date) -> [String] {
        let clean = TerminalText.sanitized
        let device = entry.device
        let health = fleet.health(of: device)
        let status = fleet.devices[device]
        var link = "link unknown"
        if let state = status?.state {
            link = "\(state.rawValue) for \(RowFormat.age(since: status?.since, now: now))"
            if let reason = status?.reason, state == .offline { link += " (\(clean(reason)))" }
        }
        var deviceLine = "  device: \(link), last seen \(RowFormat.age(since: status?.lastSeen, now: now)) ago"
        if let version = status?.version { deviceLine += ", agent \(clean(version))" }
        if let losses = status?.powerLossText { deviceLine += ", \(losses)" }
        deviceLine += health.isHealthy ? ", healthy" : ", health: \(health.summary)"
        if let error = status?.storageError { deviceLine += " (\(clean(error)))" }
        guard case .activity(let key) = entry, let row = fleet.rows[key] else {
            let first =
                TerminalText.fit("\(clean(device.rawValue)) · no activity", max(1, columns - 10)) + " "
                + TerminalText.fit(state.rawValue, 9)
            return [first, deviceLine, "", "", "", ""]
        }
        var alert = "  no alert since the board started"
        if let last = row.lastAlert {
            let age = row.alertDate.map { " (\(RowFormat.age(since: $0, now: now)) ago)" } ?? ""
            alert = "  ! \(clean(last.title)): \(clean(last.body))\(age)"
        }
        let stateText = TerminalText.fit(state.rawValue + (row.resyncedAt != nil ? "↺" : ""), 9)
        guard case .location(let attributes, let content) = row.details else {
            // Another attributes type: its type, when it last changed, and its content's values as they are.
            let title = "\(clean(device.rawValue)) · \(clean(row.name))"
            let first = TerminalText.fit(title, max(1, columns - 10)) + " " + stateText
            let type =
                "  type \(clean(row.attributesType)), updated \(RowFormat.age(since: row.timestamp, now: now)) ago"
            return [first, type, "  " + clean(row.generic?.fieldsText ?? ""), alert, deviceLine, ""]
        }
        let who = [attributes.vehicle, attributes.driver].compactMap { $0.map(clean) }
        var title =
            "\(clean(device.rawValue)) · \(clean(attributes.name))"
            + (who.isEmpty ? "" : " (\(who.joined(separator: ", ")))")
        if let status = RowFormat.status(row) { title += " · " + status }
        let first = TerminalText.fit(title, max(1, columns - 10)) + " " + stateText
        var position = ["  " + RowFormat.location(content)]
        if content.speed != nil { position.append("\(RowFormat.speed(content.speed)) km/h") }
        if content.course != nil { position.append(RowFormat.course(content.course)) }
        if content.fix != .noFix { position.append("fix \(RowFormat.fix(content))") }
        if content.horizontalAccuracy != nil { position.append("±\(RowFormat.distance(content.horizontalAccuracy))") }
        position.append("last fix \(RowFormat.age(since: content.fixTime ?? row.timestamp, now: now)) ago")
        var trip =
            "  \(RowFormat.distance(content.distance)) in \(RowFormat.elapsed(content.elapsed))"
            + (content.paused ? " (paused)" : "")
        if let destination = row.destination {
            trip +=
                "   → \(clean(destination.name)) \(RowFormat.progress(content.progress))"
                + "   ETA \(RowFormat.eta(content.eta, now: now))"
        }
        return [first, position.joined(separator: "   "), trip, alert, deviceLine, ""]
    }

    private func fit(_ text: String) -> String {
        TerminalText.fit(text, columns)
    }

    private func colour(of state: RowState) -> String? {
        switch state {
        case .stale: "33"
        case .offline: "31"
        case .ended: "2"
        case .active, .paused, .idle: nil
        }
    }

    private func paint(_ line: String, _ code: String?) -> String {
        guard colours, let code else { return line }
        return "\u{1B}[\(code)m\(line)\u{1B}[0m"
    }
}
