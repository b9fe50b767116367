import AgentCore
import AgentStore
import AsyncSupport
import Foundation
import LiveActivity
import Logging
import Testing
import TestSupport

@testable import MyelineAgentKit

/// ``AgentStorage``'s two tiers on real files: what reaches the journal on the card and when, and
/// what each kind of stop leaves for the next start (docs/agent-store.md's table; the same
/// table against the real agent is `AgentDurabilityIntegrationTests`).
@Suite(.timeLimit(.minutes(1)))
struct AgentStorageTests {
    static let id = "A1"
    static let topic = "myeline/van-7/activities/A1/track"
    static let interval = AgentStorage.Durability.interval(.seconds(5))
    /// The spool's thread of every storage the tests open, as the agent's event loop is.
    static let loop = EventLoop(name: "test-spool")

    /// The storage of `directory` (journal in `directory/state`, spool in `directory/spool`).
    static func open(
        _ directory: String, durability: AgentStorage.Durability = interval, window: Int = AgentStorage.spoolWindow
    ) async throws -> AgentStorage {
        try await AgentStorage.open(
            stateDirectory: directory + "/state", spoolDirectory: directory + "/spool", durability: durability,
            capacity: 1000, window: window, spoolExecutor: loop, logger: Logger(label: "test"))
    }

    /// Every point waiting, in delivery order, as payloads, each batch acknowledged as delivered.
    static func drain(_ storage: AgentStorage) async throws -> [String] {
        var payloads: [String] = []
        while true {
            let batch = try await storage.peek(max: 4)
            guard let last = batch.last else { return payloads }
            payloads += batch.map { String(decoding: $0.payload, as: UTF8.self) }
            storage.delivered(through: last.index)
        }
    }

