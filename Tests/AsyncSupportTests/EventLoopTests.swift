import AsyncSupport
import Glibc
import Locking
import Testing

@Suite("EventLoop", .timeLimit(.minutes(1)))
struct EventLoopTests {
    struct Refused: Error, Equatable {}

    /// A non-blocking pipe, closed by the caller.
    static func pipePair() -> (read: Int32, write: Int32) {
        var pair: [Int32] = [-1, -1]
        #expect(pipe(&pair) == 0)
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return (pair[0], pair[1])
    }

    static func send(_ descriptor: Int32) {
        var byte: UInt8 = 7
        #expect(write(descriptor, &byte, 1) == 1)
    }

    /// Reads what the pipe holds; how many bytes.
    static func drain(_ descriptor: Int32) -> Int {
        var buffer = [UInt8](repeating: 0, count: 64)
        return max(0, read(descriptor, &buffer, buffer.count))
    }

    @Test func workRunsInTheOrderItWasHandedOverAndReturnsItsResults() async throws {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let log = Locked<[Int]>([])
        for index in 0..<20 { loop.execute { log.withLock { $0.append(index) } } }
        let value = await loop.run { () -> Int in
            log.withLock { $0.append(20) }
            return loop.isCurrent ? 42 : -1
        }
        #expect(value == 42)
        #expect(log.withLock { $0 } == Array(0...20))
        await #expect(throws: Refused()) {
            try await loop.run { () throws(Refused) -> Int in throw Refused() }
        }
        #expect(!loop.isCurrent)
    }

    @Test func aTaskThatPrefersTheLoopRunsOnItsThread() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let other = BlockingExecutor(name: "test-other")
        let seen = await withTaskExecutorPreference(loop) { () -> [Bool] in
            let own = loop.isCurrent
            let inline = await loop.run { loop.isCurrent }
            let elsewhere = await other.run { loop.isCurrent }
            return [own, inline, !elsewhere, loop.isCurrent]
        }
        #expect(seen == [true, true, true, true])
    }

    @Test func aWatchedDescriptorCallsItsHandlerOnTheLoopUntilUnwatched() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let first = Self.pipePair()
        let second = Self.pipePair()
        defer { for descriptor in [first.read, first.write, second.read, second.write] { close(descriptor) } }
        let calls = Locked<[String]>([])
        let (events, continuation) = AsyncStream<String>.makeStream()
        let firstWatch = await loop.run {
            loop.watch(first.read, events: Int16(POLLIN)) { revents in
                let bytes = Self.drain(first.read)
                calls.withLock { $0.append("first \(bytes) \(revents & Int16(POLLIN) != 0) \(loop.isCurrent)") }
                continuation.yield("first")
            }
        }
        _ = await loop.run {
            loop.watch(second.read, events: Int16(POLLIN)) { _ in
                _ = Self.drain(second.read)
                calls.withLock { $0.append("second") }
                continuation.yield("second")
            }
        }
        var iterator = events.makeAsyncIterator()
        // A byte from this thread wakes the sleeping loop through the descriptor alone.
        Self.send(first.write)
        #expect(await iterator.next() == "first")
        await loop.run { loop.unwatch(firstWatch) }
        // Both ready in the same turn: only the watched one's handler runs.
        Self.send(first.write)
        Self.send(second.write)
        #expect(await iterator.next() == "second")
        #expect(calls.withLock { $0 } == ["first 1 true true", "second"])
        #expect(Self.drain(first.read) == 1)
    }

    @Test func timersFireInTheirOrderNeverEarlyAndNotAfterTheyAreCancelled() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let fired = Locked<[String]>([])
        let clock = ContinuousClock()
        let start = clock.now
        let (events, continuation) = AsyncStream<Duration>.makeStream()
        await loop.run {
            _ = loop.schedule(after: .milliseconds(60)) {
                fired.withLock { $0.append("60 ms") }
                continuation.yield(clock.now - start)
            }
            _ = loop.schedule(after: .milliseconds(20)) { fired.withLock { $0.append("20 ms") } }
            let cancelled = loop.schedule(after: .milliseconds(40)) { fired.withLock { $0.append("40 ms") } }
            _ = loop.schedule(after: .milliseconds(10)) { loop.cancel(cancelled) }
        }
        var iterator = events.makeAsyncIterator()
        let elapsed = await iterator.next()
        #expect(fired.withLock { $0 } == ["20 ms", "60 ms"])
        #expect((elapsed ?? .zero) >= .milliseconds(60))
    }

    @Test func aHandlerThatResumesATaskPreferringTheLoopRunsItInTheSameThread() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let descriptors = Self.pipePair()
        defer { close(descriptors.read); close(descriptors.write) }
        let (updates, continuation) = AsyncStream<Int>.makeStream()
        _ = await loop.run {
            loop.watch(descriptors.read, events: Int16(POLLIN)) { _ in
                continuation.yield(Self.drain(descriptors.read))
            }
        }
        // The agent's shape: a source's handler on the loop feeds a consumer that prefers it.
        let seen = await withTaskExecutorPreference(loop) { () -> [Bool] in
            var seen: [Bool] = []
            var iterator = updates.makeAsyncIterator()
            for _ in 0..<3 {
                Self.send(descriptors.write)
                _ = await iterator.next()
                seen.append(loop.isCurrent)
            }
            return seen
        }
        #expect(seen == [true, true, true])
    }

    @Test func aLoopFloodedWithWorkStillServesItsDescriptorsAndTimers() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let descriptors = Self.pipePair()
        defer { close(descriptors.read); close(descriptors.write) }
        let flooding = Locked(true)
        let turns = Locked(0)
        // Work that hands over more work as it runs, until told to stop: the loop is never idle.
        @Sendable func flood() {
            turns.withLock { $0 += 1 }
            if flooding.withLock({ $0 }) { loop.execute(flood) }
        }
        let (served, continuation) = AsyncStream<String>.makeStream()
        await loop.run {
            loop.execute(flood)
            _ = loop.watch(descriptors.read, events: Int16(POLLIN)) { _ in
                _ = Self.drain(descriptors.read)
                continuation.yield("descriptor")
            }
            _ = loop.schedule(after: .milliseconds(5)) { continuation.yield("timer") }
        }
        Self.send(descriptors.write)
        var seen: Set<String> = []
        for await event in served {
            seen.insert(event)
            if seen.count == 2 { break }
        }
        let floodedTurns = turns.withLock { $0 }
        flooding.withLock { $0 = false }
        #expect(seen == ["descriptor", "timer"])
        // The flood still ran meanwhile: it was served beside the descriptor and the timer.
        #expect(floodedTurns > EventLoop.turnsBetweenPolls)
    }

    @Test func workHandedOverBeforeTheShutdownStillRuns() async {
        let loop = EventLoop(name: "test-loop")
        let (done, continuation) = AsyncStream<Int>.makeStream()
        for index in 0..<5 { loop.execute { continuation.yield(index) } }
        loop.execute { continuation.finish() }
        loop.shutdown()
        var received: [Int] = []
        for await index in done { received.append(index) }
        #expect(received == [0, 1, 2, 3, 4])
    }

    @Test func aSleepEndsOnTheLoopsTimerAndResumesItsTaskOnTheLoop() async throws {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let clock = ContinuousClock()
        let (slept, onLoop) = try await withTaskExecutorPreference(loop) { () async throws -> (Duration, Bool) in
            let start = clock.now
            try await loop.sleep(for: .milliseconds(30))
            return (clock.now - start, loop.isCurrent)
        }
        // Never early: the timer's deadline is rounded up to the millisecond.
        #expect(slept >= .milliseconds(30))
        #expect(onLoop)
        // From a task of Swift's pool too.
        try await loop.sleep(for: .milliseconds(1))
    }

    @Test func aSleepCancelledBeforeOrWhileItSleepsThrowsCancellationError() async {
        let loop = EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        // An hour's sleep: only the cancellation can end it within the suite's time limit.
        let sleeping = Task { try await loop.sleep(for: .seconds(3600)) }
        await #expect(throws: CancellationError.self) {
            // Cancelled while it sleeps, or before it has started: both must end it.
            sleeping.cancel()
            try await sleeping.value
        }
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await loop.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        // The loop goes on, its timers too.
        try? await loop.sleep(for: .milliseconds(1))
        #expect(await loop.run { loop.isCurrent })
    }
}
