import FoundationEssentials
import Logging
import ServiceLifecycle

import Glibc

/// The pages of files mapped by the agent (its executable and the shared libraries) that only
/// start-up needed, handed back to the kernel.
///
/// Start-up (argument parsing, the YAML configuration, the Swift runtime's first type lookups,
/// OpenSSL's initialisation in libmosquitto) touches pages all over the executable and the
/// libraries, and the kernel also maps the pages around every page it faults in. Those clean,
/// file-backed pages stay resident until memory runs short, although the steady loop uses a small
/// part of them. Once the agent runs, it asks the kernel to reclaim them
/// (`madvise(MADV_PAGEOUT)`, Linux 5.4 and later); the pages the loop uses come back from the file
/// on first touch.
///
/// Only pages of a file are handed back (`/proc/self/pagemap` says which): never an anonymous
/// page, such as the executable's relocated data (`.data.rel.ro`, read-only after relocation) or
/// a written page of `.data`, which `MADV_PAGEOUT` would write to swap (a Raspberry Pi has a swap
/// file on its SD card). Nothing is written or lost.
///
/// `MADV_PAGEOUT` leaves a page that another process maps too where it is: libc's, shared with
/// every process, and OpenSSL's, shared with a broker on the same host; start-up touched 1.0 MiB of
/// OpenSSL's tables and 1.3 MiB of libc that the loop never reads again. In a mapping that cannot
/// be written, such a page is also unmapped from the agent (`MADV_DONTNEED`): it stays in memory
/// for the other processes, and the agent maps it again, without reading the file, if it touches
/// it. A writable mapping is left to `MADV_PAGEOUT` alone: between reading `pagemap` and the
/// advice, a thread could write to one of its pages, and `MADV_DONTNEED` would throw that write away.
enum StartupPages {
    /// One mapping of `/proc/self/maps` that maps a file: its bounds, bytes, and whether it can be
    /// written.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var writable = false
    }

    /// What the agent asks of the kernel for the resident file pages of `mapping`: to reclaim them
    /// (`MADV_PAGEOUT`), then, in a mapping that cannot be written, to unmap those it kept because
    /// another process maps them too (`MADV_DONTNEED`).
    static func advice(for mapping: Mapping) -> [Int32] {
        mapping.writable ? [pageOut] : [pageOut, MADV_DONTNEED]
    }

    /// `MADV_PAGEOUT` (Linux 5.4), which Glibc's module does not name.
    static let pageOut: Int32 = 21

    /// The mappings of files in `/proc/PID/maps`' text: those with a path (not `[heap]`, `[stack]`,
    /// `[vdso]`, an anonymous mapping), whatever their permissions.
    static func fileMappings(maps: String) -> [Mapping] {
        maps.split(separator: "\n").compactMap { line in
            // "START-END PERMS OFFSET DEV INODE        PATH": the path after spaces, and may hold some.
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].drop(while: { $0 == " " }).first == "/" else { return nil }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { return nil }
            return Mapping(start: bounds[0], end: bounds[1], writable: fields[1].contains("w"))
        }
    }

    /// Bit 63 of a `/proc/PID/pagemap` entry: the page is present in memory.
    static let present: UInt64 = 1 << 63
    /// Bit 61: the page is a page of a file (or shared anonymous memory), not a private anonymous page.
    static let filePage: UInt64 = 1 << 61

    /// The runs of consecutive pages in `entries` (one `/proc/PID/pagemap` entry per page from
    /// `start`) that are present and pages of the file: the ranges to hand back, bytes.
    static func filePageRuns(entries: [UInt64], start: UInt, pageSize: UInt) -> [Mapping] {
        var runs: [Mapping] = []
        for (index, entry) in entries.enumerated() where entry & present != 0 && entry & filePage != 0 {
            let page = start + UInt(index) * pageSize
            if let last = runs.last, last.end == page {
                runs[runs.count - 1].end = page + pageSize
            } else {
                runs.append(Mapping(start: page, end: page + pageSize))
            }
        }
        return runs
    }

    /// The whole text of a file of /proc, read until its end. (`String(contentsOfFile:)` reads
    /// what the first reads return: the maps of a process with many libraries are longer.)
    static func wholeFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[..<count]
        }
    }

    /// Asks the kernel to reclaim the resident file pages of every mapping of a file, and to unmap
    /// the shared ones of the mappings that cannot be written (``advice(for:)``); logs how many
    /// bytes it handed back.
    static func release(logger: Logger) {
        guard let maps = wholeFile("/proc/self/maps") else { return }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return }
        defer { close(pagemap) }
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var released = 0
        for mapping in fileMappings(maps: maps) {
            let pages = Int((mapping.end - mapping.start) / pageSize)
            var entries = [UInt64](repeating: 0, count: pages)
            let read = entries.withUnsafeMutableBytes { buffer in
                pread(pagemap, buffer.baseAddress, buffer.count, off_t(mapping.start / pageSize * 8))
            }
            guard read == pages * 8 else { continue }
            for run in filePageRuns(entries: entries, start: mapping.start, pageSize: pageSize) {
                guard let address = UnsafeMutableRawPointer(bitPattern: run.start) else { continue }
                let advised = advice(for: mapping).map { madvise(address, Int(run.end - run.start), $0) }
                if advised.contains(0) { released += Int(run.end - run.start) }
            }
        }
        logger.debug(
            "Handed the start-up pages of the executable and the libraries back to the kernel",
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
