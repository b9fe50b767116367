import Glibc
import Locking
import Synchronization

/// A thread of its own that runs work in turn and waits in one `poll` for everything it serves:
/// work handed to it from other threads, the file descriptors it watches, and its timers.
///
/// It is a `TaskExecutor`: a task that prefers it (`withTaskExecutorPreference`) runs its
/// nonisolated code on the loop's thread, and a watcher's handler that resumes such a task
/// (yields to a stream it awaits) queues the task's next job from that thread, which runs in the
/// same turn: no other thread is woken for it. The agent runs its spool, its control loop, the
/// gpsd link and its MQTT connection on one loop, so that a fix read from gpsd is decoded, decided
/// on, written to the spool and sent to the broker without a thread switch (issue 24;
/// docs/raspberry-pi.md, "Threads and wake-ups").
///
/// Work runs first; after ``turnsBetweenPolls`` turns of work back to back the loop looks at its
/// descriptors and timers without waiting, so that a flood of work does not starve them.
///
/// **Threads.** ``execute(_:)``, ``run(_:)``, ``enqueue(_:)`` and ``shutdown()`` may be called from
/// any thread; work handed over from another thread while the loop sleeps wakes it through a
/// pipe (one byte, once per sleep). ``watch(_:events:_:)``, ``setEvents(_:_:)``,
/// ``unwatch(_:)``, ``schedule(after:_:)`` and ``cancel(_:)`` are for the loop's own thread only
/// (handlers, timers, and the work it runs), which is what makes the class safe to share.
///
/// Nothing on the loop may block for long: everything it serves waits meanwhile. Blocking file
/// calls of the spool (memory, or a `pwrite` of a page) are short; the card's flushes run on a
/// ``BlockingExecutor`` of their own.
public final class EventLoop: TaskExecutor, @unchecked Sendable {
    /// A watched file descriptor.
    public struct Watch: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// A scheduled timer.
    public struct Timer: Hashable, Sendable {
        fileprivate let id: Int
    }

    private enum Work {
        case job(UnownedJob)
        case call(@Sendable () -> Void)
    }

    /// What other threads hand over.
    private struct Inbox {
        var work: [Work] = []
        /// Whether the loop is about to wait, or waits, in `poll` and must be woken.
        var sleeping = false
        var stopping = false
    }

    /// Behind a `pthread_mutex_t` (``Locking/Locked``), which ThreadSanitizer follows: it does not
    /// follow `Mutex`'s futex calls.
    private let inbox = Locked(Inbox())
    /// The wake-up pipe: the loop polls the read end; work handed over to a sleeping loop writes a
    /// byte to the other.
    private let wakeDescriptor: Int32
    private let wakeWriteDescriptor: Int32
    private let thread = Atomic<UInt>(0)

    // The loop's thread only.
    private var watches: [Int: WatchEntry] = [:]
    private var timers: [Int: TimerEntry] = [:]
    private var nextID = 0
    private var descriptors: [pollfd] = []
    private var descriptorIDs: [Int] = []
    private var descriptorsChanged = true
    private var running: [Work] = []

    private struct WatchEntry {
        let descriptor: Int32
        var events: Int16
        let handler: (Int16) -> Void
    }

    private struct TimerEntry {
        let deadline: UInt64
        let handler: () -> Void
    }

    /// Starts the loop's thread, named `name` (its first 15 bytes).
    public init(name: String) {
        var pair: [Int32] = [-1, -1]
        guard pipe(&pair) == 0 else {
            fatalError("cannot start the event loop \(name): pipe failed with errno \(errno)")
        }
        for descriptor in pair {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptor = pair[0]
        wakeWriteDescriptor = pair[1]
        DedicatedThread.start(name: name) { [self] in
            thread.store(UInt(pthread_self()), ordering: .releasing)
            loop()
            close(wakeDescriptor)
            close(wakeWriteDescriptor)
        }
    }

    /// Whether the calling code runs on the loop's thread.
    public var isCurrent: Bool {
        let owner = thread.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(pthread_self(), pthread_t(owner)) != 0
    }

    // MARK: Any thread

    /// Runs `work` on the loop's thread, after everything handed over before it.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.call(work))
    }

    /// Runs a job of a task that prefers this loop on its thread, in turn with the rest.
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    /// Runs `body` on the loop's thread, after the work handed over before it, and returns its
    /// result or throws its error. Called from the loop's thread, runs `body` there at once.
    public func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        if isCurrent { return try body() }
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            execute {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    /// Ends the loop once the work handed over before has run; its watches and timers are
    /// dropped, and its thread ends. Work handed over later is not run.
    public func shutdown() {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.stopping = true
            defer { inbox.sleeping = false }
            return inbox.sleeping
        }
        if wake { signal() }
    }

