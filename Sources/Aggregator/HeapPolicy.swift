import CMallocTuning

/// How the aggregator's process asks glibc's malloc to give memory back after a flood.
///
/// glibc raises its mmap threshold to the largest block freed so far (up to 32 MiB), and its trim
/// threshold to twice that: once a flood's large buffers (a round of JSON lines, the rows' table
/// growing) have been freed, every later block up to that size comes from the threads' arenas, which
/// then keep their peak size, fragmented. After scripts/bench's floods of 10,000 devices the board
/// stayed at 60 to 75 MiB resident (14 MiB of it in use); with the threshold fixed, at 43 MiB.
enum HeapPolicy {
    /// Blocks of at least this many bytes get a mapping of their own, returned to the system when
    /// freed; a fixed threshold also keeps glibc's default trim threshold (128 KiB) for the arenas.
    static let mmapThresholdBytes: Int32 = 256 * 1024

    /// Applies the policy to this process; call once, before the board starts.
    static func apply() {
        _ = myeline_fix_mmap_threshold(mmapThresholdBytes)
    }
}
