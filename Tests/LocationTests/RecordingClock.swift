import Locking

/// A clock for pacing tests that never sleeps: `sleep(until:)` records the deadline and moves the
/// clock to it at once, so a replay at recorded pace runs instantly and the test reads when each
/// update was due.
final class RecordingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Locked<(now: Instant, deadlines: [Duration])>((Instant(offset: .zero), []))

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Every deadline slept until, as offsets from the clock's start, in order.
    var deadlines: [Duration] { state.withLock { $0.deadlines } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.deadlines.append(deadline.offset)
            if state.now < deadline { state.now = deadline }
        }
    }
}

extension Duration {
    /// This duration in seconds, for comparisons in tests.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
