import Foundation
import Logging
import Testing

@testable import AgentStore

@Suite("Outbox")
struct OutboxTests {
    private let topic = "myeline/pi-1/activities/A/track"

    @Test("Records come out oldest first, and acknowledged ones are gone")
    func appendPeekAcknowledge() throws {
        try withTemporaryDirectory { directory in
            let outbox = try Outbox(directory: directory + "/outbox", logger: LogRecorder().logger)
            for number in 0..<5 { try outbox.append(topic: topic, payload: payload(number)) }
            #expect(outbox.count == 5)
            let first = try outbox.peek(max: 3)
            #expect(first.map(\.payload) == (0..<3).map(payload))
            #expect(first.map(\.index) == [0, 1, 2])
            #expect(first.allSatisfy { $0.topic == topic })
            #expect(try outbox.peek(max: 3) == first)
            try outbox.acknowledge(through: first[1].index)
            #expect(try outbox.peek(max: 10).map(\.payload) == (2..<5).map(payload))
            try outbox.removeFirst(2)
            #expect(try outbox.peek(max: 10).map(\.index) == [4])
            try outbox.acknowledge(through: 1)
            #expect(outbox.count == 1)
            try outbox.removeFirst(99)
            #expect(outbox.isEmpty)
            #expect(try outbox.peek(max: 10).isEmpty)
            outbox.close()
        }
    }

