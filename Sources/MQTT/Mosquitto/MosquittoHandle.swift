import CMosquitto
import Glibc
import Locking

/// The one `@unchecked Sendable` wrapper around a `struct mosquitto *`, and the only way to use it.
///
/// Why it is safe to share: the handle is in threaded mode (`mosquitto_threaded_set`), in which
/// libmosquitto guards its queues with its own mutexes, so that publish, subscribe, unsubscribe
/// and disconnect may be called from any thread. The rest (connect, loop, options) is called only
/// on the client's network thread (``NetworkLoop``), or before it starts.
///
/// **The gate.** Every call made from another thread than the network thread goes through
/// ``whileOpen(_:)`` or ``withGate(_:)``, which hold the gate's lock across the call and make it only
/// while the gate is open: while the client is connected. The network thread opens the gate when a
/// connection is complete (``open(_:)``) and closes it when the connection ends, before it connects
/// again (``close()``); ``destroy()`` shuts it for good. So:
/// - no call from another thread overlaps `mosquitto_connect` or the connection's completion (a
///   message handed over then could miss libmosquitto's resend of the last connection's messages,
///   and go out before them or never);
/// - no call follows `mosquitto_destroy`: a subscription ended by a cancelled task during the
///   client's shut-down unsubscribes before the handle is freed, or not at all.
///
/// **The lock rule.** The gate's lock is held while calling into libmosquitto, and it is the only
/// lock that ever is. It is never taken inside a libmosquitto callback (callbacks take only
/// ``ClientContext``'s state lock), so libmosquitto's own mutexes, which the calls under the gate
/// take, never wait for it while it waits for them: no cycle. Where the two locks nest, the gate
/// comes first. `ClientContext`'s lock is never held while calling into libmosquitto.
final class MosquittoHandle: @unchecked Sendable {
    /// The handle, for the files in this folder: no other file imports CMosquitto.
    let pointer: OpaquePointer
    private let gate = Locked(Gate.closed)

    private enum Gate {
        /// Not connected: the network thread is connecting, connected but not yet complete, or
        /// waiting to retry.
        case closed
        /// Connected: other threads may send.
        case open
        /// Freed.
        case destroyed
    }

    /// Creates a handle in threaded mode, configured for `configuration`, whose callbacks receive
    /// `context` as their user pointer.
    ///
    /// The caller keeps `context` alive until ``destroy()``.
    /// - Throws: `MQTTError` `.invalidConfiguration` naming a value libmosquitto refused, or
    ///   `.library` when it is out of memory.
    init(configuration: MQTTConfiguration, context: ClientContext) throws(MQTTError) {
        _ = libraryInitialisation
        let user = Unmanaged.passUnretained(context).toOpaque()
        guard let pointer = mosquitto_new(configuration.clientID, configuration.cleanSession, user) else {
            throw MQTTError(
                .library, "cannot create an MQTT client for client id \"\(configuration.clientID)\": out of memory")
        }
        self.pointer = pointer
        mosquitto_threaded_set(pointer, true)
        do {
            try Self.configure(pointer, with: configuration)
        } catch {
            mosquitto_destroy(pointer)
            throw error
        }
        MosquittoCallbacks.install(on: pointer)
    }

    // MARK: Any thread, through the gate

    /// The calls another thread may make while the gate is open; made only by the gate.
    struct OpenHandle {
        fileprivate let pointer: OpaquePointer

        /// Hands a message to libmosquitto; returns the status and the packet id whose
        /// acknowledgement to expect (QoS 1 and 2).
        func publish(
            _ topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, properties: MQTTPublishProperties,
            protocolVersion: MQTTProtocolVersion
        ) throws(MQTTError) -> (status: MosquittoStatus, mid: Int32) {
            var mid: Int32 = 0
            let rc = try MosquittoProperties.with(properties, protocolVersion: protocolVersion) { list in
                payload.withUnsafeBytes { bytes in
                    mosquitto_publish_v5(
                        pointer, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos.rawValue, retain, list)
                }
            }
            return (MosquittoStatus(rc), mid)
        }

        /// Sends one SUBSCRIBE for all of `filters` (at least one), in their order; `noLocal` asks the
        /// broker to leave out this client's own messages (MQTT 5 only: on 3.1.1 the option's bit is
        /// reserved, and a broker closes the connection of a client that sets it).
        func subscribe(_ filters: [String], qos: MQTTQoS, noLocal: Bool) -> (status: MosquittoStatus, mid: Int32) {
            var strings = filters.map { strdup($0) }
            defer { for string in strings { free(string) } }
            var mid: Int32 = 0
            let options = noLocal ? Int32(MQTT_SUB_OPT_NO_LOCAL.rawValue) : 0
            let rc = strings.withUnsafeMutableBufferPointer { buffer in
                mosquitto_subscribe_multiple(
                    pointer, &mid, Int32(buffer.count), buffer.baseAddress, qos.rawValue, options, nil)
            }
            return (MosquittoStatus(rc), mid)
        }

