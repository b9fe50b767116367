import AsyncSupport
import Foundation
import Locking

/// A private gpsd for one test, reading a pseudo-terminal that the test feeds with a receiver log:
/// what `gpsfake` does, with the feeding under the test's control.
///
/// Why not `gpsfake -1 -P PORT` itself: gpsfake writes the log into its pty as soon as it starts,
/// whether or not a client is watching, while gpsd opens the pty only when a client watches (and
/// discards what was written before). A client that connects after the start therefore misses the
/// log (measured with gpsd 3.22: no TPV at all). Here the test feeds the pty only after gpsd says
/// it has opened the device, so every sentence is seen, in order, by gpsd and by its watcher.
///
/// gpsd runs as `gpsd -N -b -D 3 -S PORT -F DIR/gpsd.sock PTY` on a free loopback port (`-b`: never
/// write to the device, as gpsfake runs it); readiness
/// and device activation are events read from its log (never a fixed wait); it is stopped, killed
/// and restarted by its PID, on the same port and pty.
public final class TestGpsd: Sendable {
    /// The TCP port gpsd listens on (127.0.0.1).
    public let port: Int
    /// The pseudo-terminal gpsd reads, as gpsd names it (`/dev/pts/N`).
    public let devicePath: String
    private let directory: String
    private let master: Int32
    private let slave: Int32
    private let process = Locked<TestProcess?>(nil)

    private init(port: Int, devicePath: String, directory: String, master: Int32, slave: Int32) {
        self.port = port
        self.devicePath = devicePath
        self.directory = directory
        self.master = master
        self.slave = slave
    }

    deinit {
        close(master)
        close(slave)
    }

    /// The running gpsd, for its PID and log.
    public var currentProcess: TestProcess? { process.withLock { $0 } }

    /// Starts (or restarts) gpsd and waits until it listens.
    public func start() async throws {
        let gpsd = try executablePath("gpsd", package: "gpsd")
        // As gpsfake does: a shared-memory key of its own, so that concurrent gpsds do not share
        // their exported data.
        var environment = ProcessInfo.processInfo.environment
        environment["GPSD_SHM_KEY"] = String(format: "0x4770%04X", port)
        let started = try TestProcess(
            name: "gpsd", executable: gpsd,
            arguments: ["-N", "-b", "-D", "3", "-S", "\(port)", "-F", "\(directory)/gpsd.sock", devicePath],
            environment: environment)
        process.withLock { $0 = started }
        do {
            try await started.waitForLine(containing: "listening on port \(port)")
            // gpsd goes on when one of its IPv4/IPv6 listeners cannot bind (the port was taken
            // after it was found free): a clean start has no such complaint.
            if started.output.contains("can't bind") {
                throw TestSupportError("gpsd could not bind port \(port):\n\(started.output)")
            }
        } catch {
            await started.stop()
            throw error
        }
    }

    /// Waits until `watchers` clients have sent `?WATCH` and gpsd has opened the pty (gpsd opens it
    /// on the first `?WATCH` and probes it before reading), then writes `bytes` to it on a thread of
    /// its own. Both waits are for lines in gpsd's log, counted since the last ``start()``.
    public func feed(_ bytes: [UInt8], watchers: Int = 1, timeout: Duration = .seconds(20)) async throws {
        try await feed(lines: [bytes], every: .zero, watchers: watchers, timeout: timeout)
    }

