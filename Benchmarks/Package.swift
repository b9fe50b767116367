// swift-tools-version:6.1
import PackageDescription

/// Benchmarks of the Location decoders, kept out of the main package so that its build and tests
/// never build ordo-one/benchmark. Run with `swift package --package-path Benchmarks benchmark`.
let package = Package(
    name: "MyelineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Myeline", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "LocationBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Location", package: "Myeline"),
            ],
            path: "Benchmarks/LocationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
