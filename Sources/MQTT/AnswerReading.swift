/// When a connection pumped on an event loop reads what the broker sends: at once (the loop waits
/// for the socket to be readable), or at the loop's next wake-up for anything else. A pure state
/// machine; ``NetworkLoop/Pump`` performs its actions.
///
/// A message published with `acknowledgementMayWait` (the agent's live track point, issue 24)
/// gets its first answer (PUBACK, or PUBREC for QoS 2) read later: the loop does not watch the
/// socket for input after writing only such messages, and reads at its next wake-up for anything
/// else (at 1 Hz, gpsd's next line within a second), or at ``limit`` at the latest. The PUBREL
/// that a PUBREC asks for is written then, and its PUBCOMP read at once again: the message is
/// acknowledged in full before the next fix's point is published. At 1 Hz that is one wake-up
/// of the loop a fix less (three instead of four).
///
/// Everything else reads at once: a write of any other message or packet, a hang-up or an error
/// of the socket (always watched), and the limit.
struct AnswerReading: Equatable, Sendable {
    /// The longest the reading waits for the loop's next wake-up: 2 s.
    static let limit: Duration = .seconds(2)

    /// What the pump does.
    enum Action: Equatable, Sendable {
        /// Read what the broker sent (and write what that asks for), then watch for input again.
        case read
        /// Arm the limit's timer.
        case armLimit
        /// Cancel the limit's timer.
        case cancelLimit
    }

    /// Whether the reading waits for the loop's next wake-up.
    private(set) var deferred = false

    /// Whether the loop watches the socket for input (`POLLIN`); a hang-up and an error are always
    /// watched.
    var watchesInput: Bool { !deferred }

    /// The pump wrote what was queued; `answersMayWait`: only messages published with
    /// `acknowledgementMayWait` were queued since the last write.
    mutating func wrote(answersMayWait: Bool) -> [Action] {
        if answersMayWait {
            guard !deferred else { return [] }
            deferred = true
            return [.armLimit]
        }
        return stop()
    }

    /// The loop woke from its sleep for something else (another descriptor, a timer, work handed
    /// over), or the limit passed.
    mutating func woke() -> [Action] {
        guard deferred else { return [] }
        return stop() + [.read]
    }

    /// The socket reported an event (a hang-up, an error, input, room to write): the pump handles
    /// it as usual, reading at once from then on.
    mutating func socketReady() -> [Action] {
        stop()
    }

    private mutating func stop() -> [Action] {
        guard deferred else { return [] }
        deferred = false
        return [.cancelLimit]
    }
}
