import Foundation
import Testing

import TestSupport

/// What the agent's executable links, as the dynamic loader resolves it (`ldd`), checked against
/// the libraries a tracker is meant to need (issue 24, docs/raspberry-pi.md, "Footprint").
///
/// The test reads the build it runs beside, which links the Swift libraries dynamically: the
/// libraries it lists are those the agent's modules import, the same set a static release build
/// (`--static-swift-stdlib`) copies into the executable, where ldd no longer shows them.
@Suite(.tags(.integration)) struct AgentLinkageIntegrationTests {
    /// Each library the agent may link, by the start of its file name, and why it is there.
    static let allowed: [(prefix: String, reason: String)] = [
        ("libmosquitto", "the MQTT client"),
        ("libssl", "libmosquitto's TLS"), ("libcrypto", "libmosquitto's TLS"),
        ("libc.", "the C library"), ("libm.", "the C library"), ("ld-linux", "the dynamic loader"),
        ("linux-vdso", "the kernel's"), ("libstdc++", "the Swift runtime"), ("libgcc_s", "the Swift runtime"),
        ("libswiftCore", "the Swift runtime"), ("libswiftSwiftOnoneSupport", "a debug build's generic specialisations"),
        ("libswift_Concurrency", "Swift concurrency"),
        ("libswift_StringProcessing", "the standard library's string algorithms"),
        ("libswift_RegexParser", "the standard library's string algorithms"),
        ("libswiftSynchronization", "Mutex and Atomic"), ("libswiftGlibc", "the C library's Swift overlay"),
        ("libswift_Builtin_float", "the C library's Swift overlay"),
        ("libswiftDispatch", "Dispatch (the executors, service-lifecycle's signals)"), ("libdispatch", "Dispatch"),
        ("libBlocksRuntime", "Dispatch"),
        ("libFoundationEssentials", "dates, JSON, Data, URL: the agent's own modules import FoundationEssentials only"),
    ]

    /// Never: Foundation, which brings ICU (lib_FoundationICU, 40.8 MB: the configuration's YAML
    /// is read by MyelineConfiguration's own reader, not Yams, which imports Foundation; issue 24),
    /// XML (libxml2 maps ICU's 31 MB of data: the GPX reader streams without it, issue 20), HTTP
    /// (libcurl), or a second ICU.
    static let refused = [
        "libFoundation.", "libFoundationInternationalization", "lib_FoundationICU", "libxml2", "libFoundationXML",
        "lib_CFXMLInterface", "libFoundationNetworking", "libcurl", "libicu",
    ]

    @Test func theAgentLinksOnlyWhatATrackerNeeds() async throws {
        let ldd = try executablePath("ldd", package: "libc-bin")
        let output = try await runProgram(ldd, [try builtProductPath("myeline-agent")])
        let libraries = output.split(separator: "\n").compactMap { line in
            // "libswiftCore.so => /opt/…/libswiftCore.so (0x…)", "/lib64/ld-linux-x86-64.so.2 (0x…)"
            line.split(whereSeparator: \.isWhitespace).first.flatMap { $0.split(separator: "/").last }.map(String.init)
        }
        #expect(libraries.contains { $0.hasPrefix("libmosquitto") }, "ldd's output was not read: \(output)")
        for library in libraries {
            #expect(
                !Self.refused.contains { library.hasPrefix($0) },
                "myeline-agent links \(library), which a tracker must not need: find the import that brings it")
            #expect(
                Self.allowed.contains { library.hasPrefix($0.prefix) },
                Comment(
                    rawValue: "myeline-agent links \(library), which is not in the list of what it needs (this "
                        + "test's `allowed`): remove the import that brings it, or add it there with the reason"))
        }
    }

    /// The modules of the agent's executable, in Sources/: none may import Foundation (ICU) again.
    static let agentModules = [
        "AgentCore", "AgentStore", "AsyncSupport", "Interop", "LiveActivity", "LiveActivityMQTT", "Location", "Locking",
        "MQTT", "MyelineAgent", "MyelineAgentKit", "MyelineConfiguration", "Tracking",
    ]

    /// A module of Myeline's that imports Foundation again fails `theAgentLinksOnlyWhatATrackerNeeds`
    /// too; this names the file.
    @Test func theAgentsModulesImportFoundationEssentialsOnly() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var files = 0
        for module in Self.agentModules {
            let directory = sources.appendingPathComponent(module)
            let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let file as String in enumerator where file.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import Foundation") {
                    #expect(
                        line == "import FoundationEssentials",
                        "Sources/\(module)/\(file) has '\(line)': Foundation links ICU into the agent; use FoundationEssentials"
                    )
                }
            }
        }
        #expect(files > 100, "the agent's sources were not found under \(sources.path)")
    }
}