    static func payloads(_ seqs: ClosedRange<Int>) -> [String] { seqs.map { #"{"seq":\#($0)}"# } }

    static func record(trackSeq: Int, lastSeq: Int = 1) -> AgentCore.Record {
        AgentCore.Record(
            activityID: id, attributesType: "LocationActivityAttributes", lastSeq: lastSeq, trackSeq: trackSeq,
            attributes: LocationActivityAttributes(deviceID: try! DeviceID("van-7"), name: "Van 7"),
            tripTotals: Data(), startedAt: Date(timeIntervalSince1970: 1_790_000_000))
    }

    static func points(_ seqs: ClosedRange<Int>) -> [AgentCore.TrackPointEntry] {
        seqs.map { AgentCore.TrackPointEntry(topic: topic, payload: Array(#"{"seq":\#($0)}"#.utf8), seq: $0) }
    }

    /// Accepts points `seqs` of the activity, its record at the last one.
    static func accept(_ storage: AgentStorage, _ seqs: ClosedRange<Int>, milestone: Bool = false) async {
        let result = await storage.persist(
            points: points(seqs), records: [record(trackSeq: seqs.upperBound)],
            milestones: milestone ? [id] : [])
        #expect(result.failure == nil)
    }

    /// What the journal on the card holds: its undelivered points' payloads and the activity's record.
    static func journal(_ directory: String) throws -> (points: [String], record: AgentCore.Record?) {
        let outbox = try Outbox(directory: directory + "/state/outbox", logger: Logger(label: "test"))
        defer { outbox.close() }
        let points = try outbox.peek(max: 1000).map { String(decoding: $0.payload, as: UTF8.self) }
        let records = try ActivityStateStore<LocationActivityAttributes>.loadAll(
            directory: directory + "/state/activities", logger: Logger(label: "test"))
        return (points, records.first)
    }

    /// A power cut: the spool, in memory, is gone.
    static func cutPower(_ directory: String) throws {
        try FileManager.default.removeItem(atPath: directory + "/spool")
    }

    @Test("Nothing reaches the card before a commit; a commit writes the new activity and its undelivered points")
    func commitWritesUndelivered() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...3, milestone: true)
            #expect(try Self.journal(directory).points.isEmpty)
            #expect(try Self.journal(directory).record == nil)
            #expect(await storage.commit() == nil)
            let journal = try Self.journal(directory)
            #expect(journal.points == [#"{"seq":1}"#, #"{"seq":2}"#, #"{"seq":3}"#])
            // Written ahead: after a power cut numbering goes on after the reservation.
            #expect(journal.record?.trackSeq == 3 + SeqReservation.minimumBlock)
            await storage.close()
        }
    }

    @Test("A point delivered before the commit is never written to the card")
    func deliveredPointsAreNotWritten() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...5, milestone: true)
            let pending = try await storage.peek(max: 10)
            #expect(pending.count == 5)
            storage.delivered(through: pending[3].index)
            #expect(await storage.commit() == nil)
            #expect(try Self.journal(directory).points == [#"{"seq":5}"#])
            // Delivered after the commit: acknowledged in the journal by the next one.
            storage.delivered(through: pending[4].index)
            #expect(await storage.commit() == nil)
            #expect(try Self.journal(directory).points.isEmpty)
            await storage.close()
        }
    }

    @Test("A commit with nothing due writes no record")
    func idleCommit() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...1, milestone: true)
            #expect(await storage.commit() == nil)
            let path = directory + "/state/activities"
            let before = try FileManager.default.contentsOfDirectory(atPath: path).map {
                try FileManager.default.attributesOfItem(atPath: "\(path)/\($0)")[.modificationDate] as? Date
            }
            // Well inside the reservation, no milestone: nothing to write.
            await Self.accept(storage, 2...3)
            #expect(await storage.commit() == nil)
            let after = try FileManager.default.contentsOfDirectory(atPath: path).map {
                try FileManager.default.attributesOfItem(atPath: "\(path)/\($0)")[.modificationDate] as? Date
            }
            #expect(before == after)
            #expect(try Self.journal(directory).record?.trackSeq == 1 + SeqReservation.minimumBlock)
            await storage.close()
        }
    }

    @Test("Killed (the spool of this boot is left): everything comes back exactly, from the spool")
    func killed() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...3, milestone: true)
            #expect(await storage.commit() == nil)
            await Self.accept(storage, 4...6)
            // No close: the process is gone.
            let reopened = try await Self.open(directory)
            let loaded = await reopened.load(tail: 10)
            #expect(loaded.saved.map(\.trackSeq) == [6])
            #expect(try await reopened.peek(max: 10).count == 6)
            await reopened.close()
        }
    }

    @Test("A power cut (the spool is gone): the journal's points come back, numbering goes on after the reservation")
    func powerCut() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...3, milestone: true)
            #expect(await storage.commit() == nil)
            // Accepted (and perhaps published) after the commit: lost by the cut, their seqs not reused.
            await Self.accept(storage, 4...6)
            try Self.cutPower(directory)
            let reopened = try await Self.open(directory)
            let loaded = await reopened.load(tail: 10)
            #expect(loaded.saved.map(\.trackSeq) == [3 + SeqReservation.minimumBlock])
            let points = try await reopened.peek(max: 10).map { String(decoding: $0.payload, as: UTF8.self) }
            #expect(points == [#"{"seq":1}"#, #"{"seq":2}"#, #"{"seq":3}"#])
            await reopened.close()
        }
    }

    @Test("A spool of another boot is not believed: the journal is")
    func spoolOfAnotherBoot() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...2, milestone: true)
            #expect(await storage.commit() == nil)
            await Self.accept(storage, 3...9)
            // The spool was on a disk, not in memory, and the machine restarted.
            try "another-boot".write(toFile: directory + "/spool/boot", atomically: true, encoding: .utf8)
            let reopened = try await Self.open(directory)
            #expect(await reopened.load(tail: 10).saved.map(\.trackSeq) == [2 + SeqReservation.minimumBlock])
            #expect(try await reopened.peek(max: 10).count == 2)
            await reopened.close()
        }
    }

    @Test("A clean close leaves the exact seqs in the journal and no spool")
    func cleanClose() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...4, milestone: true)
            #expect(await storage.commit() == nil)
            await Self.accept(storage, 5...7)
            await storage.close()
            #expect(!FileManager.default.fileExists(atPath: directory + "/spool"))
            let journal = try Self.journal(directory)
            #expect(journal.record?.trackSeq == 7)
            #expect(journal.points.count == 7)
            let reopened = try await Self.open(directory)
            #expect(await reopened.load(tail: 10).saved.map(\.trackSeq) == [7])
            await reopened.close()
        }
    }

    @Test("A forgotten activity leaves the journal at the next commit")
    func removal() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...1, milestone: true)
            #expect(await storage.commit() == nil)
            await storage.remove(activityID: Self.id)
            #expect(try Self.journal(directory).record != nil)
            #expect(await storage.commit() == nil)
            #expect(try Self.journal(directory).record == nil)
            await storage.close()
        }
    }

    @Test("A burst past the reservation is on the card before persist returns")
    func burst() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...1, milestone: true)
            #expect(await storage.commit() == nil)
            let reserved = 1 + SeqReservation.minimumBlock
            // Beyond the reservation in one batch: persist commits first.
            await Self.accept(storage, 2...(reserved + 10))
            let journaled = try #require(try Self.journal(directory).record)
            #expect(journaled.trackSeq >= reserved + 10)
            await storage.close()
        }
    }

    @Test("every-fix: each batch is in the journal when persist returns, and there is no spool")
    func everyFix() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory, durability: .everyFix)
            await Self.accept(storage, 1...2, milestone: true)
            let journal = try Self.journal(directory)
            #expect(journal.points.count == 2)
            #expect(journal.record?.trackSeq == 2)
            #expect(!FileManager.default.fileExists(atPath: directory + "/spool"))
            await storage.close()
        }
    }

    @Test("A long outage: past the window the spool lets go of what the journal has, delivered from it, in order")
    func spoolWindow() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory, window: 8)
            await Self.accept(storage, 1...1, milestone: true)
            for first in stride(from: 2, through: 38, by: 6) {
                await Self.accept(storage, first...(first + 5))
                #expect(await storage.commit() == nil)
            }
            // 43 points waiting: the spool kept only what came after the last commit's trim.
            #expect(storage.primary.outbox.count <= 8)
            #expect(await storage.pendingCount() == 43)
            #expect(try await Self.drain(storage) == Self.payloads(1...43))
            #expect(await storage.pendingCount() == 0)
            #expect(await storage.commit() == nil)
            #expect(try Self.journal(directory).points.isEmpty)
            await storage.close()
        }
    }

    @Test("Points faster than the commits: the spool commits early and stays within twice its window")
    func spoolBoundedUnderAFlood() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory, window: 8)
            await Self.accept(storage, 1...1, milestone: true)
            // No commit from the committer: only persist's own.
            for first in stride(from: 2, through: 98, by: 4) {
                await Self.accept(storage, first...(first + 3))
                #expect(storage.primary.outbox.count < 2 * 8 + 4)
            }
            #expect(await storage.pendingCount() == 101)
            #expect(try await Self.drain(storage) == Self.payloads(1...101))
            await storage.close()
        }
    }

    @Test("Killed during a long outage: the points that left the spool come back from the journal, before the spool's")
    func killedWithPointsOutOfTheSpool() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory, window: 8)
            await Self.accept(storage, 1...1, milestone: true)
            for first in stride(from: 2, through: 20, by: 6) {
                await Self.accept(storage, first...(first + 5))
                #expect(await storage.commit() == nil)
            }
            let delivered = try await storage.peek(max: 3)
            storage.delivered(through: delivered[2].index)
            // Not committed yet: only the spool has these.
            await Self.accept(storage, 26...27)
            let reopened = try await Self.open(directory, window: 8)
            let waiting = try await Self.drain(reopened)
            // The three delivered may come again (at least once), nothing is missing, nothing repeats twice.
            #expect(Array(waiting.drop { $0 != #"{"seq":4}"# }) == Self.payloads(4...27))
            #expect(Set(waiting).count == waiting.count)
            await reopened.close()
        }
    }

    @Test("The points just appended are handed to the drainer from memory: the spool is not read back")
    func handedOverFromMemory() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...3, milestone: true)
            // The spool's segments emptied in place: a read of them would find nothing.
            let outbox = directory + "/spool/outbox"
            for name in try FileManager.default.contentsOfDirectory(atPath: outbox) where name.hasPrefix("segment-") {
                let file = try #require(FileHandle(forWritingAtPath: outbox + "/" + name))
                try file.truncate(atOffset: 0)
                try file.close()
            }
            let handed = try await storage.peek(max: 10)
            #expect(handed.map { String(decoding: $0.payload, as: UTF8.self) } == Self.payloads(1...3))
        }
    }

    /// What a kill right after `step` leaves for the next start: the payloads it delivers.
    static func afterAKill(_ step: (AgentStorage) async throws -> Void) async throws -> [String] {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...3, milestone: true)
            let batch = try await storage.peek(max: 10)
            storage.delivered(through: batch[2].index)
            #expect(await storage.pendingCount() == 0)
            try await step(storage)
            // No close: the process is gone.
            let reopened = try await Self.open(directory)
            defer { _ = storage }
            let waiting = try await Self.drain(reopened)
            await reopened.close()
            return waiting
        }
    }

    @Test(
        "A delivery reaches the spool's cursor with the next append or commit: a kill before it delivers those points again, never loses one"
    )
    func deliveryRecordedWithTheNextCall() async throws {
        // Not recorded yet: at least once, the same seqs.
        #expect(try await Self.afterAKill { _ in } == Self.payloads(1...3))
        // The next fix's append records it.
        #expect(try await Self.afterAKill { await Self.accept($0, 4...4) } == Self.payloads(4...4))
        // So does a commit, when no fix came since the one before it (the first here follows the fix).
        let afterTwoCommits = try await Self.afterAKill { storage in
            let failures = [await storage.commit(), await storage.commit()]
            #expect(failures == [nil, nil])
        }
        #expect(afterTwoCommits.isEmpty)
        let afterOneCommit = try await Self.afterAKill { storage in
            let failure = await storage.commit()
            #expect(failure == nil)
        }
        #expect(afterOneCommit == Self.payloads(1...3))
    }

    @Test(
        "The drainer behind (an outage): past what is kept in memory the older points are read from the spool, in order, each once"
    )
    func drainerBehindReadsTheSpool() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...1, milestone: true)
            for first in stride(from: 2, through: 292, by: 10) { await Self.accept(storage, first...(first + 9)) }
            #expect(await storage.pendingCount() == 301)
            var delivered: [String] = []
            while delivered.count < 100 {
                let batch = try await storage.peek(max: 7)
                delivered += batch.map { String(decoding: $0.payload, as: UTF8.self) }
                storage.delivered(through: batch[batch.count - 1].index)
            }
            // Points appended while it catches up.
            await Self.accept(storage, 302...305)
            delivered += try await Self.drain(storage)
            #expect(delivered == Self.payloads(1...305))
            #expect(await storage.pendingCount() == 0)
            await storage.close()
        }
    }

    @Test("Delivered points leave the spool's memory after 64, not with a segment of 8,192 records")
    func deliveredPointsLeaveTheSpool() async throws {
        try await withTemporaryDirectory { directory in
            let storage = try await Self.open(directory)
            await Self.accept(storage, 1...1, milestone: true)
            #expect(try await Self.drain(storage).count == 1)
            // An hour of fixes at 1 Hz and more, each batch delivered as it comes.
            for first in stride(from: 2, through: 3_992, by: 10) {
                await Self.accept(storage, first...(first + 9))
                #expect(try await Self.drain(storage).count == 10)
            }
            #expect(await storage.pendingCount() == 0)
            let outbox = directory + "/spool/outbox"
            let segments = try FileManager.default.contentsOfDirectory(atPath: outbox).filter {
                $0.hasPrefix("segment-")
            }
            let held = try segments.reduce(0) {
                $0 + (try FileManager.default.attributesOfItem(atPath: outbox + "/" + $1)[.size] as? Int ?? 0)
            }
            // A record of a four-digit seq, with its framing; the segments' headers beside them.
            let record = 10 + Self.topic.utf8.count + #"{"seq":1000}"#.utf8.count
            #expect(held <= (AgentStorage.spoolDeliveredSegmentRecords + 10) * record + 20 * segments.count)
            #expect(try await Self.drain(storage).isEmpty)
            await storage.close()
        }
    }

    @Test("A power cut is counted once and said; a clean stop or a kill is not one")
    func powerLossesAreCounted() async throws {
        try await withTemporaryDirectory { directory in
            let first = try await Self.open(directory)
            await Self.accept(first, 1...2, milestone: true)
            await first.close()
            // A clean stop, then a kill: no power loss.
            let second = try await Self.open(directory)
            #expect(await second.load(tail: 1).powerLosses == 0)
            let third = try await Self.open(directory)
            #expect(await third.load(tail: 1).powerLosses == 0)
            // A power cut while running.
            try Self.cutPower(directory)
            let fourth = try await Self.open(directory)
            #expect(await fourth.load(tail: 1).powerLosses == 1)
            await fourth.close()
            let fifth = try await Self.open(directory)
            #expect(await fifth.load(tail: 1).powerLosses == 1)
            await fifth.close()
            _ = (second, third)
        }
    }
}
