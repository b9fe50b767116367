import Board
import Foundation
import LiveActivity

/// How the board is shown: what `--once`, `--json` and `--follow` chose.
enum Presentation: Hashable, Sendable {
    /// The live full-screen board.
    case board
    /// The board printed once the retained state has arrived.
    case once
    /// One JSON object per activity, once the retained state has arrived.
    case onceJSON
    /// Every change as a JSON line, from the bootstrap on.
    case followJSON
}

/// The settings a presenter draws with.
struct Display: Sendable {
    var layout: BoardLayout
    var colours: Bool
    var header: String

    /// Colours unless `NO_COLOR` is set (to anything) or standard output is not a terminal.
    static func coloursWanted(environment: [String: String]) -> Bool {
        environment["NO_COLOR"] == nil && Terminal.isInteractive
    }
}

extension BoardSession {
    /// The header as it stands.
    func header(_ source: String) -> BoardHeader {
        withState { state in
            let warnings = [state.bootstrap.warning, state.fleet.duplicationWarning].compactMap { $0 }
            return BoardHeader(
                source: source, connection: state.connection,
                warning: warnings.isEmpty ? nil : warnings.joined(separator: "; "), dropped: state.dropped)
        }
    }

    /// Prints the board once, at the terminal's width (120 columns when not a terminal) and tall enough
    /// for every row.
    func printOnce(_ display: Display) {
        let now = clock.now
        let columns = Terminal.size()?.columns ?? 120
        let header = self.header(display.header)
        let text = withState { state -> String in
            let rowCount = state.fleet.rows.count
            let lines: Int =
                switch display.layout {
                case .compact: FrameRenderer.headerLines + rowCount
                case .expanded: FrameRenderer.headerLines + rowCount * FrameRenderer.cardLines
                case .minimal: 1
                }
            let renderer = FrameRenderer(
                layout: display.layout, columns: columns, lines: lines, colours: display.colours)
            return renderer.render(state.fleet, view: &state.view, header: header, now: now)
                .map { $0.trimmingTrailingSpaces }.joined(separator: "\n") + "\n"
        }
        Terminal.write(text)
    }

    /// Prints one JSON line per activity, by relevance then device.
    func printJSON() {
        let now = clock.now
        let rows = withState { state in
            BoardView.order(state.fleet, sort: .relevance, filter: "", now: now)
                .compactMap { state.fleet.rows[$0] }
                .map { ($0, state.fleet.state(of: $0, at: now)) }
        }
        Terminal.write(rows.map { BoardJSON.row($0, state: $1) + "\n" }.joined())
    }

    /// Removes the rows past their dismissal date; done once a second, whatever the presentation.
    func removeDismissed() {
        let now = clock.now
        withState { state in
            for key in state.fleet.removeDismissed(now: now) where state.recordsChanges {
                state.record(.removed(key))
            }
        }
    }