    @Test("Reopening yields the same undelivered records in the same order")
    func reopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { outbox in
                for number in 0..<10 { try outbox.append(topic: "t/\(number)", payload: payload(number)) }
                try outbox.acknowledge(through: 3)
            }
            let records = try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { outbox in
                let records = try outbox.peek(max: 100)
                try outbox.append(topic: "t/10", payload: payload(10))
                return records
            }
            #expect(records.map(\.index) == Array(4..<10))
            #expect(records.map(\.topic) == (4..<10).map { "t/\($0)" })
            #expect(records.map(\.payload) == (4..<10).map(payload))
            let again = try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { try $0.peek(max: 100) }
            #expect(again.map(\.index) == Array(4..<11))
        }
    }

    @Test("A record torn at any byte is discarded and every complete record before it recovered")
    func tornTail() throws {
        try withTemporaryDirectory { directory in
            let original = directory + "/original"
            try Outbox.withOutbox(directory: original, logger: LogRecorder().logger) { outbox in
                for number in 0..<4 { try outbox.append(topic: topic, payload: payload(number)) }
            }
            let segment = original + "/" + OutboxFormat.segmentName(base: 0)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
            let lastRecordLength = OutboxFormat.recordOverhead + topic.utf8.count + payload(3).count
            let lastStart = bytes.count - lastRecordLength
            for cut in lastStart..<bytes.count {
                let copy = directory + "/cut-\(cut)"
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
                try Data(bytes[0..<cut]).write(to: URL(fileURLWithPath: copy + "/" + OutboxFormat.segmentName(base: 0)))
                let recorder = LogRecorder()
                try Outbox.withOutbox(directory: copy, logger: recorder.logger) { outbox in
                    #expect(try outbox.peek(max: 10).map(\.payload) == (0..<3).map(payload), "cut at \(cut)")
                    try outbox.append(topic: topic, payload: payload(9))
                }
                #expect(recorder.events == (cut == lastStart ? [] : ["outbox.record.incomplete"]))
                let reopened = try Outbox.withOutbox(directory: copy, logger: LogRecorder().logger) {
                    try $0.peek(max: 10)
                }
                #expect(reopened.map(\.payload) == [0, 1, 2, 9].map(payload), "cut at \(cut)")
                #expect(reopened.map(\.index) == [0, 1, 2, 3])
            }
        }
    }

    @Test("A flipped bit in the last record is treated as a torn tail")
    func damagedLastRecord() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { outbox in
                for number in 0..<3 { try outbox.append(topic: topic, payload: payload(number)) }
            }
            let segment = URL(fileURLWithPath: path + "/" + OutboxFormat.segmentName(base: 0))
            var bytes = try [UInt8](Data(contentsOf: segment))
            bytes[bytes.count - 2] ^= 0x10
            try Data(bytes).write(to: segment)
            let records = try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { try $0.peek(max: 10) }
            #expect(records.map(\.payload) == (0..<2).map(payload))
        }
    }

    @Test("A garbage segment sends the outbox aside with one warning, and a fresh one starts")
    func garbageMovedAside() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let garbage = Data((0..<500).map { UInt8(truncatingIfNeeded: $0 &* 37) })
            try garbage.write(to: URL(fileURLWithPath: path + "/" + OutboxFormat.segmentName(base: 0)))
            let recorder = LogRecorder()
            try Outbox.withOutbox(directory: path, logger: recorder.logger) { outbox in
                #expect(outbox.isEmpty)
                try outbox.append(topic: topic, payload: payload(1))
            }
            #expect(recorder.events == ["outbox.damaged"])
            let aside = try contents(of: directory).filter { $0.hasPrefix("outbox.corrupt-") }
            #expect(aside.count == 1)
            #expect(
                aside.allSatisfy {
                    $0.range(of: #"^outbox\.corrupt-\d{8}T\d{6}Z$"#, options: .regularExpression) != nil
                })
            #expect(try contents(of: directory + "/" + aside[0]) == [OutboxFormat.segmentName(base: 0)])
            let again = LogRecorder()
            let records = try Outbox.withOutbox(directory: path, logger: again.logger) { try $0.peek(max: 10) }
            #expect(records.map(\.payload) == [payload(1)])
            #expect(again.events.isEmpty)
        }
    }

    @Test("Damage before the last segment sends the outbox aside")
    func damagedOlderSegment() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(segmentRecordLimit: 2)
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                for number in 0..<5 { try $0.append(topic: topic, payload: payload(number)) }
            }
            let first = URL(fileURLWithPath: path + "/" + OutboxFormat.segmentName(base: 0))
            var bytes = try [UInt8](Data(contentsOf: first))
            bytes[OutboxFormat.segmentHeaderSize + 12] ^= 0xFF
            try Data(bytes).write(to: first)
            let recorder = LogRecorder()
            let count = try Outbox.withOutbox(directory: path, configuration: configuration, logger: recorder.logger) {
                $0.count
            }
            #expect(count == 0)
            #expect(recorder.events == ["outbox.damaged"])
            #expect(try contents(of: directory).contains { $0.hasPrefix("outbox.corrupt-") })
        }
    }

    @Test("A damaged cursor is moved aside and the records are delivered again")
    func damagedCursor() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { outbox in
                for number in 0..<3 { try outbox.append(topic: topic, payload: payload(number)) }
                try outbox.acknowledge(through: 0)
            }
            try Data("not a cursor".utf8).write(to: URL(fileURLWithPath: path + "/cursor"))
            let recorder = LogRecorder()
            let records = try Outbox.withOutbox(directory: path, logger: recorder.logger) { try $0.peek(max: 10) }
            #expect(records.map(\.index) == [0, 1, 2])
            #expect(recorder.events == ["outbox.cursor.damaged"])
            #expect(try contents(of: path).contains { $0.hasPrefix("cursor.corrupt-") })
        }
    }

    @Test("When full, the oldest records are dropped and counted, also across a reopen")
    func capacity() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(capacity: 5, segmentRecordLimit: 3)
            let recorder = LogRecorder()
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: recorder.logger) { outbox in
                for number in 0..<12 { try outbox.append(topic: topic, payload: payload(number)) }
                #expect(outbox.count == 5)
                #expect(outbox.droppedCount == 7)
                #expect(try outbox.peek(max: 10).map(\.payload) == (7..<12).map(payload))
            }
            #expect(recorder.events == ["outbox.full"])
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox throws in
                #expect(outbox.droppedCount == 7)
                #expect(try outbox.peek(max: 10).map(\.index) == Array(7..<12))
            }
            let smaller = OutboxConfiguration(capacity: 2, segmentRecordLimit: 3)
            try Outbox.withOutbox(directory: path, configuration: smaller, logger: LogRecorder().logger) {
                outbox throws in
                #expect(outbox.droppedCount == 10)
                #expect(try outbox.peek(max: 10).map(\.index) == [10, 11])
            }
        }
    }

    @Test("A batch appends in order across segments with one flush, and drops the oldest when full")
    func appendBatch() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(capacity: 6, segmentRecordLimit: 4)
            let recorder = LogRecorder()
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: recorder.logger) { outbox in
                try outbox.append(contentsOf: [Entry]())
                #expect(outbox.isEmpty)
                try outbox.append(contentsOf: (0..<3).map { Entry(topic, payload($0)) })
                #expect(try outbox.peek(max: 10).map(\.payload) == (0..<3).map(payload))
                try outbox.append(contentsOf: (3..<9).map { Entry(topic, payload($0)) })
                #expect(outbox.count == 6)
                #expect(outbox.droppedCount == 3)
                #expect(try outbox.peek(max: 10).map(\.payload) == (3..<9).map(payload))
            }
            #expect(recorder.events == ["outbox.full"])
            // What a batch appended is on disk: a reopen finds it all.
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox throws in
                #expect(try outbox.peek(max: 10).map(\.payload) == (3..<9).map(payload))
            }
        }
    }

    @Test("newest(max:) gives the last undelivered records, across segments, oldest of them first")
    func newest() throws {
        try withTemporaryDirectory { directory in
            let configuration = OutboxConfiguration(segmentRecordLimit: 3)
            try Outbox.withOutbox(
                directory: directory + "/outbox", configuration: configuration, logger: LogRecorder().logger
            ) {
                outbox throws in
                #expect(try outbox.newest(max: 5).isEmpty)
                try outbox.append(contentsOf: (0..<8).map { Entry(topic, payload($0)) })
                #expect(try outbox.newest(max: 5).map(\.payload) == (3..<8).map(payload))
                #expect(try outbox.newest(max: 5).map(\.index) == Array(3..<8))
                try outbox.acknowledge(through: 5)
                #expect(try outbox.newest(max: 5).map(\.payload) == (6..<8).map(payload), "delivered ones are not")
                #expect(try outbox.newest(max: 0).isEmpty)
            }
        }
    }

    @Test("Delivered segments are deleted and the order is kept across segments")
    func compaction() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(segmentRecordLimit: 3)
            func segments() throws -> [String] { try contents(of: path).filter { $0.hasPrefix("segment-") } }
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox in
                for number in 0..<10 { try outbox.append(topic: topic, payload: payload(number)) }
                #expect(try segments().count == 4)
                #expect(try outbox.peek(max: 100).map(\.payload) == (0..<10).map(payload))
                try outbox.acknowledge(through: 6)
                #expect(try segments() == [OutboxFormat.segmentName(base: 6), OutboxFormat.segmentName(base: 9)])
                #expect(try outbox.peek(max: 2).map(\.index) == [7, 8])
                try outbox.removeFirst(3)
                #expect(try segments() == [OutboxFormat.segmentName(base: 9)])
                #expect(outbox.isEmpty)
                for number in 10..<14 { try outbox.append(topic: topic, payload: payload(number)) }
                #expect(try segments() == [OutboxFormat.segmentName(base: 9), OutboxFormat.segmentName(base: 12)])
            }
            let records = try Outbox.withOutbox(
                directory: path, configuration: configuration, logger: LogRecorder().logger
            ) { try $0.peek(max: 100) }
            #expect(records.map(\.payload) == (10..<14).map(payload))
            #expect(records.map(\.index) == Array(10..<14))
        }
    }

    @Test("A segment deleted by someone else: its undelivered records are counted as dropped and said once")
    func deletedSegment() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(segmentRecordLimit: 3)
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox in
                for number in 0..<8 { try outbox.append(topic: topic, payload: payload(number)) }
                try outbox.acknowledge(through: 0)
            }
            // Records 1 and 2 were not delivered.
            try FileManager.default.removeItem(atPath: path + "/" + OutboxFormat.segmentName(base: 0))
            let log = LogRecorder()
            let kept = try Outbox.withOutbox(directory: path, configuration: configuration, logger: log.logger) {
                outbox in (outbox.droppedCount, try outbox.peek(max: 100).map(\.payload))
            }
            #expect(kept.0 == 2)
            #expect(kept.1 == (3..<8).map(payload))
            #expect(log.events == ["outbox.records.missing"])
            // Counted once: the cursor says so now.
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: log.logger) { outbox in
                #expect(outbox.droppedCount == 2)
            }
            #expect(log.events == ["outbox.records.missing"])
        }
    }

    @Test(
        "Never flushed (an outbox in memory): records, acknowledgements and segments work the same, and outlive the process"
    )
    func neverFlushed() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(syncPolicy: .never, segmentRecordLimit: 3)
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox in
                for number in 0..<8 { try outbox.append(topic: topic, payload: payload(number)) }
                try outbox.acknowledge(through: 3)
                try outbox.sync()
            }
            let records = try Outbox.withOutbox(
                directory: path, configuration: configuration, logger: LogRecorder().logger
            ) { try $0.peek(max: 100) }
            #expect(records.map(\.payload) == (4..<8).map(payload))
        }
    }

    @Test("An outbox in memory writes its cursor over the old one in place; a kill leaves the last acknowledgement")
    func neverFlushedCursorInPlace() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(syncPolicy: .never)
            let outbox = try Outbox(directory: path, configuration: configuration, logger: LogRecorder().logger)
            for number in 0..<6 { try outbox.append(topic: topic, payload: payload(number)) }
            try outbox.acknowledge(through: 1)
            let file = { try FileManager.default.attributesOfItem(atPath: path + "/cursor")[.systemFileNumber] as? Int }
            let before = try file()
            try outbox.acknowledge(through: 3)
            // The same file, written over: no temporary file renamed over it at each delivery.
            #expect(try file() == before)
            // Killed now (no close): the next start reads the last acknowledgement.
            let reopened = try Outbox(directory: path, configuration: configuration, logger: LogRecorder().logger)
            #expect(try reopened.peek(max: 100).map(\.payload) == (4..<6).map(payload))
            reopened.close()
            outbox.close()
        }
    }

    @Test("A segment all delivered goes at the next append past deliveredSegmentRecordLimit; one waiting fills up")
    func deliveredSegmentRecordLimit() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(segmentRecordLimit: 10, deliveredSegmentRecordLimit: 3)
            func segments() throws -> [String] { try contents(of: path).filter { $0.hasPrefix("segment-") } }
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                outbox in
                // Waiting records fill the segment up to segmentRecordLimit.
                for number in 0..<5 { try outbox.append(topic: topic, payload: payload(number)) }
                #expect(try segments() == [OutboxFormat.segmentName(base: 0)])
                // All delivered: the next append starts a segment and the delivered one is deleted.
                try outbox.acknowledge(through: 4)
                #expect(try segments() == [OutboxFormat.segmentName(base: 0)])
                try outbox.append(topic: topic, payload: payload(5))
                #expect(try segments() == [OutboxFormat.segmentName(base: 5)])
                // Below the limit, a delivered segment stays.
                try outbox.acknowledge(through: 5)
                try outbox.append(topic: topic, payload: payload(6))
                #expect(try segments() == [OutboxFormat.segmentName(base: 5)])
                #expect(try outbox.peek(max: 10).map(\.payload) == [payload(6)])
            }
            let records = try Outbox.withOutbox(
                directory: path, configuration: configuration, logger: LogRecorder().logger
            ) { try $0.peek(max: 10) }
            #expect(records.map(\.index) == [6])
        }
    }

    @Test("Segments also roll over by size")
    func segmentByteLimit() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(segmentByteLimit: 4096)
            let big = [UInt8](repeating: 0x41, count: 1500)
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                for _ in 0..<5 { try $0.append(topic: topic, payload: big) }
            }
            #expect(try contents(of: path).filter { $0.hasPrefix("segment-") }.count == 3)
            let records = try Outbox.withOutbox(
                directory: path, configuration: configuration, logger: LogRecorder().logger
            ) { try $0.peek(max: 10) }
            #expect(records.map(\.index) == Array(0..<5))
            #expect(records.allSatisfy { $0.payload == big })
        }
    }

    @Test("The batched policy keeps every record through sync and a clean close")
    func batched() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(syncPolicy: .batched(records: 100, interval: .seconds(3600)))
            try Outbox.withOutbox(directory: path, configuration: configuration, logger: LogRecorder().logger) {
                for number in 0..<5 { try $0.append(topic: topic, payload: payload(number)) }
                try $0.sync()
                try $0.append(topic: topic, payload: payload(5))
            }
            let records = try Outbox.withOutbox(directory: path, logger: LogRecorder().logger) { try $0.peek(max: 10) }
            #expect(records.map(\.payload) == (0..<6).map(payload))
        }
    }

    @Test("Oversized records, bad bounds and a closed outbox are errors, not crashes")
    func errors() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/outbox"
            let configuration = OutboxConfiguration(maximumRecordSize: 64)
            let outbox = try Outbox(directory: path, configuration: configuration, logger: LogRecorder().logger)
            #expect(throws: AgentStoreError.self) {
                try outbox.append(topic: topic, payload: [UInt8](repeating: 0, count: 100))
            }
            let tooLong = #expect(throws: AgentStoreError.self) {
                try outbox.append(topic: String(repeating: "x", count: 70_000), payload: [])
            }
            #expect(tooLong?.code == .recordTooLarge)
            #expect(outbox.isEmpty)
            outbox.close()
            let closed = #expect(throws: AgentStoreError.self) {
                try outbox.append(topic: topic, payload: [])
            }
            #expect(closed?.code == .closed)
            #expect(closed?.message.contains(path) == true)
            let invalid = #expect(throws: AgentStoreError.self) {
                _ = try Outbox(
                    directory: path, configuration: OutboxConfiguration(capacity: 0), logger: LogRecorder().logger)
            }
            #expect(invalid?.code == .invalidConfiguration)
            let noDeliveredRecords = #expect(throws: AgentStoreError.self) {
                _ = try Outbox(
                    directory: path, configuration: OutboxConfiguration(deliveredSegmentRecordLimit: 0),
                    logger: LogRecorder().logger)
            }
            #expect(noDeliveredRecords?.message.contains("deliveredSegmentRecordLimit 0") == true)
        }
    }

    @Test("A state directory that cannot be created is an error naming it")
    func unwritableDirectory() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: file))
            let error = #expect(throws: AgentStoreError.self) {
                _ = try Outbox(directory: file + "/outbox", logger: LogRecorder().logger)
            }
            #expect(error?.code == .io)
            #expect(error?.message.contains(file) == true)
        }
    }

    @Test("CRC-32 matches the standard check value")
    func crc() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
