import FoundationEssentials
import AsyncSupport
import Dispatch
import Logging
import Synchronization

import Glibc

/// The I/O shell of one ``GpsdSource`` iteration, on an ``EventLoop``: it connects to gpsd, reads
/// its lines from a non-blocking socket when the loop finds it readable, and performs what
/// ``GpsdConnectionMachine`` and ``GpsdDecoder`` decide, with one timer for their next deadline.
/// Nothing it does blocks the loop: gpsd's host is looked up on a Dispatch worker, and the
/// connection itself is waited for by the loop. The updates go to the channel from the loop's thread: a consumer
/// that prefers the same loop (the agent's control loop) takes each in the same turn, without a
/// thread switch (issue 24).
///
/// ``stop()`` may be called from any thread; the loop then closes the socket and ends the channel.
final class GpsdLink: @unchecked Sendable {
    private let configuration: GpsdConfiguration
    private let logger: Logger
    private let store: StatisticsStore
    private let channel: HandOff<LocationUpdate>
    private let loop: EventLoop
    /// Whether the link shuts the loop down when it ends (a loop of its own).
    private let ownsLoop: Bool
    private let stopped = Atomic<Bool>(false)

    // The loop's thread only.
    private var session: Session
    private var socket: Int32 = -1
    private var socketWatch: EventLoop.Watch?
    /// The timer of the machine's and the epoch's next deadline.
    private var deadlineTimer: EventLoop.Timer?
    private var attempt: ConnectAttempt?
    private var buffer = LineBuffer()
    private var readChunk = [UInt8](repeating: 0, count: 16 * 1024)
    private var finished = false

    /// A connection under way: the addresses left to try, and the one being tried.
    private struct ConnectAttempt {
        var addresses: [Address]
        var next = 0
        var lastError: ConnectError
        var descriptor: Int32 = -1
        var watch: EventLoop.Watch?
        var timer: EventLoop.Timer?
    }

    private struct Address: Sendable {
        var storage: sockaddr_storage
        var length: socklen_t
        var family: Int32
        var type: Int32
        var proto: Int32
    }

    /// - Parameter loop: the loop to run on; nil for a loop of its own, ended with the link.
    init(
        configuration: GpsdConfiguration, logger: Logger, store: StatisticsStore,
        channel: HandOff<LocationUpdate>, now: @escaping @Sendable () -> Date,
        loop: EventLoop?
    ) {
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.channel = channel
        self.loop = loop ?? EventLoop(name: "myeline-gpsd")
        ownsLoop = loop == nil
        session = Session(configuration: configuration, logger: logger, now: now)
    }

    /// Starts connecting, on the loop.
    func start() {
        loop.execute { [self] in
            guard !isStopped else { return }
            advance(session.machine.start())
        }
    }

    /// Asks the link to stop; returns at once. The loop closes the socket and ends the channel.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.execute { [self] in finish() }
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    // MARK: - The loop's thread

    /// Performs the machine's actions until one waits (for the connection, data or a deadline).
    private func advance(_ first: GpsdConnectionMachine.Action?) {
        var action = first
        while !isStopped {
            switch action {
            case .connect?:
                buffer = LineBuffer()
                beginConnecting()
                return
            case .send(let text)?:
                if !sendAll(socket, text) {
                    action = session.machine.closed(now: monotonicNow(), random: Double.random(in: 0..<1))
                    continue
                }
            case .disconnect(let reason, _)?:
                closeSocket()
                session.disconnected(reason, output: emit)
            case .retry?, nil:
                break
            }
            break
        }
        guard !isStopped else { return }
        session.publish(to: store)
        rearm()
    }

    /// Sets the timer for the next deadline: the machine's (reconnection, silence) or the epoch's.
    private func rearm() {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = nil
        var deadline = session.machine.deadline
        if let flush = session.epochFlushTime { deadline = min(deadline ?? flush, flush) }
        guard let deadline else { return }
        let delay = max(0, deadline - monotonicNow())
        deadlineTimer = loop.schedule(after: .nanoseconds(Int64((delay * 1e9).rounded(.up)))) { [self] in
            deadlineTimer = nil
            handle(readable: false)
        }
    }

