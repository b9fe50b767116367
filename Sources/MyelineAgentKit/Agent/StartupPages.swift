import FoundationEssentials
import Logging
import ServiceLifecycle

import Glibc

/// The pages of the agent's own executable that only start-up needed, handed back to the kernel.
///
/// A static Swift binary is large (about 48 MB as built), and start-up (argument parsing, the YAML
/// configuration, the Swift runtime's first type lookups)
/// touches pages all over it; the kernel also maps up to 64 KiB around every page it faults in.
/// Those clean, file-backed pages stay resident until memory runs short, although the steady
/// loop uses a small part of them. Once the agent runs, it asks the kernel to reclaim them
/// (`madvise(MADV_PAGEOUT)`, Linux 5.4 and later); the pages the loop uses come back from the
/// page cache on first touch. Nothing is written or lost: they are read-only pages of the file.
enum StartupPages {
    /// Asks the kernel to reclaim the executable's read-only mappings; logs what was released.
    static func release(logger: Logger) {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        else { return }
        var released = 0
        for line in maps.split(separator: "\n") {
            // "START-END PERMS OFFSET DEV INODE PATH": read-only or executable, not writable.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5...].joined(separator: " ") == executable,
                !fields[1].contains("w")
            else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0],
                let start = UnsafeMutableRawPointer(bitPattern: bounds[0])
            else { continue }
            if madvise(start, Int(bounds[1] - bounds[0]), 21 /* MADV_PAGEOUT */) == 0 {
                released += Int(bounds[1] - bounds[0])
            }
        }
        logger.debug(
            "Handed the executable's start-up pages back to the kernel",
            metadata: ["event": "agent.startup-pages.released", "memory.released_bytes": "\(released)"])
    }
}

/// Hands the start-up pages back (``StartupPages``) once start-up is over: ``delay`` after the start.
///
/// Graceful shutdown: returns at once.
struct StartupTrim: Service, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "StartupTrim" }

    /// How long after the start the agent hands its start-up pages back: 10 s.
    static let delay: Duration = .seconds(10)

    let logger: Logger

    func run() async {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.delay) }
        } catch {
            return
        }
        StartupPages.release(logger: logger)
    }
}
