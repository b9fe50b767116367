import AsyncSupport
import Foundation
import Locking

/// The controlling terminal: its size, raw keyboard input, and the full-screen mode the board runs in.
///
/// `withFullScreen` restores the terminal (modes, main screen, cursor) however the body ends: return,
/// throw or cancellation (Ctrl-C shuts the service group down gracefully, which cancels the body).
///
/// Writes block in `write(2)` as long as the terminal (or the pipe, or the SSH connection) is slow,
/// so they run on a thread of their own, never on the cooperative pool: the caller waits for its
/// write without holding one of the pool's few threads, and the board keeps ingesting meanwhile.
enum Terminal {
    /// The thread every write to standard output and standard error runs on, in order.
    private static let output = BlockingExecutor(name: "terminal")

    /// Whether standard output is a terminal.
    static var isInteractive: Bool { isatty(1) == 1 }

    /// The terminal's size in columns and lines; `nil` when standard output is not a terminal.
    static func size() -> (columns: Int, lines: Int)? {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes all of `text` to standard error; returns once it is written.
    static func writeError(_ text: String) async {
        await output.run { write(text, to: 2) }
    }

    /// Writes all of `text` to standard output; returns once it is written.
    static func write(_ text: String) async {
        await output.run { write(text, to: 1) }
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// Runs `body` with the terminal in full-screen mode: the alternate screen, no cursor, keys read one
    /// at a time without echo (signals such as Ctrl-C still work), then puts everything back.
    static func withFullScreen<R>(
        isolation: isolated (any Actor)? = #isolation, _ body: (KeyboardInput) async throws -> R
    ) async throws -> R {
        var original = termios()
        let hasTerminalInput = tcgetattr(0, &original) == 0
        if hasTerminalInput {
            var raw = original
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
            raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
            raw.c_cc.6 = 0  // VMIN: reads return what is there
            raw.c_cc.5 = 0  // VTIME
            tcsetattr(0, TCSANOW, &raw)
        }
        await write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
        let input = KeyboardInput()
        let result: Result<R, any Error>
        do {
            result = .success(try await body(input))
        } catch {
            result = .failure(error)
        }
        input.stop()
        await write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if hasTerminalInput { tcsetattr(0, TCSANOW, &original) }
        return try result.get()
    }
}

/// Keys typed at the terminal, read by a thread of its own (reads block), collected until taken.
final class KeyboardInput: Sendable {
    private let state = Locked<(bytes: [UInt8], stopped: Bool)>(([], false))

    init() {
        DedicatedThread.start(name: "myeline-keyboard") { [self] in readLoop() }
    }

    /// The bytes typed since the last call.
    func take() -> [UInt8] {
        state.withLock { state in
            defer { state.bytes = [] }
            return state.bytes
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while !state.withLock({ $0.stopped }) {
            var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count <= 0 {
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                return
            }
            state.withLock { $0.bytes += buffer[0..<count] }
        }
    }
}
