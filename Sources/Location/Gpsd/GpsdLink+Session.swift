import FoundationEssentials
import Logging
import AsyncSupport

extension GpsdLink {
    /// The state the link keeps: connection machine, decoder, gate, counters, and the updates
    /// waiting to be yielded. Used on the link's event loop only.
    struct Session {
        var machine: GpsdConnectionMachine
        private var decoder: GpsdDecoder
        private var gate: FixGate
        /// Fills in speed and course that gpsd did not report (a GGA-only receiver before a date).
        private var motion = MotionEstimator()
        private var own = SourceStatistics()
        private var publishedDecoder = SourceStatistics()
        private var publishedOwn = SourceStatistics()
        private var output: [LocationUpdate] = []
        private var passed: [LocationUpdate] = []
        private var epochsSeen = 0
        private var epochStartedAt: Double?
        private let epochTimeout: Double
        private let incompleteEpochTimeout: Double
        private let logger: Logger
        private let endpoint: String
        private var failuresInARow = 0

        /// - Parameter now: the wall clock, the time of a fix that gpsd sends without one.
        init(configuration: GpsdConfiguration, logger: Logger, now: @escaping @Sendable () -> Date) {
            machine = GpsdConnectionMachine(
                watchCommand: configuration.watchCommand, silenceTimeout: configuration.silenceTimeout.inSeconds,
                retryDelay: configuration.reconnect)
            decoder = GpsdDecoder(device: configuration.device, logger: logger, timelessFixTime: now)
            gate = FixGate(configuration: configuration.gate)
            epochTimeout = configuration.epochTimeout.inSeconds
            incompleteEpochTimeout = max(epochTimeout, configuration.incompleteEpochTimeout.inSeconds)
            self.logger = logger
            endpoint = "\(configuration.host):\(configuration.port)"
        }

        /// When the epoch in progress must be reported, if one is: at once when it is whole (every
        /// field the fix before it had, and its SKY: ``GpsdDecoder/pendingEpochIsComplete``),
        /// `epochTimeout` after its first TPV, or `incompleteEpochTimeout` while it lacks the
        /// altitude that gpsd is still to send (then, once the altitude comes, at once if
        /// `epochTimeout` has passed).
        var epochFlushTime: Double? {
            guard decoder.hasPendingEpoch, let epochStartedAt else { return nil }
            if decoder.pendingEpochIsComplete { return epochStartedAt }
            return epochStartedAt + (decoder.pendingEpochAwaitsAltitude ? incompleteEpochTimeout : epochTimeout)
        }

        /// Decodes one line; returns what the connection machine makes of it.
        mutating func decode(_ line: UnsafeBufferPointer<UInt8>, now: Double) -> GpsdConnectionMachine.Action? {
            let outcome = decoder.decodeLine(line, into: &output)
            if decoder.epochsOpened != epochsSeen {
                epochsSeen = decoder.epochsOpened
                epochStartedAt = now
            }
            let wasWatching = machine.isWatching
            let action = machine.received(outcome, now: now, random: Double.random(in: 0..<1))
            if !wasWatching && machine.isWatching {
                own.connections += 1
                failuresInARow = 0
                if case .version(let version) = outcome {
                    logger.info(
                        "Watching gpsd",
                        metadata: [
                            "event": "gpsd.watching", "gpsd.endpoint": "\(endpoint)",
                            "gpsd.release": "\(version.release ?? "?")",
                        ])
                }
            }
            return action
        }

        mutating func tooLong() {
            decoder.countTooLongLine()
        }

        mutating func flushEpochIfDue(now: Double) {
            guard let due = epochFlushTime, now >= due else { return }
            decoder.flush(into: &output)
            epochStartedAt = nil
        }

        mutating func connected() {
            logger.debug("Connected to gpsd", metadata: ["event": "gpsd.connected", "gpsd.endpoint": "\(endpoint)"])
        }

        mutating func connectFailed(_ error: ConnectError, output emit: (LocationUpdate) -> Void) {
            own.disconnections += 1
            failuresInARow += 1
            // The first failure of a series is worth a line; the retries are not.
            let level: Logger.Level = failuresInARow == 1 ? .info : .debug
            logger.log(
                level: level, "Cannot connect to gpsd; retrying",
                metadata: [
                    "event": "gpsd.connect.failed", "gpsd.endpoint": "\(endpoint)", "error": "\(error)",
                    "gpsd.attempt": "\(failuresInARow)",
                ])
            decoder.connectionLost(into: &output)
            drain(into: emit)
        }

        mutating func disconnected(_ reason: GpsdConnectionMachine.Disconnection, output emit: (LocationUpdate) -> Void)
        {
            own.disconnections += 1
            if reason == .silent { own.silentTimeouts += 1 }
            failuresInARow += 1
            logger.info(
                "The gpsd connection ended; reconnecting",
                metadata: [
                    "event": "gpsd.connection.lost", "gpsd.endpoint": "\(endpoint)",
                    "gpsd.reason": "\(reason.rawValue)",
                ])
            decoder.connectionLost(into: &output)
            epochStartedAt = nil
            drain(into: emit)
            motion.reset()
        }

        /// Gates the decoded updates and hands the passed ones to `emit`.
        mutating func drain(into emit: (LocationUpdate) -> Void) {
            guard !output.isEmpty else { return }
            for update in output { gate.admit(update, statistics: &own, into: &passed) }
            output.removeAll(keepingCapacity: true)
            for var update in passed {
                if let fix = update.fix { update.fix = motion.estimate(fix) }
                own.updates += 1
                if update.fix != nil { own.fixes += 1 }
                emit(update)
            }
            passed.removeAll(keepingCapacity: true)
        }

        mutating func publish(to store: StatisticsStore) {
            store.add(decoder.statistics, since: publishedDecoder)
            publishedDecoder = decoder.statistics
            store.add(own, since: publishedOwn)
            publishedOwn = own
        }
    }
}
