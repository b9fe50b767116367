import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// Hostile envelopes and commands: NaN and infinity spelled every way, huge numbers, invalid UTF-8,
/// deep nesting, 10 MB values, duplicate keys, rollover epochs and far-future dates.
extension InvalidPayload {
    /// Every way NaN and infinity are spelled (only the overflowing numbers are JSON).
    static let nonFiniteSpellings = [
        "NaN", "nan", "NAN", "-nan", "+NaN", "nan(0x7ff)", "Infinity", "-Infinity", "+Infinity", "infinity",
        "inf", "-inf", "INF", "+Inf", "1e999", "-1e999",
    ]

    /// The numbers whose non-finite spellings are tried: name, kind, golden, the member as the golden has it,
    /// its key path and the JSON type it must be.
    static let numericMembers: [(PayloadKind, String, String, String, String)] = [
        (.envelope, "envelope-start-full", #""latitude":52.520008"#, "content-state.latitude", "a number"),
        (.envelope, "envelope-start-full", #""speed":12.25"#, "content-state.speed", "a number"),
        (.envelope, "envelope-start-full", #""timestamp":1700000000"#, "timestamp", "a number"),
        (.command, "command", #""timestamp":1700000000"#, "timestamp", "a number"),
    ]

    /// Foundation's explanation of a payload that is not JSON, after "not valid JSON: ".
    static func notJSON(_ detail: String) -> String { "not valid JSON: \(detail)" }

    /// The decoder's explanation of a number it cannot hold where JSON allows it.
    static let numberDoesNotFit =
        "not valid JSON here: a number that does not fit its key (a fraction or more than 64 bits for an integer,"
        + " beyond ±1.8e308 or nearer to 0 than 2.2e-308 for a number)"

    static let hostile: [InvalidPayload] = nonFinite + numbers + encodings + sizes + duplicates

    static let nonFinite: [InvalidPayload] =
        numericMembers.flatMap { kind, golden, member, path, type in
            let key = member.prefix { $0 != ":" }
            let base = WireCodecTests.goldens[golden] ?? ""
            // The byte where the value starts; Foundation's parser reads a `-` or an `n` (of null) first.
            let start = base.range(of: member).map { base.utf8.distance(from: base.startIndex, to: $0.lowerBound) } ?? 0
            let valueStart = start + key.utf8.count + 1
            return nonFiniteSpellings.flatMap { spelling in
                let offset = valueStart + (spelling.hasPrefix("-") || spelling.hasPrefix("n") ? 1 : 0)
                let bare =
                    spelling.hasSuffix("e999")
                    ? notJSON("Number \(spelling) is not representable in Swift.")
                    : notJSON("Invalid value around character \(offset).")
                return [
                    InvalidPayload(
                        "\(path) \(spelling)", kind, golden: golden, replacing: member, with: "\(key):\(spelling)",
                        problem: bare, schemaRejects: false),
                    InvalidPayload(
                        "\(path) \"\(spelling)\"", kind, golden: golden, replacing: member,
                        with: "\(key):\"\(spelling)\"", problem: "'\(path)' has the wrong type; expected \(type)"),
                ]
            }
        }

    static let numbers: [InvalidPayload] = [
        // Huge numbers and wrong types.
        .init(
            "seq 1e300", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#, with: #""seq":1e300"#,
            problem: numberDoesNotFit),
        .init(
            "seq past Int64", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#,
            with: #""seq":9223372036854775808"#,
            problem: numberDoesNotFit),
        .init(
            // The schema's maximum, the largest integer a JavaScript receiver keeps exactly: 2^53 would be
            // read there as 2^53 + 1 is, so two envelopes could not be told apart.
            "seq 2^53", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#,
            with: #""seq":9007199254740992"#, problem: "'seq': 9007199254740992 is outside 1...9007199254740991"),
        .init(
            "seq 1.5", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#, with: #""seq":1.5"#,
            problem: numberDoesNotFit),
        .init(
            "speed 1e-400 (nearer to 0 than a Double)", .envelope, golden: "envelope-start-full",
            replacing: #""speed":12.25"#, with: #""speed":1e-400"#, problem: numberDoesNotFit, schemaRejects: false),
        .init(
            "seq true", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#, with: #""seq":true"#,
            problem: "'seq' has the wrong type; expected an integer"),
        .init(
            "seq as an array", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#,
            with: #""seq":[1]"#, problem: "'seq' has the wrong type; expected an integer"),
        .init(
            "latitude 1e308", .envelope, golden: "envelope-start-full", replacing: #""latitude":52.520008"#,
            with: #""latitude":1e308"#, problem: "'content-state.latitude': 1e+308 is outside -90...90"),
        .init(
            "negative speed -1e308", .envelope, golden: "envelope-start-full", replacing: #""speed":12.25"#,
            with: #""speed":-1e308"#, problem: "'content-state.speed': -1e+308 is less than 0"),
        .init(
            "content state null", .envelope, golden: "envelope-start-full",
            replacing: #""content-state":{"#, with: #""content-state":null,"x":{"#,
            problem: "'content-state' is null; expected an object"),
        .init(
            "command id as a number", .command, golden: "command", replacing: #""id":"req-1""#, with: #""id":1"#,
            problem: "'id' has the wrong type; expected a string"),
        .init(
            "intent in capitals", .command, golden: "command", replacing: #""intent":"start""#,
            with: #""intent":"START""#,
            problem: #"'intent': "START" is not one of "start", "stop", "pause", "resume", "report", "update""#),
        .init(
            "new as a string", .command, golden: "command", replacing: #""intent":"start""#,
            with: #""intent":"start","new":"yes""#, problem: "'new' has the wrong type; expected a boolean"),
    ]

    static let encodings: [InvalidPayload] = [
        // Invalid UTF-8 and Unicode.
        .init(
            "invalid UTF-8 in a name", .envelope,
            bytes: Array((WireCodecTests.goldens["envelope-start-full"] ?? "").utf8).replacing(
                Array("Van 7".utf8), with: [0x56, 0xFF, 0xFE]),
            problem: notJSON("Invalid UTF-8 sequence 3 bytes starting from character 183.")),
        .init(
            "an overlong UTF-8 slash in a command id", .command,
            bytes: Array((WireCodecTests.goldens["command"] ?? "").utf8).replacing(
                Array("req-1".utf8), with: [0x72, 0xC0, 0xAF]),
            problem: notJSON("Invalid UTF-8 sequence 3 bytes starting from character 7.")),
        .init(
            "a lone surrogate in a command id", .command, golden: "command", replacing: #""id":"req-1""#,
            with: #""id":"\ud800""#,
            problem: notJSON(
                "Unexpected end of file during string parse (expected low-surrogate code point but did not find one)."),
            schemaRejects: false),
        .init(
            "a NUL in a device id", .envelope, golden: "envelope-start-full", replacing: #""device":"van-7""#,
            with: #""device":"van\u00007""#,
            problem: "'device': invalid device id \"van\\07\": " + Fixtures.idRule),
    ]

    static let sizes: [InvalidPayload] = [
        // Deep nesting and 10 MB values.
        .init(
            "arrays nested 100,000 deep", .envelope, json: String(repeating: "[", count: 100_000),
            problem: notJSON("Too many nested arrays or dictionaries around character 65."), schemaRejects: false),
        .init(
            // Found by the fuzzer (FuzzCommand): when the 513th level opens at the payload's last byte,
            // JSONDecoder (swift-foundation's scanner, 512 levels at most) traps while it locates its own
            // error: one such command stopped the agent.
            "a tab and 513 opening brackets, the last at the end", .command,
            json: "\t" + String(repeating: "[", count: 513),
            problem: notJSON("Too many nested arrays or dictionaries around character 66."), schemaRejects: false),
        .init(
            "513 opening brackets, the last at the end", .envelope, json: String(repeating: "[", count: 513),
            problem: notJSON("Too many nested arrays or dictionaries around character 65."), schemaRejects: false),
        .init(
            "arrays nested 65 deep in an attribute, closed", .envelope, golden: "envelope-start-full",
            replacing: #""vehicle":"B-MY 1234""#,
            with: #""vehicle":"# + String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
            problem: notJSON("Too many nested arrays or dictionaries around character 263."), schemaRejects: false),
        .init(
            "objects nested 600 deep in an attribute", .envelope, golden: "envelope-start-full",
            replacing: #""vehicle":"B-MY 1234""#,
            with: #""vehicle":"# + String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600),
            problem: notJSON("Too many nested arrays or dictionaries around character 511."), schemaRejects: false),
        .init(
            "a 10 MB command id", .command, golden: "command", replacing: #""id":"req-1""#,
            with: #""id":""# + String(repeating: "i", count: 10_000_000) + "\"",
            problem: "'id': must have 1-128 characters, not 10000000", schemaRejects: false),
    ]

    static let duplicates: [InvalidPayload] = [
        // Duplicate keys: refused, as receivers in other languages would each keep another of the values.
        .init(
            "seq twice", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#, with: #""seq":1,"seq":2"#,
            problem: "duplicate key 'seq'", schemaRejects: false),
        .init(
            "intent twice", .command, golden: "command", replacing: #""intent":"start""#,
            with: #""intent":"start","intent":"stop""#, problem: "duplicate key 'intent'", schemaRejects: false),
        .init(
            "a nested key twice", .envelope, golden: "envelope-start-full", replacing: #""speed":12.25"#,
            with: #""speed":12.25,"speed":99"#, problem: "duplicate key 'content-state.speed'", schemaRejects: false),
        .init(
            "a key twice, once escaped", .envelope, golden: "envelope-start-full", replacing: #""seq":1"#,
            with: #""seq":1,"se\u0071":1"#, problem: "duplicate key 'seq'", schemaRejects: false),
        .init(
            "a trailing comma", .command, golden: "command", replacing: "}", with: ",}",
            problem: "not valid JSON: a trailing comma at byte 83", schemaRejects: false),
    ]
}

extension Array where Element == UInt8 {
    /// A copy with the first occurrence of `target` replaced.
    fileprivate func replacing(_ target: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        guard let start = indices.first(where: { self[$0...].starts(with: target) }) else { return self }
        return Array(self[..<start]) + replacement + Array(self[(start + target.count)...])
    }
}

/// A hostile payload that the contract allows, and the values it must decode to.
struct AcceptedPayload: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable {
        case envelope(seq: Int, timestamp: Date, speed: Double?, eta: Date?, staleDate: Date?)
        case command(id: String, intent: Command.Intent, timestamp: Date)
    }

    let name: String
    let json: String
    let expected: Expected

    var testDescription: String { name }

    init(_ name: String, golden: String, replacing target: String, with replacement: String, _ expected: Expected) {
        let base = WireCodecTests.goldens[golden] ?? ""
        self.name = name
        self.json = base.replacingOccurrences(of: target, with: replacement)
        self.expected = expected
    }

    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let eta = Date(timeIntervalSince1970: 1_700_001_800)

    static func envelope(
        _ name: String, replacing target: String, with replacement: String, seq: Int = 1, timestamp: Date = t0,
        speed: Double? = 12.25, eta: Date? = eta, staleDate: Date? = Date(timeIntervalSince1970: 1_700_000_120)
    ) -> Self {
        Self(
            name, golden: "envelope-start-full", replacing: target, with: replacement,
            .envelope(seq: seq, timestamp: timestamp, speed: speed, eta: eta, staleDate: staleDate))
    }

    static func command(_ name: String, timestamp: String, _ date: Date) -> Self {
        Self(
            name, golden: "command", replacing: #""timestamp":1700000000"#, with: #""timestamp":\#(timestamp)"#,
            .command(id: "req-1", intent: .start, timestamp: date))
    }

    static let all: [AcceptedPayload] = [
        envelope(
            "timestamp 9999-12-31T23:59:59Z", replacing: #""timestamp":1700000000"#,
            with: #""timestamp":253402300799"#, timestamp: Date(timeIntervalSince1970: 253_402_300_799)),
        envelope(
            "timestamp 1e15", replacing: #""timestamp":1700000000"#, with: #""timestamp":1e15"#,
            timestamp: Date(timeIntervalSince1970: 1e15)),
        envelope(
            "timestamp 1e300", replacing: #""timestamp":1700000000"#, with: #""timestamp":1e300"#,
            timestamp: Date(timeIntervalSince1970: 1e300)),
        envelope(
            "timestamp of the 1999 rollover", replacing: #""timestamp":1700000000"#, with: #""timestamp":935280000"#,
            timestamp: Date(timeIntervalSince1970: 935_280_000)),
        envelope(
            "timestamp of the 2019 rollover", replacing: #""timestamp":1700000000"#,
            with: #""timestamp":1554595200"#, timestamp: Date(timeIntervalSince1970: 1_554_595_200)),
        envelope(
            "a negative timestamp", replacing: #""timestamp":1700000000"#, with: #""timestamp":-1e300"#,
            timestamp: Date(timeIntervalSince1970: -1e300)),
        envelope(
            "stale date 1e300", replacing: #""stale-date":1700000120"#, with: #""stale-date":1e300"#,
            staleDate: Date(timeIntervalSince1970: 1e300)),
        envelope(
            "eta 1e300", replacing: #""eta":1700001800"#, with: #""eta":1e300"#, eta: Date(timeIntervalSince1970: 1e300)
        ),
        envelope(
            "eta -1e300", replacing: #""eta":1700001800"#, with: #""eta":-1e300"#,
            eta: Date(timeIntervalSince1970: -1e300)),
        envelope("speed 1e308", replacing: #""speed":12.25"#, with: #""speed":1e308"#, speed: 1e308),
        envelope(
            "a 10 MB name (the contract sets no limit; the board refuses payloads over 64 KiB)",
            replacing: #""name":"Van 7""#, with: #""name":""# + String(repeating: "n", count: 10_000_000) + "\""),
        envelope(
            "a key with an escape that is not a duplicate", replacing: #""seq":1"#, with: #""seq":1,"se\u0071x":2"#),
        envelope("seq 1.0", replacing: #""seq":1"#, with: #""seq":1.0"#),
        envelope("seq 1e0", replacing: #""seq":1"#, with: #""seq":1e0"#),
        envelope(
            "10 MB of white space around the payload", replacing: #"{"activity""#,
            with: String(repeating: " ", count: 10_000_000) + #"{"activity""#),
        command(
            "command timestamp 9999-12-31T23:59:59Z", timestamp: "253402300799",
            Date(timeIntervalSince1970: 253_402_300_799)),
        command("command timestamp 1e300", timestamp: "1e300", Date(timeIntervalSince1970: 1e300)),
        command(
            "command timestamp of the 1999 rollover", timestamp: "935280000", Date(timeIntervalSince1970: 935_280_000)),
        command("command timestamp 0", timestamp: "0", Date(timeIntervalSince1970: 0)),
    ]
}

/// Hostile payloads the contract allows decode to exactly the values it gives.
@Suite("Hostile payloads")
struct HostilePayloadTests {
    @Test func theTablesHoldEnoughCases() {
        #expect(InvalidPayload.hostile.count + AcceptedPayload.all.count >= 150)
    }

    /// Found by fuzzing (FuzzCommand): a command at 1,700,006,252,794,888,193 s encoded to other bytes
    /// once decoded and encoded again, as rounding to milliseconds is not stable that far out.
    @Test(arguments: [1_700_006_252_794_888_192, 1e300, -1e300, 253_402_300_799.999, 1_700_000_060.123_4])
    func encodingWhatWasDecodedGivesTheSameBytes(_ seconds: Double) throws {
        let command = try Command(id: "req-1", intent: .start, timestamp: Date(timeIntervalSince1970: seconds))
        let encoded = try WireCodec.encode(command)
        #expect(try WireCodec.encode(WireCodec.decode(Command.self, from: encoded)) == encoded)
    }

    @Test(arguments: AcceptedPayload.all)
    func accepted(_ payload: AcceptedPayload) throws {
        let data = Data(payload.json.utf8)
        switch payload.expected {
        case .envelope(let seq, let timestamp, let speed, let eta, let staleDate):
            let envelope = try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: data)
            #expect(envelope.header.seq == seq && envelope.timestamp == timestamp)
            #expect(envelope.content.state.speed == speed && envelope.content.state.eta == eta)
            #expect(envelope.content.staleDate == staleDate)
        case .command(let id, let intent, let timestamp):
            let command = try WireCodec.decode(Command.self, from: data)
            #expect(command.id == id && command.intent == intent && command.timestamp == timestamp)
        }
    }
}