        /// Sends one UNSUBSCRIBE for all of `filters` (at least one).
        func unsubscribe(_ filters: [String]) -> (status: MosquittoStatus, mid: Int32) {
            var strings = filters.map { strdup($0) }
            defer { for string in strings { free(string) } }
            var mid: Int32 = 0
            let rc = strings.withUnsafeMutableBufferPointer { buffer in
                mosquitto_unsubscribe_multiple(pointer, &mid, Int32(buffer.count), buffer.baseAddress, nil)
            }
            return (MosquittoStatus(rc), mid)
        }

        /// Queues DISCONNECT, which also wakes the network thread from its wait for traffic.
        func disconnect() -> MosquittoStatus {
            MosquittoStatus(mosquitto_disconnect_v5(pointer, 0, nil))
        }
    }

    /// Whether the gate is open: the client is connected.
    var isOpen: Bool { gate.withLock { $0 == .open } }

    /// Called after a call through the gate that may have queued packets, outside the gate's
    /// lock: the network loop has them written when an event loop runs the connection
    /// (``NetworkLoop/Pump/packetsQueued()``). Set before the network thread starts, never after.
    var packetsQueued: (@Sendable () -> Void)?

    /// Runs `body` while the gate is open, holding it; nil, without running it, when it is not.
    func whileOpen<R, E: Error>(_ body: (OpenHandle) throws(E) -> R) throws(E) -> R? {
        let result = try gate.withLock { gate throws(E) -> R? in
            guard gate == .open else { return nil }
            return try body(OpenHandle(pointer: pointer))
        }
        if result != nil { packetsQueued?() }
        return result
    }

    /// Runs `body` holding the gate, with the handle if the gate is open and nil if not: for work
    /// that must be ordered against the connection's changes and the destruction whether or not
    /// it sends anything.
    func withGate<R>(_ body: (OpenHandle?) -> R) -> R {
        let (result, open) = gate.withLock { gate in
            (body(gate == .open ? OpenHandle(pointer: pointer) : nil), gate == .open)
        }
        if open { packetsQueued?() }
        return result
    }

    /// Frees the handle; every later call through the gate is skipped. The network thread must
    /// have ended.
    func destroy() {
        gate.withLock { gate in
            guard gate != .destroyed else { return }
            gate = .destroyed
            mosquitto_destroy(pointer)
        }
    }

    // MARK: The network thread only

    /// Opens the gate and runs `body` (the resubscription) before any other thread can send.
    func open(_ body: (OpenHandle) -> Void) {
        gate.withLock { gate in
            guard gate == .closed else { return }
            gate = .open
            body(OpenHandle(pointer: pointer))
        }
    }

    /// Closes the gate: the connection has ended.
    func close() {
        gate.withLock { gate in
            if gate == .open { gate = .closed }
        }
    }

