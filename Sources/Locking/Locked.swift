import Glibc

/// A value behind a lock: `Synchronization.Mutex`'s interface over a `pthread_mutex_t`.
///
/// Why not `Mutex` itself: on Linux, Swift 6.3's `Mutex` locks with `futex` system calls made from
/// code that ThreadSanitizer does not instrument, so ThreadSanitizer never learns that the lock
/// orders the accesses it guards, and reports them as races (docs/reliability.md). It intercepts
/// `pthread_mutex_lock`, so with this lock it checks Myeline's locking instead. The cost is one
/// heap allocation per lock, made once.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The value, behind a pointer rather than in a stored property: the value's accesses need
    /// no dynamic exclusivity check (the lock is what keeps them apart).
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// Creates a lock holding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; other threads wait meanwhile.
    ///
    /// Inlinable, so that each caller gets it specialised for its value and result: called
    /// across modules unspecialised, it looked up their generic metadata on every call, a few
    /// times a fix on the agent's loop (issue 24).
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
