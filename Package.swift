// swift-tools-version:6.2
import PackageDescription

/// Every Myeline target is built in the Swift 6 language mode with warnings treated as errors.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error)
]

/// The agent's modules see only what they import (no Foundation API through a module that
/// imports Foundation), so that they stay on FoundationEssentials (issue 24).
let essentials: [SwiftSetting] = strict + [.enableUpcomingFeature("MemberImportVisibility")]

/// How the agent's release executable is linked for a tracker (issue 24; docs/raspberry-pi.md,
/// "Footprint"; the figures are in docs/benchmarks.md, "Sixth part" and "Seventh part"), with
/// `swift build -c release --static-swift-stdlib`:
/// - lld, the toolchain's linker, instead of gold, for
/// - `-z pack-relative-relocs`: the 50,600 relative relocations of a position-independent executable
///   packed as DT_RELR (9.8 KB instead of 1.2 MB; glibc 2.36 and later, Debian 12 and Raspberry Pi
///   OS 12: an older glibc refuses the executable, naming GLIBC_ABI_DT_RELR), and
/// - `--no-export-dynamic`, which undoes the `-export-dynamic` of the toolchain's static-stdlib
///   arguments: nothing looks the agent's own symbols up at run time, and its 10,470 exported names
///   were 1.0 MB of the stripped executable.
/// - `-z now`: every function of the shared libraries bound at start, before the start-up trim
///   (``StartupPages``), not at its first call: with lazy binding, a function first called later (a
///   journal commit's `rename`, a log line's `localtime`) brought the dynamic linker's lookup code
///   and the libraries' symbol tables back into memory. Full RELRO as well: the table of those
///   addresses is read-only once bound.
/// - GCC's static libstdc++ in place of libstdc++.so.6 (deploy/static-libstdc++ holds a linker
///   script, searched before the system's libraries, that the toolchain's `-lstdc++` finds): the
///   Swift runtime uses little of it, and mapping the shared library held 1.1 MiB resident.
/// - `--symbol-ordering-file deploy/agent-symbol-order.txt`: the functions the steady loop at 1 Hz runs,
///   laid out together, so that the pages it needs are next to each other rather than each among
///   cold neighbours that the kernel maps with it (written by `scripts/bench --skip-build
///   --symbol-order FILE` from a callgrind run of the loop; a name no longer in the executable is
///   skipped silently). The file is not an input SwiftPM knows of: after writing it, remove
///   .build/release/myeline-agent to relink.
/// Debug builds (the tests) link as the toolchain does.
let trackerRelease: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
            "-Xlinker", "-z", "-Xlinker", "now",
            "-L", Context.packageDirectory + "/deploy/static-libstdc++",
            "-Xlinker", "--symbol-ordering-file=" + Context.packageDirectory + "/deploy/agent-symbol-order.txt",
            "-Xlinker", "--no-warn-symbol-ordering",
        ],
        .when(configuration: .release))
]

