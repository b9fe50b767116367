import AsyncSupport
import TestSupport
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test(arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (8, 60.0), (1_000, 60.0)])
    func nominalDelayDoublesFromOneSecondToSixty(failures: Int, seconds: Double) {
        #expect(Backoff().nominalDelay(afterFailures: failures) == .seconds(seconds))
    }

    @Test(arguments: [(0.0, 1.0), (0.5, 0.5), (0.75, 0.25), (0.999_999, 0.000_001)])
    func fullJitterDrawsEachDelayFromZeroToTheNominalOne(unitRandom: Double, factor: Double) {
        let delay = Backoff().delay(afterFailures: 3, unitRandom: unitRandom)
        #expect(abs(delay / .seconds(4) - factor) < 1e-5)
        #expect(delay > .zero)
    }

    @Test(arguments: [(0.0, 1.0), (0.999_999, 0.75)])
    func partialJitterKeepsTheRestOfTheNominalDelay(unitRandom: Double, factor: Double) {
        let delay = Backoff(jitter: 0.25).delay(afterFailures: 7, unitRandom: unitRandom)
        #expect(abs(delay / .seconds(60) - factor) < 1e-5)
    }

    /// Issue 8, scenario 6, as arithmetic for the backoff alone (the MQTT client's prompt retries
    /// are modelled in MQTTConnectionStateMachineTests): 200 trackers lose the broker at once and
    /// each retries on its own backoff; the broker is back after `outage` seconds. The fleet's reconnections (the
    /// first attempt of each tracker after the outage) must not put more than 20 % of it in any one
    /// second. Twenty fleets from fixed seeds; the median fleet is judged, and the worst reported.
    @Test(arguments: [10.0, 15.0, 30.0])
    func fullJitterSpreadsTheReconnectionsAfterAnOutage(outage: Double) {
        let shares = (1...20).map { seed in
            Self.busiestSecondShare(Backoff(), outage: outage, seed: UInt64(seed))
        }.sorted()
        #expect(shares[10] <= 0.2, "busiest second shares: \(shares)")
        // The cap holds: nobody waits more than 60 s after the broker is back.
        var generator = SeededGenerator(seed: 99)
        let latest = (0..<200).map { _ in Self.reconnection(Backoff(), outage: outage, using: &generator) }
            .max()!
        #expect(latest - outage <= 60)
    }

    @Test func invalidValuesAreNamed() {
        #expect(Backoff().problem == nil)
        #expect(
            Backoff(initialDelay: .seconds(10), maximumDelay: .seconds(1)).problem?.contains(
                "the first must be positive and not above the maximum") == true)
        #expect(Backoff(initialDelay: .zero).problem != nil)
        #expect(Backoff(multiplier: 0.5).problem == "multiplier 0.5: use 1 or more")
        #expect(Backoff(multiplier: .infinity).problem != nil)
        #expect(Backoff(jitter: 2).problem == "jitter 2.0: use a fraction from 0 to 1")
    }

    @Test func equalJitterBunchesTheFleet() {
        // Waits drawn from half to all of the nominal one (like the former ±25 % around it) add up
        // to a bell: after a 10 s outage about 30 % of the fleet comes back in the same second.
        let equal = Backoff(jitter: 0.5)
        let shares = (1...20).map { Self.busiestSecondShare(equal, outage: 10, seed: UInt64($0)) }.sorted()
        #expect(shares[10] > 0.2, "busiest second shares: \(shares)")
    }

    /// When a tracker that lost the broker at time 0 reconnects to a broker back at `outage` s.
    static func reconnection(
        _ backoff: Backoff, outage: Double, using generator: inout some RandomNumberGenerator
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
    static func busiestSecondShare(_ backoff: Backoff, outage: Double, seed: UInt64) -> Double {
        var generator = SeededGenerator(seed: seed)
        let times = (0..<200).map { _ in reconnection(backoff, outage: outage, using: &generator) }
        let busiest = ReconnectionSpread.busiestSecond(times)
        return Double(busiest) / Double(times.count)
    }
}
