import AsyncSupport
/// The life of the connection to gpsd, as a pure state machine: when to connect, watch, probe a
/// silent connection, give it up, and retry. The I/O shell (``GpsdLink``) performs its actions.
///
/// Times are seconds on a monotonic clock, given by the caller. The first message on a connection
/// must be gpsd's VERSION greeting with protocol major version 3; anything else is not gpsd.
struct GpsdConnectionMachine {
    /// Why a connection ended.
    enum Disconnection: String, Equatable {
        /// The connection attempt failed (refused, unreachable, timed out, lookup failed).
        case connectFailed
        /// gpsd closed the connection, or reading failed.
        case closed
        /// No data for the silence timeout, not even an answer to a probe.
        case silent
        /// The peer is not gpsd, or speaks another protocol version.
        case notGpsd
    }

    /// What the shell must do.
    enum Action: Equatable {
        /// Open a connection.
        case connect
        /// Send these bytes (the WATCH command, or a probe).
        case send(String)
        /// Close the connection, for this reason, and wait until `retryAt` to connect again.
        case disconnect(Disconnection, retryAt: Double)
        /// Wait until `retryAt`, then connect (a failed attempt).
        case retry(at: Double)
    }

    private enum State: Equatable {
        case idle
        case connecting
        case awaitingVersion(lastData: Double)
        case watching(lastData: Double, probed: Bool)
        case waiting(until: Double)
    }

    let watchCommand: String
    let silenceTimeout: Double
    let retryDelay: Backoff
    private var state = State.idle
    private var failures = 0

    init(watchCommand: String, silenceTimeout: Double, retryDelay: Backoff) {
        self.watchCommand = watchCommand
        self.silenceTimeout = silenceTimeout
        self.retryDelay = retryDelay
    }

    /// Whether a connection is open (awaiting the greeting or watching).
    var isConnected: Bool {
        switch state {
        case .awaitingVersion, .watching: true
        default: false
        }
    }

    /// Whether gpsd greeted this connection and the source is watching.
    var isWatching: Bool {
        if case .watching = state { return true }
        return false
    }

    /// When ``timerFired(now:random:)`` must next be called, if ever.
    var deadline: Double? {
        switch state {
        case .idle, .connecting: nil
        case .awaitingVersion(let lastData): lastData + silenceTimeout
        case .watching(let lastData, let probed): lastData + (probed ? silenceTimeout : silenceTimeout / 2)
        case .waiting(let until): until
        }
    }

    /// Starts: connect at once.
    mutating func start() -> Action {
        state = .connecting
        return .connect
    }

    /// The connection is open: send WATCH and wait for the greeting.
    mutating func connected(now: Double) -> Action {
        state = .awaitingVersion(lastData: now)
        return .send(watchCommand)
    }

    /// The connection attempt failed.
    mutating func connectFailed(now: Double, random: Double) -> Action {
        let until = retryTime(now: now, random: random)
        state = .waiting(until: until)
        return .retry(at: until)
    }

    /// Bytes arrived (any bytes count as a sign of life).
    mutating func dataReceived(now: Double) {
        switch state {
        case .awaitingVersion: state = .awaitingVersion(lastData: now)
        case .watching: state = .watching(lastData: now, probed: false)
        default: break
        }
    }

    /// A line was decoded: checks that the first message is a VERSION of protocol 3. `random` (the
    /// jitter of a retry) is drawn only when the connection is given up: a draw is a getrandom(2)
    /// call, and a line arrives several times a second.
    mutating func received(
        _ outcome: GpsdDecoder.LineOutcome, now: Double, random: @autoclosure () -> Double
    ) -> Action? {
        guard case .awaitingVersion = state else { return nil }
        switch outcome {
        case .version(let version) where version.protocolMajor == 3:
            failures = 0
            state = .watching(lastData: now, probed: false)
            return nil
        case .ignored:
            return nil
        case .version, .message, .rejected:
            return disconnect(.notGpsd, now: now, random: random())
        }
    }

    /// The peer closed the connection or reading failed.
    mutating func closed(now: Double, random: Double) -> Action {
        disconnect(.closed, now: now, random: random)
    }

    /// The deadline passed: probe a quiet connection, give up a silent one, or retry. `random` is
    /// drawn only when the connection is given up, as in ``received(_:now:random:)``.
    mutating func timerFired(now: Double, random: @autoclosure () -> Double) -> Action? {
        guard let deadline, now >= deadline else { return nil }
        switch state {
        case .awaitingVersion:
            return disconnect(.silent, now: now, random: random())
        case .watching(let lastData, let probed):
            if probed { return disconnect(.silent, now: now, random: random()) }
            state = .watching(lastData: lastData, probed: true)
            // A live gpsd answers at once; a half-open connection does not.
            return .send("?VERSION;\n")
        case .waiting:
            state = .connecting
            return .connect
        case .idle, .connecting:
            return nil
        }
    }

    private mutating func disconnect(_ reason: Disconnection, now: Double, random: Double) -> Action {
        let until = retryTime(now: now, random: random)
        state = .waiting(until: until)
        return .disconnect(reason, retryAt: until)
    }

    private mutating func retryTime(now: Double, random: Double) -> Double {
        failures += 1
        return now + retryDelay.delay(afterFailures: failures, unitRandom: random).inSeconds
    }
}
