import Benchmark
import Foundation

extension BenchmarkMetric {
    /// The CPU time of the benchmark's thread, nanoseconds, from `CLOCK_THREAD_CPUTIME_ID`: ordo-one's own
    /// `cpuTotal` counts scheduler ticks of 10 ms on Linux, coarser than any operation measured here.
    public static var threadCPU: BenchmarkMetric { .custom("Time (thread CPU, ns)") }
}

extension Benchmark {
    /// Runs `body` and records the CPU time the calling thread spent in it as ``BenchmarkMetric/threadCPU``.
    public func measuringCPU(_ body: () -> Void) {
        let start = Self.threadCPUNanoseconds()
        body()
        measurement(.threadCPU, Self.threadCPUNanoseconds() - start)
    }

    private static func threadCPUNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
