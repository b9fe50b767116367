import Foundation
import Testing

@testable import AgentStore

@Suite("FileIO.parentDirectory")
struct ParentDirectoryTests {
    /// The directory synced after a rename into it: as NSString's deletingLastPathComponent for
    /// the paths the store uses, and "." (the working directory) for a bare name.
    @Test(arguments: [
        ("/var/lib/myeline/activity-a1.json", "/var/lib/myeline"), ("/var/lib/myeline/", "/var/lib"), ("/state", "/"),
        ("state/outbox", "state"), ("outbox", "."), ("/", "/"),
    ])
    func isWhatPrecedesTheLastSlash(path: String, expected: String) {
        #expect(FileIO.parentDirectory(of: path) == expected)
    }
}

@Suite("ActivityStateStore")
struct ActivityStateStoreTests {
    struct Attributes: Codable, Hashable, Sendable {
        var name: String
        var destination: [Double]?
    }

    private func activity(seq: Int) -> PersistedActivity<Attributes> {
        PersistedActivity(
            activityID: "7D1E2A9C", attributesType: "LocationActivityAttributes", lastSeq: seq, trackSeq: seq * 3,
            attributes: Attributes(name: "Van 3", destination: [48.8584, 2.2945]),
            tripTotals: Data([1, 2, 3, UInt8(seq % 256)]),
            startedAt: Date(timeIntervalSince1970: 1_795_000_000.123))
    }

    @Test("Absent is nil; saved comes back equal; a second save replaces the first")
    func roundTrip() throws {
        try withTemporaryDirectory { directory in
            let store = ActivityStateStore<Attributes>(directory: directory, logger: LogRecorder().logger)
            #expect(try store.load() == nil)
            try store.save(activity(seq: 41))
            #expect(try store.load() == activity(seq: 41))
            try store.save(activity(seq: 42))
            let reopened = ActivityStateStore<Attributes>(directory: directory, logger: LogRecorder().logger)
            #expect(try reopened.load() == activity(seq: 42))
            #expect(try contents(of: directory) == ["activity.state"])
            try store.remove()
            #expect(try store.load() == nil)
            try store.remove()
        }
    }

    @Test("One file per activity: loadAll finds each, creates nothing, and skips damaged files")
    func loadAll() throws {
        try withTemporaryDirectory { directory in
            let activities = directory + "/activities"
            let recorder = LogRecorder()
            #expect(try ActivityStateStore<Attributes>.loadAll(directory: activities, logger: recorder.logger).isEmpty)
            var ended = activity(seq: 7)
            ended.activityID = "b-ended"
            ended.dismissalDate = Date(timeIntervalSince1970: 1_795_000_600)
            var running = activity(seq: 3)
            running.activityID = "a-running"
            for record in [ended, running] {
                try ActivityStateStore<Attributes>(
                    directory: activities, activityID: record.activityID, logger: recorder.logger
                )
                .save(record)
            }
            try Data("not a state file".utf8).write(to: URL(fileURLWithPath: activities + "/c-damaged.state"))
            try Data("ignored".utf8).write(to: URL(fileURLWithPath: activities + "/notes.txt"))
            let loaded = try ActivityStateStore<Attributes>.loadAll(directory: activities, logger: recorder.logger)
            #expect(loaded == [running, ended])
            #expect(loaded.last?.dismissalDate == ended.dismissalDate)
            #expect(recorder.events == ["store.activity.damaged"])
            #expect(try contents(of: activities).contains { $0.hasPrefix("c-damaged.state.corrupt-") })
        }
    }

    @Test("A leftover temporary file from a crash mid-save does not affect the saved record")
    func crashDuringSave() throws {
        try withTemporaryDirectory { directory in
            let store = ActivityStateStore<Attributes>(directory: directory, logger: LogRecorder().logger)
            try store.save(activity(seq: 1))
            try Data("half a reco".utf8).write(to: URL(fileURLWithPath: store.path + ".tmp"))
            #expect(try store.load() == activity(seq: 1))
            try store.save(activity(seq: 2))
            #expect(try store.load() == activity(seq: 2))
            #expect(try contents(of: directory) == ["activity.state"])
        }
    }

    @Test(
        "A damaged file is moved aside with one warning and load returns nil",
        arguments: ["garbage", "flipped", "truncated", "other type"])
    func corrupt(damage: String) throws {
        try withTemporaryDirectory { directory in
            let recorder = LogRecorder()
            let store = ActivityStateStore<Attributes>(directory: directory, logger: recorder.logger)
            try store.save(activity(seq: 5))
            let url = URL(fileURLWithPath: store.path)
            var bytes = try [UInt8](Data(contentsOf: url))
            switch damage {
            case "garbage": bytes = Array("{\"activityID\": 3}".utf8)
            case "flipped": bytes[bytes.count / 2] ^= 0x04
            case "truncated": bytes.removeLast(7)
            default:
                try ActivityStateStore<Int>(directory: directory, logger: recorder.logger).save(
                    PersistedActivity(
                        activityID: "x", attributesType: "Int", lastSeq: 1, trackSeq: 1, attributes: 7,
                        tripTotals: Data(), startedAt: Date()))
                bytes = try [UInt8](Data(contentsOf: url))
            }
            try Data(bytes).write(to: url)
            #expect(try store.load() == nil)
            #expect(recorder.events == ["store.activity.damaged"])
            let names = try contents(of: directory)
            #expect(names.count == 1)
            #expect(names[0].hasPrefix("activity.state.corrupt-"))
            #expect(try store.load() == nil)
            try store.save(activity(seq: 6))
            #expect(try store.load() == activity(seq: 6))
        }
    }

    @Test("A save that cannot be written is an error naming the file, and the old record stays")
    func unwritable() throws {
        try withTemporaryDirectory { directory in
            // A missing directory is created; one under a regular file cannot be.
            let missing = ActivityStateStore<Attributes>(
                directory: directory + "/missing", logger: LogRecorder().logger)
            try missing.save(activity(seq: 1))
            #expect(try missing.load() == activity(seq: 1))
            try Data().write(to: URL(fileURLWithPath: directory + "/file"))
            let store = ActivityStateStore<Attributes>(
                directory: directory + "/file/state", logger: LogRecorder().logger)
            let error = #expect(throws: AgentStoreError.self) {
                try store.save(activity(seq: 1))
            }
            #expect(error?.code == .io)
            #expect(error?.message.contains(directory + "/file/state") == true)
        }
    }
}
