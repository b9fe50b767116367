import AsyncSupport

/// The life of the client's connection to the broker, as a pure state machine: when to connect,
/// what the end of an attempt or a connection means (the event to report), how long to wait
/// before the next attempt, and how to stop. ``NetworkLoop`` feeds it events on the client's
/// network thread and performs its actions; nothing here calls libmosquitto, sleeps or locks.
///
/// Times are durations since any fixed origin on a monotonic clock, given with each event;
/// `random` values, 0 ..< 1, choose the jitter. Both come from the caller, so that tests give them.
///
/// The reconnection policy (docs/broker-connection.md, "Reconnection"):
/// - after a failed attempt, the backoff: `MQTTConfiguration.reconnect`, 1 s doubling to 60 s
///   with full jitter by default; a lost connection starts it again at its first step;
/// - prompt retries: for ``MQTTPromptRetry/window`` after the start or the loss of a connection
///   the client had, the backoff's first step (a quick retry, for a blip) and then
///   ``MQTTPromptRetry/interval`` (or the backoff's maximum, if shorter), the ceiling. The first
///   wait at the ceiling is drawn from 0 to it, which gives the client a phase of its own, and the
///   attempts then fall on that phase, one interval apart: a broker that comes back has every
///   client back within one interval, spread evenly over it, whether it was away 3 s or 3 minutes;
/// - a refusal that needs a person (`MQTTError.needsAttention`: credentials, certificates) waits
///   the growing backoff, window or not;
/// - a connection the broker closes because another client took the session over (MQTT 5 reason
///   code 0x8E), and after ``reconnectSlowly(_:)`` any lost connection, waits the backoff's
///   maximum without jitter: coming back at once would evict the other client, which would come
///   back and evict this one;
/// - after ``connectRequested()`` (a client about to stop with messages to deliver), a wait is cut
///   short and, until the next connection, attempts are ``hurriedInterval`` apart: its time is
///   bounded, and a backoff drawn up to 10 s ahead could pass it.
struct MQTTConnectionStateMachine {
    /// The wait between attempts after ``connectRequested()``, until the client is connected.
    static let hurriedInterval = Duration.seconds(1)

    /// What the shell must do.
    enum Action: Equatable {
        /// Connect to the broker (name lookup, TCP, TLS, CONNECT) and run the network loop.
        case connect
        /// The broker accepted the connection, and libmosquitto has queued its resend of the
        /// messages the last connection left unacknowledged: let publishers through again (what
        /// waited offline goes now, after that resend), subscribe again to every filter, and
        /// report the event (`.connected`).
        case resume(MQTTConnectionEvent)
        /// Report the event (a failed attempt or a lost connection) and wait `delay` before
        /// connecting again; `rule` says which rule chose the delay.
        case wait(Duration, report: MQTTConnectionEvent, rule: WaitRule)
        /// Send DISCONNECT and run the loop until the socket closes: the client is stopping.
        case disconnect
        /// Report the event, if there is one, and end: the client has stopped.
        case finish(report: MQTTConnectionEvent?)
    }

    /// Which rule chose a wait, for the log (`mqtt.retry_rule`) and the tables.
    enum WaitRule: String, Equatable, Sendable {
        /// The growing backoff with full jitter.
        case backoff
        /// The prompt retries' ceiling: a drawn phase, or the next attempt on it.
        case prompt
        /// The maximum delay: another client took the session over.
        case sessionTakenOver = "session-taken-over"
        /// The maximum delay: ``reconnectSlowly(_:)`` is on.
        case slow
        /// ``hurriedInterval``: ``connectRequested()`` asked for attempts at once.
        case hurried
    }

    /// What the network loop saw when an attempt or a connection ended, in words: the facts the
    /// machine classifies.
    struct ConnectionEnd: Equatable {
        /// How the connect call or the network loop ended; nil when it ended cleanly.
        var failure: LibraryFailure?
        /// The broker's refusal in CONNACK, if it sent one.
        var refusal: ReasonCode?
        /// The reason code of a DISCONNECT the broker sent (MQTT 5), if it sent one.
        var brokerDisconnect: ReasonCode?
        /// libmosquitto's last error log line in the attempt, which carries OpenSSL's reason for a
        /// TLS failure.
        var libraryDetail: String?
    }

    /// An MQTT reason code with libmosquitto's text for it.
    struct ReasonCode: Equatable {
        var code: Int32
        var text: String
    }

    /// MQTT 5's reason code "session taken over" (0x8E).
    static let sessionTakenOver: Int32 = 0x8E

    private enum State: Equatable {
        case idle
        /// Connecting, or connected and awaiting CONNACK.
        case connecting
        case connected
        case waiting
        /// Stopping: DISCONNECT sent, the loop flushing it.
        case disconnecting
        case finished
    }

    let backoff: Backoff
    let promptRetry: MQTTPromptRetry
    /// The client id, which a session-taken-over report names.
    let clientID: String
    private var state = State.idle
    /// Consecutive failed attempts; a lost connection counts as the first.
    private var failures = 0
    /// When the prompt window opened: the start, or the loss of the last connection.
    private var windowOpened: Duration?
    /// The instant this client's prompt attempts fall on (plus whole intervals); nil until the
    /// first wait at the ceiling is drawn in this window.
    private var phase: Duration?
    private var slow = false
    /// Set by ``connectRequested()`` until the next connection.
    private var hurried = false

    init(backoff: Backoff, promptRetry: MQTTPromptRetry, clientID: String) {
        self.backoff = backoff
        self.promptRetry = promptRetry
        self.clientID = clientID
    }

    /// Whether the client is connected (the broker accepted, the connection is complete).
    var isConnected: Bool { state == .connected }