    /// Connects (name lookup, TCP, TLS; CONNECT is queued), blocking the calling thread meanwhile.
    func connect(to broker: BrokerAddress, keepAlive: Duration, sessionExpiry: UInt32?) -> MosquittoStatus {
        // A session that outlives the connection needs its expiry in CONNECT (MQTT 5); libmosquitto
        // copies the list.
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if let sessionExpiry {
            _ = mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpiry)
        }
        let seconds = Int32(keepAlive.components.seconds)
        let rc =
            switch broker.transport {
            case .tcp(let host, let port), .tls(let host, let port):
                mosquitto_connect_bind_v5(pointer, host, Int32(port), seconds, nil, properties)
            case .unix(let path):
                // Port 0 makes libmosquitto treat the host as a unix socket path.
                mosquitto_connect_bind_v5(pointer, path, 0, seconds, nil, properties)
            }
        return MosquittoStatus(rc)
    }

    /// Runs one round of libmosquitto's network loop: waits at most `timeoutMilliseconds` for
    /// traffic, reads and writes what there is, and runs the callbacks; then reads the packets
    /// already waiting in the socket, at most ``readAhead``.
    func loop(timeoutMilliseconds: Int32) -> MosquittoStatus {
        readingAhead(after: MosquittoStatus(mosquitto_loop(pointer, timeoutMilliseconds, 1)))
    }

    /// libmosquitto 2.0 ignores max_packets (1): each call reads one packet per message in
    /// flight, at least one, after a select. Under a flood that select per message took a fifth
    /// of the network thread (perf, 10,000 devices); what the socket already holds is read
    /// without it, asking the socket (FIONREAD) before each packet.
    private func readingAhead(after first: MosquittoStatus) -> MosquittoStatus {
        var status = first
        var packets = 0
        while status.isSuccess, packets < Self.readAhead, hasWaitingBytes {
            status = MosquittoStatus(mosquitto_loop_read(pointer, 1))
            packets += 1
        }
        return status
    }

    // MARK: The connection's pump on an event loop (NetworkLoop.Pump), while the network thread waits

    /// Whether libmosquitto's log lines reach the client (``MosquittoCallbacks/installLog(on:)``).
    /// Without a log callback it formats none: it formats one for every packet otherwise, four
    /// `vsnprintf`s and a callback for a QoS 2 point, 2 % of the agent's loop (callgrind, issue 24).
    func logsLibrary(_ logs: Bool) {
        if logs {
            MosquittoCallbacks.installLog(on: pointer)
        } else {
            mosquitto_log_callback_set(pointer, nil)
        }
    }

    /// The connection's socket; -1 when there is none (libmosquitto closed it).
    var socket: Int32 { mosquitto_socket(pointer) }

    /// Whether libmosquitto has packets queued to write.
    var wantsWrite: Bool { mosquitto_want_write(pointer) }

    /// Reads what the socket has, one packet per message in flight (at least one; libmosquitto
    /// stops where the socket has no more), running the callbacks; with `ahead`, then what waits
    /// in the socket, at most ``readAhead`` packets, as ``loop(timeoutMilliseconds:)`` does.
    ///
    /// The event loop reads ahead only when the broker has closed its side: what it sent before
    /// (a DISCONNECT and its reason) must be read before anything is written, since a write to a
    /// closed unix socket fails first (EPIPE) and the reason would be lost. Otherwise its next
    /// `poll` finds what waits for the price of the FIONREAD that would look for it, which was two
    /// calls a fix for nothing at 1 Hz (a PUBREC, a PUBCOMP; issue 24).
    func read(ahead: Bool) -> MosquittoStatus {
        let status = MosquittoStatus(mosquitto_loop_read(pointer, 1))
        return ahead ? readingAhead(after: status) : status
    }

    /// Writes the packets queued, as far as the socket takes them.
    func write() -> MosquittoStatus {
        MosquittoStatus(mosquitto_loop_write(pointer, 1))
    }

    /// The keep-alive: a PINGREQ when nothing was sent for the keep-alive, the connection closed
    /// when the broker's answer is overdue.
    func keepAlive() -> MosquittoStatus {
        MosquittoStatus(mosquitto_loop_misc(pointer))
    }

    /// The most packets ``loop(timeoutMilliseconds:)`` reads after libmosquitto's own round, so
    /// that its keep-alive and outgoing packets are seen between bursts.
    static let readAhead = 256

    /// Whether the socket holds bytes not read yet.
    private var hasWaitingBytes: Bool {
        let socket = mosquitto_socket(pointer)
        var count: Int32 = 0
        return socket >= 0 && ioctl(socket, UInt(FIONREAD), &count) == 0 && count > 0
    }

    /// Sends DISCONNECT and runs the loop until the socket is closed, for at most `rounds` rounds
    /// of `timeoutMilliseconds`; returns how the loop ended.
    func disconnectAndFlush(rounds: Int, timeoutMilliseconds: Int32) -> MosquittoStatus {
        var status = MosquittoStatus(mosquitto_disconnect_v5(pointer, 0, nil))
        var round = 0
        while status.isSuccess && round < rounds {
            status = loop(timeoutMilliseconds: timeoutMilliseconds)
            round += 1
        }
        return status
    }

    // MARK: Configuration

    private static func configure(_ mosq: OpaquePointer, with configuration: MQTTConfiguration) throws(MQTTError) {
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try MosquittoStatus(mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version)).check(
            "cannot set the protocol")
        try MosquittoStatus(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1)).check("cannot set TCP_NODELAY")
        if let credentials = configuration.credentials {
            try MosquittoStatus(mosquitto_username_pw_set(mosq, credentials.username, credentials.password)).check(
                "invalid username \"\(credentials.username)\"")
        }
        if let will = configuration.will {
            var list = try MosquittoProperties.make(will.properties, protocolVersion: configuration.protocolVersion)
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(
                    mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain, list)
            }
            // On success libmosquitto owns the property list; on failure it is ours to free.
            if rc != MOSQ_ERR_SUCCESS.rawValue { mosquitto_property_free_all(&list) }
            try MosquittoStatus(rc).check("invalid will on \(will.topic)")
        }
        if configuration.broker.usesTLS {
            try TLSFiles.configure(mosq, with: configuration.tls)
        }
    }
}

/// `mosquitto_lib_init` runs once per process, the first time a handle is made.
private let libraryInitialisation: Void = {
    mosquitto_lib_init()
}()
