/// How fast a file is replayed.
public enum ReplayPacing: Hashable, Sendable {
    /// At the pace it was recorded, from the fix times.
    case recorded
    /// At `factor` times the recorded pace (2 = twice as fast); must be positive.
    case scaled(Double)
    /// As fast as the consumer takes the updates, without waiting.
    case asFastAsPossible

    /// The speed factor, `nil` for as fast as possible.
    var factor: Double? {
        switch self {
        case .recorded: 1
        case .scaled(let factor): factor
        case .asFastAsPossible: nil
        }
    }
}

/// When each replayed update is due, as an offset from the start of the replay: a pure state machine.
///
/// The first update is due at once; each later one when its recorded time, less the first one's,
/// divided by the speed factor, has passed. A time going backwards does not wait (the replay goes
/// on from there); an update without a time is due at once.
struct ReplayPacer {
    let pacing: ReplayPacing
    private var anchor: (time: Double, offset: Double)?
    private var lastTime: Double?
    private var lastOffset = 0.0
    private var lapGap = 0.0

    init(pacing: ReplayPacing) {
        self.pacing = pacing
    }

    /// The offset from the replay's start at which an update with this time (seconds since 1970)
    /// is due; `nil` means at once.
    mutating func offset(forTime time: Double?) -> Duration? {
        guard let factor = pacing.factor, let time else { return nil }
        let offset: Double
        if let anchor, let lastTime, time >= lastTime {
            offset = anchor.offset + (time - anchor.time) / factor
        } else {
            // The first update, a new lap, or time going backwards: carry on from where we are.
            offset = lastOffset + lapGap / factor
            anchor = (time, offset)
            lapGap = 0
        }
        lastTime = time
        lastOffset = offset
        return .nanoseconds(Int64((offset * 1e9).rounded()))
    }

    /// Starts a new lap of a looped file: its first update is due `gap` seconds (recorded time)
    /// after the last update of the previous lap.
    mutating func startLap(gap: Double) {
        anchor = nil
        lastTime = nil
        lapGap = gap
    }
}
