import Testing

@testable import Location

/// ``UpdateChannel``, the gpsd link's hand-over to its iteration: AsyncStream's `bufferingNewest`
/// behaviour, for one element type.
@Suite(.timeLimit(.minutes(1)))
struct UpdateChannelTests {
    static func update(_ index: Int) -> LocationUpdate {
        LocationUpdate(noFix: index.isMultiple(of: 2) ? .noFix : .deviceUnavailable, device: "receiver-\(index)")
    }

    @Test func updatesWaitInOrderAndTheOldestGoWhenTheBufferIsFull() async {
        let channel = UpdateChannel(capacity: 2)
        #expect(channel.yield(Self.update(0)) == .taken)
        #expect(channel.yield(Self.update(1)) == .taken)
        #expect(channel.yield(Self.update(2)) == .droppedOldest)
        channel.finish()
        #expect(channel.yield(Self.update(3)) == .finished)
        // What waited is still taken after the end, then nil, again and again.
        #expect(await channel.next() == Self.update(1))
        #expect(await channel.next() == Self.update(2))
        #expect(await channel.next() == nil)
        #expect(await channel.next() == nil)
    }

    @Test func aWaitingConsumerIsHandedTheNextUpdate() async {
        let channel = UpdateChannel(capacity: 1)
        let consumer = Task { [channel] in await channel.next() }
        // The consumer may not wait yet: handed over or buffered, it gets the update either way.
        #expect(channel.yield(Self.update(7)) == .taken)
        #expect(await consumer.value == Self.update(7))
    }

    @Test func cancellingTheConsumerEndsTheChannelAndDiscardsWhatWaits() async {
        let channel = UpdateChannel(capacity: 4)
        let waiting = Task { [channel] in await channel.next() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(channel.yield(Self.update(1)) == .finished)
        let buffered = UpdateChannel(capacity: 4)
        buffered.yield(Self.update(1))
        let cancelled = Task { [buffered] in
            withUnsafeCurrentTask { $0?.cancel() }
            return await buffered.next()
        }
        #expect(await cancelled.value == nil)
        #expect(await buffered.next() == nil)
    }
}
