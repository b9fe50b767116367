import MQTT
import Testing

struct ReconnectBackoffTests {
    @Test(arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (8, 60.0), (1_000, 60.0)])
    func nominalDelayDoublesFromOneSecondToSixty(failures: Int, seconds: Double) {
        #expect(ReconnectBackoff().nominalDelay(afterFailures: failures) == .seconds(seconds))
    }

    @Test(arguments: [(0.0, 1.0), (0.5, 0.5), (0.75, 0.25), (0.999_999, 0.000_001)])
    func fullJitterDrawsEachDelayFromZeroToTheNominalOne(unitRandom: Double, factor: Double) {
        let delay = ReconnectBackoff().delay(afterFailures: 3, unitRandom: unitRandom)
        #expect(abs(delay / .seconds(4) - factor) < 1e-5)
        #expect(delay > .zero)
    }

    @Test(arguments: [(0.0, 1.0), (0.999_999, 0.75)])
    func partialJitterKeepsTheRestOfTheNominalDelay(unitRandom: Double, factor: Double) {
        let delay = ReconnectBackoff(jitter: 0.25).delay(afterFailures: 7, unitRandom: unitRandom)
        #expect(abs(delay / .seconds(60) - factor) < 1e-5)
    }

    /// Issue 8, scenario 6, as arithmetic: 200 trackers lose the broker at once and each retries on
    /// its own backoff; the broker is back after `outage` seconds. The fleet's reconnections (the
    /// first attempt of each tracker after the outage) must not put more than 20 % of it in any one
    /// second. Twenty fleets from fixed seeds; the median fleet is judged, and the worst reported.
    @Test(arguments: [10.0, 15.0, 30.0])
    func fullJitterSpreadsTheReconnectionsAfterAnOutage(outage: Double) {
        let shares = (1...20).map { seed in
            Self.busiestSecondShare(ReconnectBackoff(), outage: outage, seed: UInt64(seed))
        }.sorted()
        #expect(shares[10] <= 0.2, "busiest second shares: \(shares)")
        // The cap holds: nobody waits more than 60 s after the broker is back.
        var generator = SplitMix64(seed: 99)
        let latest = (0..<200).map { _ in Self.reconnection(ReconnectBackoff(), outage: outage, using: &generator) }
            .max()!
        #expect(latest - outage <= 60)
    }

    @Test func equalJitterBunchesTheFleet() {
        // Waits drawn from half to all of the nominal one (like the former ±25 % around it) add up
        // to a bell: after a 10 s outage about 30 % of the fleet comes back in the same second.
        let equal = ReconnectBackoff(jitter: 0.5)
        let shares = (1...20).map { Self.busiestSecondShare(equal, outage: 10, seed: UInt64($0)) }.sorted()
        #expect(shares[10] > 0.2, "busiest second shares: \(shares)")
    }

    /// When a tracker that lost the broker at time 0 reconnects to a broker back at `outage` s.
    static func reconnection(
        _ backoff: ReconnectBackoff, outage: Double, using generator: inout some RandomNumberGenerator
    ) -> Double {
        var time = 0.0
        var failures = 1
        while true {
            time += backoff.delay(afterFailures: failures, using: &generator) / .seconds(1)
            if time >= outage { return time }
            failures += 1
        }
    }

    /// The largest share of 200 trackers whose reconnections fall within one second (sliding window).
    static func busiestSecondShare(_ backoff: ReconnectBackoff, outage: Double, seed: UInt64) -> Double {
        var generator = SplitMix64(seed: seed)
        let times = (0..<200).map { _ in reconnection(backoff, outage: outage, using: &generator) }.sorted()
        var busiest = 0
        var first = 0
        for last in times.indices {
            while times[last] - times[first] >= 1 { first += 1 }
            busiest = max(busiest, last - first + 1)
        }
        return Double(busiest) / Double(times.count)
    }
}

/// A small seeded generator, so that the spread test is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