// Linux only (built and tested on Debian 12): the sources import Glibc and call Linux interfaces
// (prctl, /proc, tmpfs), so no Apple platform is declared.
let package = Package(
    name: "Myeline",
    products: [
        .executable(name: "myeline-agent", targets: ["MyelineAgent"]),
        .executable(name: "myeline-aggregator", targets: ["MyelineAggregator"]),
        .library(name: "LiveActivity", targets: ["LiveActivity"]),
        .library(name: "MyelineWire", targets: ["MyelineWire"]),
        .library(name: "LiveActivityMQTT", targets: ["LiveActivityMQTT"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "Location", targets: ["Location"]),
        .library(name: "Board", targets: ["Board"]),
        .library(name: "Aggregator", targets: ["Aggregator"]),
        .library(name: "Interop", targets: ["Interop"]),
        // For the fuzz targets in Fuzzing/, which read the agent's configuration.
        .library(name: "MyelineConfiguration", targets: ["MyelineConfiguration"]),
        .library(name: "MyelineAgentKit", targets: ["MyelineAgentKit"]),
        // For the benchmarks in Benchmarks/, which encode the agent's activity record (issue 24).
        .library(name: "AgentStore", targets: ["AgentStore"]),
        .library(name: "Tracking", targets: ["Tracking"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // No traits: the configuration file is read by MyelineConfiguration's own YAML reader, not the
        // YAML trait's Yams, which imports Foundation and so links ICU into the agent (issue 24).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // Tests only: YAMLReaderTests compares MyelineConfiguration's YAML reader with it.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // Names the calling thread for top, perf and /proc (pthread_setname_np needs _GNU_SOURCE).
        .target(name: "CThreadName"),
        // Fixes glibc malloc's mmap threshold for the aggregator (<malloc.h> is not in Swift's Glibc module).
        .target(name: "CMallocTuning"),
        // A value behind a pthread lock, which ThreadSanitizer sees (Synchronization.Mutex it does not).
        .target(
            name: "Locking",
            swiftSettings: essentials
        ),
        // JSON written in JSONEncoder's forms without it, for what the agent writes at every fix (issue 24).
        .target(
            name: "DirectJSON",
            swiftSettings: essentials
        ),
        .target(
            name: "MQTT",
            dependencies: [
                "AsyncSupport",
                "CMosquitto",
                "Locking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        .target(
            name: "LiveActivity",
            dependencies: ["Locking"],
            swiftSettings: essentials
        ),
        // The wire contract (docs/topics.md, docs/schema/): envelopes, track points, status, commands,
        // the topic tree and the JSON codec, over LiveActivity's model.
        .target(
            name: "MyelineWire",
            dependencies: ["DirectJSON", "LiveActivity"],
            swiftSettings: essentials
        ),
        // LiveActivity over MQTT: ActivityPublisher (the agent's publishing path too) and MQTTClient as its sink.
        .target(
            name: "LiveActivityMQTT",
            dependencies: [
                "AsyncSupport",
                "LiveActivity", "MyelineWire",
                "Locking",
                "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: essentials
        ),
        // Other tools' wire formats: OwnTracks JSON and Home Assistant MQTT discovery; pure, no I/O.
        .target(
            name: "Interop",
            dependencies: ["MyelineWire"],
            swiftSettings: essentials
        ),
        .target(
            name: "AgentStore",
            dependencies: [
                "DirectJSON",
                "Locking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        .target(
            name: "Location",
            dependencies: [
                "AsyncSupport",
                "Locking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        .target(
            name: "Tracking",
            dependencies: ["DirectJSON", "LiveActivity", "Location"],
            swiftSettings: essentials
        ),
        // Configuration reading shared by the executables: flags > MYELINE_* > YAML > defaults, the mqtt.* keys.
        .target(
            name: "MyelineConfiguration",
            dependencies: [
                "AsyncSupport",
                "Locking",
                "MQTT",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        // The aggregator's board: the fleet state reducer and the frame renderer; pure, no I/O.
        .target(
            name: "Board",
            dependencies: ["Interop", "LiveActivity", "MyelineWire"],
            swiftSettings: strict
        ),
        // Small shared helpers for the processes' runtime: the blocking executor, timeouts, backoff,
        // the heap policy.
        .target(
            name: "AsyncSupport",
            dependencies: ["CMallocTuning", "CThreadName", "Locking"],
            swiftSettings: essentials
        ),
        // The agent's decisions as one pure state machine: events in, actions out; no I/O.
        .target(
            name: "AgentCore",
            dependencies: [
                "AgentStore",
                "LiveActivity", "MyelineWire",
                "Location",
                "Tracking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: essentials
        ),
        // myeline-agent's logic: its commands, configuration, services and the I/O around the core.
        .target(
            name: "MyelineAgentKit",
            dependencies: [
                "AgentCore",
                "AgentStore",
                "AsyncSupport",
                "Interop",
                "LiveActivity", "MyelineWire",
                "LiveActivityMQTT",
                "Location",
                "Locking",
                "MQTT",
                "MyelineConfiguration",
                "Tracking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: essentials
        ),
        // Examples/: the ActivityKit apps Myeline comes from, as programs on the library (built
        // with the package, run by IntegrationTests' ExamplesIntegrationTests; Examples/README.md).
        .executableTarget(
            name: "example-location",
            dependencies: [
                "LiveActivity", "LiveActivityMQTT", "Location", "MQTT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/LocationApp",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "example-steps",
            dependencies: [
                "LiveActivity", "LiveActivityMQTT", "Location", "MQTT", "Tracking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/StepTracker",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .target(
            name: "DeliveryModel",
            dependencies: ["LiveActivity"],
            path: "Examples/DeliveryModel",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "example-delivery",
            dependencies: [
                "DeliveryModel", "LiveActivity", "LiveActivityMQTT", "MQTT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/DeliveryTracker",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "example-delivery-server",
            dependencies: [
                "DeliveryModel", "LiveActivity", "MyelineWire", "MQTT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/DeliveryServer",
            swiftSettings: strict
        ),
        // The executable: `main` only.
        .executableTarget(
            name: "MyelineAgent",
            dependencies: ["MyelineAgentKit"],
            swiftSettings: essentials,
            linkerSettings: trackerRelease
        ),
        // The aggregator's program: its command, configuration, services, session, presenters and
        // terminal, over the pure Board; the executable target only calls its command.
        .target(
            name: "Aggregator",
            dependencies: [
                "AggregatorWeb",
                "AsyncSupport",
                "Board",
                "Interop",
                "LiveActivity", "MyelineWire",
                "Locking",
                "MQTT",
                "MyelineConfiguration",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The aggregator's web map (`--http`): the HTTP service, its routes, the event stream and the
        // page's static files, over the pure Board (docs/web.md).
        .target(
            name: "AggregatorWeb",
            dependencies: [
                "AsyncSupport",
                "Board",
                "LiveActivity",
                "Locking",
                "MyelineConfiguration",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Page")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "MyelineAggregator",
            dependencies: ["Aggregator"],
            swiftSettings: strict
        ),
        // A tiny MQTT client process for integration tests that must kill a client with SIGKILL.
        .executableTarget(
            name: "MQTTProbe",
            dependencies: [
                "MQTT",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: ["AsyncSupport", "LiveActivity", "Locking", "MQTT"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentCoreTests",
            dependencies: [
                "AgentCore", "AgentStore", "LiveActivity", "MyelineWire", "Location", "Tracking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AsyncSupportTests",
            dependencies: ["AsyncSupport", "Locking", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LockingTests",
            dependencies: ["Locking"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LiveActivityTests",
            dependencies: [
                "LiveActivity", "MyelineWire", "LiveActivityMQTT", "Locking", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MyelineWireTests",
            dependencies: ["LiveActivity", "MyelineWire", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "InteropTests",
            dependencies: ["Interop", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LocationTests",
            dependencies: ["AsyncSupport", "Location", "Locking"],
            resources: [.copy("Data")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "TrackingTests",
            dependencies: ["Tracking", "LiveActivity", "Location", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentStoreTests",
            dependencies: [
                "AgentStore",
                "Locking",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MQTTTests",
            dependencies: [
                "AsyncSupport",
                "MQTT",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MyelineAgentTests",
            dependencies: [
                "MyelineAgentKit",
                "Aggregator",
                "MyelineConfiguration",
                "LiveActivity", "MyelineWire",
                "Location",
                "MQTT",
                "TestSupport",
                "Tracking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MyelineConfigurationTests",
            dependencies: [
                "MyelineConfiguration", "TestSupport",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AggregatorTests",
            dependencies: [
                "Aggregator", "AggregatorWeb", "Board", "Interop", "LiveActivity", "MyelineWire", "MQTT",
                "MyelineConfiguration",
                "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Golden"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "AgentStore", "AsyncSupport", "Interop", "MQTT", "LiveActivity", "MyelineWire", "LiveActivityMQTT",
                "Location",
                "Locking",
                "Tracking",
                "TestSupport", "MQTTProbe", "MyelineAgent", "MyelineAgentKit", "DeliveryModel", "example-location",
                "example-steps", "example-delivery", "example-delivery-server",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
    ]
)
