import AgentCore
import Foundation
import LiveActivity
import Location
import Testing
import TestSupport

@testable import MyelineAgentKit

@Suite(.timeLimit(.minutes(1)))
struct AgentInboxTests {
    static func update(_ seconds: Double) -> AgentCore.Event {
        .location(LocationUpdate(noFix: .noFix, time: Date(timeIntervalSince1970: seconds)))
    }

    static func times(_ batch: [AgentCore.Event]?) -> [Double] {
        (batch ?? []).compactMap { event in
            if case .location(let update) = event { update.time?.timeIntervalSince1970 } else { nil }
        }
    }

    @Test func everythingWaitingComesAsOneBatchInOrder() async {
        let inbox = AgentInbox(capacity: 10)
        for second in 1...3 { await inbox.send(Self.update(Double(second))) }
        inbox.post(.tick)
        let batch = await inbox.next()
        #expect(Self.times(batch) == [1, 2, 3])
        #expect(batch?.count == 4)
        inbox.finish()
        #expect(await inbox.next() == nil)
    }

    @Test func aWaitingConsumerGetsTheFirstEvent() async {
        let inbox = AgentInbox(capacity: 10)
        async let batch = inbox.next()
        inbox.post(.sourceEnded(failure: nil))
        let received = await batch
        #expect(received == [.sourceEnded(failure: nil)])
    }

    @Test func aFullInboxHoldsSendersBackUntilTheLoopTakesABatch() async {
        let inbox = AgentInbox(capacity: 2)
        await inbox.send(Self.update(1))
        await inbox.send(Self.update(2))
        let sender = Task { await inbox.send(Self.update(3)) }
        // The third send waits: only the first two are there, whenever the loop looks.
        #expect(Self.times(await inbox.next()) == [1, 2])
        await sender.value
        #expect(Self.times(await inbox.next()) == [3])
    }

    @Test func finishingDeliversWhatWaitsThenEndsAndReleasesSenders() async {
        let inbox = AgentInbox(capacity: 1)
        await inbox.send(Self.update(1))
        let sender = Task { await inbox.send(Self.update(2)) }
        inbox.finish()
        await sender.value
        inbox.post(.tick)
        #expect(Self.times(await inbox.next()) == [1])
        #expect(await inbox.next() == nil)
    }

    @Test func cancellingTheConsumerReturnsAnEmptyBatchAndTheInboxGoesOn() async {
        let inbox = AgentInbox()
        let consumer = Task { await inbox.next() }
        consumer.cancel()
        #expect(await consumer.value == [])
        inbox.post(.tick)
        #expect(await inbox.next() == [.tick])
    }

    @Test func theDeadlineEndsTheWaitWithAnEmptyBatch() async throws {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        try await inbox.withAlarm(clock: clock) {
            let deadline = clock.now.addingTimeInterval(3)
            async let consumer = inbox.next(until: deadline, clock: clock)
            try await clock.waitForSleeper(until: deadline)
            clock.advance(by: 3)
            #expect(await consumer == [])
            // Nothing was lost to the wait.
            inbox.post(.tick)
            #expect(await inbox.next(until: clock.now.addingTimeInterval(3), clock: clock) == [.tick])
        }
    }

    @Test func anEventBeforeTheDeadlineEndsTheWait() async throws {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        try await inbox.withAlarm(clock: clock) {
            let deadline = clock.now.addingTimeInterval(3)
            async let consumer = inbox.next(until: deadline, clock: clock)
            try await clock.waitForSleeper(until: deadline)
            inbox.post(.shutdown)
            #expect(await consumer == [.shutdown])
        }
    }

    @Test func aPastDeadlineReturnsWhatWaitsAtOnce() async {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        #expect(await inbox.next(until: clock.now.addingTimeInterval(-1), clock: clock) == [])
        inbox.post(.tick)
        #expect(await inbox.next(until: clock.now, clock: clock) == [.tick])
    }

    @Test func aFarDeadlineIsJudgedAgainstTheClockAtLeastEveryTenSeconds() async throws {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        try await inbox.withAlarm(clock: clock) {
            async let consumer = inbox.next(until: clock.now.addingTimeInterval(3600), clock: clock)
            // The clock may have been stepped meanwhile: the wait wakes at the longest wait, empty.
            try await clock.waitForSleeper(until: clock.now.addingTimeInterval(AgentInbox.longestWait))
            clock.advance(by: AgentInbox.longestWait)
            #expect(await consumer == [])
        }
    }

    /// One alarm for every wait: a wait for a later deadline leaves it asleep until its own time
    /// (no timer armed per fix), and when it wakes it sleeps on until the waiting deadline.
    @Test func aLaterDeadlineLeavesTheAlarmAsleepUntilItsTime() async throws {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        let start = clock.now
        try await inbox.withAlarm(clock: clock) {
            async let first = inbox.next(until: start.addingTimeInterval(3), clock: clock)
            try await clock.waitForSleeper(until: start.addingTimeInterval(3))
            inbox.post(.tick)
            #expect(await first == [.tick])
            clock.advance(by: 1)
            async let second = inbox.next(until: start.addingTimeInterval(5), clock: clock)
            // The alarm still sleeps until 3 s; at 3 s the wait for 5 s goes on, the alarm sleeps until 5 s.
            clock.advance(by: 2)
            try await clock.waitForSleeper(until: start.addingTimeInterval(5))
            clock.advance(by: 2)
            #expect(await second == [])
        }
    }

    @Test func anEarlierDeadlineWakesTheAlarmBeforeItsTime() async throws {
        let clock = ManualWallClock()
        let inbox = AgentInbox()
        let start = clock.now
        try await inbox.withAlarm(clock: clock) {
            async let first = inbox.next(until: start.addingTimeInterval(8), clock: clock)
            try await clock.waitForSleeper(until: start.addingTimeInterval(8))
            inbox.post(.tick)
            #expect(await first == [.tick])
            async let second = inbox.next(until: start.addingTimeInterval(2), clock: clock)
            try await clock.waitForSleeper(until: start.addingTimeInterval(2))
            clock.advance(by: 2)
            #expect(await second == [])
        }
    }
}
