// swift-tools-version:6.1
import PackageDescription

/// A benchmark executable of `Benchmarks/NAME`, using Myeline's `products`; ordo-one/benchmark's plugin writes
/// its `main` around the file's `let benchmarks`.
func benchmarks(_ name: String, using products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["BenchmarkSupport", .product(name: "Benchmark", package: "benchmark")]
            + products.map { .product(name: $0, package: "Myeline") },
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

/// Micro-benchmarks of Myeline's libraries, kept out of the main package so that its build and tests never
/// build ordo-one/benchmark. Run with `scripts/bench-micro` (`swift package --package-path Benchmarks
/// benchmark`), or `scripts/bench-micro --smoke` for CI's short run.
let package = Package(
    name: "MyelineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Myeline", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The configuration shared by every benchmark (and its smoke mode), thread CPU time, the sample envelope.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LiveActivity", package: "Myeline"),
                .product(name: "MyelineWire", package: "Myeline"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        benchmarks("LocationBenchmarks", using: ["Location"]),
        benchmarks("LiveActivityBenchmarks", using: ["LiveActivity", "MyelineWire"]),
        benchmarks("BoardBenchmarks", using: ["Board", "LiveActivity", "MyelineWire"]),
        benchmarks("AgentStoreBenchmarks", using: ["AgentStore", "LiveActivity", "Tracking"]),
        // The board's decode, apply and `--follow --json` line of scripts/bench's flood on one thread, for
        // callgrind's instruction counts (docs/benchmarks.md, "Aggregator: ingest, issue 17 item 11").
        .executableTarget(
            name: "BoardReplay",
            dependencies: [
                .product(name: "Board", package: "Myeline"),
                .product(name: "LiveActivity", package: "Myeline"),
                .product(name: "MyelineWire", package: "Myeline"),
            ],
            path: "Sources/BoardReplay"
        ),
        // Replays a file through Location's FileSource at maximum speed and prints its peak resident
        // memory (the GPX reader's figure in docs/benchmarks.md); also writes the 100 MB GPX it reads.
        .executableTarget(
            name: "LocationReplay",
            dependencies: [.product(name: "Location", package: "Myeline")],
            path: "Sources/LocationReplay"
        ),
    ]
)
