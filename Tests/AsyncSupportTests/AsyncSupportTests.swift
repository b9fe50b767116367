import AsyncSupport
import Foundation
import Locking
import Testing

@Suite("BlockingExecutor")
struct BlockingExecutorTests {
    struct Refused: Error, Equatable {}

    @Test func callsRunInSubmissionOrderAndReturnTheirResults() async throws {
        let executor = BlockingExecutor(name: "test-blocking")
        let log = Locked<[Int]>([])
        let results = await withTaskGroup(of: Int.self) { group in
            // Submitted from one task, one after the other: the executor keeps that order.
            for index in 0..<50 {
                let value = await executor.run { () -> Int in
                    log.withLock { $0.append(index) }
                    return index * 2
                }
                group.addTask { value }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(log.withLock { $0 } == Array(0..<50))
        #expect(results.sorted() == (0..<50).map { $0 * 2 })
    }

    /// Every call runs on one thread, the executor's own, named after it: not on whichever of
    /// Dispatch's workers is free (a worker idle for a few seconds ends, and the agent's journal
    /// started a thread for most of its commits, issue 24).
    @Test func callsRunOnOneThreadOfItsOwnNamedAfterIt() async {
        let executor = BlockingExecutor(name: "test-own-thread")
        let caller = DedicatedThreadTests.currentThread()
        var threads: [(id: String, name: String)] = []
        for _ in 0..<3 {
            threads.append(await executor.run { DedicatedThreadTests.currentThread() })
        }
        #expect(threads.allSatisfy { $0.name == "test-own-thread" })
        #expect(Set(threads.map(\.id)).count == 1)
        #expect(!threads[0].id.isEmpty && threads[0].id != caller.id)
    }

    @Test func anErrorIsThrownToTheCallerWithItsType() async {
        let executor = BlockingExecutor(name: "test-blocking")
        await #expect(throws: Refused()) {
            try await executor.run { () throws(Refused) -> Int in throw Refused() }
        }
    }

    @Test func aTaskThatPrefersTheExecutorRunsOnItsThreadAndItsCallsRunThereAtOnce() async {
        let executor = BlockingExecutor(name: "test-blocking")
        let other = BlockingExecutor(name: "test-other")
        #expect(!executor.isCurrent)
        let seen = await withTaskExecutorPreference(executor) { () -> [Bool] in
            // The task's own code, then a call of its own (inline), then a call to another
            // executor (its thread: not this one), then its own code again after that hop.
            let own = executor.isCurrent
            let inline = await executor.run { executor.isCurrent }
            let elsewhere = await other.run { (executor.isCurrent, other.isCurrent) }
            return [own, inline, !elsewhere.0, elsewhere.1, executor.isCurrent]
        }
        #expect(seen == [true, true, true, true, true])
        #expect(!executor.isCurrent)
    }

    @Test func callsFromOtherTasksStillRunInTurnWithATaskThatPrefersTheExecutor() async {
        let executor = BlockingExecutor(name: "test-blocking")
        let log = Locked<[String]>([])
        await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Void.self) { group in
                // A child without a preference of its own inherits it; one on the global
                // executor submits its calls from the pool.
                group.addTask(executorPreference: globalConcurrentExecutor) {
                    for index in 0..<20 { await executor.run { log.withLock { $0.append("pool \(index)") } } }
                }
                for index in 0..<20 { await executor.run { log.withLock { $0.append("own \(index)") } } }
            }
        }
        let entries = log.withLock { $0 }
        #expect(entries.filter { $0.hasPrefix("own") } == (0..<20).map { "own \($0)" })
        #expect(entries.filter { $0.hasPrefix("pool") } == (0..<20).map { "pool \($0)" })
    }
}

@Suite("withTimeout")
struct TimeoutTests {
    @Test func aResultInTimeIsReturned() async {
        let value = await withTimeout(.seconds(3600)) { 42 }
        #expect(value == 42)
    }

    @Test func onTimeOutTheOperationIsCancelledAndHasEndedBeforeItReturns() async {
        let ended = Locked(false)
        let value = await withTimeout(.milliseconds(20)) { () -> Int in
            try? await Task.sleep(for: .seconds(3600))
            let cancelled = Task.isCancelled
            ended.withLock { $0 = true }
            return cancelled ? -1 : 1
        }
        #expect(value == nil)
        // Structured: the operation has run to its end, so nothing is left running.
        #expect(ended.withLock { $0 })
    }

    @Test func cancellingTheCallerCancelsTheOperation() async {
        let started = AsyncStream<Void>.makeStream()
        let task = Task {
            await withTimeout(.seconds(3600)) { () -> Bool in
                started.continuation.yield()
                try? await Task.sleep(for: .seconds(3600))
                return Task.isCancelled
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        task.cancel()
        // The operation saw the cancellation and returned its value.
        #expect(await task.value == true)
    }
}

@Suite("DedicatedThread")
struct DedicatedThreadTests {
    /// The calling thread's id and kernel name, from /proc/thread-self (Linux).
    static func currentThread() -> (id: String, name: String) {
        let id = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return (id, name.trimmingCharacters(in: .newlines))
    }

    /// The body runs on a thread of its own, not the caller's, which the kernel knows by the name
    /// given cut to 15 bytes, as `top -H` and /proc show it.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm")))
    func runsTheBodyOnANewThreadNamedForTheKernel() async {
        let caller = Self.currentThread()
        let thread = await withCheckedContinuation {
            (continuation: CheckedContinuation<(id: String, name: String), Never>) in
            DedicatedThread.start(name: "test-dedicated-thread-name") {
                continuation.resume(returning: Self.currentThread())
            }
        }
        #expect(thread.name == "test-dedicated-")
        #expect(!thread.id.isEmpty && thread.id != caller.id)
    }
}
