import AsyncSupport
import Testing

/// ``HandOff``: AsyncStream's `bufferingNewest` behaviour for one waiting task, and the two ways
/// a cancelled wait ends.
@Suite(.timeLimit(.minutes(1)))
struct HandOffTests {
    @Test func valuesWaitInOrderAndTheOldestGoWhenTheBufferIsFull() async {
        let handOff = HandOff<Int>(capacity: 2, cancellation: .finishes)
        #expect(handOff.isEmpty)
        #expect(handOff.yield(0) == .taken)
        #expect(handOff.yield(1) == .taken)
        #expect(handOff.yield(2) == .droppedOldest)
        #expect(!handOff.isEmpty)
        handOff.finish()
        #expect(handOff.yield(3) == .finished)
        // What waited is still taken after the end, then nil, again and again.
        #expect(await handOff.next() == 1)
        #expect(await handOff.next() == 2)
        #expect(await handOff.next() == nil)
        #expect(await handOff.next() == nil)
    }

    @Test func aWaitingTaskIsHandedTheNextValue() async {
        let handOff = HandOff<Int>(capacity: 1, cancellation: .finishes)
        let consumer = Task { await handOff.next() }
        // The consumer may not wait yet: handed over or buffered, it gets the value either way.
        #expect(handOff.yield(7) == .taken)
        #expect(await consumer.value == 7)
    }

    @Test func cancellingTheConsumerFinishesTheHandOffAndDiscardsWhatWaits() async {
        let handOff = HandOff<Int>(capacity: 4, cancellation: .finishes)
        let waiting = Task { await handOff.next() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(handOff.yield(1) == .finished)
        let buffered = HandOff<Int>(capacity: 4, cancellation: .finishes)
        buffered.yield(1)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await buffered.next()
        }
        #expect(await cancelled.value == nil)
        #expect(await buffered.next() == nil)
    }

    @Test func cancellingAWaitThatEndsAloneKeepsWhatWaitsForTheNext() async {
        let handOff = HandOff<Int>(capacity: 2, cancellation: .endsTheWait)
        let waiting = Task { await handOff.next() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(handOff.yield(1) == .taken)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await handOff.next()
        }
        #expect(await cancelledFirst.value == nil)
        #expect(await handOff.next() == 1)
    }
}

@Suite("Doorbell", .timeLimit(.minutes(1)))
struct DoorbellTests {
    @Test func ringsBeforeAWaitCountAsOneAndAWaitingTaskIsWoken() async {
        let bell = Doorbell()
        bell.ring()
        bell.ring()
        #expect(await bell.wait())
        // The two rings were one: the next wait waits for the ring below.
        #expect(bell.isEmpty)
        let waiting = Task { await bell.wait() }
        bell.ring()
        #expect(await waiting.value)
    }

    @Test func aCancelledWaitReturnsFalseBeforeOrWhileItWaits() async {
        let bell = Doorbell()
        let waiting = Task { await bell.wait() }
        waiting.cancel()
        #expect(await waiting.value == false)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await bell.wait()
        }
        #expect(await cancelledFirst.value == false)
        // The bell still works for the next waiter.
        bell.ring()
        #expect(await bell.wait())
    }
}
