import AsyncSupport
import Dispatch
import FoundationEssentials
import Locking
import Logging
import Synchronization

/// The client's own thread: the shell around ``MQTTConnectionStateMachine``. It feeds the machine
/// what happens (the connect call's result, libmosquitto's loop, the end of a wait, a stop) and
/// performs the actions (connect, resume, wait, disconnect, finish), so that no blocking call
/// ever runs on Swift's cooperative pool. Every decision is the machine's.
///
/// Given an event loop, the thread hands each complete connection's traffic to it (``Pump``) and
/// waits until the connection ends or the client stops.
final class NetworkLoop: Sendable {
    private let handle: MosquittoHandle
    private let context: ClientContext
    /// The connection's traffic on the user's event loop; nil: on this thread.
    let pump: Pump?
    private let stopRequested = Atomic<Bool>(false)
    /// Set by ``connectNow()``; taken by the wait it cuts short.
    private let connectRequested = Atomic<Bool>(false)
    /// Signalled to cut a wait between attempts short when the client stops or asks to connect now.
    private let wake = DispatchSemaphore(value: 0)
    private let completion = Locked<Completion>(.running(nil))

    private enum Completion {
        case running(CheckedContinuation<Void, Never>?)
        case finished
    }

    /// How long one round of libmosquitto's loop may wait for traffic: a third of the keep-alive,
    /// 1 to 10 s. libmosquitto wakes the loop at once for an outgoing packet (a publish, the
    /// DISCONNECT of a stop) and for an incoming one, so the bound only decides how late a
    /// keep-alive ping can be: at most a third of the keep-alive, well inside the broker's 1.5
    /// keep-alives. It was 1 s: a wake-up a second on a tracker with nothing to send (issue 24).
    static func loopTimeoutMilliseconds(keepAlive: Duration) -> Int32 {
        Int32(min(max((keepAlive.inSeconds / 3 * 1000).rounded(), 1000), 10_000))
    }

    init(handle: MosquittoHandle, context: ClientContext, eventLoop: EventLoop?) {
        self.handle = handle
        self.context = context
        let pump = eventLoop.map { loop in
            Pump(
                handle: handle, loop: loop,
                keepAliveCheck: .milliseconds(
                    Int64(Self.loopTimeoutMilliseconds(keepAlive: context.configuration.keepAlive))))
        }
        self.pump = pump
        if let pump { handle.packetsQueued = { pump.packetsQueued() } }
    }

    func start() {
        DedicatedThread.start(name: "mqtt-network") { [self] in
            run()
            let waiter = completion.withLock { completion -> CheckedContinuation<Void, Never>? in
                defer { completion = .finished }
                if case .running(let waiter) = completion { return waiter }
                return nil
            }
            waiter?.resume()
        }
    }

