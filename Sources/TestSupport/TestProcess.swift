import AsyncSupport
import Foundation
import Locking

/// A child process started by a test: its output is collected line by line, tests wait for a line
/// that says it is ready (never for a fixed time), and it is stopped by its own PID.
public final class TestProcess: Sendable {
    /// The process id, for signalling this process and no other.
    public let pid: Int32
    /// A short name for messages, such as "mosquitto".
    public let name: String
    private let state = Locked(State())

    private struct State {
        var lines: [String] = []
        /// When each line was read, on the monotonic clock.
        var times: [ContinuousClock.Instant] = []
        var waiters:
            [(id: UInt64, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String, any Error>)] =
                []
        var nextWaiter: UInt64 = 0
        var outputEnded = false
        /// The status from `waitpid`, once the process has been reaped.
        var exitStatus: Int32?

        /// The status, once the process has exited and all it printed has been read.
        var finishedStatus: Int32? { outputEnded ? exitStatus : nil }

        mutating func takeExitWaiters() -> [CheckedContinuation<Int32, any Error>] {
            guard finishedStatus != nil else { return [] }
            defer { exitWaiters = [] }
            return exitWaiters.map(\.continuation)
        }
        var exitWaiters: [(id: UInt64, continuation: CheckedContinuation<Int32, any Error>)] = []
    }

