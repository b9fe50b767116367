/// Exponential backoff with jitter: the waits between attempts at something that keeps failing
/// (connecting to a broker, reaching a server).
///
/// The n-th consecutive failure has a nominal wait of `min(initialDelay × multiplierⁿ⁻¹, maximumDelay)`;
/// the actual wait is drawn uniformly between `(1 − jitter) ×` and `1 ×` that nominal wait. The
/// default, `jitter` 1, is "full jitter": anywhere from 0 to the nominal wait. Many clients cut off
/// by the same failure then come back spread over the whole nominal wait rather than bunched
/// around it: modelled, 200 clients after a 10 s outage put about 30 % of themselves in one
/// second with waits of 75 % to 125 % of the nominal one, about 16 % with full jitter
/// (docs/reliability.md, fault scenario 6). A success resets the count; that is the caller's to do.
public struct Backoff: Hashable, Sendable {
    /// The wait after the first failure, before jitter.
    public var initialDelay: Duration
    /// The longest wait, before jitter.
    public var maximumDelay: Duration
    /// How much each further failure multiplies the wait.
    public var multiplier: Double
    /// The random part of each wait, 0 to 1: 0.25 means each wait is 75 % to 100 % of the nominal
    /// one; 1 (full jitter), anywhere from 0 to 100 %.
    public var jitter: Double

    /// Creates a backoff; the defaults double from 1 s to 60 s with full jitter.
    public init(
        initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60), multiplier: Double = 2,
        jitter: Double = 1
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The nominal wait after `failures` consecutive failures (1 or more), before jitter.
    public func nominalDelay(afterFailures failures: Int) -> Duration {
        let maximum = maximumDelay.inSeconds
        var delay = initialDelay.inSeconds
        var step = 1
        while step < failures, delay < maximum {
            delay *= multiplier
            step += 1
        }
        return .seconds(min(delay, maximum))
    }

    /// The wait after `failures` consecutive failures, with `unitRandom` (0 ..< 1) choosing the
    /// jitter: 0 gives the nominal wait, values towards 1 shorter ones (never 0).
    public func delay(afterFailures failures: Int, unitRandom: Double) -> Duration {
        let factor = 1 - jitter * unitRandom
        return .seconds(nominalDelay(afterFailures: failures).inSeconds * factor)
    }

    /// The wait after `failures` consecutive failures, with jitter from `generator`.
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        delay(afterFailures: failures, unitRandom: Double.random(in: 0..<1, using: &generator))
    }

    /// What is wrong with these values, naming them and the fix, for the caller to put in its own
    /// error (after the name of what backs off); nil when they are valid.
    public var problem: String? {
        guard initialDelay > .zero, maximumDelay >= initialDelay else {
            return "delays \(initialDelay) to \(maximumDelay): the first must be positive and not above the maximum"
        }
        guard multiplier >= 1, multiplier.isFinite else {
            return "multiplier \(multiplier): use 1 or more"
        }
        guard (0...1).contains(jitter) else {
            return "jitter \(jitter): use a fraction from 0 to 1"
        }
        return nil
    }
}
