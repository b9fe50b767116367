import AsyncSupport
import Foundation
import Locking

/// A TCP proxy on a free loopback port in front of an MQTT server on another loopback port, for
/// fault injection: it can refuse clients for a while (a gate) and cut a connection in the middle
/// of a client's PUBLISH packet, as a flaky link or a dying NAT would.
///
/// Each accepted connection gets a connection of its own to the server and two threads: one
/// copies the server's bytes to the client, the other reads the client's bytes as MQTT packets
/// (fixed header, remaining length) and forwards them whole, except the PUBLISH that a planned
/// ``Cut`` picks. Connections end when either side closes; the proxy stops with ``with(upstreamPort:_:)``.
public final class TestTCPProxy: Sendable {
    /// How a planned cut ends a connection.
    public enum CutKind: String, Sendable {
        /// Forward the fixed header and half of the rest of the PUBLISH, then close both sides:
        /// the server never gets the message.
        case half
        /// Forward the whole PUBLISH, then close both sides before any answer reaches the client:
        /// the server has the message, the client does not know it.
        case whole
        /// QoS 2 only: forward the whole PUBLISH and the server's PUBREC, then close both sides when
        /// the client's PUBREL for it comes, without forwarding it, and refuse new connections
        /// (``setOpen(_:)`` lets them through again): the server holds the message unreleased,
        /// the client waits for its PUBCOMP. A server that then restarts without its sessions
        /// never delivers it, and completes the PUBREL the client sends again after reconnecting.
        case beforeRelease
    }

    /// One planned cut: the next PUBLISH of this QoS (0, 1 or 2), cut in this way.
    public struct Cut: Hashable, Sendable {
        /// The QoS of the PUBLISH to cut.
        public var qos: Int
        /// How to cut it.
        public var kind: CutKind

        /// Creates a planned cut.
        public init(qos: Int, kind: CutKind) {
            self.qos = qos
            self.kind = kind
        }
    }

    /// A cut that happened: the plan's entry and the whole PUBLISH packet it cut (as the client sent it).
    public struct CutPacket: Sendable {
        /// The planned cut.
        public var cut: Cut
        /// The PUBLISH packet, fixed header included.
        public var packet: [UInt8]

        /// The topic the PUBLISH was for.
        public var topic: String {
            guard let (_, lengthBytes) = TestTCPProxy.remainingLength(packet) else { return "" }
            let start = 1 + lengthBytes
            guard packet.count >= start + 2 else { return "" }
            let length = Int(packet[start]) << 8 | Int(packet[start + 1])
            guard packet.count >= start + 2 + length else { return "" }
            return String(decoding: packet[(start + 2)..<(start + 2 + length)], as: UTF8.self)
        }

        /// The packet's payload: what follows the topic, the packet identifier and (MQTT 5) the
        /// properties; found as the first `{` after the topic, which is enough for JSON payloads.
        public var jsonPayload: [UInt8]? {
            guard let start = packet.firstIndex(of: UInt8(ascii: "{")) else { return nil }
            return Array(packet[start...])
        }
    }

    /// The port clients connect to, on 127.0.0.1.
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Locked(State())

    private struct State {
        var isOpen = true
        var plan: [Cut] = []
        /// PUBLISH packets to forward untouched between two cuts.
        var spacing = 0
        var forwardedSinceCut = 0
        var cuts: [CutPacket] = []
        var accepted = 0
        var refused = 0
        var connections: [ObjectIdentifier: Link] = [:]
        var cutWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private init(listener: Int32, port: Int, upstreamPort: Int) {
        self.listener = listener
        self.port = port
        self.upstreamPort = upstreamPort
    }

    /// Starts a proxy to `upstreamPort` on 127.0.0.1, runs `body`, and closes the proxy and every
    /// connection through it however `body` ends.
    public static func with<R>(
        upstreamPort: Int, isolation: isolated (any Actor)? = #isolation, _ body: (TestTCPProxy) async throws -> R
    ) async throws -> R {
        let (fd, port) = try TestSupport.listenOnLoopback()
        let proxy = TestTCPProxy(listener: fd, port: port, upstreamPort: upstreamPort)
        DedicatedThread.start(name: "test-proxy-accept") { proxy.acceptLoop() }
        defer { proxy.close() }
        return try await body(proxy)
    }

