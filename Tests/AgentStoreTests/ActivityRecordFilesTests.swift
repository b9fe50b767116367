import Foundation
import Testing

@testable import AgentStore

/// The spool's records written in place (``ActivityRecordFiles``): what ``ActivityStateStore``
/// loads is always the last record saved, whether it grew, shrank, outgrew a page or came back
/// after a removal; the file is never replaced while it fits a page.
@Suite("ActivityRecordFiles")
struct ActivityRecordFilesTests {
    typealias Attributes = ActivityStateStoreTests.Attributes

    static func activity(_ id: String = "7d1e2a9c", seq: Int, name: String = "Van 3") -> PersistedActivity<Attributes> {
        PersistedActivity(
            activityID: id, attributesType: "LocationActivityAttributes", lastSeq: seq, trackSeq: seq * 3,
            attributes: Attributes(name: name, destination: [48.8584, 2.2945]),
            tripTotals: Data([1, 2, 3, UInt8(seq % 256)]), startedAt: Date(timeIntervalSince1970: 1_795_000_000.123))
    }

    static func load(_ id: String, in directory: String) throws -> PersistedActivity<Attributes>? {
        try ActivityStateStore<Attributes>(directory: directory, activityID: id, logger: LogRecorder().logger).load()
    }

    static func inode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
    }

    @Test("each save is what loads, longer or shorter, in the same file; padding stays inside the record")
    func savesInPlace() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/activities"
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            let path = directory + "/7d1e2a9c.state"
            // (seq, name): longer, shorter, much shorter, longer again.
            let steps = [(1, "Van 3"), (2, String(repeating: "long name ", count: 20)), (3, "V"), (100_000, "Van 3")]
            var inode: Int?
            var longest = 0
            for (seq, name) in steps {
                let record = Self.activity(seq: seq, name: name)
                try files.save(record)
                #expect(try Self.load("7d1e2a9c", in: directory) == record)
                let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
                longest = max(longest, size)
                #expect(size == longest, "the file never shrinks: one write, no truncation")
                if let inode { #expect(try Self.inode(path) == inode, "written over, not replaced") }
                inode = try Self.inode(path)
            }
            #expect(try contents(of: directory) == ["7d1e2a9c.state"])
            files.closeAll()
            // After the descriptors were let go (a restart), the next save opens the file again.
            try files.save(Self.activity(seq: 5))
            #expect(try Self.load("7d1e2a9c", in: directory) == Self.activity(seq: 5))
        }
    }

    @Test("a record larger than a page replaces the file, and records that fit go back in place")
    func largerThanAPageIsReplaced() throws {
        try withTemporaryDirectory { directory in
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            let path = directory + "/a.state"
            try files.save(Self.activity("a", seq: 1))
            let first = try Self.inode(path)
            let large = Self.activity("a", seq: 2, name: String(repeating: "x", count: 5_000))
            try files.save(large)
            #expect(try Self.load("a", in: directory) == large)
            #expect(try Self.inode(path) != first)
            // The next one, padded to the large file's length, outgrows a page too: it replaces the
            // file with one of its own size; the one after it is written over that one.
            try files.save(Self.activity("a", seq: 3))
            #expect(try Self.load("a", in: directory) == Self.activity("a", seq: 3))
            let small = try Self.inode(path)
            try files.save(Self.activity("a", seq: 4))
            #expect(try Self.load("a", in: directory) == Self.activity("a", seq: 4))
            #expect(try Self.inode(path) == small)
            #expect(try contents(of: directory) == ["a.state"])
        }
    }

    @Test("a removed record is gone, and a later save of it starts a new file; others are untouched")
    func removeLetsTheFileGo() throws {
        try withTemporaryDirectory { directory in
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            try files.save(Self.activity("a", seq: 1))
            try files.save(Self.activity("b", seq: 1))
            try files.remove(activityID: "a")
            try files.remove(activityID: "never-saved")
            #expect(try contents(of: directory) == ["b.state"])
            #expect(try Self.load("a", in: directory) == nil)
            try files.save(Self.activity("a", seq: 2, name: "V"))
            #expect(try Self.load("a", in: directory) == Self.activity("a", seq: 2, name: "V"))
            #expect(try Self.load("b", in: directory) == Self.activity("b", seq: 1))
        }
    }

    @Test("a record that cannot be written says which file, and the next save opens it again")
    func aFailedWriteIsReported() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/activities"
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            try files.save(Self.activity(seq: 1))
            // The directory replaced by a file: the cached descriptor still writes (its inode), a new open cannot.
            files.closeAll()
            try FileManager.default.removeItem(atPath: directory)
            try Data().write(to: URL(fileURLWithPath: directory))
            let error = #expect(throws: AgentStoreError.self) { try files.save(Self.activity(seq: 2)) }
            #expect(error?.message.contains(directory) == true)
            try FileManager.default.removeItem(atPath: directory)
            try files.save(Self.activity(seq: 3))
            #expect(try Self.load("7d1e2a9c", in: directory) == Self.activity(seq: 3))
        }
    }
}