    /// Starts `executable` with `arguments`; standard output and standard error are merged, unless
    /// `standardErrorFile` names a file for standard error alone (created or truncated).
    ///
    /// The child starts with no blocked signals and default signal handlers: a test runner's threads
    /// block SIGTERM and SIGINT, and a child would otherwise inherit that and ignore `stop()`.
    /// - Throws: `TestSupportError` when the program cannot be started (for example, not installed).
    public init(
        name: String, executable: String, arguments: [String], environment: [String: String]? = nil,
        standardErrorFile: String? = nil
    ) throws {
        self.name = name
        var fds: [Int32] = [-1, -1]
        // A process another test spawns at the same moment must not inherit this pipe, or its
        // output would not end (nor `waitForExit()` return) before that process exits (seen: an
        // agent that had stopped waited 30 s for another test's broker). So the pipe is made and
        // handed over under one lock that every spawn here takes, and is close-on-exec against
        // other spawners (the child's standard output and error are dup2 copies, which stay open).
        spawning.lock()
        guard pipe(&fds) == 0 else {
            spawning.unlock()
            throw TestSupportError("pipe() failed: \(String(cString: strerror(errno)))")
        }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        if let standardErrorFile {
            posix_spawn_file_actions_addopen(&actions, 2, standardErrorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        }
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM] {
            sigaddset(&defaultSignals, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writeEnd)
        spawning.unlock()
        guard rc == 0 else {
            close(readEnd)
            throw TestSupportError(
                "cannot start \(name) (\(executable)): \(String(cString: strerror(rc))); is it installed? scripts/test installs it"
            )
        }
        self.pid = pid
        let child = pid
        DedicatedThread.start(name: "output-\(name)") { [self] in readLines(from: readEnd) }
        DedicatedThread.start(name: "wait-\(name)") { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            // A normal exit gives its status; a signalled one, the signal number.
            exited((status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f)
        }
    }

    private func readLines(from fd: Int32) {
        defer { close(fd) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending.append(contentsOf: buffer[..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                received(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        if !pending.isEmpty { received(String(decoding: pending, as: UTF8.self)) }
        outputEnded()
    }

    /// Everything the process printed so far.
    public var output: String { state.withLock { $0.lines.joined(separator: "\n") } }

    /// The last 40 lines the process printed, under its name: for the message of an expectation
    /// about it (an exit status other than 0 then says why).
    public var tail: String {
        "\(name), its last lines:\n" + state.withLock { $0.lines.suffix(40).joined(separator: "\n") }
    }

    /// Every line printed so far with the time the test read it (monotonic clock), for measuring
    /// when a process reported events: to within the pipe's latency, sub-second where the
    /// process's own timestamps (mosquitto's) are whole seconds.
    public var timedLines: [(line: String, time: ContinuousClock.Instant)] {
        state.withLock { state in zip(state.lines, state.times).map { ($0, $1) } }
    }

    /// Waits until the process prints a line containing `text` (or has printed one already).
    ///
    /// - Throws: `TestSupportError` with the output so far if the process ends first or `timeout` passes.
    @discardableResult
    public func waitForLine(containing text: String, timeout: Duration = .seconds(20)) async throws -> String {
        try await waitForLine(timeout: timeout, description: "a line containing \"\(text)\"") { $0.contains(text) }
    }

    /// Waits until the process has printed `occurrence` lines containing `text` (counting the
    /// lines printed already), and returns the last of them.
    ///
    /// - Throws: `TestSupportError` with the output so far if the process ends first or `timeout` passes.
    @discardableResult
    public func waitForLine(containing text: String, occurrence: Int, timeout: Duration = .seconds(20)) async throws
        -> String
    {
        try await waitForLine(
            occurrence: occurrence, timeout: timeout, description: "line \(occurrence) containing \"\(text)\""
        ) { $0.contains(text) }
    }

    /// Waits until the process has printed `occurrence` lines for which `predicate` is true
    /// (counting the lines printed already), and returns the last of them.
    ///
    /// - Throws: `TestSupportError` with the output so far if the process ends first or `timeout` passes.
    @discardableResult
    public func waitForLine(
        occurrence: Int, timeout: Duration = .seconds(20), description: String,
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let seen = LineCount()
        // The predicate sees each line once, in order.
        return try await waitForLine(timeout: timeout, description: description) {
            predicate($0) && seen.increment() >= occurrence
        }
    }

    /// A count of lines, shared with a `@Sendable` predicate.
    private final class LineCount: Sendable {
        private let value = Locked(0)

        func increment() -> Int {
            value.withLock { count in
                count += 1
                return count
            }
        }
    }

    /// Waits until the process prints a line for which `predicate` is true (or has printed one already).
    ///
    /// - Throws: `TestSupportError` with the output so far if the process ends first or `timeout` passes.
    @discardableResult
    public func waitForLine(
        timeout: Duration = .seconds(20), description: String, where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withDeadline(timeout, what: "\(name) to print \(description)", process: self) {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let immediate = self.state.withLock { state -> Result<String, any Error>? in
                        if let line = state.lines.first(where: predicate) { return .success(line) }
                        if state.outputEnded {
                            let output = state.lines.joined(separator: "\n")
                            return .failure(
                                TestSupportError("\(self.name) ended before printing \(description):\n\(output)"))
                        }
                        // Cancelled before waiting: `onCancel` has run already and found no waiter.
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters.append((id, predicate, continuation))
                        return nil
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                let waiter = self.state.withLock { state in
                    state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
                }
                waiter?.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Sends `signal` to this process (by its PID) unless it has exited already.
    public func signal(_ signal: Int32) {
        let running = state.withLock { $0.exitStatus == nil }
        if running { kill(pid, signal) }
    }

    /// Waits for the process to exit and for everything it printed to be read, so that `output` is
    /// complete; returns its status (or signal number, for a signalled exit).
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled.
    @discardableResult
    public func waitForExit() async throws -> Int32 {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let status = state.withLock { state -> Result<Int32, any Error>? in
                    if let status = state.finishedStatus { return .success(status) }
                    // Cancelled before waiting: `onCancel` has run already and found no waiter.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.exitWaiters.append((id, continuation))
                    return nil
                }
                if let status { continuation.resume(with: status) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.exitWaiters.firstIndex { $0.id == id }.map { state.exitWaiters.remove(at: $0) }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Stops the process with SIGTERM, then SIGKILL if it has not exited after `grace`, and waits for it.
    public func stop(grace: Duration = .seconds(5)) async {
        signal(SIGTERM)
        let exited = try? await withDeadline(grace, what: "\(name) to exit", process: self) {
            try await self.waitForExit()
        }
        if exited == nil {
            signal(SIGKILL)
            _ = try? await waitForExit()
        }
    }

    private func received(_ line: String) {
        let now = ContinuousClock.now
        let ready = state.withLock { state in
            state.lines.append(line)
            state.times.append(now)
            var matched: [CheckedContinuation<String, any Error>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(line) else { return false }
                matched.append(waiter.continuation)
                return true
            }
            return matched
        }
        for continuation in ready { continuation.resume(returning: line) }
    }

    private func outputEnded() {
        let (waiters, exitWaiters, status) = state.withLock { state in
            state.outputEnded = true
            defer { state.waiters = [] }
            return (state.waiters, state.takeExitWaiters(), state.finishedStatus)
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: TestSupportError("\(name) ended its output:\n\(output)"))
        }
        if let status { for waiter in exitWaiters { waiter.resume(returning: status) } }
    }

    private func exited(_ status: Int32) {
        let waiters = state.withLock { state in
            state.exitStatus = status
            return state.takeExitWaiters()
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }
}

/// Runs `body`, failing with a message naming what was awaited if it takes longer than `timeout`.
///
/// A deadline, not a synchronisation: `body` waits for an event and this only bounds how long.
public func withDeadline<R: Sendable>(
    _ timeout: Duration, what: String, process: TestProcess? = nil, _ body: @escaping @Sendable () async throws -> R
) async throws -> R {
    let outcome = await withTimeout(timeout) { () async -> Result<R, any Error> in
        do { return .success(try await body()) } catch { return .failure(error) }
    }
    guard let outcome else {
        let output = process.map { "\n\($0.name) output:\n\($0.output)" } ?? ""
        throw TestSupportError("timed out after \(timeout) waiting for \(what)\(output)")
    }
    return try outcome.get()
}

/// An error of the test harness itself: a missing program, a server that did not start.
public struct TestSupportError: Error, CustomStringConvertible {
    /// What went wrong, with the output that explains it.
    public var description: String

    /// Creates an error with a message.
    public init(_ description: String) {
        self.description = description
    }
}

/// Held from a ``TestProcess``'s pipe to its spawn, so that no other spawn inherits the pipe.
private let spawning = NSLock()