    /// Streams every change as a JSON line until cancelled: rows added, updated and removed, status
    /// changes, rows whose state changed with time (stale, checked once a second), and a `summary`
    /// line when the bootstrap was truncated or, checked once a second, when updates were lost
    /// (its `missed` or `dropped` count grew).
    ///
    /// Lines are written as soon as changes are recorded; changes that arrive while a batch is
    /// written go out together in the next, one line per row with its latest content. The changed
    /// rows are copied under the lock and written as JSON after it, so that a flood of changes does
    /// not hold up ``apply(_:)``; while the output is blocked, what waits is bounded by the fleet.
    func follow() async throws {
        var lastStates: [ActivityKey: RowState] = [:]
        var lastSecond = 0
        var reportedWarning = false
        var reportedLosses = (missed: 0, dropped: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                while true {
                    try await Task.sleep(for: .seconds(1))
                    self.ringDoorbell()
                }
            }
            for await _ in changesRecorded {
                try Task.checkCancellation()
                let now = clock.now
                let second = Int(now.timeIntervalSince1970)
                let lines = withState { state -> [FollowLine] in
                    var lines: [FollowLine] = []
                    let changes = state.takeChanges()
                    func note(_ row: ActivityRow, _ change: String) {
                        let rowState = state.fleet.state(of: row, at: now)
                        lastStates[row.key] = rowState
                        lines.append(.row(row, rowState, change: change))
                    }
                    for change in changes {
                        switch change {
                        case .updated(let key), .removed(let key):
                            if let row = state.fleet.rows[key] {
                                note(row, "updated")
                            } else if lastStates.removeValue(forKey: key) != nil {
                                lines.append(.text(BoardJSON.removed(key)))
                            }
                        case .status(let device):
                            lines.append(.text(BoardJSON.status(device, fleet: state.fleet)))
                            for key in state.fleet.activities(of: device) {
                                guard let row = state.fleet.rows[key] else { continue }
                                note(row, "state")
                            }
                        case .rejected, .unchanged:
                            continue
                        }
                    }
                    if second != lastSecond {
                        for row in state.fleet.rows.values
                        where lastStates[row.key] != state.fleet.state(of: row, at: now) {
                            note(row, "state")
                        }
                    }
                    let losses = (missed: state.fleet.missedCount, dropped: state.dropped)
                    let lossesGrew = second != lastSecond && losses != reportedLosses
                    let warning = state.bootstrap.warning
                    if (warning != nil && !reportedWarning) || lossesGrew {
                        reportedWarning = reportedWarning || warning != nil
                        reportedLosses = losses
                        lines.append(
                            .text(BoardJSON.summary(state.fleet, now: now, warning: warning, dropped: losses.dropped)))
                    }
                    return lines
                }
                lastSecond = second
                if !lines.isEmpty { Terminal.write(lines.map { $0.json + "\n" }.joined()) }
            }
        }
    }

    /// Runs the full-screen board until `q`: redraws at most every `tick` (10 per second), only when the
    /// fleet, the view, the size or the clock's second changed, writing only the lines that differ.
    func runBoard(_ display: Display, tick: Duration = .milliseconds(100)) async throws {
        try await Terminal.withFullScreen { keyboard in
            var keyDecoder = KeyDecoder()
            var previous: [String]?
            var previousSize: (columns: Int, lines: Int)?
            var drawn: (revision: Int, second: Int, columns: Int, lines: Int)?
            while true {
                let size = Terminal.size() ?? (120, 40)
                let renderer = FrameRenderer(
                    layout: display.layout, columns: size.columns, lines: size.lines, colours: display.colours)
                let keys = keyDecoder.decode(keyboard.take())
                let now = clock.now
                let second = Int(now.timeIntervalSince1970)
                let header = self.header(display.header)
                let outcome = withState { state -> (quit: Bool, frame: [String]?) in
                    for key in keys {
                        let rows = state.view.orderedKeys(state.fleet, now: now).count
                        if state.view.handle(key, pageSize: renderer.pageSize, rowCount: rows) == .quit {
                            return (true, nil)
                        }
                    }
                    let revision = state.fleet.revision
                    if keys.isEmpty, let drawn, drawn == (revision, second, size.columns, size.lines) {
                        return (false, nil)
                    }
                    drawn = (revision, second, size.columns, size.lines)
                    return (false, renderer.render(state.fleet, view: &state.view, header: header, now: now))
                }
                if outcome.quit { return }
                if let frame = outcome.frame {
                    let sameSize = previousSize.map { $0 == size } ?? false
                    if !sameSize, previous != nil { Terminal.write("\u{1B}[2J") }
                    let update = FrameDiff.update(from: sameSize ? previous : nil, to: frame)
                    if !update.isEmpty { Terminal.write(update) }
                    previous = frame
                    previousSize = size
                }
                try await Task.sleep(for: tick)
            }
        }
    }
}

/// One line of `--follow --json`: a row copied out of the state, written after the lock, or a line
/// already written.
private enum FollowLine {
    case row(ActivityRow, RowState, change: String)
    case text(String)

    var json: String {
        switch self {
        case .row(let row, let state, let change): BoardJSON.row(row, state: state, change: change)
        case .text(let text): text
        }
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
