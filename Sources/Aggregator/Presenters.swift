import Board
import Foundation
import LiveActivity
import MQTT

/// How the board is shown: what `--once`, `--json` and `--follow` chose, and whether standard
/// output is a terminal.
enum Presentation: Hashable, Sendable {
    /// The live full-screen board (standard output is a terminal).
    case board
    /// Every change as a plain line (`--follow`, or standard output is not a terminal).
    case followPlain
    /// The board printed once the retained state has arrived.
    case once
    /// One JSON line per activity and device and a summary, once the retained state has arrived.
    case onceJSON
    /// Every change as a JSON line, from the bootstrap on.
    case followJSON
    /// Nothing on standard output: the map alone (`--http` with standard output not a terminal, and
    /// neither `--follow` nor `--json`), as under systemd, whose journal would otherwise take a
    /// line for every change.
    case mapOnly

    /// What the flags ask to be shown, given whether the map is served and whether standard output
    /// is a terminal (docs/web.md#the-terminal-and-the-map):
    ///
    /// | `--once` | `--json` | `--follow` | map | terminal | |
    /// |---|---|---|---|---|---|
    /// | yes | no | | | | ``once`` |
    /// | | yes | no | | | ``onceJSON`` |
    /// | | yes | yes | | | ``followJSON`` |
    /// | no | no | yes | | | ``followPlain`` |
    /// | no | no | no | | yes | ``board`` |
    /// | no | no | no | no | no | ``followPlain`` |
    /// | no | no | no | yes | no | ``mapOnly`` |
    static func choose(once: Bool, json: Bool, follow: Bool, map: Bool, interactive: Bool) -> Presentation {
        switch (once, json, follow) {
        case (true, false, _): .once
        case (_, true, false): .onceJSON
        case (_, true, true): .followJSON
        case (false, false, true): .followPlain
        default: interactive ? .board : map ? .mapOnly : .followPlain
        }
    }

    /// Whether the map is served beside this presentation: not for a reading printed once, which
    /// ends at once (and must not take the port of an aggregator serving the same configuration).
    var servesMap: Bool { self != .once && self != .onceJSON }
}

/// What `--once` found, and its exit status (docs/aggregator.md#exit-status).
enum OnceOutcome: Hashable, Sendable {
    /// Every retained message arrived: exit 0.
    case complete
    /// The board could not tell (the broker refused its sentinel): exit 0, with a notice logged.
    case unknown
    /// The broker cut the retained bootstrap: ``ExitStatus/incomplete``.
    case truncated
    /// The board never reached the broker within the time allowed: ``ExitStatus/unreachable``.
    case unreachable(String)
    /// The broker refused the board (credentials, certificate): ``ExitStatus/refused``.
    case refused(String)

    /// The exit status `--once` ends with.
    var exitStatus: Int32 {
        switch self {
        case .complete, .unknown: 0
        case .truncated: ExitStatus.incomplete
        case .unreachable: ExitStatus.unreachable
        case .refused: ExitStatus.refused
        }
    }
}

/// `--once`'s exit statuses besides 0 and 64 (configuration), after sysexits.h.
enum ExitStatus {
    /// The broker could not be reached (EX_UNAVAILABLE).
    static let unreachable: Int32 = 69
    /// The broker cut the retained bootstrap: the picture is incomplete (EX_TEMPFAIL).
    static let incomplete: Int32 = 75
    /// The broker refused the board's credentials or certificate (EX_NOPERM).
    static let refused: Int32 = 77
}

/// The settings a presenter draws with.
struct Display: Sendable {
    var layout: BoardLayout
    var colours: Bool
    /// The prefix and broker the header names, such as `myeline @ mqtt://broker`.
    var header: String
    /// The broker, for messages such as "cannot reach the broker at …".
    var broker = ""
    /// Whether a new alert rings the terminal's bell (`board.bell`).
    var bell = true
    /// Which rows to show at first (`board.show`).
    var rows: RowFilter = .all

    /// Colours unless `NO_COLOR` is set (to anything) or standard output is not a terminal.
    static func coloursWanted(environment: [String: String]) -> Bool {
        environment["NO_COLOR"] == nil && Terminal.isInteractive
    }
}

/// How `--follow` writes its lines.
enum FollowFormat: Sendable {
    case json
    case plain
}

extension BoardSession {
    /// The header as it stands.
    func header(_ source: String, showsKeys: Bool = true) -> BoardHeader {
        withState { state in
            let warnings = [state.bootstrap.warning, state.fleet.duplicationWarning].compactMap { $0 }
            return BoardHeader(
                source: source, connection: state.connection,
                warning: warnings.isEmpty ? nil : warnings.joined(separator: "; "), dropped: state.dropped,
                showsKeys: showsKeys)
        }
    }