    private func submit(_ work: Work) {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.work.append(work)
            defer { inbox.sleeping = false }
            return inbox.sleeping
        }
        if wake { signal() }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wakeWriteDescriptor, &byte, 1)
    }

    // MARK: The loop's thread

    /// Calls `handler` with the returned events (`revents`) each time `descriptor` is ready for
    /// `events` (`POLLIN`, `POLLOUT`; hang-ups and errors are always reported).
    public func watch(_ descriptor: Int32, events: Int16, _ handler: @escaping (_ revents: Int16) -> Void) -> Watch {
        precondition(isCurrent, "EventLoop.watch off the loop's thread")
        nextID += 1
        watches[nextID] = WatchEntry(descriptor: descriptor, events: events, handler: handler)
        descriptorsChanged = true
        return Watch(id: nextID)
    }

    /// Changes what a watch waits for.
    public func setEvents(_ watch: Watch, _ events: Int16) {
        precondition(isCurrent, "EventLoop.setEvents off the loop's thread")
        guard watches[watch.id]?.events != events else { return }
        watches[watch.id]?.events = events
        descriptorsChanged = true
    }

    /// Stops watching; the handler is not called again (not even for events of the current turn).
    public func unwatch(_ watch: Watch) {
        precondition(isCurrent, "EventLoop.unwatch off the loop's thread")
        if watches.removeValue(forKey: watch.id) != nil { descriptorsChanged = true }
    }

    /// Calls `handler` once, `delay` from now (at the earliest; to the millisecond).
    public func schedule(after delay: Duration, _ handler: @escaping () -> Void) -> Timer {
        precondition(isCurrent, "EventLoop.schedule off the loop's thread")
        nextID += 1
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + (seconds < 0 ? 0 : attoseconds / 1_000_000_000)
        timers[nextID] = TimerEntry(deadline: Self.now() &+ UInt64(nanoseconds), handler: handler)
        return Timer(id: nextID)
    }

    /// Cancels a timer that has not fired; its handler is not called.
    public func cancel(_ timer: Timer) {
        precondition(isCurrent, "EventLoop.cancel off the loop's thread")
        timers.removeValue(forKey: timer.id)
    }

    /// The monotonic clock, in nanoseconds.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// How many turns of work may run back to back before the loop looks at its descriptors and
    /// timers again (without waiting): under a flood of work (a replay at full speed) the broker's
    /// socket is still read and the timers still fire.
    public static let turnsBetweenPolls = 16

    private func loop() {
        let executor = asUnownedTaskExecutor()
        var turns = 0
        while true {
            let stopping = inbox.withLock { inbox -> Bool in
                swap(&running, &inbox.work)
                return inbox.stopping
            }
            if running.isEmpty && stopping { break }
            if !running.isEmpty {
                for work in running {
                    switch work {
                    case .job(let job): job.runSynchronously(on: executor)
                    case .call(let call): call()
                    }
                }
                running.removeAll(keepingCapacity: true)
                turns += 1
                if turns < Self.turnsBetweenPolls { continue }
            }
            turns = 0
            fireTimers()
            // Sleep in the poll only when no work came meanwhile; otherwise look without waiting.
            let sleeps = inbox.withLock { inbox -> Bool in
                guard inbox.work.isEmpty && !inbox.stopping else { return false }
                inbox.sleeping = true
                return true
            }
            wait(blocking: sleeps)
        }
        watches.removeAll()
        timers.removeAll()
    }

    /// Calls the handlers of the timers due.
    private func fireTimers() {
        let now = Self.now()
        guard let earliest = earliestDeadline, earliest <= now else { return }
        let due = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (id, entry) in due where timers.removeValue(forKey: id) != nil {
            entry.handler()
        }
    }

    /// The earliest timer's deadline, nil without timers (a loop rather than a key path's
    /// projection, which costs a generic metadata lookup each time).
    private var earliestDeadline: UInt64? {
        var earliest: UInt64?
        for entry in timers.values where earliest.map({ entry.deadline < $0 }) ?? true {
            earliest = entry.deadline
        }
        return earliest
    }

    /// Waits in `poll` for the descriptors, the wake-up and the next timer (`blocking`), or only
    /// looks; calls the handlers of the descriptors that are ready.
    private func wait(blocking: Bool) {
        if descriptorsChanged {
            descriptors = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            descriptorIDs = [0]
            for (id, entry) in watches.sorted(by: { $0.key < $1.key }) {
                descriptors.append(pollfd(fd: entry.descriptor, events: entry.events, revents: 0))
                descriptorIDs.append(id)
            }
            descriptorsChanged = false
        }
        var timeout: Int32 = blocking ? -1 : 0
        if blocking, let next = earliestDeadline {
            let now = Self.now()
            // Rounded up to the millisecond, so that a timer never fires early.
            timeout = next <= now ? 0 : Int32(min((next - now + 999_999) / 1_000_000, 3_600_000))
        }
        for index in descriptors.indices { descriptors[index].revents = 0 }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        // Awake: work handed over from now on (by the handlers too) needs no wake-up.
        inbox.withLock { $0.sleeping = false }
        guard ready > 0 else { return }
        if descriptors[0].revents != 0 {
            var bytes: (UInt64, UInt64) = (0, 0)
            _ = read(wakeDescriptor, &bytes, 16)
        }
        for index in descriptors.indices.dropFirst() where descriptors[index].revents != 0 {
            let revents = descriptors[index].revents
            // A handler earlier in this turn may have removed the watch.
            guard let entry = watches[descriptorIDs[index]] else { continue }
            entry.handler(revents)
        }
    }
}
