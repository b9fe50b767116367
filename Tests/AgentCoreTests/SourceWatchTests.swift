import AgentCore
import Foundation
import Testing

@Suite("SourceWatch and ReplayTimeline")
struct SourceWatchTests {
    static let start: TimeInterval = 1_000

    /// Update times (seconds after the start) and the deadline after the last.
    @Test(
        arguments: [
            (timeout: AgentCoreSettings.SilenceTimeout.default, updates: [1.0, 2, 3, 4], deadline: 10.0 as Double?),
            (.default, [10, 20, 30], 45),
            // A long pause is not cadence: it does not stretch the timeout.
            (.default, [1, 2, 200, 201], 207),
            // Before two updates the cadence counts as 1 s.
            (.default, [], 6),
            (.fixed(30), [1, 2, 3], 33),
            (.off, [1, 2, 3], nil),
        ] as [(AgentCoreSettings.SilenceTimeout, [Double], Double?)])
    func deadline(timeout: AgentCoreSettings.SilenceTimeout, updates: [Double], deadline: Double?) {
        var watch = SourceWatch(timeout: timeout, now: Self.start)
        for second in updates { _ = watch.updated(at: Self.start + second) }
        #expect(watch.deadline == deadline.map { Self.start + $0 })
    }

    @Test func silenceIsReportedOnceAndEndsWithTheNextUpdate() {
        var watch = SourceWatch(timeout: .fixed(5), now: Self.start)
        let early = watch.tick(now: Self.start + 4.9)
        let due = watch.tick(now: Self.start + 5)
        let again = watch.tick(now: Self.start + 50)
        #expect(!early && due && !again)
        #expect(watch.deadline == nil)
        let ended = watch.updated(at: Self.start + 60)
        #expect(ended)
        #expect(watch.deadline == Self.start + 65)
    }

    @Test func aRestartDoesNotCountTheGapAsCadence() {
        var watch = SourceWatch(timeout: .default, now: Self.start)
        _ = watch.updated(at: Self.start + 1)
        _ = watch.updated(at: Self.start + 2)
        watch.restart(at: Self.start + 40)
        _ = watch.updated(at: Self.start + 41)
        #expect(watch.cadence == 1)
    }

    @Test func lapsFollowEachOtherOnOneTimeline() {
        var timeline = ReplayTimeline()
        let first = Date(timeIntervalSince1970: 500)
        let lap1 = [timeline.map(first), timeline.map(first + 99)]
        timeline.lapStarted()
        let lap2 = [timeline.map(first), timeline.map(first + 10)]
        #expect(lap1 == [first, first + 99])
        // The next lap's first time follows the last by the lap gap, and the lap keeps its spacing.
        #expect(lap2 == [first + 100, first + 110])
    }
}
