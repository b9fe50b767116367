import Foundation
import Glibc
import Testing

@testable import MyelineAgentKit

/// Which pages the agent hands back after start-up (``StartupPages``): the pages of files only,
/// never an anonymous page (which `MADV_PAGEOUT` would write to swap).
struct StartupPagesTests {
    typealias Mapping = StartupPages.Mapping

    @Test func theMappingsOfFilesAreReadWhateverTheirPermissions() {
        let maps = """
            55d0c0000000-55d0c0320000 r--p 00000000 fe:01 1234                       /usr/local/bin/myeline-agent
            55d0c0320000-55d0c1030000 r-xp 00320000 fe:01 1234 /usr/local/bin/myeline-agent
            55d0c1030000-55d0c10a2000 rw-p 01030000 fe:01 1234 /usr/local/bin/myeline-agent
            55d0c10a2000-55d0c1150000 rw-p 00000000 00:00 0
            55d0c2000000-55d0c2042000 rw-p 00000000 00:00 0                          [heap]
            7f7e06200000-7f7e062c5000 r--p 00000000 fe:01 5678 /usr/lib/x86_64-linux-gnu/libcrypto.so.3
            7f7e06300000-7f7e06301000 r--p 00000000 fe:01 9999 /tmp/a file with spaces
            7ffd1e000000-7ffd1e021000 rw-p 00000000 00:00 0                          [stack]
            7ffd1e1f0000-7ffd1e1f2000 r-xp 00000000 00:00 0                          [vdso]
            """
        #expect(
            StartupPages.fileMappings(maps: maps) == [
                Mapping(start: 0x55d0_c000_0000, end: 0x55d0_c032_0000, writable: false),
                Mapping(start: 0x55d0_c032_0000, end: 0x55d0_c103_0000, writable: false),
                Mapping(start: 0x55d0_c103_0000, end: 0x55d0_c10a_2000, writable: true),
                Mapping(start: 0x7f7e_0620_0000, end: 0x7f7e_062c_5000, writable: false),
                Mapping(start: 0x7f7e_0630_0000, end: 0x7f7e_0630_1000, writable: false),
            ])
    }

    /// Every mapping's resident file pages are reclaimed; the shared ones that reclaiming leaves are
    /// unmapped only where nothing can write to them (a write between reading pagemap and
    /// `MADV_DONTNEED` would be thrown away).
    @Test func sharedPagesAreUnmappedOnlyWhereNothingCanWriteThem() {
        let rows: [(writable: Bool, advice: [Int32])] = [
            (false, [StartupPages.pageOut, MADV_DONTNEED]),
            (true, [StartupPages.pageOut]),
        ]
        for row in rows {
            #expect(StartupPages.advice(for: Mapping(start: 0, end: 0x1000, writable: row.writable)) == row.advice)
        }
        #expect(StartupPages.pageOut == 21, "MADV_PAGEOUT in <linux/mman.h>")
    }

    @Test func onlyPresentPagesOfTheFileAreHandedBack() {
        let file = StartupPages.present | StartupPages.filePage
        let anonymous = StartupPages.present  // a copy-on-write page: relocated or written data
        let absent: UInt64 = 0
        let swapped: UInt64 = 1 << 62
        let rows: [(entries: [UInt64], runs: [Mapping])] = [
            ([], []),
            ([absent, absent], []),
            ([file], [Mapping(start: 0x1000, end: 0x2000)]),
            ([file, file, file], [Mapping(start: 0x1000, end: 0x4000)]),
            // An anonymous page splits a run and is never in one.
            ([file, anonymous, file], [Mapping(start: 0x1000, end: 0x2000), Mapping(start: 0x3000, end: 0x4000)]),
            ([anonymous, anonymous], []),
            (
                [swapped, file, absent, file, file],
                [Mapping(start: 0x2000, end: 0x3000), Mapping(start: 0x4000, end: 0x6000)]
            ),
            // The file bit without the present bit: not resident, nothing to hand back.
            ([StartupPages.filePage], []),
        ]
        for row in rows {
            #expect(
                StartupPages.filePageRuns(entries: row.entries, start: 0x1000, pageSize: 0x1000) == row.runs,
                "\(row.entries.map { String($0 >> 61, radix: 2) })")
        }
    }

    /// This process's own maps, read whole: libc's code, a mapping of a file far down the list, is among them.
    @Test func theTestProcessesOwnMapsAreRead() throws {
        let maps = try #require(StartupPages.wholeFile("/proc/self/maps"))
        let getpid = UInt(bitPattern: try #require(dlsym(nil, "getpid")))  // nil: RTLD_DEFAULT
        #expect(
            StartupPages.fileMappings(maps: maps).contains { $0.start <= getpid && getpid < $0.end },
            "no mapping of a file holds libc's getpid at \(String(getpid, radix: 16)): \(maps)")
    }
}