    /// As ``feed(_:watchers:timeout:)``, writing `lines` one at a time at the pace of a receiver:
    /// the line at index `i` at `i × interval` after the first, on one thread that sleeps until each
    /// deadline (`clock_nanosleep` on the monotonic clock), so that a busy test process (Swift's
    /// cooperative pool) does not bunch them up. Each line is written as given (add its newline).
    public func feed(
        lines: [[UInt8]], every interval: Duration, watchers: Int = 1, timeout: Duration = .seconds(20)
    ) async throws {
        guard let running = currentProcess else { throw TestSupportError("gpsd is not running") }
        try await running.waitForLine(containing: "?WATCH", occurrence: watchers, timeout: timeout)
        try await running.waitForLine(containing: "activated GPS", occurrence: 1, timeout: timeout)
        let fd = master
        let intervalNanoseconds =
            interval.components.seconds * 1_000_000_000
            + interval.components.attoseconds / 1_000_000_000
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DedicatedThread.start(name: "test-gpsd-feed") {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let start = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
                for (index, bytes) in lines.enumerated() {
                    if index > 0 && intervalNanoseconds > 0 {
                        let due = start + intervalNanoseconds * Int64(index)
                        var deadline = timespec(
                            tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
                    }
                    var written = 0
                    while written < bytes.count {
                        let count = bytes.withUnsafeBufferPointer {
                            write(fd, $0.baseAddress! + written, $0.count - written)
                        }
                        if count < 0 && errno == EINTR { continue }
                        guard count > 0 else {
                            continuation.resume(
                                throwing: TestSupportError(
                                    "writing to the pty failed: \(String(cString: strerror(errno)))"))
                            return
                        }
                        written += count
                    }
                }
                continuation.resume()
            }
        }
    }

    /// Kills gpsd with SIGKILL (a crash) and waits for it to be gone.
    public func kill() async {
        guard let running = currentProcess else { return }
        running.signal(SIGKILL)
        _ = try? await running.waitForExit()
    }

    /// gpspipe watching this gpsd (`gpspipe -w`): gpsd's own JSON, a line each, in its output, for
    /// a test to compare with what a source made of the same stream. The caller stops it.
    public func gpspipe() throws -> TestProcess {
        try TestProcess(
            name: "gpspipe", executable: try executablePath("gpspipe", package: "gpsd-clients"),
            arguments: ["-w", "127.0.0.1:\(port)"])
    }

    /// Stops gpsd with SIGTERM and waits for it to exit.
    public func stop() async {
        await currentProcess?.stop()
    }

    /// Starts a gpsd on a free port reading a new pty, runs `body`, and stops gpsd however `body` ends.
    public static func with<R>(
        isolation: isolated (any Actor)? = #isolation, _ body: (TestGpsd) async throws -> R
    ) async throws -> R {
        try await withTemporaryDirectory { directory in
            let (master, slave, path) = try openPseudoTerminal()
            var lastError: (any Error)?
            // Another process may take the free port before gpsd binds it: try a few.
            for _ in 0..<5 {
                let gpsd = TestGpsd(
                    port: try freeLoopbackPort(), devicePath: path, directory: directory, master: dup(master),
                    slave: dup(slave))
                do {
                    try await gpsd.start()
                } catch {
                    lastError = error
                    continue
                }
                close(master)
                close(slave)
                do {
                    let result = try await body(gpsd)
                    await gpsd.stop()
                    return result
                } catch {
                    await gpsd.stop()
                    throw error
                }
            }
            close(master)
            close(slave)
            throw lastError ?? TestSupportError("gpsd did not start")
        }
    }

    /// Opens a pty in raw mode that any user can open (gpsd started as root reads it as user gpsd).
    private static func openPseudoTerminal() throws -> (master: Int32, slave: Int32, path: String) {
        // posix_openpt and friends are hidden from Swift behind _XOPEN_SOURCE, and so are the
        // macros of the Linux ioctls they wrap: TIOCSPTLCK = _IOW('T', 0x31, int) and
        // TIOCGPTN = _IOR('T', 0x30, unsigned int), the same on x86_64 and arm64.
        let unlockRequest: UInt = 0x4004_5431
        let numberRequest: UInt = 0x8004_5430
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, unlockRequest, &unlock) == 0, ioctl(master, numberRequest, &number) == 0
        else {
            throw TestSupportError("cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let path = "/dev/pts/\(number)"
        let slave = open(path, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw TestSupportError("cannot open \(path): \(String(cString: strerror(errno)))") }
        var attributes = termios()
        tcgetattr(slave, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(slave, TCSANOW, &attributes)
        chmod(path, 0o666)
        return (master, slave, path)
    }
}
