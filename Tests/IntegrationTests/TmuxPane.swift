import Foundation
import TestSupport

/// A command running in a real terminal: a private tmux server (its socket in the test's temporary
/// directory) with one pane of a given size, stopped by its PID however the test ends.
struct TmuxPane: Sendable {
    let tmux: String
    let directory: String
    let session: String
    /// The tmux server's PID.
    let server: pid_t

    /// Runs `body` with `command` (a shell command line) in a `columns`×`rows` pane. The shell
    /// records the command's exit status in a file (``exitStatus(timeout:)``): tmux's own record
    /// of it is not reliably there when the pane is reported dead.
    static func with<R>(
        _ command: String, in directory: String, columns: Int, rows: Int, session: String = "board",
        _ body: (TmuxPane) async throws -> R
    ) async throws -> R {
        let tmux = try executablePath("tmux", package: "tmux")
        let socket = socket(in: directory)
        let recorded = "\(command); echo $? > \(directory)/tmux-status"
        _ = try await runProgram(
            tmux, ["-S", socket, "new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", "-s", session, recorded])
        let server =
            pid_t(
                try await runProgram(tmux, ["-S", socket, "display", "-p", "#{pid}"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        defer { if server > 0 { kill(server, SIGTERM) } }
        let pane = TmuxPane(tmux: tmux, directory: directory, session: session, server: server)
        try await pane.run(["set-option", "-t", session, "remain-on-exit", "on"])
        return try await body(pane)
    }

    /// The private server's socket, in the test's directory.
    static func socket(in directory: String) -> String { "\(directory)/tmux.sock" }

    /// `tmux ARGUMENTS` on this server; its output.
    @discardableResult
    func run(_ arguments: [String]) async throws -> String {
        try await runProgram(tmux, ["-S", Self.socket(in: directory)] + arguments)
    }

    /// What the pane shows now.
    func capture() async throws -> String {
        try await run(["capture-pane", "-p", "-t", session])
    }

    /// Types `keys` (tmux key names, such as `Enter`) into the pane.
    func send(_ keys: String...) async throws {
        try await run(["send-keys", "-t", session] + keys)
    }

    /// Whether the pane's program is on the alternate screen.
    func alternateScreen() async throws -> Bool {
        try await run(["display", "-p", "-t", session, "#{alternate_on}"])
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Polls the pane until `predicate` holds, and returns what it showed. On timeout the error
    /// carries the pane as it was and `diagnostics()` (logs, other processes' output): a failure in
    /// CI names its cause.
    func waitFor(
        _ what: String, timeout: Duration = .seconds(30), diagnostics: () -> String = { "" },
        _ predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let pane = self
        do {
            return try await withDeadline(timeout, what: what) {
                while true {
                    let shown = try await pane.capture()
                    if predicate(shown) { return shown }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        } catch {
            let shown = (try? await capture()) ?? "(the pane could not be captured)"
            throw TestSupportError("\(error)\nthe pane:\n\(shown)\n\(diagnostics())")
        }
    }

    /// The command's exit status, once it has ended.
    func exitStatus(timeout: Duration = .seconds(20)) async throws -> String {
        let file = "\(directory)/tmux-status"
        return try await withDeadline(timeout, what: "the command in tmux to end") {
            while true {
                if let text = try? String(contentsOfFile: file, encoding: .utf8), text.hasSuffix("\n") {
                    return text.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
