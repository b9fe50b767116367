// swift-tools-version:6.1
import PackageDescription

/// Micro-benchmarks of Myeline's libraries, kept out of the main package so that its build and tests never
/// build ordo-one/benchmark. Run with `swift package --package-path Benchmarks benchmark`, or
/// `scripts/bench-micro` (`--smoke` for CI's short run).
let package = Package(
    name: "MyelineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Myeline", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The configuration shared by every benchmark (and its smoke mode) and the sample activity envelope.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LiveActivity", package: "Myeline"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        .executableTarget(
            name: "LocationBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Location", package: "Myeline"),
            ],
            path: "Benchmarks/LocationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LiveActivityBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LiveActivity", package: "Myeline"),
            ],
            path: "Benchmarks/LiveActivityBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "BoardBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Board", package: "Myeline"),
                .product(name: "LiveActivity", package: "Myeline"),
            ],
            path: "Benchmarks/BoardBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
