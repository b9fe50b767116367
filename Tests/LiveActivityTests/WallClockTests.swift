import Foundation
import LiveActivity
import TestSupport
import Testing

@Suite("Wall clocks", .timeLimit(.minutes(1)))
struct WallClockTests {
    @Test("the manual clock resumes exactly the sleepers whose deadline has passed")
    func manualClockResumesDueSleepers() async throws {
        let clock = ManualWallClock(now: Fixtures.t0)
        let soon = Fixtures.t0.addingTimeInterval(10)
        let later = Fixtures.t0.addingTimeInterval(20)
        let first = Task { try await clock.sleep(until: soon) }
        let second = Task { try await clock.sleep(until: later) }
        try await clock.waitForSleeper(until: soon)
        try await clock.waitForSleeper(until: later)

        clock.advance(by: 10)
        #expect(clock.sleeperDeadlines == [later])
        try await first.value
        clock.set(to: Fixtures.t0)
        #expect(clock.sleeperDeadlines == [later], "setting the clock back resumes nobody")
        clock.set(to: later.addingTimeInterval(1))
        try await second.value
        #expect(clock.now == later.addingTimeInterval(1))
    }

    @Test("a deadline that has passed returns at once")
    func pastDeadline() async throws {
        let clock = ManualWallClock(now: Fixtures.t0)
        try await clock.sleep(until: Fixtures.t0)
        try await SystemWallClock().sleep(until: Date().addingTimeInterval(-1))
        #expect(clock.sleeperDeadlines.isEmpty)
    }

    @Test("the system clock sleeps through the sleep it is given, in slices of at most its longest sleep")
    func givenSleep() async throws {
        actor Slices {
            var all: [Duration] = []
            func add(_ slice: Duration) -> Int {
                all.append(slice)
                return all.count
            }
        }
        let slices = Slices()
        // The third slice ends the sleep as a cancellation would: the sleep throws what it threw.
        let clock = SystemWallClock(longestSleep: .milliseconds(20)) { slice in
            if await slices.add(slice) == 3 { throw CancellationError() }
        }
        await #expect(throws: CancellationError.self) {
            try await clock.sleep(until: clock.now.addingTimeInterval(3600))
        }
        #expect(await slices.all == [.milliseconds(20), .milliseconds(20), .milliseconds(20)])
    }

    @Test("cancelled sleepers throw CancellationError and are forgotten")
    func cancellation() async throws {
        let clock = ManualWallClock(now: Fixtures.t0)
        let deadline = Fixtures.t0.addingTimeInterval(60)
        let manual = Task { try await clock.sleep(until: deadline) }
        let system = Task { try await SystemWallClock().sleep(until: .distantFuture) }
        try await clock.waitForSleeper(until: deadline)

        manual.cancel()
        system.cancel()

        await #expect(throws: CancellationError.self) { try await manual.value }
        await #expect(throws: CancellationError.self) { try await system.value }
        #expect(clock.sleeperDeadlines.isEmpty)
    }
}
