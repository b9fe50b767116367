import Foundation
import LiveActivity
import Location
import Testing

@testable import MyelineAgentKit

/// The control loop's inbox: batches, back-pressure on location updates, and its end.
@Suite(.timeLimit(.minutes(1)))
struct InputQueueTests {
    static func update(_ seconds: Double) -> AgentInput {
        .location(LocationUpdate(noFix: .noFix, time: Date(timeIntervalSince1970: seconds)))
    }

    static func times(_ batch: [AgentInput]?) -> [Double] {
        (batch ?? []).compactMap { input in
            if case .location(let update) = input { update.time?.timeIntervalSince1970 } else { nil }
        }
    }

    @Test func everythingWaitingComesAsOneBatchInOrder() async {
        let queue = InputQueue(capacity: 10)
        for second in 1...3 { await queue.send(Self.update(Double(second))) }
        queue.post(.tick)
        let batch = await queue.next()
        #expect(Self.times(batch) == [1, 2, 3])
        #expect(batch?.count == 4)
        queue.finish()
        #expect(await queue.next() == nil)
    }

    @Test func aWaitingConsumerGetsTheFirstInput() async {
        let queue = InputQueue(capacity: 10)
        async let batch = queue.next()
        queue.post(.sourceEnded)
        let received = await batch
        #expect(received?.count == 1)
    }

    @Test func aFullQueueHoldsSendersBackUntilTheLoopTakesABatch() async {
        let queue = InputQueue(capacity: 2)
        await queue.send(Self.update(1))
        await queue.send(Self.update(2))
        let sender = Task { await queue.send(Self.update(3)) }
        // The third send waits: only the first two are there, whenever the loop looks.
        #expect(Self.times(await queue.next()) == [1, 2])
        await sender.value
        #expect(Self.times(await queue.next()) == [3])
    }

    @Test func finishingDeliversWhatWaitsThenEndsAndReleasesSenders() async {
        let queue = InputQueue(capacity: 1)
        await queue.send(Self.update(1))
        let sender = Task { await queue.send(Self.update(2)) }
        queue.finish()
        await sender.value
        queue.post(.tick)
        #expect(Self.times(await queue.next()) == [1])
        #expect(await queue.next() == nil)
    }

    @Test func cancellingTheConsumerFinishesTheQueue() async {
        let queue = InputQueue()
        let consumer = Task { await queue.next() }
        consumer.cancel()
        #expect(await consumer.value == nil)
        queue.post(.tick)
        #expect(await queue.next() == nil)
    }
}
