import CMallocTuning

/// How a Myeline process asks glibc's malloc to give memory back after a burst.
///
/// glibc raises its mmap threshold to the largest block freed so far (up to 32 MiB), and its trim
/// threshold to twice that: once a burst's large buffers have been freed, every later block up to
/// that size comes from the threads' arenas, which then keep their peak size, fragmented. And each
/// thread that allocates may get an arena of its own (up to eight per core), each keeping its own
/// free pages.
///
/// Measured: after scripts/bench's floods of 10,000 devices the board stayed at 60 to 75 MiB
/// resident (14 MiB of it in use), with the threshold fixed at 43 MiB. The agent with a full
/// outbox (100,000 points, scripts/bench's `outbox` case) held 15.5 MiB of anonymous memory in six
/// arenas, 9.8 MiB with the threshold fixed and at most two arenas (docs/benchmarks.md).
public enum HeapPolicy {
    /// Blocks of at least this many bytes get a mapping of their own, returned to the system when
    /// freed; a fixed threshold also keeps glibc's default trim threshold (128 KiB) for the arenas.
    public static let mmapThresholdBytes: Int32 = 256 * 1024

    /// Applies the policy to this process; call once, first thing, before other threads allocate.
    ///
    /// - Parameter maximumArenas: the most malloc arenas the process's threads share, or `nil` for
    ///   glibc's default (eight per core). Fewer arenas mean less memory kept and more contention on
    ///   each: right for the agent, whose threads allocate little and rarely at the same time.
    /// - Returns: whether glibc took every setting.
    @discardableResult
    public static func apply(maximumArenas: Int32? = nil) -> Bool {
        var accepted = myeline_fix_mmap_threshold(mmapThresholdBytes) == 1
        if let maximumArenas {
            accepted = myeline_limit_arenas(maximumArenas) == 1 && accepted
        }
        return accepted
    }
}