    /// The client starts: connect at once. The prompt window opens.
    mutating func start(now: Duration) -> Action {
        precondition(state == .idle, "the MQTT connection was started twice")
        state = .connecting
        windowOpened = now
        return .connect
    }

    /// The broker accepted the connection (CONNACK success), and libmosquitto is done with it.
    mutating func connectionAccepted(sessionPresent: Bool) -> Action {
        precondition(state == .connecting, "a CONNACK was handed over while \(state)")
        state = .connected
        failures = 0
        windowOpened = nil
        phase = nil
        hurried = false
        return .resume(.connected(sessionPresent: sessionPresent))
    }

    /// The connect call failed, or the network loop ended: report it and wait, or finish when
    /// stopping.
    mutating func connectionEnded(_ end: ConnectionEnd, now: Duration, random: Double) -> Action {
        switch state {
        case .disconnecting:
            state = .finished
            return .finish(report: .disconnected(nil))
        case .connecting, .connected:
            let event = classify(end, wasConnected: state == .connected)
            state = .waiting
            let (delay, rule) = wait(after: event, now: now, random: random)
            return .wait(delay, report: event, rule: rule)
        case .idle, .waiting, .finished:
            preconditionFailure("a connection ended while \(state)")
        }
    }

    /// The wait is over: connect again.
    mutating func waitEnded() -> Action {
        precondition(state == .waiting, "a wait ended while \(state)")
        state = .connecting
        return .connect
    }

    /// The client asks for attempts at once (`MQTTClient.connectNow()`: an agent about to stop with
    /// messages to deliver): until it is connected, attempts are ``hurriedInterval`` apart, and a
    /// wait under way is cut short (`.connect`); nil when there is none to cut (an attempt under way:
    /// the next wait is the short one). Connected or stopping, the request is dropped.
    mutating func connectRequested() -> Action? {
        switch state {
        case .waiting:
            hurried = true
            state = .connecting
            return .connect
        case .connecting:
            hurried = true
            return nil
        case .idle, .connected, .disconnecting, .finished:
            return nil
        }
    }

    /// Turns the maximum wait after every lost connection on or off (`MQTTClient.reconnectSlowly(_:)`).
    mutating func reconnectSlowly(_ enabled: Bool) {
        slow = enabled
    }

    /// The client is shutting down: disconnect cleanly when there is a connection or an attempt
    /// under way; give up the wait and finish when there is not.
    mutating func shutdownRequested() -> Action {
        switch state {
        case .connecting, .connected:
            state = .disconnecting
            return .disconnect
        case .waiting:
            state = .finished
            return .finish(report: nil)
        case .idle, .disconnecting, .finished:
            preconditionFailure("shut-down requested while \(state)")
        }
    }

    // MARK: Classification

    /// The event an ended attempt or connection is reported as, with an error that says why.
    private func classify(_ end: ConnectionEnd, wasConnected: Bool) -> MQTTConnectionEvent {
        if let refusal = end.refusal {
            return .connectionFailed(
                MQTTError(
                    .connectionRefused,
                    "broker refused the connection: \(refusal.text) (reason code \(refusal.code))"))
        }
        if wasConnected, let reason = end.brokerDisconnect {
            if reason.code == Self.sessionTakenOver {
                return .disconnected(
                    MQTTError(
                        .sessionTakenOver,
                        "connection closed by the broker: \(reason.text): another client connected with client id "
                            + clientID))
            }
            return .disconnected(MQTTError(.connectionLost, "connection closed by the broker: \(reason.text)"))
        }
        var error =
            end.failure.map { MQTTError($0, context: wasConnected ? "connection lost" : "cannot connect") }
            ?? MQTTError(.connectionLost, "connection closed by the broker")
        if let detail = end.libraryDetail, error.code == .tls || error.code == .network {
            error.message += " (\(detail))"
        }
        if wasConnected, error.code == .notConnected {
            error = MQTTError(.connectionLost, "connection lost: closed by the broker")
        }
        return wasConnected ? .disconnected(error) : .connectionFailed(error)
    }

    // MARK: Waits

    /// The wait before the next attempt after `event`, and the rule that chose it.
    private mutating func wait(
        after event: MQTTConnectionEvent, now: Duration, random: Double
    ) -> (Duration, WaitRule) {
        switch event {
        case .disconnected(let error):
            failures = 1
            windowOpened = now
            phase = nil
            if error?.code == .sessionTakenOver { return (backoff.maximumDelay, .sessionTakenOver) }
            if slow { return (backoff.maximumDelay, .slow) }
            return nextWait(now: now, random: random, needsAttention: false)
        case .connectionFailed(let error):
            failures += 1
            if hurried { return (Self.hurriedInterval, .hurried) }
            return nextWait(now: now, random: random, needsAttention: error.needsAttention)
        case .connected:
            preconditionFailure("a connection's end classified as a connection")
        }
    }

    private mutating func nextWait(now: Duration, random: Double, needsAttention: Bool) -> (Duration, WaitRule) {
        let ceiling = min(promptRetry.interval, backoff.maximumDelay)
        // In the window, the backoff's first step (a quick retry, for a blip), then the ceiling.
        guard !needsAttention, let opened = windowOpened, now - opened < promptRetry.window,
            failures >= 2 || backoff.nominalDelay(afterFailures: failures) >= ceiling
        else {
            return (backoff.delay(afterFailures: failures, unitRandom: random), .backoff)
        }
        guard let phase else {
            // Full jitter once: this client's phase, independent of every other client's.
            let wait = ceiling * (1 - random)
            self.phase = now + wait
            return (wait, .prompt)
        }
        // The next instant on the phase after now, however long the attempt took.
        let intervals = ((now - phase) / ceiling).rounded(.down) + 1
        return (phase + ceiling * intervals - now, .prompt)
    }
}