    /// Disconnects cleanly and returns once the thread has ended.
    func stop() async {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        // An event loop's pumping ends first: the thread takes the connection back to disconnect.
        pump?.requestStop()
        // Queuing DISCONNECT wakes the loop from its wait for traffic at once; the thread then
        // sees the stop and flushes it.
        _ = handle.whileOpen { $0.disconnect() }
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

    /// Hands the machine a request to connect at once; a wait under way is woken for it.
    func connectNow() {
        connectRequested.store(true, ordering: .sequentiallyConsistent)
        wake.signal()
    }

    private var stopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    private func run() {
        var shell = Shell(
            loop: self,
            machine: MQTTConnectionStateMachine(
                backoff: context.configuration.reconnect, promptRetry: context.configuration.promptRetry,
                clientID: context.configuration.clientID))
        shell.run()
    }

    /// The state machine and what its actions need; the network thread's alone.
    private struct Shell {
        let loop: NetworkLoop
        var machine: MQTTConnectionStateMachine
        let origin = ContinuousClock.now
        var generator = SystemRandomNumberGenerator()

        private var handle: MosquittoHandle { loop.handle }
        private var context: ClientContext { loop.context }
        private var configuration: MQTTConfiguration { loop.context.configuration }
        private var now: Duration { ContinuousClock.now - origin }

        mutating func run() {
            var action = machine.start(now: now)
            while true {
                switch action {
                case .connect:
                    action = connect()
                case .resume(let event):
                    action = resume(event)
                case .wait(let delay, let event, let rule):
                    action = wait(delay, after: event, rule: rule)
                case .disconnect:
                    action = disconnect()
                case .finish(let event):
                    if let event { context.broadcast(event) }
                    return
                }
            }
        }

        /// Connects, then runs the loop until something happens.
        private mutating func connect() -> MQTTConnectionStateMachine.Action {
            let expiry = UInt32(clamping: configuration.sessionExpiry.components.seconds)
            let keepsSession = configuration.protocolVersion == .v5 && !configuration.cleanSession && expiry > 0
            let status = handle.connect(
                to: configuration.broker, keepAlive: configuration.keepAlive,
                sessionExpiry: keepsSession ? expiry : nil)
            if loop.stopping { return machine.shutdownRequested() }
            guard status.isSuccess else { return ended(status) }
            return pump()
        }

        /// Opens the gate with the subscriptions sent again, and reports the connection. When the
        /// broker kept no session the client meant to keep, the publishes still waiting for their
        /// acknowledgement fail first (`sessionLost`), so that their publishers send them again.
        private mutating func resume(_ event: MQTTConnectionEvent) -> MQTTConnectionStateMachine.Action {
            if case .connected(sessionPresent: false) = event, !configuration.cleanSession {
                let failed = context.failUnacknowledged(
                    with: MQTTError(
                        .sessionLost,
                        "the broker kept no session across the reconnection: the message may not have been delivered"))
                if failed > 0 {
                    context.logger.info(
                        "The broker kept no session: unacknowledged messages are reported as not delivered",
                        metadata: ["event": "mqtt.session.lost", "mqtt.unacknowledged": "\(failed)"])
                }
            }
            handle.open { context.resubscribe(through: $0) }
            context.logger.info(
                "The broker accepted the connection",
                metadata: ["event": "mqtt.connected", "mqtt.broker": "\(configuration.broker)"])
            context.broadcast(event)
            return pump()
        }

        /// Reports the event and waits, cut short by a stop or a request to connect now.
        ///
        /// A request made while there was no wait was handed to the machine at the attempt's end
        /// (``ended(_:)``), and left a signal behind: it wakes this wait with no request pending,
        /// and the wait goes on.
        private mutating func wait(
            _ delay: Duration, after event: MQTTConnectionEvent, rule: MQTTConnectionStateMachine.WaitRule
        ) -> MQTTConnectionStateMachine.Action {
            context.broadcast(event)
            loop.log(event, retryIn: delay, rule: rule)
            let deadline = DispatchTime.now() + .nanoseconds(Int(delay.inSeconds * 1e9))
            while true {
                let timedOut = loop.wake.wait(timeout: deadline) == .timedOut
                if loop.stopping { return machine.shutdownRequested() }
                if timedOut { return machine.waitEnded() }
                if loop.connectRequested.exchange(false, ordering: .sequentiallyConsistent),
                    let action = machine.connectRequested()
                {
                    return action
                }
            }
        }

        /// Sends DISCONNECT and lets the loop write it, for at most about five seconds.
        private mutating func disconnect() -> MQTTConnectionStateMachine.Action {
            let status = handle.disconnectAndFlush(rounds: 50, timeoutMilliseconds: 100)
            handle.close()
            return ended(status)
        }

        /// Runs libmosquitto's loop until the connection is complete, ends, or the client stops;
        /// a complete one on the event loop, if the client has one.
        private mutating func pump() -> MQTTConnectionStateMachine.Action {
            while true {
                if machine.isConnected, let pump = loop.pump {
                    // A connection made: libmosquitto's lines are its packets, and a line of its
                    // own formatted for each costs more than the packet. Unless traced, none is
                    // made while pumped; an error of the connection is then its status alone (an
                    // OpenSSL error's text is not kept; docs/broker-connection.md, "Threads").
                    let quiet = context.logger.logLevel > .trace
                    if quiet { handle.logsLibrary(false) }
                    let status = pump.run()
                    if quiet { handle.logsLibrary(true) }
                    if loop.stopping { return machine.shutdownRequested() }
                    handle.close()
                    return ended(status)
                }
                let status = handle.loop(
                    timeoutMilliseconds: NetworkLoop.loopTimeoutMilliseconds(keepAlive: configuration.keepAlive))
                if loop.stopping { return machine.shutdownRequested() }
                guard status.isSuccess else {
                    handle.close()
                    return ended(status)
                }
                // After the round in which CONNACK arrived: libmosquitto has queued its resend.
                if !machine.isConnected, let sessionPresent = context.takeAcceptance() {
                    return machine.connectionAccepted(sessionPresent: sessionPresent)
                }
            }
        }

        /// Hands the machine what the callbacks saw of the attempt that ended with `status`.
        private mutating func ended(_ status: MosquittoStatus) -> MQTTConnectionStateMachine.Action {
            machine.reconnectSlowly(context.reconnectsSlowly.load(ordering: .relaxed))
            // A request to connect now made during the attempt: the machine shortens the next wait
            // (none is under way to cut).
            if loop.connectRequested.exchange(false, ordering: .sequentiallyConsistent) {
                _ = machine.connectRequested()
            }
            var end = context.takeEnding()
            end.failure = status.failure
            return machine.connectionEnded(end, now: now, random: Double.random(in: 0..<1, using: &generator))
        }
    }

    private func log(_ event: MQTTConnectionEvent, retryIn delay: Duration, rule: MQTTConnectionStateMachine.WaitRule) {
        let retry = "\((delay.inSeconds * 10).rounded() / 10)"
        let broker = "\(context.configuration.broker)"
        switch event {
        case .connectionFailed(let error):
            context.logger.info(
                "Cannot connect to the broker; retrying",
                metadata: [
                    "event": "mqtt.connect.failed", "mqtt.broker": "\(broker)", "error": "\(error)",
                    "mqtt.retry_s": "\(retry)",
                    "mqtt.retry_rule": "\(rule.rawValue)",
                ])
        case .disconnected(let error):
            context.logger.info(
                "Lost the connection to the broker; reconnecting",
                metadata: [
                    "event": "mqtt.connection.lost", "mqtt.broker": "\(broker)",
                    "error": "\(error.map(String.init(describing:)) ?? "-")",
                    "mqtt.retry_s": "\(retry)", "mqtt.retry_rule": "\(rule.rawValue)",
                ])
        case .connected:
            break
        }
    }
}
