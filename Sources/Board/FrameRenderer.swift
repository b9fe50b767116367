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

    /// Creates a header.
    public init(source: String, connection: String? = nil, warning: String? = nil, dropped: Int = 0) {
        self.source = source
        self.connection = connection
        self.warning = warning
        self.dropped = dropped
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
    /// Whether to colour stale, offline and ended rows with ANSI escapes.
    public var colours: Bool

    /// Lines of header above the rows (compact and expanded).
    public static let headerLines = 4
    /// Lines per card in the expanded layout, the blank line after it included.
    public static let cardLines = 5

    /// Creates a renderer.
    public init(layout: BoardLayout, columns: Int, lines: Int, colours: Bool) {
        self.layout = layout
        self.columns = max(1, columns)
        self.lines = max(1, lines)
        self.colours = colours
    }

    /// How many activities fit on one screen.
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
            var line = Self.summary(counts)
            if let warning = header.warning { line += " (\(warning))" }
            return [fit(line)] + Array(repeating: fit(""), count: lines - 1)
        }
        let keys = view.orderedKeys(fleet, now: now)
        view.offset = min(view.offset, max(0, keys.count - pageSize))
        let shown = keys.dropFirst(view.offset).prefix(pageSize)
        var frame = headerLines(
            fleet, counts: counts, view: view, header: header, shown: shown.count, total: keys.count)
        switch layout {
        case .compact:
            frame.append(paint(fit(Self.columnTitles(width: columns)), "7"))
            for key in shown {
                guard let row = fleet.rows[key] else { continue }
                let state = fleet.state(of: row, at: now)
                frame.append(paint(fit(compactLine(row, state: state, now: now)), colour(of: state)))
            }
        case .expanded:
            frame.append(fit(String(repeating: "─", count: columns)))
            for key in shown {
                guard let row = fleet.rows[key] else { continue }
                let state = fleet.state(of: row, at: now)
                for line in card(row, state: state, now: now) { frame.append(paint(fit(line), colour(of: state))) }
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

    private func headerLines(
        _ fleet: Fleet, counts: [RowState: Int], view: BoardView, header: BoardHeader, shown: Int, total: Int
    ) -> [String] {
        let states = RowState.allCases.map { "\(RowFormat.count(counts[$0] ?? 0)) \($0.rawValue.lowercased())" }
        let first =
            "MYELINE \(RowFormat.count(fleet.rows.count)) activities: " + states.joined(separator: ", ")
            + " · \(RowFormat.count(fleet.rejectedCount)) rejected" + Self.losses(fleet, header)
            + " · \(TerminalText.sanitized(header.source))"
        let range = shown == 0 ? "0" : "\(RowFormat.count(view.offset + 1))-\(RowFormat.count(view.offset + shown))"
        let filter =
            view.isEditingFilter
            ? "filter: \(TerminalText.sanitized(view.filter))_ (Enter keeps, Esc clears)"
            : "filter: \(view.filter.isEmpty ? "none" : TerminalText.sanitized(view.filter))"
        let second =
            "sort: \(view.sort.rawValue) · \(filter) · rows \(range) of \(RowFormat.count(total))"
            + " · q quit, s sort, / filter, ↑↓ PgUp PgDn scroll"
        let third: String
        if let warning = header.warning {
            third = paint(fit("WARNING: " + warning), "1;31")
        } else {
            third = fit(header.connection ?? "")
        }
        return [paint(fit(first), "1"), fit(second), third]
    }

    /// The compact layout's column titles and widths; the alert takes what is left.
    static let fixedColumns: [(title: String, width: Int, right: Bool)] = [
        ("DEVICE", 12, false), ("NAME", 11, false), ("STATE", 7, false), ("LOCATION", 21, false),
        ("KM/H", 4, true), ("CRS", 4, true), ("FIX", 5, false), ("ACC", 5, true), ("AGE", 5, true),
        ("DIST", 7, true), ("ELAPSED", 8, true), ("PROG", 4, true), ("ETA", 5, true),
    ]

    static func columnTitles(width: Int) -> String {
        join(fixedColumns.map(\.title) + ["ALERT"], width: width)
    }

    private func compactLine(_ row: ActivityRow, state: RowState, now: Date) -> String {
        let content = row.content
        let hasDestination = row.attributes.destination != nil
        let values = [
            TerminalText.sanitized(row.key.device.rawValue), TerminalText.sanitized(row.attributes.name),
            state.rawValue, RowFormat.location(content), RowFormat.speed(content.speed),
            RowFormat.course(content.course), RowFormat.fix(content), RowFormat.distance(content.horizontalAccuracy),
            RowFormat.age(since: content.fixTime ?? row.timestamp, now: now), RowFormat.distance(content.distance),
            RowFormat.elapsed(content.elapsed), hasDestination ? RowFormat.progress(content.progress) : "-",
            hasDestination ? RowFormat.eta(content.eta, now: now) : "-",
            row.lastAlert.map { TerminalText.sanitized($0.title) } ?? "",
        ]
        return Self.join(values, width: columns)
    }

    private static func join(_ values: [String], width: Int) -> String {
        var cells: [String] = []
        var used = 0
        for (value, column) in zip(values, fixedColumns) {
            cells.append(TerminalText.fit(value, column.width, alignRight: column.right))
            used += column.width + 1
        }
        if values.count > fixedColumns.count {
            cells.append(TerminalText.fit(values[fixedColumns.count], max(5, width - used)))
        }
        return cells.joined(separator: " ")
    }

    private func card(_ row: ActivityRow, state: RowState, now: Date) -> [String] {
        let attributes = row.attributes
        let content = row.content
        let clean = TerminalText.sanitized
        let who = [attributes.vehicle, attributes.driver].compactMap { $0.map(clean) }
        let title =
            "\(clean(row.key.device.rawValue)) · \(clean(attributes.name))"
            + (who.isEmpty ? "" : " (\(who.joined(separator: ", ")))")
        let first = TerminalText.fit(title, max(1, columns - 9)) + " " + TerminalText.fit(state.rawValue, 8)
        var position = ["  " + RowFormat.location(content)]
        if content.speed != nil { position.append("\(RowFormat.speed(content.speed)) km/h") }
        if content.course != nil { position.append(RowFormat.course(content.course)) }
        if content.fix != .noFix { position.append("fix \(RowFormat.fix(content))") }
        if content.horizontalAccuracy != nil { position.append("±\(RowFormat.distance(content.horizontalAccuracy))") }
        position.append("last fix \(RowFormat.age(since: content.fixTime ?? row.timestamp, now: now)) ago")
        var trip =
            "  \(RowFormat.distance(content.distance)) in \(RowFormat.elapsed(content.elapsed))"
            + (content.paused ? " (paused)" : "")
        if let destination = attributes.destination {
            trip +=
                "   → \(clean(destination.name)) \(RowFormat.progress(content.progress))"
                + "   ETA \(RowFormat.eta(content.eta, now: now))"
        }
        let alert = row.lastAlert.map { "  ! \(clean($0.title)): \(clean($0.body))" } ?? "  no alert"
        return [first, position.joined(separator: "   "), trip, alert, ""]
    }

    private func fit(_ text: String) -> String {
        TerminalText.fit(text, columns)
    }

    private func colour(of state: RowState) -> String? {
        switch state {
        case .stale: "33"
        case .offline: "31"
        case .ended: "2"
        case .active, .paused: nil
        }
    }

    private func paint(_ line: String, _ code: String?) -> String {
        guard colours, let code else { return line }
        return "\u{1B}[\(code)m\(line)\u{1B}[0m"
    }
}
