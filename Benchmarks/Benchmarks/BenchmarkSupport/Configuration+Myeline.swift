import Benchmark
import Foundation

extension Benchmark.Configuration {
    /// The environment variable that turns every benchmark into a smoke run when set to `1`.
    public static let smokeVariable = "MYELINE_BENCHMARK_SMOKE"

    /// Whether this is a smoke run (`MYELINE_BENCHMARK_SMOKE=1`, what CI runs): each benchmark runs a
    /// few iterations so that it keeps compiling and running; its figures mean nothing.
    public static var isSmokeRun: Bool {
        ProcessInfo.processInfo.environment[smokeVariable] == "1"
    }

    /// The configuration of every Myeline benchmark: wall clock, thread CPU time (recorded by the benchmark
    /// with ``Benchmark/measuringCPU(_:)``), mallocs and throughput, for up to 5 s or 10,000 iterations after
    /// 5 warm-up iterations; in a smoke run, 1 warm-up and 3 iterations.
    ///
    /// - Parameter scalingFactor: how many operations one iteration performs (`benchmark.scaledIterations`);
    ///   figures are then per operation.
    public static func myeline(scalingFactor: BenchmarkScalingFactor = .one) -> Self {
        let smoke = isSmokeRun
        return .init(
            metrics: [.wallClock, .threadCPU, .mallocCountTotal, .throughput],
            warmupIterations: smoke ? 1 : 5, scalingFactor: scalingFactor, maxDuration: .seconds(smoke ? 1 : 5),
            maxIterations: smoke ? 3 : 10_000)
    }
}
