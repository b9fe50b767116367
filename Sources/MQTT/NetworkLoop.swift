import CMosquitto
import Dispatch
import Foundation
import Locking
import Logging
import Synchronization

/// The client's own thread: it connects, runs libmosquitto's network loop, and waits out the
/// backoff between attempts, so that no blocking call ever runs on Swift's cooperative pool.
final class NetworkLoop: Sendable {
    private let handle: MosquittoHandle
    private let context: ClientContext
    private let stopRequested = Atomic<Bool>(false)
    /// Signalled to cut a backoff wait short when the client stops.
    private let wake = DispatchSemaphore(value: 0)
    private let completion = Locked<Completion>(.running(nil))

    private enum Completion {
        case running(CheckedContinuation<Void, Never>?)
        case finished
    }

    /// How long one `mosquitto_loop` call may wait for traffic; libmosquitto wakes earlier for
    /// outgoing packets, so this only bounds how late keep-alive checks run.
    private static let loopTimeoutMilliseconds: Int32 = 1000

    init(handle: MosquittoHandle, context: ClientContext) {
        self.handle = handle
        self.context = context
    }

    func start() {
        let thread = Thread { [self] in
            // Foundation keeps `Thread.name` to itself on Linux; name the thread for top, perf and /proc.
            myeline_name_current_thread("mqtt-network")
            run()
            let waiter = completion.withLock { completion -> CheckedContinuation<Void, Never>? in
                defer { completion = .finished }
                if case .running(let waiter) = completion { return waiter }
                return nil
            }
            waiter?.resume()
        }
        thread.start()
    }

    /// Disconnects cleanly and returns once the thread has ended.
    func stop() async {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        _ = mosquitto_disconnect_v5(handle.pointer, 0, nil)
        wake.signal()
        await withCheckedContinuation { continuation in
            let finished = completion.withLock { completion -> Bool in
                if case .finished = completion { return true }
                completion = .running(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    private var stopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    private func run() {
        let configuration = context.configuration
        var failures = 0
        var generator = SystemRandomNumberGenerator()
        while !stopping {
            var rc = connect(configuration)
            while rc == MOSQ_ERR_SUCCESS.rawValue && !stopping {
                // libmosquitto 2.0 ignores max_packets (1): each call reads one packet per message in
                // flight, at least one. One wake-up per message costs little next to decoding it.
                rc = mosquitto_loop(handle.pointer, Self.loopTimeoutMilliseconds, 1)
                if rc == MOSQ_ERR_SUCCESS.rawValue { context.completeConnection(handle: handle.pointer) }
            }
            if stopping && rc == MOSQ_ERR_SUCCESS.rawValue { rc = flushDisconnect() }
            let event = context.endAttempt(returnCode: rc, requested: stopping)
            context.broadcast(event)
            guard !stopping else { break }
            switch event {
            case .disconnected: failures = 1
            case .connectionFailed, .connected: failures += 1
            }
            var delay = configuration.reconnect.delay(afterFailures: failures, using: &generator)
            if case .disconnected(let error?) = event,
                error.code == .sessionTakenOver || context.reconnectsSlowly.load(ordering: .relaxed)
            {
                // Another client uses this client id: coming back at once would take its session
                // over in turn, and the two would evict each other every second. The longest wait
                // keeps the duel down to one takeover per maximum delay.
                delay = configuration.reconnect.maximumDelay
            }
            log(event, retryIn: delay)
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(delay.seconds * 1e9)))
        }
    }

    private func connect(_ configuration: MQTTConfiguration) -> Int32 {
        let keepAlive = Int32(configuration.keepAlive.components.seconds)
        // A session that outlives the connection needs its expiry in CONNECT (MQTT 5); libmosquitto
        // copies the list.
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        let expiry = UInt32(clamping: configuration.sessionExpiry.components.seconds)
        if configuration.protocolVersion == .v5, !configuration.cleanSession, expiry > 0 {
            _ = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), expiry)
        }
        return switch configuration.broker.transport {
        case .tcp(let host, let port), .tls(let host, let port):
            mosquitto_connect_bind_v5(handle.pointer, host, Int32(port), keepAlive, nil, properties)
        case .unix(let path):
            // Port 0 makes libmosquitto treat the host as a unix socket path.
            mosquitto_connect_bind_v5(handle.pointer, path, 0, keepAlive, nil, properties)
        }
    }

    /// Sends DISCONNECT and runs the loop until the socket is closed, for at most about five seconds.
    private func flushDisconnect() -> Int32 {
        var rc = mosquitto_disconnect_v5(handle.pointer, 0, nil)
        var rounds = 0
        while rc == MOSQ_ERR_SUCCESS.rawValue && rounds < 50 {
            rc = mosquitto_loop(handle.pointer, 100, 1)
            rounds += 1
        }
        return rc
    }

    private func log(_ event: MQTTConnectionEvent, retryIn delay: Duration) {
        let retry = String(format: "%.1f", delay.seconds)
        switch event {
        case .connectionFailed(let error):
            context.logger.info(
                "mqtt.connect.failed",
                metadata: [
                    "mqtt.broker": "\(context.configuration.broker)", "error": "\(error)", "mqtt.retry_s": "\(retry)",
                ])
        case .disconnected(let error):
            context.logger.info(
                "mqtt.connection.lost",
                metadata: [
                    "mqtt.broker": "\(context.configuration.broker)",
                    "error": "\(error.map(String.init(describing:)) ?? "-")", "mqtt.retry_s": "\(retry)",
                ])
        case .connected:
            break
        }
    }
}