    /// What the loop found: data on the socket (or its end), or a deadline.
    private func handle(readable: Bool) {
        guard !isStopped else { return }
        let after = monotonicNow()
        var action: GpsdConnectionMachine.Action? = nil
        if readable, socket >= 0 {
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
        advance(action)
    }

    private func emit(_ update: LocationUpdate) {
        if channel.yield(update) == .droppedOldest {
            store.update { $0.updatesDiscarded += 1 }
        }
    }

    private func closeSocket() {
        if let socketWatch { loop.unwatch(socketWatch) }
        socketWatch = nil
        if socket >= 0 { close(socket) }
        socket = -1
    }

    /// Ends the link: closes what is open and ends the channel (and the loop, if its own).
    private func finish() {
        guard !finished else { return }
        finished = true
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = nil
        abandonAttempt()
        closeSocket()
        channel.finish()
        if ownsLoop { loop.shutdown() }
    }

    // MARK: Connecting

    /// Resolves the configured host off the loop (a name lookup may wait seconds for a DNS server;
    /// everything else on the loop would wait with it), then tries each address in turn, without
    /// blocking the loop while a connection is under way (bounded by the connect timeout).
    private func beginConnecting() {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = nil
        let (host, port, loop) = (configuration.host, configuration.port, loop)
        DispatchQueue.global().async { [self] in
            let addresses = Self.resolve(host: host, port: port)
            loop.execute { [self] in resolved(addresses) }
        }
    }

    private func resolved(_ addresses: Result<[Address], ConnectError>) {
        guard !isStopped else { return }
        switch addresses {
        case .success(let addresses):
            let none = ConnectError("no address for \(configuration.host)")
            attempt = ConnectAttempt(addresses: addresses, lastError: none)
            tryNextAddress()
        case .failure(let error):
            connectFailed(error)
        }
    }

    /// `getaddrinfo`, blocking: the host's addresses for a TCP connection.
    private static func resolve(host: String, port: Int) -> Result<[Address], ConnectError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, list != nil else {
            return .failure(ConnectError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            guard let pointer = info.ai_addr else { continue }
            var storage = sockaddr_storage()
            let length = min(Int(info.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: length))
            }
            addresses.append(
                Address(
                    storage: storage, length: socklen_t(length), family: info.ai_family, type: info.ai_socktype,
                    proto: info.ai_protocol))
        }
        return .success(addresses)
    }

    /// Connects to the next address: at once, or once the loop finds the socket writable.
    private func tryNextAddress() {
        while var current = attempt, current.next < current.addresses.count, !isStopped {
            var address = current.addresses[current.next]
            current.next += 1
            attempt = current
            let fd = Glibc.socket(address.family, address.type | Int32(SOCK_CLOEXEC.rawValue), address.proto)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let rc = withUnsafePointer(to: &address.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
            }
            if rc == 0 {
                attempt = nil
                connected(fd)
                return
            }
            guard errno == EINPROGRESS else {
                attempt?.lastError = ConnectError(String(cString: strerror(errno)))
                close(fd)
                continue
            }
            attempt?.descriptor = fd
            attempt?.watch = loop.watch(fd, events: Int16(POLLOUT)) { [self] _ in connectionSettled(timedOut: false) }
            let timeout = min(configuration.connectTimeout.inSeconds, 3600)
            attempt?.timer = loop.schedule(after: .nanoseconds(Int64(timeout * 1e9))) { [self] in
                attempt?.timer = nil
                connectionSettled(timedOut: true)
            }
            return
        }
        guard let current = attempt else { return }
        attempt = nil
        connectFailed(current.lastError)
    }

    /// The socket of the address being tried became writable (connected or refused), or its time
    /// ran out.
    private func connectionSettled(timedOut: Bool) {
        guard var current = attempt, current.descriptor >= 0 else { return }
        let fd = current.descriptor
        if let watch = current.watch { loop.unwatch(watch) }
        if let timer = current.timer { loop.cancel(timer) }
        current.descriptor = -1
        current.watch = nil
        current.timer = nil
        attempt = current
        guard !isStopped else {
            close(fd)
            return
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if !timedOut, getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 {
            attempt = nil
            connected(fd)
            return
        }
        let reason = timedOut ? "timed out" : String(cString: strerror(error != 0 ? error : errno))
        attempt?.lastError = ConnectError(reason)
        close(fd)
        tryNextAddress()
    }

    private func abandonAttempt() {
        guard let current = attempt else { return }
        if let watch = current.watch { loop.unwatch(watch) }
        if let timer = current.timer { loop.cancel(timer) }
        if current.descriptor >= 0 { close(current.descriptor) }
        attempt = nil
    }

    private func connected(_ fd: Int32) {
        socket = fd
        socketWatch = loop.watch(fd, events: Int16(POLLIN)) { [self] _ in handle(readable: true) }
        let action = session.machine.connected(now: monotonicNow())
        session.connected()
        advance(action)
    }

    private func connectFailed(_ error: ConnectError) {
        guard !isStopped else { return }
        let action = session.machine.connectFailed(now: monotonicNow(), random: Double.random(in: 0..<1))
        session.connectFailed(error, output: emit)
        advance(action)
    }

    /// Sends a command (gpsd's WATCH: a few hundred bytes, which a fresh socket takes at once).
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
        // memchr finds each line's end: a SKY is a few kilobytes, and a loop over its bytes cost
        // about 15,000 instructions a fix (callgrind, issue 24).
        while start < bytes.count,
            let found = memchr(bytes.baseAddress! + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
        {
            let index = UnsafeRawPointer(bytes.baseAddress!).distance(to: found)
            defer { start = index + 1 }
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