    /// Waits until the retained bootstrap is over, or the broker refused the board, or it was not
    /// reached within `connectTimeout` seconds.
    func waitForOnce(connectTimeout: TimeInterval) async throws -> OnceOutcome {
        let started = ContinuousClock.now
        while true {
            let (bootstrap, connected, error) = withState { ($0.bootstrap, $0.connectedOnce, $0.connectionError) }
            switch bootstrap.verdict {
            case .complete: return .complete
            case .truncated: return .truncated
            case .unknown: return .unknown
            case .pending: break
            }
            if !connected {
                if let error, error.needsAttention { return .refused(error.message) }
                if ContinuousClock.now - started >= .seconds(connectTimeout) {
                    return .unreachable(error?.message ?? "no answer")
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Prints the board once (at the terminal's width, 120 columns when not a terminal, tall enough
    /// for every row, without the keys), or its JSON lines with a closing `summary`; says on
    /// standard error why the picture is incomplete, and keeps the outcome for the exit status.
    func printOnce(_ display: Display, json: Bool, outcome: OnceOutcome) async {
        let now = clock.now
        withState { $0.onceOutcome = outcome }
        var problem: String?
        switch outcome {
        case .unreachable(let error):
            problem =
                "cannot reach the broker at \(display.header.split(separator: "@").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"): \(error)"
        case .refused(let error):
            problem = "the broker refused the board: \(error)"
        case .truncated, .complete, .unknown:
            break
        }
        if json {
            let header = self.header(display.header)
            // One string, appended to: 10,000 rows are megabytes, and a copy per step would double them.
            let text = withState { state -> String in
                let entries = BoardView.order(state.fleet, sort: .relevance, filter: "", rows: display.rows, now: now)
                var text = ""
                text.reserveCapacity(entries.count * 512)
                for entry in entries {
                    guard case .activity(let key) = entry, let row = state.fleet.rows[key] else { continue }
                    text += BoardJSON.row(row, state: state.fleet.state(of: row, at: now), fleet: state.fleet) + "\n"
                }
                let devices = Set(entries.map(\.device)).sorted { $0.rawValue < $1.rawValue }
                for device in devices { text += BoardJSON.device(device, fleet: state.fleet) + "\n" }
                let completeness = BoardJSON.Completeness(
                    connected: state.connectedOnce, isComplete: outcome == .complete,
                    retained: state.bootstrap.retainedReceived, error: problem)
                text +=
                    BoardJSON.summary(
                        state.fleet, now: now, warning: header.warning, dropped: state.dropped,
                        completeness: completeness, change: nil) + "\n"
                return text
            }
            await Terminal.write(text)
        } else {
            let columns = Terminal.size()?.columns ?? 120
            let header = self.header(display.header, showsKeys: false)
            let text = withState { state -> String in
                state.view.rows = display.rows
                let count = state.view.orderedEntries(state.fleet, now: now).count
                let lines: Int =
                    switch display.layout {
                    case .compact: FrameRenderer.headerLines + count
                    case .expanded: FrameRenderer.headerLines + count * FrameRenderer.cardLines
                    case .minimal: 1
                    }
                let renderer = FrameRenderer(
                    layout: display.layout, columns: columns, lines: lines, colours: display.colours)
                return renderer.render(state.fleet, view: &state.view, header: header, now: now)
                    .map { $0.trimmingTrailingSpaces }.joined(separator: "\n") + "\n"
            }
            await Terminal.write(text)
        }
        if let problem { await Terminal.writeError("myeline-aggregator: \(problem)\n") }
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

    /// The most lines ``follow(_:format:)`` writes at once.
    static let linesPerWrite = 256

    /// Streams every change as a line until cancelled: rows added, updated and removed, devices whose
    /// status or health changed, rows whose state changed with time (stale, checked once a second),
    /// and a `summary` line when the bootstrap was truncated or, checked once a second, when updates
    /// were lost (its `missed` or `dropped` count grew).
    ///
    /// Lines are written as soon as changes are recorded; changes that arrive while a batch is
    /// written go out together in the next, one line per row with its latest content. The changed
    /// rows are copied under the lock and written after it, so that a flood of changes does not hold
    /// up ``apply(_:)``; while the output is blocked, what waits is bounded by the fleet.
    func follow(_ display: Display, format: FollowFormat) async throws {
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
            while await changesRecorded.wait() {
                try Task.checkCancellation()
                let now = clock.now
                let second = Int(now.timeIntervalSince1970)
                let changes = withState { $0.takeChanges() }
                // A flood's changes become lines a write's worth at a time: arrays and buffers of
                // 100-200 KiB, which malloc reuses, rather than megabytes mapped afresh (HeapPolicy).
                var start = 0
                repeat {
                    let chunk = changes[start..<min(changes.count, start + Self.linesPerWrite)]
                    start = chunk.endIndex
                    let last = start == changes.count
                    let lines = withState { state -> [FollowLine] in
                        var lines: [FollowLine] = []
                        func note(_ row: ActivityRow, _ change: String) {
                            let rowState = state.fleet.state(of: row, at: now)
                            lastStates[row.key] = rowState
                            lines.append(
                                .row(
                                    row, rowState, change: change, status: state.fleet.devices[row.key.device],
                                    health: state.fleet.health(of: row.key.device)))
                        }
                        for change in chunk {
                            switch change {
                            case .updated(let key), .removed(let key):
                                if let row = state.fleet.rows[key] {
                                    note(row, "updated")
                                } else if lastStates.removeValue(forKey: key) != nil {
                                    lines.append(
                                        .text(
                                            format == .json
                                                ? BoardJSON.removed(key) : PlainText.removed(key, now: now)))
                                }
                            case .status(let device):
                                lines.append(
                                    .text(
                                        format == .json
                                            ? BoardJSON.device(device, fleet: state.fleet, change: "status")
                                            : PlainText.device(device, fleet: state.fleet, now: now)))
                                for key in state.fleet.activities(of: device) {
                                    guard let row = state.fleet.rows[key] else { continue }
                                    note(row, "state")
                                }
                            case .rejected, .unchanged:
                                continue
                            }
                        }
                        guard last else { return lines }
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
                                .text(
                                    format == .json
                                        ? BoardJSON.summary(
                                            state.fleet, now: now, warning: warning, dropped: losses.dropped)
                                        : PlainText.summary(
                                            state.fleet, now: now, warning: warning, dropped: losses.dropped)))
                        }
                        return lines
                    }
                    await Self.write(lines, format: format, now: now)
                } while start < changes.count
                lastSecond = second
            }
        }
    }

    /// Writes `lines`, at most ``linesPerWrite`` a write.
    private static func write(_ lines: [FollowLine], format: FollowFormat, now: Date) async {
        for start in stride(from: 0, to: lines.count, by: linesPerWrite) {
            var text = ""
            text.reserveCapacity(linesPerWrite * 512)
            for line in lines[start..<min(lines.count, start + linesPerWrite)] {
                text += line.text(format, now: now)
                text += "\n"
            }
            await Terminal.write(text)
        }
    }

    /// Runs the full-screen board until `q`: redraws at most every `tick` (10 per second), only when the
    /// fleet, the view, the size or the clock's second changed, writing only the lines that differ;
    /// rings the bell on each new alert once the bootstrap is over (unless told not to).
    func runBoard(_ display: Display, tick: Duration = .milliseconds(100)) async throws {
        withState {
            $0.view.layout = display.layout
            $0.view.rows = display.rows
        }
        try await Terminal.withFullScreen { keyboard in
            var keyDecoder = KeyDecoder()
            var previous: [String]?
            var previousSize: (columns: Int, lines: Int)?
            var drawn: (revision: Int, second: Int, columns: Int, lines: Int)?
            var alertsRung: Int?
            while true {
                let size = Terminal.size() ?? (120, 40)
                let keys = keyDecoder.decode(keyboard.take())
                let now = clock.now
                let second = Int(now.timeIntervalSince1970)
                let header = self.header(display.header)
                let outcome = withState { state -> (quit: Bool, frame: [String]?, ring: Bool) in
                    var renderer = FrameRenderer(
                        layout: state.view.layout, columns: size.columns, lines: size.lines,
                        colours: display.colours)
                    for key in keys {
                        let rows = state.view.orderedEntries(state.fleet, now: now).count
                        if state.view.handle(key, pageSize: renderer.pageSize, rowCount: rows) == .quit {
                            return (true, nil, false)
                        }
                    }
                    renderer.layout = state.view.layout
                    var ring = false
                    if state.bootstrap.isComplete {
                        ring = alertsRung.map { state.fleet.alertCount > $0 } ?? false
                        alertsRung = state.fleet.alertCount
                    }
                    let revision = state.fleet.revision
                    if keys.isEmpty, let drawn, drawn == (revision, second, size.columns, size.lines) {
                        return (false, nil, ring)
                    }
                    drawn = (revision, second, size.columns, size.lines)
                    return (false, renderer.render(state.fleet, view: &state.view, header: header, now: now), ring)
                }
                if outcome.quit {
                    await Terminal.writeError("myeline-aggregator: quitting: closing the connection to the broker\n")
                    return
                }
                if outcome.ring, display.bell { await Terminal.write("\u{07}") }
                if let frame = outcome.frame {
                    let sameSize = previousSize.map { $0 == size } ?? false
                    if !sameSize, previous != nil { await Terminal.write("\u{1B}[2J") }
                    let update = FrameDiff.update(from: sameSize ? previous : nil, to: frame)
                    if !update.isEmpty { await Terminal.write(update) }
                    previous = frame
                    previousSize = size
                }
                try await Task.sleep(for: tick)
            }
        }
    }
}

/// One line of `--follow`: a row copied out of the state, written after the lock, or a line already written.
private enum FollowLine {
    case row(ActivityRow, RowState, change: String, status: DeviceStatus?, health: DeviceHealth)
    case text(String)

    func text(_ format: FollowFormat, now: Date) -> String {
        switch self {
        case .row(let row, let state, let change, let status, let health):
            switch format {
            case .json: BoardJSON.row(row, state: state, change: change, status: status, health: health)
            case .plain: PlainText.row(row, state: state, status: status, health: health, now: now)
            }
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