    /// Lets clients through (`true`, the start) or refuses them (`false`: each new connection is
    /// closed as soon as it is accepted); connections already through are left alone.
    public func setOpen(_ open: Bool) {
        state.withLock { $0.isOpen = open }
    }

    /// Plans cuts, in order: each waits for the next PUBLISH of its QoS after at least `spacing`
    /// PUBLISH packets went through untouched since the previous cut.
    public func plan(_ cuts: [Cut], spacing: Int = 0) {
        state.withLock { state in
            state.plan = cuts
            state.spacing = spacing
            state.forwardedSinceCut = 0
        }
    }

    /// The cuts made so far, in order.
    public var cuts: [CutPacket] { state.withLock { $0.cuts } }

    /// Connections let through, and connections refused by the gate.
    public var connectionCounts: (accepted: Int, refused: Int) { state.withLock { ($0.accepted, $0.refused) } }

    /// Waits until `count` cuts have been made.
    public func waitForCuts(_ count: Int, timeout: Duration) async throws {
        try await withDeadline(timeout, what: "\(count) cuts by the proxy") {
            await withCheckedContinuation { continuation in
                let done = self.state.withLock { state -> Bool in
                    if state.cuts.count >= count { return true }
                    state.cutWaiters.append((count, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    private func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        // Under the lock: a link still listed has its sockets open (``finished(_:)``).
        state.withLock { state in
            state.isOpen = false
            for link in state.connections.values { link.cut() }
        }
    }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let open = state.withLock { state in
                if state.isOpen { state.accepted += 1 } else { state.refused += 1 }
                return state.isOpen
            }
            guard open, let server = Self.connectToLoopback(port: upstreamPort) else {
                Glibc.close(client)
                continue
            }
            let link = Link(client: client, server: server)
            state.withLock { $0.connections[ObjectIdentifier(link)] = link }
            DedicatedThread.start(name: "test-proxy-down") { [self] in
                link.copyServerToClient()
                finished(link)
            }
            DedicatedThread.start(name: "test-proxy-up") { [self] in
                forwardPackets(link)
                finished(link)
            }
        }
    }

    private func finished(_ link: Link) {
        link.cut()
        if link.release() {
            _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(link)) }
            link.closeSockets()
        }
    }

    /// Reads the client's bytes packet by packet and forwards them, cutting where the plan says.
    private func forwardPackets(_ link: Link) {
        var pending: [UInt8] = []
        /// The packet identifier of a PUBLISH cut `.beforeRelease`, whose PUBREL ends the link.
        var awaitedRelease: Int?
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(link.client, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            pending.append(contentsOf: buffer[..<count])
            while let length = Self.packetLength(pending) {
                let packet = Array(pending[..<length])
                pending.removeFirst(length)
                if let awaited = awaitedRelease, packet[0] == 0x62, packet.count >= 4,
                    Int(packet[2]) << 8 | Int(packet[3]) == awaited
                {
                    state.withLock { $0.isOpen = false }
                    link.cut()
                    notifyCut()
                    return
                }
                if packet[0] >> 4 == 3, let cut = takeCut(qos: Int(packet[0] >> 1) & 3, packet: packet) {
                    switch cut.kind {
                    case .half:
                        let header = length - Self.remainingLength(packet)!.value
                        _ = link.sendToServer(packet[..<(header + (length - header) / 2)])
                    case .whole:
                        // The answer must not reach the client: stop relaying before sending.
                        link.muteServer()
                        _ = link.sendToServer(packet[...])
                    case .beforeRelease:
                        awaitedRelease = Self.packetIdentifier(ofPublish: packet)
                        guard link.sendToServer(packet[...]) else { return }
                        continue
                    }
                    link.cut()
                    notifyCut()
                    return
                }
                guard link.sendToServer(packet[...]) else { return }
            }
        }
    }

    /// The planned cut for a PUBLISH of `qos`, recorded, if it is this one's turn.
    private func takeCut(qos: Int, packet: [UInt8]) -> Cut? {
        state.withLock { state in
            guard let next = state.plan.first, next.qos == qos, state.forwardedSinceCut >= state.spacing else {
                state.forwardedSinceCut += 1
                return nil
            }
            state.plan.removeFirst()
            state.forwardedSinceCut = 0
            state.cuts.append(CutPacket(cut: next, packet: packet))
            return next
        }
    }

    private func notifyCut() {
        let ready = state.withLock { state in
            let count = state.cuts.count
            let ready = state.cutWaiters.filter { $0.count <= count }.map(\.continuation)
            state.cutWaiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// The packet identifier of a QoS 1 or 2 PUBLISH packet: the two bytes after the topic.
    static func packetIdentifier(ofPublish packet: [UInt8]) -> Int? {
        guard let (_, lengthBytes) = remainingLength(packet) else { return nil }
        let start = 1 + lengthBytes
        guard packet.count >= start + 2 else { return nil }
        let topicLength = Int(packet[start]) << 8 | Int(packet[start + 1])
        let identifier = start + 2 + topicLength
        guard packet.count >= identifier + 2 else { return nil }
        return Int(packet[identifier]) << 8 | Int(packet[identifier + 1])
    }

    /// The length of the first packet of `bytes` when all of it is there, else nil.
    static func packetLength(_ bytes: [UInt8]) -> Int? {
        guard let (value, headerBytes) = remainingLength(bytes) else { return nil }
        let total = 1 + headerBytes + value
        return bytes.count >= total ? total : nil
    }

    /// The remaining length of the packet at the start of `bytes` (MQTT's variable byte integer
    /// after the first byte) and how many bytes encode it; nil while incomplete.
    static func remainingLength(_ bytes: [UInt8]) -> (value: Int, bytes: Int)? {
        guard bytes.count >= 2 else { return nil }
        var value = 0
        var multiplier = 1
        for index in 1..<min(bytes.count, 5) {
            value += Int(bytes[index] & 0x7f) * multiplier
            if bytes[index] & 0x80 == 0 { return (value, index) }
            multiplier *= 128
        }
        return nil
    }

    private static func connectToLoopback(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            Glibc.close(fd)
            return nil
        }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }
}

/// One client's connection through the proxy: its two sockets, closed when both threads are done.
private final class Link: Sendable {
    let client: Int32
    let server: Int32
    /// Threads still using the sockets, and whether the server's bytes are dropped.
    private let state = Locked((users: 2, muted: false))

    init(client: Int32, server: Int32) {
        self.client = client
        self.server = server
    }

    /// Shuts both sockets down: each thread's read returns and the peers see the connection end.
    func cut() {
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(server, Int32(SHUT_RDWR))
    }

    /// From now on, what the server sends is dropped.
    func muteServer() {
        state.withLock { $0.muted = true }
    }

    /// One thread is done with the sockets; true for the last one, which then closes them.
    func release() -> Bool {
        state.withLock { state in
            state.users -= 1
            return state.users == 0
        }
    }

    func closeSockets() {
        close(client)
        close(server)
    }

    func sendToServer(_ bytes: ArraySlice<UInt8>) -> Bool {
        Self.send(bytes, to: server)
    }

    func copyServerToClient() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(server, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            if state.withLock({ $0.muted }) { return }
            guard Self.send(buffer[..<count], to: client) else { return }
        }
    }

    private static func send(_ bytes: ArraySlice<UInt8>, to fd: Int32) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

/// A TCP socket listening on a free port of 127.0.0.1 (chosen by the kernel), for a test's own
/// server; the caller closes it (`shutdown` ends a blocked `accept`).
///
/// - Throws: `TestSupportError` when no socket can be bound.
public func listenOnLoopback(backlog: Int32 = 64) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard fd >= 0, bound else {
        if fd >= 0 { close(fd) }
        throw TestSupportError("cannot listen on a loopback port: \(String(cString: strerror(errno)))")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
