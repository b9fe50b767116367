import Foundation
import Logging
import Testing

@testable import AgentStore

/// The stores on a full file system (fault scenario 11): a 64 KiB tmpfs mounted for each test,
/// filled with a file until it refuses more. Mounting takes root, as CI runs the tests.
@Suite("Disk full", .serialized)
struct DiskFullTests {
    struct Attributes: Codable, Hashable, Sendable {
        var name: String
    }

    /// Runs `body` with a directory on a fresh 64 KiB tmpfs, unmounted afterwards.
    static func withSmallFileSystem(_ body: (String) throws -> Void) throws {
        try #require(
            getuid() == 0,
            "these tests mount a 64 KiB tmpfs to fill it, which takes root: run them as root, as CI does")
        try withTemporaryDirectory { directory in
            try run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "myeline-disk-full", directory])
            defer { try? run("/bin/umount", [directory]) }
            try body(directory)
        }
    }

    static func run(_ program: String, _ arguments: [String]) throws {
        let process = try Process.run(URL(fileURLWithPath: program), arguments: arguments)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw AgentStoreError(.io, "\(program) \(arguments.joined(separator: " ")) failed")
        }
    }

    /// Writes zeros to `path` until the file system refuses more.
    static func fill(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        #expect(errno == ENOSPC)
    }

    static var logger: Logger { Logger(label: "disk-full-tests") }

    @Test func appendsFailAsDiskFullAndLeaveNothingHalfWritten() throws {
        try Self.withSmallFileSystem { directory in
            let path = directory + "/outbox"
            var kept: [[UInt8]] = []
            var failures: [AgentStoreError] = []
            try Outbox.withOutbox(directory: path, logger: Self.logger) { outbox in
                for number in 0..<3 {
                    try outbox.append(topic: "t", payload: payload(number))
                    kept.append(payload(number))
                }
                try Self.fill(directory + "/filler")
                // The segment's last page (tmpfs allocates whole pages) may still take a few
                // records; once one fails, every later one (never smaller) fails too.
                for number in 3..<200 {
                    let record = payload(number) + Array(repeating: UInt8(ascii: " "), count: 200)
                    do throws(AgentStoreError) {
                        try outbox.append(topic: "t", payload: record)
                        #expect(failures.isEmpty, "record \(number) appended after a failure")
                        kept.append(record)
                    } catch {
                        failures.append(error)
                    }
                }
                #expect(outbox.count == kept.count)
            }
            #expect(kept.count - 3 <= 4096 / 200, "at most a page of slack: \(kept.count - 3) records")
            #expect(failures.allSatisfy { $0.code == .diskFull && $0.message.contains(path) }, "\(failures.first!)")
            // Reopened, the outbox holds exactly the records appended, intact and in order.
            try Outbox.withOutbox(directory: path, logger: Self.logger) { outbox in
                #expect(try outbox.peek(max: 1000).map(\.payload) == kept)
                // Space returns: appending works again.
                try FileManager.default.removeItem(atPath: directory + "/filler")
                try outbox.append(topic: "t", payload: payload(1000))
                #expect(outbox.count == kept.count + 1)
            }
        }
    }

    @Test func aBatchOnAFullDiskKeepsTheRecordsBeforeTheFailingOne() throws {
        try Self.withSmallFileSystem { directory in
            let path = directory + "/outbox"
            try Outbox.withOutbox(directory: path, logger: Self.logger) { outbox in
                try outbox.append(topic: "t", payload: payload(0))
                try Self.fill(directory + "/filler")
                let batch = (1...100).map { Entry("t", payload($0) + Array(repeating: 32, count: 200)) }
                let error = #expect(throws: AgentStoreError.self) { try outbox.append(contentsOf: batch) }
                #expect(error?.code == .diskFull)
                #expect(outbox.count >= 1 && outbox.count < 101)
            }
            try Outbox.withOutbox(directory: path, logger: Self.logger) { outbox in
                let records = try outbox.peek(max: 1000)
                #expect(records.first?.payload == payload(0))
                #expect(records.dropFirst().enumerated().allSatisfy { $1.payload.starts(with: payload($0 + 1)) })
            }
        }
    }

    @Test func aSaveOnAFullDiskKeepsThePreviousActivity() throws {
        try Self.withSmallFileSystem { directory in
            let store = ActivityStateStore<Attributes>(directory: directory + "/activities", logger: Self.logger)
            func activity(_ seq: Int) -> PersistedActivity<Attributes> {
                PersistedActivity(
                    activityID: "a1", attributesType: "Attributes", lastSeq: seq, trackSeq: seq,
                    attributes: Attributes(name: String(repeating: "v", count: 2000)), tripTotals: Data(),
                    startedAt: Date(timeIntervalSince1970: 1_795_000_000))
            }
            try store.save(activity(1))
            try Self.fill(directory + "/filler")
            let error = #expect(throws: AgentStoreError.self) { try store.save(activity(2)) }
            #expect(error?.code == .diskFull)
            #expect(try store.load() == activity(1))
            #expect(try contents(of: directory + "/activities") == ["activity.state"], "no temporary file left")
            try FileManager.default.removeItem(atPath: directory + "/filler")
            try store.save(activity(2))
            #expect(try store.load() == activity(2))
        }
    }
}
