// swift-tools-version:6.2
// libFuzzer targets for Myeline's parsers, kept out of the main package so that `swift build` and the
// test suite never build them. Built and run by scripts/fuzz with
// `swift build -c release -Xswiftc -sanitize=fuzzer,address`.
// Each target is one `LLVMFuzzerTestOneInput` whose `main.swift` hands it to libFuzzer's driver
// (SwiftPM renames an executable's `main`, so libFuzzer's own `main` cannot be used).
import Foundation
import PackageDescription

/// The main package, by its identity: the name of the directory it was cloned into.
let myeline = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error)
]

let package = Package(
    name: "MyelineFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // libFuzzer's driver, declared for Swift.
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CLibFuzzer",
                .product(name: "LiveActivity", package: myeline),
                .product(name: "Location", package: myeline),
                .product(name: "MyelineWire", package: myeline),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FuzzNMEA",
            dependencies: ["FuzzSupport", .product(name: "Location", package: myeline)],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FuzzGPX",
            dependencies: ["FuzzSupport", .product(name: "Location", package: myeline)],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FuzzGpsd",
            dependencies: ["FuzzSupport", .product(name: "Location", package: myeline)],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FuzzEnvelope",
            dependencies: [
                "FuzzSupport",
                .product(name: "Board", package: myeline),
                .product(name: "LiveActivity", package: myeline),
                .product(name: "MyelineWire", package: myeline),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FuzzCommand",
            dependencies: [
                "FuzzSupport", .product(name: "LiveActivity", package: myeline),
                .product(name: "MyelineWire", package: myeline),
            ],
            swiftSettings: strict
        ),
        // The agent's configuration reader, as `myeline-agent --config` runs it.
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: [
                "FuzzSupport",
                .product(name: "MyelineAgentKit", package: myeline),
                .product(name: "MyelineConfiguration", package: myeline),
            ],
            swiftSettings: strict
        ),
    ]
)
