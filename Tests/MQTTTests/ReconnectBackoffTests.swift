import MQTT
import Testing

struct ReconnectBackoffTests {
    @Test(arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (8, 60.0), (1_000, 60.0)])
    func nominalDelayDoublesFromOneSecondToSixty(failures: Int, seconds: Double) {
        #expect(ReconnectBackoff().nominalDelay(afterFailures: failures) == .seconds(seconds))
    }

    @Test(arguments: [(0.0, 0.75), (0.5, 1.0), (0.999_999, 1.25)])
    func jitterSpreadsEachDelayByAQuarter(unitRandom: Double, factor: Double) {
        let backoff = ReconnectBackoff()
        let delay = backoff.delay(afterFailures: 3, unitRandom: unitRandom)
        #expect(abs(delay / .seconds(4) - factor) < 1e-5)
    }

    @Test func aThousandTrackersDoNotComeBackInTheSameSecond() {
        // After a broker restart every tracker is at its first failure: with ±25 % jitter around 1 s,
        // the first retries spread over 0.75 s to 1.25 s instead of landing together.
        var generator = SplitMix64(seed: 2_947)
        let backoff = ReconnectBackoff()
        let delays = (0..<1_000).map { _ in backoff.delay(afterFailures: 1, using: &generator) / .milliseconds(1) }
        var perTenMilliseconds: [Int: Int] = [:]
        for delay in delays { perTenMilliseconds[Int(delay / 10), default: 0] += 1 }
        #expect(delays.allSatisfy { (750...1_250).contains($0) })
        #expect(delays.max()! - delays.min()! > 450)
        // Uniform jitter puts about 20 per 10 ms slot; no slot should hold a crowd.
        #expect(perTenMilliseconds.values.max()! < 60)
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
