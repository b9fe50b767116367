import Foundation
import Testing

@_spi(Benchmarks) @testable import AgentStore
import enum TestSupport.JSONSamples
import struct TestSupport.SeededGenerator

/// The activity's record written without `JSONEncoder` (``ActivityRecordEncoder``, issue 24): the
/// file `ActivityStateStore` wrote before, byte for byte, so that old and new agents read each
/// other's files; what `JSONDecoder` reads back is the record saved; what JSON cannot hold is
/// refused, not written.
@Suite("ActivityRecordEncoder")
struct ActivityRecordEncoderTests {
    /// Attributes with what a writer can get wrong: strings, optionals, numbers, a date, nesting.
    struct Attributes: Codable, Hashable, Sendable {
        struct Stop: Codable, Hashable, Sendable {
            var label: String
            var weight: Double
        }

        var name: String
        var driver: String?
        var destination: [Double]?
        var since: Date?
        var stop: Stop?
    }

    /// The file as `ActivityStateStore` wrote it before: `JSONEncoder` with sorted keys, padded with
    /// spaces to `length`, behind the header.
    static func previousFile<A: Codable & Sendable>(_ activity: PersistedActivity<A>, paddedTo length: Int = 0)
        throws -> [UInt8]
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var body = Array(try encoder.encode(activity))
        if 16 + body.count < length { body += repeatElement(UInt8(ascii: " "), count: length - 16 - body.count) }
        var bytes = Array("MYACTST1".utf8)
        bytes.appendLittleEndian(UInt32(body.count))
        bytes.appendLittleEndian(CRC32.checksum(body))
        return bytes + body
    }

    /// The record a file's bytes hold, as `ActivityStateStore.load` reads it.
    static func decoded<A: Codable & Sendable>(_ bytes: [UInt8], as type: A.Type) throws -> PersistedActivity<A> {
        try ActivityStateStore<A>.decode(bytes).get()
    }

    static func record(
        id: String = "7d1e2a9c", name: String = "Van 3 / Nord",
        startedAt: Date = Date(timeIntervalSince1970: 1_795_000_000.123),
        dismissal: Date? = nil
    ) -> PersistedActivity<Attributes> {
        PersistedActivity(
            activityID: id, attributesType: "location", lastSeq: 41, trackSeq: 123,
            attributes: Attributes(name: name, destination: [48.8584, 2.2945]),
            tripTotals: Data(#"{"paused":false,"distance":1434.5,"status":"Out for delivery","elapsed":60}"#.utf8),
            startedAt: startedAt, dismissalDate: dismissal)
    }

    /// A random record: every string hostile or random, every optional present or not, numbers of
    /// every kind, trip totals of any length (their base64 holds slashes).
    static func randomRecord(using random: inout SeededGenerator) -> PersistedActivity<Attributes> {
        func maybe<T>(_ value: T) -> T? { Bool.random(using: &random) ? value : nil }
        func string() -> String { JSONSamples.randomString(maximumLength: 40, using: &random) }
        func double() -> Double { JSONSamples.randomDouble(using: &random) }
        let attributes = Attributes(
            name: string(), driver: maybe(string()),
            destination: maybe((0..<Int.random(in: 0...3, using: &random)).map { _ in double() }),
            since: maybe(Date(timeIntervalSinceReferenceDate: double())),
            stop: maybe(Attributes.Stop(label: string(), weight: double())))
        return PersistedActivity(
            activityID: string(), attributesType: string(), lastSeq: Int(truncatingIfNeeded: random.next()),
            trackSeq: Int.random(in: -1...1_000_000, using: &random), attributes: attributes,
            tripTotals: Data(
                (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
            startedAt: Date(timeIntervalSinceReferenceDate: double()),
            dismissalDate: maybe(Date(timeIntervalSinceReferenceDate: double())))
    }

    @Test("a record is the file the previous encoder wrote, which old agents read, and reads back equal")
    func theFileIsThePreviousEncodersFile() throws {
        let record = Self.record(dismissal: Date(timeIntervalSince1970: 1_795_000_600))
        var encoder = ActivityRecordEncoder<Attributes>()
        let bytes = try encoder.encode(record)
        // What an agent before issue 24's ninth part wrote for it (its JSONEncoder, sorted keys).
        let body =
            #"{"activityID":"7d1e2a9c","attributes":{"destination":[48.8584,2.2945],"name":"Van 3 \/ Nord"},"#
            + #""attributesType":"location","dismissalDate":816693400,"lastSeq":41,"startedAt":816692800.1229999,"#
            + #""trackSeq":123,"tripTotals":"eyJwYXVzZWQiOmZhbHNlLCJkaXN0YW5jZSI6MTQzNC41LCJzdGF0dXMiOiJPdXQgZm9y"#
            + #"IGRlbGl2ZXJ5IiwiZWxhcHNlZCI6NjB9"}"#
        #expect(String(decoding: bytes.dropFirst(16), as: UTF8.self) == body)
        #expect(bytes == (try Self.previousFile(record)))
        #expect(try Self.decoded(bytes, as: Attributes.self) == record)
        // Running: no dismissal date.
        let running = Self.record()
        #expect(try encoder.encode(running) == (try Self.previousFile(running)))
        #expect(!String(decoding: try encoder.encode(running), as: UTF8.self).contains("dismissalDate"))
    }

    @Test("5,000 random records: the previous encoder's bytes, padded or not, and JSONDecoder reads each back")
    func randomRecordsRoundTrip() throws {
        var random = SeededGenerator(seed: 30)
        var encoder = ActivityRecordEncoder<Attributes>()
        var padded = 0
        var previous: PersistedActivity<Attributes>?
        for _ in 0..<5_000 {
            var record = Self.randomRecord(using: &random)
            // Now and then the same attributes as the record before: the encoder reuses their JSON.
            if let previous, Bool.random(using: &random) { record.attributes = previous.attributes }
            previous = record
            let length = Bool.random(using: &random) ? 0 : Int.random(in: 0...4_096, using: &random)
            let bytes = try encoder.encode(record, paddedTo: length)
            let unpadded = try Self.previousFile(record).count
            #expect(bytes.count == max(length, unpadded))
            if bytes.count > unpadded { padded += 1 }
            #expect(bytes == (try Self.previousFile(record, paddedTo: length)))
            // The benchmarks' baseline is that file too.
            #expect(try ActivityRecordEncoder.encodeWithJSONEncoder(record, paddedTo: length) == bytes)
            #expect(try Self.decoded(bytes, as: Attributes.self) == record)
        }
        #expect(padded > 1_000)
    }

    @Test("hostile strings and extreme numbers in every field read back equal", arguments: JSONSamples.hostileStrings)
    func hostileStrings(_ text: String) throws {
        var encoder = ActivityRecordEncoder<Attributes>()
        let record = PersistedActivity(
            activityID: text, attributesType: text, lastSeq: .min, trackSeq: .max,
            attributes: Attributes(name: text, driver: text, stop: .init(label: text, weight: -0.0)),
            tripTotals: Data(text.utf8), startedAt: Date(timeIntervalSinceReferenceDate: -1e-300))
        let bytes = try encoder.encode(record)
        #expect(bytes == (try Self.previousFile(record)))
        #expect(try Self.decoded(bytes, as: Attributes.self) == record)
    }

    @Test(arguments: JSONSamples.extremeNumbers)
    func extremeNumbersReadBackExactly(_ value: Double) throws {
        var encoder = ActivityRecordEncoder<Attributes>()
        var record = Self.record(
            startedAt: Date(timeIntervalSinceReferenceDate: value),
            dismissal: Date(timeIntervalSinceReferenceDate: -value))
        record.attributes.destination = [value, -value]
        let bytes = try encoder.encode(record)
        #expect(bytes == (try Self.previousFile(record)))
        let decoded = try Self.decoded(bytes, as: Attributes.self)
        #expect(decoded == record)
    }

    @Test("the attributes' JSON is reused while they are equal, and encoded again when they change")
    func attributesAreEncodedAgainWhenTheyChange() throws {
        var encoder = ActivityRecordEncoder<Attributes>()
        var record = Self.record()
        for (seq, name) in [(1, "Van 3"), (2, "Van 3"), (3, "Van 4 \"north\""), (4, "Van 4 \"north\""), (5, "Van 3")] {
            record.lastSeq = seq
            record.attributes.name = name
            let bytes = try encoder.encode(record)
            #expect(try Self.decoded(bytes, as: Attributes.self) == record)
            #expect(bytes == (try Self.previousFile(record)))
        }
        // One encoder for records of two activities, in turn.
        let other = Self.record(id: "b", name: "Truck 9")
        for _ in 0..<2 {
            #expect(try Self.decoded(try encoder.encode(record), as: Attributes.self) == record)
            #expect(try Self.decoded(try encoder.encode(other), as: Attributes.self) == other)
        }
    }

    @Test("a store saved again and again with one encoder (the journal's) writes the file save() writes")
    func aStoreSavesWithItsEncoder() throws {
        try withTemporaryDirectory { directory in
            let store = ActivityStateStore<Attributes>(
                directory: directory, activityID: "7d1e2a9c", logger: LogRecorder().logger)
            var encoder = ActivityRecordEncoder<Attributes>()
            var record = Self.record()
            for (seq, name) in [(1, "Van 3"), (2, "Van 3"), (3, "Van 4"), (4, "Van 3")] {
                record.lastSeq = seq
                record.attributes.name = name
                try store.save(record, durable: seq.isMultiple(of: 2), encoder: &encoder)
                #expect(try store.load() == record)
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path)))
                #expect(bytes == (try Self.previousFile(record)))
            }
            let bad = Self.record(startedAt: Date(timeIntervalSinceReferenceDate: .infinity))
            #expect(throws: AgentStoreError.self) { try store.save(bad, encoder: &encoder) }
            #expect(try store.load() == record)
        }
    }

    @Test("attributes that are not a JSON object (a number) are written as JSONEncoder wrote them")
    func attributesOfAnyCodableType() throws {
        var encoder = ActivityRecordEncoder<Int>()
        let record = PersistedActivity(
            activityID: "x", attributesType: "Int", lastSeq: 1, trackSeq: 1, attributes: 7, tripTotals: Data(),
            startedAt: Date(timeIntervalSinceReferenceDate: 0))
        let bytes = try encoder.encode(record)
        #expect(bytes == (try Self.previousFile(record)))
        #expect(try Self.decoded(bytes, as: Int.self) == record)
    }

    @Test(
        "a date that is not finite is an encoding error naming the activity, and nothing is written",
        arguments: JSONSamples.nonFiniteNumbers)
    func nonFiniteDatesAreRefused(_ value: Double) throws {
        var encoder = ActivityRecordEncoder<Attributes>()
        for record in [
            Self.record(startedAt: Date(timeIntervalSinceReferenceDate: value)),
            Self.record(dismissal: Date(timeIntervalSinceReferenceDate: value)),
        ] {
            #expect(throws: (any Error).self) { try Self.previousFile(record) }
            let error = #expect(throws: AgentStoreError.self) { try encoder.encode(record) }
            #expect(error?.code == .encoding)
            #expect(error?.message.contains("7d1e2a9c") == true)
        }
        // Attributes that JSONEncoder refuses: its error, under the same code.
        var record = Self.record()
        record.attributes.destination = [value]
        let error = #expect(throws: AgentStoreError.self) { try encoder.encode(record) }
        #expect(error?.code == .encoding)
        #expect(
            error?.message.hasPrefix("the activity 7d1e2a9c could not be encoded as JSON: its attributes: ") == true)
    }

    @Test("a record that cannot be encoded leaves the saved one as it was, in place or replaced")
    func aRefusedRecordLeavesTheFile() throws {
        try withTemporaryDirectory { directory in
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            let store = ActivityStateStore<Attributes>(
                directory: directory, activityID: "7d1e2a9c", logger: LogRecorder().logger)
            let saved = Self.record()
            try files.save(saved)
            let bad = Self.record(startedAt: Date(timeIntervalSinceReferenceDate: .nan))
            #expect(throws: AgentStoreError.self) { try files.save(bad) }
            #expect(throws: AgentStoreError.self) { try store.save(bad) }
            #expect(try store.load() == saved)
            #expect(try contents(of: directory) == ["7d1e2a9c.state"])
            // And the next save goes on.
            let next = Self.record(name: "Van 4")
            try files.save(next)
            #expect(try store.load() == next)
        }
    }

    @Test("a file the previous encoder wrote, padded as the spool pads it, loads; the new one writes over it")
    func aPreviousFileLoads() throws {
        try withTemporaryDirectory { directory in
            let old = Self.record(dismissal: Date(timeIntervalSince1970: 1_795_000_600))
            try Data(try Self.previousFile(old, paddedTo: 700)).write(
                to: URL(fileURLWithPath: directory + "/7d1e2a9c.state"))
            let store = ActivityStateStore<Attributes>(
                directory: directory, activityID: "7d1e2a9c", logger: LogRecorder().logger)
            #expect(try store.load() == old)
            let files = ActivityRecordFiles<Attributes>(directory: directory, logger: LogRecorder().logger)
            let new = Self.record(name: "Van 3 / Süd")
            try files.save(new)
            #expect(try store.load() == new)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path)))
            #expect(bytes == (try Self.previousFile(new, paddedTo: 700)))
        }
    }
}
