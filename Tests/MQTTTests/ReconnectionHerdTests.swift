import AsyncSupport
import TestSupport
import Testing

@testable import MQTT

/// A fleet that loses its broker at once, as arithmetic on the state machine itself: each tracker
/// runs its own ``MQTTConnectionStateMachine`` with its own seeded draws, its attempts fail until
/// the broker is back `outage` seconds after the loss, and the first attempt after that
/// succeeds. Fault scenario 6 (200 trackers, at most 20 % of them in any one second) and issue 15
/// (a tracker back within seconds of its broker) as figures; docs/broker-connection.md quotes them.
@Suite struct ReconnectionHerdTests {
    /// When each of `size` trackers is back, in seconds after the broker's return.
    static func fleet(
        size: Int, outage: Double, seed: UInt64, backoff: Backoff = Backoff(),
        promptRetry: MQTTPromptRetry = MQTTPromptRetry()
    ) -> [Double] {
        var generator = SeededGenerator(seed: seed)
        let connected = MQTTConnectionStateMachineTests.connected(backoff: backoff, promptRetry: promptRetry)
        return (0..<size).map { _ in
            MQTTConnectionStateMachineTests.reconnection(connected, outage: outage) {
                Double.random(in: 0..<1, using: &generator)
            }
        }
    }

    /// The busiest second's share of 200 trackers in each of 40 seeded fleets, sorted.
    static func shares(outage: Double, backoff: Backoff = Backoff(), promptRetry: MQTTPromptRetry = MQTTPromptRetry())
        -> [Double]
    {
        (1...40).map { seed in
            let times = fleet(size: 200, outage: outage, seed: UInt64(seed), backoff: backoff, promptRetry: promptRetry)
            return Double(ReconnectionSpread.busiestSecond(times)) / 200
        }.sorted()
    }

    /// Scenario 6's promise, with prompt retries: the median fleet puts at most 20 % of itself in
    /// its busiest second, and every tracker of every fleet is back within 10 s of the broker,
    /// after a short outage as after a long one.
    @Test(arguments: [3.0, 5.0, 10.0, 15.0, 30.0, 120.0])
    func twoHundredTrackersAreBackWithinTenSecondsAndSpread(outage: Double) {
        let shares = Self.shares(outage: outage)
        #expect(shares[20] <= 0.2, "busiest second shares: \(shares)")
        print(
            "herd of 200 after a \(Int(outage)) s outage, 40 fleets: busiest second \(Self.format(shares[20] * 100)) % "
                + "(median), \(Self.format(shares[39] * 100)) % (largest)")
        for seed in 1...10 {
            let latest = Self.fleet(size: 200, outage: outage, seed: UInt64(seed)).max() ?? .infinity
            #expect(latest <= 10, "fleet \(seed): the last tracker back \(latest) s after the broker")
        }
    }

    /// Why the phase: full jitter on every wait under the same 10 s ceiling (a backoff whose
    /// maximum is 10 s, no phase) front-loads the fleet, since a wait drawn afresh after each
    /// attempt is more often short than long: the busiest second holds more than 20 %.
    @Test func fullJitterOnEveryWaitUnderTheSameCeilingBunchesTheFleet() {
        let shares = Self.shares(
            outage: 15, backoff: Backoff(maximumDelay: .seconds(10)), promptRetry: MQTTPromptRetry(window: .zero))
        #expect(shares[20] > 0.2, "busiest second shares: \(shares)")
        print(
            "herd of 200 after a 15 s outage, full jitter under a 10 s ceiling: busiest second "
                + "\(Self.format(shares[20] * 100)) % (median), \(Self.format(shares[39] * 100)) % (largest)")
    }

    /// The backoff alone (the former policy) bunched a fleet after a short outage: its waits had
    /// grown only to a few seconds, and their sums bunch.
    @Test func theBackoffAloneBunchedTheFleetAfterAShortOutage() {
        let shares = Self.shares(outage: 5, promptRetry: MQTTPromptRetry(window: .zero))
        #expect(shares[20] > 0.2, "busiest second shares: \(shares)")
        print(
            "herd of 200 after a 5 s outage, the backoff alone: busiest second \(Self.format(shares[20] * 100)) % "
                + "(median), \(Self.format(shares[39] * 100)) % (largest)")
    }

    /// The herd at the scale the docs speak of: 10,000 trackers.
    @Test(arguments: [5.0, 15.0, 30.0])
    func tenThousandTrackersComeBackSpreadOverTenSeconds(outage: Double) {
        let now = Self.fleet(size: 10_000, outage: outage, seed: 1)
        let former = Self.fleet(size: 10_000, outage: outage, seed: 1, promptRetry: MQTTPromptRetry(window: .zero))
        let busiest = ReconnectionSpread.busiestSecond(now)
        #expect(busiest <= 1_150, "busiest second: \(busiest) of 10,000")
        #expect((now.max() ?? .infinity) <= 10)
        print(
            "herd of 10,000 after a \(Int(outage)) s outage: busiest second \(busiest) (former "
                + "\(ReconnectionSpread.busiestSecond(former))), mean back \(Self.format(Self.mean(now))) s (former "
                + "\(Self.format(Self.mean(former))) s), last \(Self.format(now.max() ?? 0)) s (former "
                + "\(Self.format(former.max() ?? 0)) s)")
    }

    /// What the prompt retries cost while the broker is away: attempts per tracker per second,
    /// averaged from 60 s to 300 s into a long outage (10,000 trackers make 10,000 times as many).
    @Test func promptRetriesCostOneAttemptPerTrackerEveryTenSeconds() {
        let prompt = Self.attemptsPerSecond(MQTTPromptRetry())
        let former = Self.attemptsPerSecond(MQTTPromptRetry(window: .zero))
        #expect(abs(prompt - 0.1) < 0.005, "\(prompt) attempts a second")
        print(
            "attempts per tracker per second during an outage, 60-300 s: \(Self.format(prompt, digits: 3)) "
                + "(former \(Self.format(former, digits: 3)))")
    }

    static func attemptsPerSecond(_ promptRetry: MQTTPromptRetry) -> Double {
        var generator = SeededGenerator(seed: 7)
        var attempts = 0
        for _ in 0..<1_000 {
            var machine = MQTTConnectionStateMachineTests.connected(promptRetry: promptRetry)
            var now = Duration.zero
            var action = machine.connectionEnded(
                MQTTConnectionStateMachineTests.reset, now: now, random: .random(in: 0..<1, using: &generator))
            while let delay = action.delay, now < .seconds(300) {
                now += delay
                _ = machine.waitEnded()
                if now >= .seconds(60), now < .seconds(300) { attempts += 1 }
                action = machine.connectionEnded(
                    MQTTConnectionStateMachineTests.refused, now: now, random: .random(in: 0..<1, using: &generator))
            }
        }
        return Double(attempts) / 1_000 / 240
    }

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func format(_ value: Double, digits: Int = 1) -> String {
        let scale = Double((0..<digits).reduce(1) { value, _ in value * 10 })
        return "\((value * scale).rounded() / scale)"
    }
}
