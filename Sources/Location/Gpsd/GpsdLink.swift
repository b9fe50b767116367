import FoundationEssentials
import AsyncSupport
import Logging
import Synchronization

import Glibc

/// The I/O shell of one ``GpsdSource`` iteration: a thread of its own that connects to gpsd, reads
/// its lines with non-blocking sockets and `poll`, and performs what ``GpsdConnectionMachine`` and
/// ``GpsdDecoder`` decide. Blocking calls (name lookup, poll) never run on Swift's cooperative pool.
///
/// ``stop()`` wakes the thread through a pipe; the thread closes its socket and ends the stream.
final class GpsdLink: Sendable {
    private let configuration: GpsdConfiguration
    private let logger: Logger
    private let store: StatisticsStore
    private let continuation: AsyncStream<LocationUpdate>.Continuation
    private let now: @Sendable () -> Date
    /// The wake-up pipe: the thread polls the read end, ``stop()`` writes to the other.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let stopped = Atomic<Bool>(false)

    init(
        configuration: GpsdConfiguration, logger: Logger, store: StatisticsStore,
        continuation: AsyncStream<LocationUpdate>.Continuation, now: @escaping @Sendable () -> Date
    ) {
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.continuation = continuation
        self.now = now
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// Starts the thread.
    func start() {
        DedicatedThread.start(name: "myeline-gpsd") { [self] in run() }
    }

    /// Asks the thread to stop; returns at once.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    // MARK: - The thread

    private func run() {
        var session = Session(configuration: configuration, logger: logger, now: now)
        var action: GpsdConnectionMachine.Action? = session.machine.start()
        var socket: Int32 = -1
        defer {
            if socket >= 0 { close(socket) }
            continuation.finish()
        }
        var buffer = LineBuffer()
        var readChunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !isStopped {
            // Perform the machine's action.
            switch action {
            case .connect?:
                buffer = LineBuffer()
                switch connect() {
                case .success(let connected):
                    socket = connected
                    action = session.machine.connected(now: monotonicNow())
                    session.connected()
                case .failure(let error):
                    if isStopped { return }
                    action = session.machine.connectFailed(now: monotonicNow(), random: Double.random(in: 0..<1))
                    session.connectFailed(error, output: emit)
                }
                continue
            case .send(let text)?:
                if !sendAll(socket, text) {
                    action = session.machine.closed(now: monotonicNow(), random: Double.random(in: 0..<1))
                    continue
                }
            case .disconnect(let reason, _)?:
                if socket >= 0 {
                    close(socket)
                    socket = -1
                }
                session.disconnected(reason, output: emit)
            case .retry?, nil:
                break
            }
            action = nil
            publish(&session)

            // Wait for data, the next deadline, or stop().
            let now = monotonicNow()
            var deadline = session.machine.deadline
            if let flush = session.epochFlushTime { deadline = min(deadline ?? flush, flush) }
            let timeout = deadline.map { max(0, Int32(min(($0 - now) * 1000, 60_000).rounded(.up))) } ?? 60_000
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if socket >= 0 { fds.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if isStopped { return }
            if ready < 0 && errno != EINTR { return }
            let after = monotonicNow()
            if socket >= 0, fds.count > 1, fds[1].revents != 0 {
                let count = read(socket, &readChunk, readChunk.count)
                if count > 0 {
                    session.machine.dataReceived(now: after)
                    action = readChunk.withUnsafeBufferPointer { chunk in
                        buffer.append(UnsafeBufferPointer(rebasing: chunk[0..<count])) { line in
                            session.decode(line, now: after)
                        } tooLong: {
                            session.tooLong()
                        }
                    }
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    action = session.machine.closed(now: after, random: Double.random(in: 0..<1))
                }
            }
            session.flushEpochIfDue(now: after)
            if action == nil { action = session.machine.timerFired(now: after, random: Double.random(in: 0..<1)) }
            session.drain(into: emit)
        }
    }

    private func emit(_ update: LocationUpdate) {
        if case .dropped = continuation.yield(update) {
            store.update { $0.updatesDiscarded += 1 }
        }
    }

    private func publish(_ session: inout Session) {
        session.publish(to: store)
    }

    /// Connects to the configured host and port, trying each address; non-blocking, bounded by the
    /// connect timeout, interrupted by ``stop()``.
    private func connect() -> Result<Int32, ConnectError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let rc = getaddrinfo(configuration.host, String(configuration.port), &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(ConnectError("cannot resolve \(configuration.host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = ConnectError("no address for \(configuration.host)")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry?.pointee, !isStopped {
            entry = info.ai_next
            let fd = Glibc.socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return .success(fd) }
            guard errno == EINPROGRESS else {
                lastError = ConnectError(String(cString: strerror(errno)))
                close(fd)
                continue
            }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let timeout = Int32(min(configuration.connectTimeout.inSeconds * 1000, 3_600_000))
            let ready = poll(&fds, 2, timeout)
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if ready > 0, fds[0].revents != 0, getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 {
                return .success(fd)
            }
            lastError = ConnectError(ready == 0 ? "timed out" : String(cString: strerror(error != 0 ? error : errno)))
            close(fd)
        }
        return .failure(lastError)
    }

    private func sendAll(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBufferPointer {
                send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN) {
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                _ = poll(&fds, 1, 1000)
                continue
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}

/// A failed connection attempt, for the log.
struct ConnectError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Splits a byte stream into lines, discarding (and reporting) lines over gpsd's limit.
struct LineBuffer {
    private var pending: [UInt8] = []
    private var discarding = false

    /// Appends bytes, calling `line` for each complete line; returns the first non-nil action a
    /// line handler returns (the rest of the chunk is still buffered and handled).
    mutating func append(
        _ bytes: UnsafeBufferPointer<UInt8>, line: (UnsafeBufferPointer<UInt8>) -> GpsdConnectionMachine.Action?,
        tooLong: () -> Void
    ) -> GpsdConnectionMachine.Action? {
        var action: GpsdConnectionMachine.Action? = nil
        var start = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
            if discarding {
                discarding = false
            } else if pending.isEmpty {
                let result = line(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                if action == nil { action = result }
            } else {
                pending.append(contentsOf: bytes[start..<index])
                let result = pending.withUnsafeBufferPointer { line($0) }
                if action == nil { action = result }
                pending.removeAll(keepingCapacity: true)
            }
            start = index + 1
        }
        if start < bytes.count && !discarding {
            pending.append(contentsOf: bytes[start..<bytes.count])
            if pending.count > GpsdDecoder.maximumLineLength {
                pending.removeAll(keepingCapacity: true)
                discarding = true
                tooLong()
            }
        }
        return action
    }
}
